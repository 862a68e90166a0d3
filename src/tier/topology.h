// SPDX-License-Identifier: Apache-2.0
// The machine's memory topology: NUMA nodes (CPUs, size, distances, from
// libnuma: sys/numa_nodes.h) and the memory tiers they form, fastest first
// (the kernel's memory_tiering ranks, which libnuma does not read, from
// sysfs). Discovery runs once at init; nothing here is on the fault path.
// The seam for tests: build_topology takes the nodes and a sysfs root, so a
// test injects the nodes of another machine and points the root at a
// fixture tree holding its memory_tiering directory.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtier {

struct NodeInfo {
  int id = 0;
  bool has_cpus = false;       // some CPU belongs to the node
  uint64_t bytes = 0;          // the node's MemTotal (0: no memory)
  std::vector<int> distances;  // distances[i] is to Topology::nodes[i]; empty if unknown
};

enum class TierKind { kDram, kSlowMemory };
const char* tier_kind_name(TierKind kind);  // "dram", "slow-memory"

struct MemoryTierInfo {
  int rank = 0;            // lower is faster; kernel tier number when from sysfs
  std::vector<int> nodes;  // nearest first (distance from the reference node, then id)
  uint64_t bytes = 0;      // sum of the nodes' MemTotal
  bool has_cpus = false;   // some node of the tier has CPUs
  TierKind kind = TierKind::kDram;
};

struct Topology {
  std::vector<NodeInfo> nodes;        // every node, by ascending id
  std::vector<MemoryTierInfo> tiers;  // fastest first
  bool from_memory_tiering = false;   // ranks came from sysfs memory_tiering

  const NodeInfo* node(int id) const;  // nullptr if there is no such node
  // Distance between two nodes (SLIT: 10 to itself), or -1 if unknown.
  int distance(int from, int to) const;
};

// The machine's nodes from libnuma, by ascending id: every node with a
// directory in /sys/devices/system/node, memory-less ones included.
// Returns 0, -ENOENT if the kernel has no NUMA (see single_node_topology),
// or -EINVAL with *error naming the node libnuma could not read.
[[nodiscard]] int discover_nodes(std::vector<NodeInfo>* out, std::string* error);
// The topology of these nodes (ascending ids; distances[i] to nodes[i], a
// row of another length is dropped) with tiers from
// <sysfs_root>/devices/virtual/memory_tiering/memory_tier*/nodelist where
// present. Without memory_tiering: nodes with CPUs form the "dram" tier
// (rank 0) and CPU-less nodes (KMEM DAX, CXL) one "slow-memory" tier (rank
// 1); nodes with no memory are left out. With it: rank = tier number, and a
// tier is "dram" up to and including the fastest tier that holds a node with
// CPUs. Returns 0, -ENOENT if there are no nodes, or -EINVAL with *error
// naming the bad file.
[[nodiscard]] int build_topology(std::vector<NodeInfo> nodes, const std::string& sysfs_root,
                                 Topology* out, std::string* error);
// This machine's topology: discover_nodes, then build_topology over "/sys".
[[nodiscard]] int discover_topology(Topology* out, std::string* error);
// One node 0 with CPUs and `bytes` of memory, in one dram tier.
Topology single_node_topology(uint64_t bytes);

// The startup line: "memory tiers: dram(node 0, 23.4 GiB); slow-memory(node 2, 384.0 MiB)".
std::string describe(const std::vector<MemoryTierInfo>& tiers);

// One group of a tier override: these nodes form one tier of this kind.
struct TierSpec {
  std::vector<int> nodes;
  TierKind kind = TierKind::kDram;
};

// Parses a config override "0,1:dram;2:slow", tiers fastest first; node lists
// also take ranges ("0-1"), kinds are "dram", "slow" or "slow-memory".
// Returns 0, or -EINVAL with *error naming the bad token.
[[nodiscard]] int parse_tier_override(std::string_view text, std::vector<TierSpec>* out,
                                      std::string* error);
// Builds tiers (rank = position) from an override over a discovered topology.
// Nodes the override does not name are not used. Returns 0, or -EINVAL with
// *error naming a node that does not exist or has no memory.
[[nodiscard]] int apply_tier_override(const Topology& topo, const std::vector<TierSpec>& specs,
                                      std::vector<MemoryTierInfo>* out, std::string* error);

// Node ids are below this (the kernel's largest MAX_NUMNODES).
inline constexpr int kNodeLimit = 1024;
// Parses a kernel node list ("0-1,4", "" = none) of ids below kNodeLimit;
// on failure *bad is the bad token.
[[nodiscard]] bool parse_node_list(std::string_view text, std::vector<int>* out,
                                   std::string_view* bad);

}  // namespace mtier
