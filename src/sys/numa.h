// NUMA memory-policy and page-migration syscalls, raw (no libnuma in the
// core): each returns 0 (or a count / node id where stated) or -errno.
// The MPOL_* constants are defined here when no other header did; <numaif.h>
// is deliberately not included. Do not include <linux/mempolicy.h> after this
// header: it declares the MPOL_* modes as enumerators, which these macros
// would rename.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

// Policy modes (mbind mode argument, get_mempolicy result).
#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT 0
#endif
#ifndef MPOL_PREFERRED
#define MPOL_PREFERRED 1
#endif
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MPOL_INTERLEAVE
#define MPOL_INTERLEAVE 3
#endif
#ifndef MPOL_LOCAL
#define MPOL_LOCAL 4
#endif
#ifndef MPOL_PREFERRED_MANY
#define MPOL_PREFERRED_MANY 5
#endif
#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE 6
#endif
// Mode flags, or-ed into the mode.
#ifndef MPOL_F_STATIC_NODES
#define MPOL_F_STATIC_NODES (1 << 15)
#endif
#ifndef MPOL_F_RELATIVE_NODES
#define MPOL_F_RELATIVE_NODES (1 << 14)
#endif
#ifndef MPOL_F_NUMA_BALANCING
#define MPOL_F_NUMA_BALANCING (1 << 13)
#endif
// get_mempolicy flags.
#ifndef MPOL_F_NODE
#define MPOL_F_NODE (1 << 0)
#endif
#ifndef MPOL_F_ADDR
#define MPOL_F_ADDR (1 << 1)
#endif
#ifndef MPOL_F_MEMS_ALLOWED
#define MPOL_F_MEMS_ALLOWED (1 << 2)
#endif
// mbind / move_pages flags.
#ifndef MPOL_MF_STRICT
#define MPOL_MF_STRICT (1 << 0)
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif
#ifndef MPOL_MF_MOVE_ALL
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif

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

// move_pages(2) on process pid (0 = self). With nodes == nullptr it only
// queries: status[i] receives the node of pages[i], or -ENOENT if the page
// is not present, -EFAULT if unmapped. With nodes, moves pages[i] to
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
