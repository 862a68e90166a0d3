// SPDX-License-Identifier: Apache-2.0
// NUMA memory policy and page migration through libnuma's wrappers
// (<numaif.h>'s mbind and get_mempolicy, <numa.h>'s numa_move_pages): each
// returns 0 (or a count / node id where stated) or -errno. The MPOL_*
// constants are <numaif.h>'s. Every call is one system call that allocates
// nothing, so the evictor may use them; none is on the fault path. The node
// facts libnuma reads from sysfs are in sys/numa_nodes.h.
#pragma once
#include <numaif.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace mtier::sys {

// A set of NUMA node ids in the kernel's nodemask layout (bit n = node n).
struct NodeMask {
  static constexpr int kMaxNodes = 1024;  // Debian's CONFIG_NODES_SHIFT=10
  static constexpr int kBitsPerWord = 8 * sizeof(unsigned long);
  unsigned long bits[kMaxNodes / kBitsPerWord] = {};

  // Adds node. Returns false (mask unchanged) if node is outside [0, kMaxNodes).
  bool set(int node);
  bool test(int node) const;
  bool empty() const;
};

// Sets the memory policy of [addr, addr+len) (addr page-aligned): `mode` is
// MPOL_* optionally or-ed with MPOL_F_*_NODES; `flags` is MPOL_MF_STRICT |
// MPOL_MF_MOVE | MPOL_MF_MOVE_ALL. A node without memory gives -EINVAL.
[[nodiscard]] int mbind(void* addr, size_t len, int mode, const NodeMask& nodes, unsigned flags);
// mbind with MPOL_BIND (allocate only on node) or MPOL_PREFERRED (node first,
// others when it is full) for one node. -EINVAL for a node out of range.
[[nodiscard]] int bind_node(void* addr, size_t len, int node, unsigned flags = 0);
[[nodiscard]] int prefer_node(void* addr, size_t len, int node, unsigned flags = 0);

// move_pages(2) on process pid (0 = self), by numa_move_pages. With nodes ==
// nullptr it only queries: status[i] receives the node of pages[i], or
// -ENOENT if the page is not present, -EFAULT if unmapped. With nodes, moves pages[i] to
// nodes[i] (status as above after the move). Returns 0, the number of pages
// that could not be moved (> 0), or -errno (-ENODEV for a node without memory).
[[nodiscard]] long move_pages(pid_t pid, size_t count, const void* const* pages, const int* nodes,
                              int* status, int flags);

// The node holding the page at addr (get_mempolicy MPOL_F_NODE|MPOL_F_ADDR).
// Faults the page in (per the range's policy) if it is not present.
// Returns the node id (>= 0) or -errno.
[[nodiscard]] int page_node(const void* addr);
// The nodes this thread may allocate from (cpuset mems_allowed).
[[nodiscard]] int mems_allowed(NodeMask* out);

}  // namespace mtier::sys
