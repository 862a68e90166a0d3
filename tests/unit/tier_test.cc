// SPDX-License-Identifier: Apache-2.0
// Memory-tier discovery (nodes of recorded machines with their
// memory_tiering trees, and this machine's through libnuma), tier overrides,
// budgets, and the NUMA calls on this machine (one node here; adapts to more).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sys/numa.h"
#include "sys/numa_nodes.h"
#include "tier/budget.h"
#include "tier/topology.h"

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for tests/unit/testdata)"
#endif

namespace mtier {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr size_t kPage = 4096;

// A fixture tree of tests/unit/testdata: a recorded
// devices/virtual/memory_tiering directory, or none.
std::string fixture(const char* name) {
  return std::string(MTIER_SRCDIR) + "/tests/unit/testdata/" + name;
}

// The nodes of other machines, as discover_nodes (libnuma) reports them: the
// seam that stands in for their /sys/devices/system/node.
NodeInfo node_info(int id, bool has_cpus, uint64_t kib, std::vector<int> distances) {
  return NodeInfo{.id = id, .has_cpus = has_cpus, .bytes = kib * kKiB, .distances = distances};
}
// Recorded on a one-node development machine (memory_tier4 holds node 0).
std::vector<NodeInfo> one_node() { return {node_info(0, true, 4286184, {10})}; }
// Recorded in tests/vm's QEMU machine: two DRAM nodes with a CPU each and the
// CPU-less kmem node 2 (memory_tier4: 0-1, memory_tier22: 2).
std::vector<NodeInfo> qemu_3node() {
  return {node_info(0, true, 1031984, {10, 20, 20}), node_info(1, true, 1032176, {20, 10, 20}),
          node_info(2, false, 393216, {20, 20, 10})};
}
// Made up: nodes 0 1 2 4 5 (no node 3), CPU-less 2 and 4, node 5 with CPUs
// and no memory; no memory_tiering.
std::vector<NodeInfo> sparse_nodes() {
  return {node_info(0, true, 8388608, {10, 21, 30, 25, 21}),
          node_info(1, true, 8388608, {21, 10, 25, 30, 11}),
          node_info(2, false, 16777216, {30, 25, 10, 40, 25}),
          node_info(4, false, 4194304, {25, 30, 40, 10, 30}),
          node_info(5, true, 0, {21, 11, 25, 30, 10})};
}

Topology build(std::vector<NodeInfo> nodes, const char* tree) {
  Topology topo;
  std::string error;
  EXPECT_EQ(build_topology(std::move(nodes), fixture(tree), &topo, &error), 0) << error;
  return topo;
}

// ---- discovery ----

TEST(Topology, OneNodeLikeThisMachine) {
  Topology t = build(one_node(), "sysfs-one-node");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].id, 0);
  EXPECT_TRUE(t.nodes[0].has_cpus);
  EXPECT_EQ(t.nodes[0].bytes, 4286184 * kKiB);
  EXPECT_EQ(t.distance(0, 0), 10);
  EXPECT_TRUE(t.from_memory_tiering);
  ASSERT_EQ(t.tiers.size(), 1u);
  EXPECT_EQ(t.tiers[0].rank, 4);
  EXPECT_EQ(t.tiers[0].nodes, std::vector<int>{0});
  EXPECT_EQ(t.tiers[0].kind, TierKind::kDram);
  EXPECT_EQ(describe(t.tiers), "memory tiers: dram(node 0, 4.1 GiB)");
}

