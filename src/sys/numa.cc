// SPDX-License-Identifier: Apache-2.0
#include "sys/numa.h"

#include <numa.h>

#include <cerrno>

namespace mtier::sys {

namespace {

// The kernel reads maxnode - 1 bits (get_nodes decrements it), hence the + 1.
// libnuma's wrappers pass maxnode through unchanged.
constexpr unsigned long kMaskArg = NodeMask::kMaxNodes + 1;

bool in_range(int node) { return node >= 0 && node < NodeMask::kMaxNodes; }

int mbind_one(void* addr, size_t len, int mode, int node, unsigned flags) {
  NodeMask mask;
  if (!mask.set(node)) return -EINVAL;
  return mbind(addr, len, mode, mask, flags);
}

}  // namespace

bool NodeMask::set(int node) {
  if (!in_range(node)) return false;
  bits[node / kBitsPerWord] |= 1ul << (node % kBitsPerWord);
  return true;
}

bool NodeMask::test(int node) const {
  return in_range(node) && (bits[node / kBitsPerWord] >> (node % kBitsPerWord) & 1) != 0;
}

bool NodeMask::empty() const {
  for (unsigned long w : bits)
    if (w != 0) return false;
  return true;
}

int mbind(void* addr, size_t len, int mode, const NodeMask& nodes, unsigned flags) {
  long r = ::mbind(addr, len, mode, nodes.bits, kMaskArg, flags);
  return r == 0 ? 0 : -errno;
}

int bind_node(void* addr, size_t len, int node, unsigned flags) {
  return mbind_one(addr, len, MPOL_BIND, node, flags);
}

int prefer_node(void* addr, size_t len, int node, unsigned flags) {
  return mbind_one(addr, len, MPOL_PREFERRED, node, flags);
}

long move_pages(pid_t pid, size_t count, const void* const* pages, const int* nodes, int* status,
                int flags) {
  // numa_move_pages takes the page array as void** (it only reads it).
  long r = numa_move_pages(pid, count, const_cast<void**>(pages), nodes, status, flags);
  return r >= 0 ? r : -errno;
}

int page_node(const void* addr) {
  int node = -1;
  // get_mempolicy only reads through addr's page; it takes it as void*.
  long r =
      ::get_mempolicy(&node, nullptr, 0ul, const_cast<void*>(addr), MPOL_F_NODE | MPOL_F_ADDR);
  return r == 0 ? node : -errno;
}

int mems_allowed(NodeMask* out) {
  *out = NodeMask{};
  long r = ::get_mempolicy(nullptr, out->bits, kMaskArg, nullptr, MPOL_F_MEMS_ALLOWED);
  return r == 0 ? 0 : -errno;
}

}  // namespace mtier::sys
