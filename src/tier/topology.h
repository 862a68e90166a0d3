// The machine's memory topology, read from sysfs: NUMA nodes (CPUs, size,
// distances) and the memory tiers they form, fastest first. Discovery runs
// once at init; nothing here is on the fault path. The sysfs root is a
// parameter so tests can point it at a fixture tree.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtier {

struct NodeInfo {
  int id = 0;
  bool has_cpus = false;       // nodeN/cpulist is not empty
  uint64_t bytes = 0;          // "Node N MemTotal: X kB" of nodeN/meminfo
  std::vector<int> distances;  // nodeN/distance: distances[i] is to Topology::nodes[i]
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
  std::vector<NodeInfo> nodes;        // every node directory, by ascending id
  std::vector<MemoryTierInfo> tiers;  // fastest first
  bool from_memory_tiering = false;   // ranks came from sysfs memory_tiering

  const NodeInfo* node(int id) const;  // nullptr if there is no such node
  // Distance between two nodes from sysfs, or -1 if unknown.
  int distance(int from, int to) const;
};

// Reads <sysfs_root>/devices/system/node/node* and, where present,
// <sysfs_root>/devices/virtual/memory_tiering/memory_tier*/nodelist.
// Without memory_tiering: nodes with CPUs form the "dram" tier (rank 0) and
// CPU-less nodes (KMEM DAX, CXL) one "slow-memory" tier (rank 1); nodes with
// no memory are left out. With it: rank = tier number, and a tier is "dram"
// up to and including the fastest tier that holds a node with CPUs.
// Returns 0, -ENOENT if there is no node directory (a kernel without NUMA:
// see single_node_topology), or -EINVAL with *error naming the bad file.
[[nodiscard]] int discover_topology(const std::string& sysfs_root, Topology* out,
                                    std::string* error);
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