TEST(Topology, QemuTwoDramNodesAndKmemNode) {
  Topology t = build(qemu_3node(), "sysfs-qemu-3node");
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_TRUE(t.nodes[0].has_cpus);
  EXPECT_TRUE(t.nodes[1].has_cpus);
  EXPECT_FALSE(t.nodes[2].has_cpus);
  EXPECT_EQ(t.distance(0, 1), 20);
  EXPECT_EQ(t.distance(1, 1), 10);
  EXPECT_EQ(t.distance(2, 0), 20);
  EXPECT_TRUE(t.from_memory_tiering);
  ASSERT_EQ(t.tiers.size(), 2u);
  EXPECT_EQ(t.tiers[0].rank, 4);
  EXPECT_EQ(t.tiers[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.tiers[0].bytes, (1031984 + 1032176) * kKiB);
  EXPECT_TRUE(t.tiers[0].has_cpus);
  EXPECT_EQ(t.tiers[0].kind, TierKind::kDram);
  EXPECT_EQ(t.tiers[1].rank, 22);
  EXPECT_EQ(t.tiers[1].nodes, std::vector<int>{2});
  EXPECT_EQ(t.tiers[1].bytes, 384 * kKiB * kKiB);
  EXPECT_FALSE(t.tiers[1].has_cpus);
  EXPECT_EQ(t.tiers[1].kind, TierKind::kSlowMemory);
  EXPECT_EQ(describe(t.tiers),
            "memory tiers: dram(nodes 0-1, 2.0 GiB); slow-memory(node 2, 384.0 MiB)");
}

TEST(Topology, NoMemoryTieringRanksByCpusThenDistance) {
  Topology t = build(sparse_nodes(), "no-memory-tiering");
  ASSERT_EQ(t.nodes.size(), 5u);  // 0 1 2 4 5: no node 3
  EXPECT_EQ(t.nodes[3].id, 4);
  EXPECT_EQ(t.distance(0, 4), 25);  // 4th entry of node 0's row: nodes[3] is node 4
  EXPECT_EQ(t.distance(4, 2), 40);
  EXPECT_EQ(t.distance(0, 3), -1);
  EXPECT_FALSE(t.from_memory_tiering);
  ASSERT_EQ(t.tiers.size(), 2u);
  EXPECT_EQ(t.tiers[0].rank, 0);
  EXPECT_EQ(t.tiers[0].nodes, (std::vector<int>{0, 1}));  // node 5 has no memory
  EXPECT_EQ(t.tiers[0].kind, TierKind::kDram);
  EXPECT_EQ(t.tiers[1].rank, 1);
  EXPECT_EQ(t.tiers[1].nodes, (std::vector<int>{4, 2}));  // nearer to node 0 first
  EXPECT_EQ(t.tiers[1].kind, TierKind::kSlowMemory);
  EXPECT_FALSE(t.tiers[1].has_cpus);
  EXPECT_EQ(describe(t.tiers),
            "memory tiers: dram(nodes 0-1, 16.0 GiB); slow-memory(nodes 4,2, 20.0 GiB)");
}

TEST(Topology, DistanceRowOfAnotherLengthIsDropped) {
  std::vector<NodeInfo> nodes = qemu_3node();
  nodes[1].distances.pop_back();
  Topology t = build(nodes, "sysfs-qemu-3node");
  EXPECT_EQ(t.distance(1, 0), -1);
  EXPECT_EQ(t.distance(0, 1), 20);
  EXPECT_EQ(t.tiers[0].nodes, (std::vector<int>{0, 1}));
}

TEST(Topology, NoNodesIsENOENT) {
  Topology t;
  std::string error;
  EXPECT_EQ(build_topology({}, fixture("sysfs-one-node"), &t, &error), -ENOENT);
  EXPECT_EQ(error, "no NUMA nodes");
  EXPECT_TRUE(t.nodes.empty());
}

TEST(Topology, MemoryTierOfUnknownNodeIsLeftOut) {
  // memory_tier22 of the QEMU tree names node 2, which these nodes lack.
  std::vector<NodeInfo> nodes = qemu_3node();
  nodes.pop_back();
  for (NodeInfo& n : nodes) n.distances.pop_back();
  Topology t = build(nodes, "sysfs-qemu-3node");
  ASSERT_EQ(t.tiers.size(), 1u);
  EXPECT_EQ(t.tiers[0].rank, 4);
}

TEST(Topology, SingleNodeFallback) {
  Topology t = single_node_topology(3ull << 30);
  ASSERT_EQ(t.tiers.size(), 1u);
  EXPECT_EQ(t.tiers[0].nodes, std::vector<int>{0});
  EXPECT_EQ(describe(t.tiers), "memory tiers: dram(node 0, 3.0 GiB)");
  EXPECT_EQ(describe({}), "memory tiers: none");
}

// The node directories of this machine's sysfs, ascending: an independent
// reading that libnuma's node list should match.
std::vector<int> sysfs_node_ids() {
  std::vector<int> ids;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node")) {
    std::string name = e.path().filename();
    if (name.rfind("node", 0) == 0 && name.size() > 4 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      ids.push_back(std::stoi(name.substr(4)));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// libnuma's view of this machine (one node here, three in tests/vm).
TEST(Topology, NodesOfThisMachine) {
  std::vector<NodeInfo> nodes;
  std::string error;
  ASSERT_EQ(discover_nodes(&nodes, &error), 0) << error;
  std::vector<int> ids;
  for (const NodeInfo& n : nodes) ids.push_back(n.id);
  EXPECT_EQ(ids, sysfs_node_ids());
  bool some_cpus = false;
  for (const NodeInfo& n : nodes) {
    some_cpus |= n.has_cpus;
    ASSERT_EQ(n.distances.size(), nodes.size()) << "node " << n.id;
    for (size_t i = 0; i < nodes.size(); i++) {
      if (nodes[i].id == n.id)
        EXPECT_EQ(n.distances[i], 10) << "node " << n.id;  // the kernel's LOCAL_DISTANCE
      else
        EXPECT_GT(n.distances[i], 10) << "node " << n.id << " to " << nodes[i].id;
    }
  }
  EXPECT_TRUE(some_cpus);
  ASSERT_FALSE(nodes.empty());
  EXPECT_GT(nodes[0].bytes, 0u);
}

// Ids libnuma never listed are unknown, not an index past its tables.
TEST(NumaNodes, NodesOutOfRangeAreUnknown) {
  ASSERT_TRUE(sys::numa_present());
  int past = sys::max_node() + 1;
  for (int bad : {-1, past, sys::NodeMask::kMaxNodes}) {
    EXPECT_FALSE(sys::node_exists(bad)) << bad;
    EXPECT_EQ(sys::node_bytes(bad), -1) << bad;
    EXPECT_EQ(sys::node_has_cpus(bad), -ENOENT) << bad;
    EXPECT_EQ(sys::node_distance(0, bad), 0) << bad;
    EXPECT_EQ(sys::node_distance(bad, 0), 0) << bad;
  }
  EXPECT_EQ(sys::node_distance(0, 0), 10);
}

TEST(Topology, ThisMachine) {
  Topology t;
  std::string error;
  ASSERT_EQ(discover_topology(&t, &error), 0) << error;
  ASSERT_NE(t.node(0), nullptr);
  ASSERT_FALSE(t.tiers.empty());
  EXPECT_EQ(t.tiers[0].kind, TierKind::kDram);
  EXPECT_GT(t.tiers[0].bytes, 0u);
  EXPECT_EQ(describe(t.tiers).rfind("memory tiers: dram(", 0), 0u) << describe(t.tiers);
}

// ---- node lists and overrides ----

TEST(NodeList, Parses) {
  std::vector<int> nodes;
  std::string_view bad;
  EXPECT_TRUE(parse_node_list("0-1,4", &nodes, &bad));
  EXPECT_EQ(nodes, (std::vector<int>{0, 1, 4}));
  EXPECT_TRUE(parse_node_list("", &nodes, &bad));
  EXPECT_TRUE(nodes.empty());
  EXPECT_TRUE(parse_node_list("1023", &nodes, &bad));
}

TEST(NodeList, NamesBadToken) {
  std::vector<int> nodes;
  std::string_view bad;
  for (const char* text : {"0,x", "0,2-1", "0,1024", "0,-1", "0,3-", "0,1-2-3"}) {
    EXPECT_FALSE(parse_node_list(text, &nodes, &bad)) << text;
    EXPECT_EQ(bad, std::string_view(text).substr(2)) << text;
  }
}

TEST(TierOverride, Parses) {
  std::vector<TierSpec> specs;
  std::string error;
  ASSERT_EQ(parse_tier_override("0,1:dram;2:slow", &specs, &error), 0) << error;
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(specs[0].kind, TierKind::kDram);
  EXPECT_EQ(specs[1].nodes, std::vector<int>{2});
  EXPECT_EQ(specs[1].kind, TierKind::kSlowMemory);
  ASSERT_EQ(parse_tier_override(" 0-1 : dram ; 2 : slow-memory ", &specs, &error), 0) << error;
  EXPECT_EQ(specs[0].nodes, (std::vector<int>{0, 1}));
}

struct BadOverride {
  const char* text;
  const char* message;
};

TEST(TierOverride, ErrorsNameTheBadToken) {
  const BadOverride cases[] = {
      {"0,1", "tier override: expected nodes:kind, got '0,1'"},
      {"0,x:dram", "tier override: bad node list in '0,x:dram' at 'x'"},
      {"0:fast", "tier override: unknown tier kind (dram, slow) 'fast'"},
      {"0:dram;;2:slow", "tier override: empty group in '0:dram;;2:slow'"},
      {"0:dram;", "tier override: empty group in '0:dram;'"},
      {":dram", "tier override: no nodes in ':dram'"},
      {"0:dram;1,0:slow", "tier override: node named twice: '0'"},
      {"", "tier override: empty override ''"},
  };
  for (const BadOverride& c : cases) {
    std::vector<TierSpec> specs;
    std::string error;
    EXPECT_EQ(parse_tier_override(c.text, &specs, &error), -EINVAL) << c.text;
    EXPECT_EQ(error, c.message);
  }
}

TEST(TierOverride, Applies) {
  Topology t = build(qemu_3node(), "sysfs-qemu-3node");
  std::vector<TierSpec> specs;
  std::vector<MemoryTierInfo> tiers;
  std::string error;
  ASSERT_EQ(parse_tier_override("0:dram;1,2:slow", &specs, &error), 0) << error;
  ASSERT_EQ(apply_tier_override(t, specs, &tiers, &error), 0) << error;
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0].rank, 0);
  EXPECT_EQ(tiers[1].rank, 1);
  EXPECT_EQ(tiers[1].bytes, (1032176 + 393216) * kKiB);
  EXPECT_TRUE(tiers[1].has_cpus);
  EXPECT_EQ(describe(tiers),
            "memory tiers: dram(node 0, 1007.8 MiB); slow-memory(nodes 1-2, 1.4 GiB)");
}

TEST(TierOverride, RejectsUnknownOrEmptyNodes) {
  Topology t = build(sparse_nodes(), "no-memory-tiering");
  std::vector<TierSpec> specs;
  std::vector<MemoryTierInfo> tiers;
  std::string error;
  ASSERT_EQ(parse_tier_override("0:dram;3:slow", &specs, &error), 0);
  EXPECT_EQ(apply_tier_override(t, specs, &tiers, &error), -EINVAL);
  EXPECT_EQ(error, "tier override: no such node: '3'");
  ASSERT_EQ(parse_tier_override("5:dram", &specs, &error), 0);
  EXPECT_EQ(apply_tier_override(t, specs, &tiers, &error), -EINVAL);
  EXPECT_EQ(error, "tier override: node has no memory: '5'");
}

// ---- budget ----

TEST(Budget, Typical) {
  MemoryBudget b(1000 * kPage, 95, 85);
  EXPECT_EQ(b.pages_budget(), 1000u);
  EXPECT_EQ(b.pages_high(), 950u);
  EXPECT_EQ(b.pages_low(), 850u);
  EXPECT_FALSE(b.over_high(950));
  EXPECT_EQ(b.pages_to_evict(950), 0u);
  EXPECT_TRUE(b.over_high(951));
  EXPECT_EQ(b.pages_to_evict(951), 101u);
  EXPECT_EQ(b.pages_to_evict(5000), 4150u);
}

TEST(Budget, RoundsDown) {
  MemoryBudget b(10 * kPage + kPage - 1, 95, 85);  // a partial page is no room
  EXPECT_EQ(b.pages_budget(), 10u);
  EXPECT_EQ(b.pages_high(), 9u);  // 9.5
  EXPECT_EQ(b.pages_low(), 8u);   // 8.5
}

TEST(Budget, ZeroBudget) {
  MemoryBudget b(0, 95, 85);
  EXPECT_EQ(b.pages_budget(), 0u);
  EXPECT_EQ(b.pages_high(), 0u);
  EXPECT_EQ(b.pages_low(), 0u);
  EXPECT_FALSE(b.over_high(0));
  EXPECT_TRUE(b.over_high(1));
  EXPECT_EQ(b.pages_to_evict(1), 1u);
  MemoryBudget tiny(kPage - 1, 100, 100);
  EXPECT_EQ(tiny.pages_budget(), 0u);
}

TEST(Budget, HundredPercentWatermarks) {
  MemoryBudget b(100 * kPage, 100, 100);
  EXPECT_EQ(b.pages_high(), 100u);
  EXPECT_EQ(b.pages_low(), 100u);
  EXPECT_FALSE(b.over_high(100));
  EXPECT_EQ(b.pages_to_evict(101), 1u);
}

TEST(Budget, ZeroPercentWatermarks) {
  MemoryBudget b(100 * kPage, 0, 0);
  EXPECT_TRUE(b.over_high(1));
  EXPECT_EQ(b.pages_to_evict(7), 7u);
}

TEST(Budget, ClampsPercentsAndPageSize) {
  MemoryBudget b(100 * kPage, 150, 120, 0);
  EXPECT_EQ(b.high_pct(), 100u);
  EXPECT_EQ(b.low_pct(), 100u);
  EXPECT_EQ(b.page_size(), kPage);
  MemoryBudget inverted(100 * kPage, 80, 90);
  EXPECT_EQ(inverted.low_pct(), 80u);
  MemoryBudget huge(3ull << 21, 50, 0, 2ull << 20);  // 2 MiB pages
  EXPECT_EQ(huge.pages_budget(), 3u);
  EXPECT_EQ(huge.pages_high(), 1u);
}

TEST(Budget, PercentOfIsExactWithoutOverflow) {
  EXPECT_EQ(percent_of(UINT64_MAX, 100), UINT64_MAX);
  EXPECT_EQ(percent_of(UINT64_MAX, 50), UINT64_MAX / 2);
  EXPECT_EQ(percent_of(UINT64_MAX, 0), 0u);
  EXPECT_EQ(percent_of(199, 50), 99u);
  EXPECT_EQ(percent_of(1, 99), 0u);
}

// ---- NUMA syscalls on this machine ----

// An anonymous private mapping of n pages, unmapped at scope exit.
class AnonPages {
 public:
  explicit AnonPages(size_t n) : len_(n * kPage) {
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    addr_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~AnonPages() {
    if (addr_) munmap(addr_, len_);
  }
  AnonPages(const AnonPages&) = delete;
  AnonPages& operator=(const AnonPages&) = delete;
  char* page(size_t i) const { return addr_ + i * kPage; }
  size_t len() const { return len_; }

 private:
  size_t len_;
  char* addr_;
};

// The nodes with memory this process may use.
std::vector<int> memory_nodes() {
  sys::NodeMask allowed;
  EXPECT_EQ(sys::mems_allowed(&allowed), 0);
  std::vector<int> out;
  for (int n = 0; n < sys::NodeMask::kMaxNodes; n++)
    if (allowed.test(n)) out.push_back(n);
  return out;
}

// The first node id that has no memory here (node 1 on this machine).
int missing_node() {
  std::vector<int> nodes = memory_nodes();
  int n = 0;
  while (std::find(nodes.begin(), nodes.end(), n) != nodes.end()) n++;
  return n;
}

TEST(NodeMask, SetTestEmpty) {
  sys::NodeMask m;
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(m.set(-1));
  EXPECT_FALSE(m.set(sys::NodeMask::kMaxNodes));
  EXPECT_TRUE(m.empty());
  EXPECT_TRUE(m.set(65));
  EXPECT_TRUE(m.test(65));
  EXPECT_FALSE(m.test(64));
  EXPECT_FALSE(m.test(-1));
  EXPECT_FALSE(m.empty());
}

TEST(Numa, MemsAllowedHasNodeZero) {
  std::vector<int> nodes = memory_nodes();
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(nodes[0], 0);
}

TEST(Numa, BindEachNodeThenPagesLandThere) {
  for (int node : memory_nodes()) {
    AnonPages m(8);
    ASSERT_EQ(sys::bind_node(m.page(0), m.len(), node, MPOL_MF_STRICT), 0) << node;
    for (size_t i = 0; i < 8; i++) *m.page(i) = 1;
    EXPECT_EQ(sys::page_node(m.page(3)), node);
  }
}

TEST(Numa, BindMissingNodeIsEINVAL) {
  AnonPages m(4);
  EXPECT_EQ(sys::bind_node(m.page(0), m.len(), missing_node()), -EINVAL);
  EXPECT_EQ(sys::bind_node(m.page(0), m.len(), -1), -EINVAL);
  EXPECT_EQ(sys::bind_node(m.page(0), m.len(), sys::NodeMask::kMaxNodes), -EINVAL);
  EXPECT_EQ(sys::prefer_node(m.page(0), m.len(), missing_node()), -EINVAL);
}

TEST(Numa, PreferAndMbindMask) {
  AnonPages m(4);
  EXPECT_EQ(sys::prefer_node(m.page(0), m.len(), 0), 0);
  sys::NodeMask all;
  for (int n : memory_nodes()) all.set(n);
  EXPECT_EQ(sys::mbind(m.page(0), m.len(), MPOL_INTERLEAVE, all, 0), 0);
  EXPECT_EQ(sys::mbind(m.page(0), m.len(), MPOL_DEFAULT, sys::NodeMask{}, 0), 0);
  EXPECT_EQ(sys::mbind(m.page(0) + 1, m.len(), MPOL_BIND, all, 0), -EINVAL);  // unaligned
}

TEST(Numa, MovePagesQueryTouchedAndUntouched) {
  constexpr size_t kN = 6;
  AnonPages m(kN);
  ASSERT_EQ(sys::bind_node(m.page(0), m.len(), 0), 0);
  const void* pages[kN];
  int status[kN];
  for (size_t i = 0; i < kN; i++) {
    pages[i] = m.page(i);
    status[i] = 12345;
    if (i + 1 < kN) *m.page(i) = 1;  // the last page stays untouched
  }
  ASSERT_EQ(sys::move_pages(0, kN, pages, nullptr, status, 0), 0);
  for (size_t i = 0; i + 1 < kN; i++) EXPECT_EQ(status[i], 0) << i;
  // An untouched page: -ENOENT since Linux 6.3 or so, -EFAULT on 6.1.
  EXPECT_TRUE(status[kN - 1] == -ENOENT || status[kN - 1] == -EFAULT) << status[kN - 1];
  EXPECT_EQ(sys::page_node(m.page(0)), 0);
}

TEST(Numa, MovePagesToNodes) {
  constexpr size_t kN = 4;
  AnonPages m(kN);
  const void* pages[kN];
  int nodes[kN];
  int status[kN];
  for (size_t i = 0; i < kN; i++) {
    *m.page(i) = 1;
    pages[i] = m.page(i);
    nodes[i] = 0;
  }
  EXPECT_EQ(sys::move_pages(0, kN, pages, nodes, status, MPOL_MF_MOVE), 0);
  for (size_t i = 0; i < kN; i++) EXPECT_EQ(status[i], 0) << i;
  for (size_t i = 0; i < kN; i++) nodes[i] = missing_node();
  EXPECT_EQ(sys::move_pages(0, kN, pages, nodes, status, MPOL_MF_MOVE), -ENODEV);
}

TEST(Numa, MovePagesQueryOfUnmappedPageIsEFAULT) {
  AnonPages m(2);
  ASSERT_EQ(sys::bind_node(m.page(0), kPage, 0), 0);  // node 0 whichever CPU runs us
  *m.page(0) = 1;
  ASSERT_EQ(munmap(m.page(1), kPage), 0);  // the destructor's munmap covers it again: harmless
  const void* pages[2] = {m.page(0), m.page(1)};
  int status[2];
  ASSERT_EQ(sys::move_pages(0, 2, pages, nullptr, status, 0), 0);
  EXPECT_EQ(status[0], 0);
  EXPECT_EQ(status[1], -EFAULT);
}

TEST(Numa, PageNodeOfTouchedPage) {
  AnonPages m(1);
  ASSERT_EQ(sys::bind_node(m.page(0), kPage, 0), 0);  // node 0 whichever CPU runs us
  *m.page(0) = 1;
  EXPECT_EQ(sys::page_node(m.page(0)), 0);
  EXPECT_EQ(sys::page_node(nullptr), -EFAULT);
}

}  // namespace
// Discovery against the real /sys of a machine whose tiers are known:
// `make check-vm` sets MTIER_TEST_TOPOLOGY to "0,1:dram;2:slow" once node 2
// is onlined (kmem). Elsewhere the machine's layout is unknown, and it skips.
TEST(Topology, RealSysfsMatchesTheExpectedTiers) {
  const char* want_text = getenv("MTIER_TEST_TOPOLOGY");
  if (!want_text || !*want_text)
    GTEST_SKIP() << "MTIER_TEST_TOPOLOGY gives no expected tiers (make check-vm sets it)";
  std::vector<TierSpec> want;
  std::string error;
  ASSERT_EQ(parse_tier_override(want_text, &want, &error), 0) << error;
  Topology topo;
  ASSERT_EQ(discover_topology(&topo, &error), 0) << error;
  EXPECT_TRUE(topo.from_memory_tiering);
  ASSERT_EQ(topo.tiers.size(), want.size()) << describe(topo.tiers);
  for (size_t i = 0; i < want.size(); i++) {
    std::vector<int> got = topo.tiers[i].nodes, expect = want[i].nodes;
    std::sort(got.begin(), got.end());
    std::sort(expect.begin(), expect.end());
    EXPECT_EQ(got, expect) << "tier " << i << ": " << describe(topo.tiers);
    EXPECT_EQ(topo.tiers[i].kind, want[i].kind) << "tier " << i << ": " << describe(topo.tiers);
    EXPECT_GT(topo.tiers[i].bytes, 0u) << "tier " << i;
  }
}

}  // namespace mtier
