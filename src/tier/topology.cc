// SPDX-License-Identifier: Apache-2.0
#include "tier/topology.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <optional>
#include <utility>

#include "sys/numa_nodes.h"

namespace mtier {

namespace {

// ---- small text helpers ----

std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// A whole token as a non-negative int, or nullopt.
std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < 0) return std::nullopt;
  return v;
}

// Splits on sep; empty pieces are kept (callers reject them).
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// The whole file, or nullopt if it cannot be read. sysfs files are small.
std::optional<std::string> read_text(const std::string& path) {
  FILE* f = fopen(path.c_str(), "re");
  if (!f) return std::nullopt;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  bool ok = !ferror(f);
  fclose(f);
  if (!ok) return std::nullopt;
  return text;
}

// Ids N of the entries "<prefix>N" of a directory, ascending. nullopt if the
// directory cannot be opened.
std::optional<std::vector<int>> numbered_entries(const std::string& dir, std::string_view prefix) {
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::vector<int> ids;
  while (const dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (name.substr(0, prefix.size()) != prefix) continue;
    if (auto id = to_int(name.substr(prefix.size()))) ids.push_back(*id);
  }
  closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// ---- one node, from libnuma ----

int read_node(int id, NodeInfo* out, std::string* error) {
  out->id = id;
  long long bytes = sys::node_bytes(id);
  int cpus = sys::node_has_cpus(id);
  if (bytes < 0 || cpus < 0) {
    *error = "libnuma cannot read node " + std::to_string(id) + "'s " +
             (bytes < 0 ? "MemTotal (nodeN/meminfo)" : "CPUs (nodeN/cpumap)");
    return -EINVAL;
  }
  out->bytes = static_cast<uint64_t>(bytes);
  out->has_cpus = cpus > 0;
  return 0;
}

// Each node's distances to every node, in nodes' order; a row with an
// unknown distance (0 from libnuma) is left empty.
void read_distances(std::vector<NodeInfo>* nodes) {
  for (NodeInfo& from : *nodes) {
    for (const NodeInfo& to : *nodes) {
      int d = sys::node_distance(from.id, to.id);
      if (d <= 0) {
        from.distances.clear();
        break;
      }
      from.distances.push_back(d);
    }
  }
}

// ---- tiers ----

// The node distances are measured from: the first node with CPUs (node 0 on
// most machines), else the first node.
int reference_node(const Topology& topo) {
  for (const NodeInfo& n : topo.nodes)
    if (n.has_cpus) return n.id;
  return topo.nodes.empty() ? 0 : topo.nodes.front().id;
}

// A tier of these nodes; finish_tier fills in the rest.
MemoryTierInfo empty_tier(int rank, std::vector<int> nodes, TierKind kind) {
  MemoryTierInfo t;
  t.rank = rank;
  t.nodes = std::move(nodes);
  t.kind = kind;
  return t;
}

// Fills bytes and has_cpus from the nodes, and orders the nodes nearest first.
void finish_tier(const Topology& topo, MemoryTierInfo* tier) {
  int ref = reference_node(topo);
  auto key = [&](int id) {
    int d = topo.distance(ref, id);
    return std::make_pair(d < 0 ? INT_MAX : d, id);
  };
  std::sort(tier->nodes.begin(), tier->nodes.end(), [&](int a, int b) { return key(a) < key(b); });
  tier->bytes = 0;
  tier->has_cpus = false;
  for (int id : tier->nodes) {
    const NodeInfo* n = topo.node(id);
    tier->bytes += n->bytes;
    tier->has_cpus |= n->has_cpus;
  }
}

// Fallback ranking: CPU nodes (dram, rank 0), then CPU-less ones (slow, rank 1).
std::vector<MemoryTierInfo> tiers_by_cpus(const Topology& topo) {
  MemoryTierInfo dram = empty_tier(0, {}, TierKind::kDram);
  MemoryTierInfo slow = empty_tier(1, {}, TierKind::kSlowMemory);
  for (const NodeInfo& n : topo.nodes)
    if (n.bytes > 0) (n.has_cpus ? dram : slow).nodes.push_back(n.id);
  std::vector<MemoryTierInfo> out;
  for (MemoryTierInfo* t : {&dram, &slow}) {
    if (t->nodes.empty()) continue;
    finish_tier(topo, t);
    out.push_back(*t);
  }
  return out;
}

// A tier is dram up to and including the fastest tier with a CPU node (the
// first tier if none has one); slower tiers are slow memory.
void set_kinds(std::vector<MemoryTierInfo>* tiers) {
  auto cpu = std::find_if(tiers->begin(), tiers->end(),
                          [](const MemoryTierInfo& t) { return t.has_cpus; });
  size_t last_dram = cpu == tiers->end() ? 0 : static_cast<size_t>(cpu - tiers->begin());
  for (size_t i = 0; i < tiers->size(); i++)
    (*tiers)[i].kind = i <= last_dram ? TierKind::kDram : TierKind::kSlowMemory;
}

// Tiers from <root>/devices/virtual/memory_tiering. Returns 0 (*out empty if
// the directory is absent or lists no tier) or -EINVAL naming the bad file.
int tiers_from_sysfs(const std::string& root, const Topology& topo,
                     std::vector<MemoryTierInfo>* out, std::string* error) {
  std::string dir = root + "/devices/virtual/memory_tiering";
  auto ranks = numbered_entries(dir, "memory_tier");
  if (!ranks) return 0;
  for (int rank : *ranks) {
    std::string path = dir + "/memory_tier" + std::to_string(rank) + "/nodelist";
    auto text = read_text(path);
    MemoryTierInfo tier = empty_tier(rank, {}, TierKind::kDram);  // kind: set_kinds
    std::string_view bad;
    if (!text || !parse_node_list(trim(*text), &tier.nodes, &bad)) {
      *error = "cannot read node list in " + path + (text ? " at '" + std::string(bad) + "'" : "");
      return -EINVAL;
    }
    std::erase_if(tier.nodes, [&](int id) { return topo.node(id) == nullptr; });
    if (tier.nodes.empty()) continue;
    finish_tier(topo, &tier);
    out->push_back(std::move(tier));
  }
  set_kinds(out);
  return 0;
}

// ---- formatting ----

std::string format_bytes(uint64_t bytes) {
  char buf[32];
  double b = static_cast<double>(bytes);
  if (bytes >= (1ull << 30))
    snprintf(buf, sizeof buf, "%.1f GiB", b / (1ull << 30));
  else if (bytes >= (1ull << 20))
    snprintf(buf, sizeof buf, "%.1f MiB", b / (1ull << 20));
  else
    snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  return buf;
}

// "node 2", "nodes 0-1,3": runs of consecutive ascending ids become ranges.
std::string format_nodes(const std::vector<int>& nodes) {
  std::string out = nodes.size() == 1 ? "node " : "nodes ";
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) j++;
    if (i > 0) out += ',';
    out += std::to_string(nodes[i]);
    if (j > i) out += '-' + std::to_string(nodes[j]);
    i = j + 1;
  }
  return out;
}

// ---- override ----

std::optional<TierKind> parse_kind(std::string_view s) {
  if (s == "dram") return TierKind::kDram;
  if (s == "slow" || s == "slow-memory") return TierKind::kSlowMemory;
  return std::nullopt;
}

int override_error(std::string* error, const std::string& what, std::string_view token) {
  *error = "tier override: " + what + " '" + std::string(token) + "'";
  return -EINVAL;
}

// One "nodes:kind" group.
int parse_group(std::string_view group, TierSpec* out, std::string* error) {
  size_t colon = group.find(':');
  if (colon == std::string_view::npos)
    return override_error(error, "expected nodes:kind, got", group);
  std::string_view bad;
  if (!parse_node_list(trim(group.substr(0, colon)), &out->nodes, &bad))
    return override_error(error, "bad node list in '" + std::string(group) + "' at", bad);
  std::string_view kind = trim(group.substr(colon + 1));
  auto k = parse_kind(kind);
  if (!k) return override_error(error, "unknown tier kind (dram, slow)", kind);
  out->kind = *k;
  return 0;
}

// Rejects a node named by two groups (or twice in one).
int check_unique(const std::vector<TierSpec>& specs, std::string* error) {
  std::vector<int> seen;
  for (const TierSpec& s : specs)
    for (int id : s.nodes) {
      if (std::find(seen.begin(), seen.end(), id) != seen.end())
        return override_error(error, "node named twice:", std::to_string(id));
      seen.push_back(id);
    }
  return 0;
}

}  // namespace

const char* tier_kind_name(TierKind kind) {
  return kind == TierKind::kDram ? "dram" : "slow-memory";
}

const NodeInfo* Topology::node(int id) const {
  for (const NodeInfo& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

int Topology::distance(int from, int to) const {
  const NodeInfo* f = node(from);
  if (!f) return -1;
  for (size_t i = 0; i < nodes.size() && i < f->distances.size(); i++)
    if (nodes[i].id == to) return f->distances[i];
  return -1;
}

bool parse_node_list(std::string_view text, std::vector<int>* out, std::string_view* bad) {
  out->clear();
  if (trim(text).empty()) return true;
  for (std::string_view tok : split(text, ',')) {
    std::string_view t = trim(tok);
    size_t dash = t.find('-');
    auto lo = to_int(t.substr(0, dash));
    auto hi = dash == t.npos ? lo : to_int(t.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi >= kNodeLimit) {
      *bad = t.empty() ? tok : t;
      return false;
    }
    for (int id = *lo; id <= *hi; id++) out->push_back(id);
  }
  return true;
}

int discover_nodes(std::vector<NodeInfo>* out, std::string* error) {
  out->clear();
  if (!sys::numa_present()) {
    *error = "no NUMA in this kernel (libnuma: numa_available failed)";
    return -ENOENT;
  }
  for (int id = 0; id <= sys::max_node(); id++) {
    if (!sys::node_exists(id)) continue;
    NodeInfo n;
    if (int rc = read_node(id, &n, error); rc != 0) return rc;
    out->push_back(std::move(n));
  }
  read_distances(out);
  return 0;
}

int build_topology(std::vector<NodeInfo> nodes, const std::string& sysfs_root, Topology* out,
                   std::string* error) {
  *out = Topology{};
  if (nodes.empty()) {
    *error = "no NUMA nodes";
    return -ENOENT;
  }
  out->nodes = std::move(nodes);
  // distances[i] pairs with nodes[i] only if the row covers every node.
  for (NodeInfo& n : out->nodes)
    if (n.distances.size() != out->nodes.size()) n.distances.clear();
  if (int rc = tiers_from_sysfs(sysfs_root, *out, &out->tiers, error); rc != 0) return rc;
  out->from_memory_tiering = !out->tiers.empty();
  if (out->tiers.empty()) out->tiers = tiers_by_cpus(*out);
  return 0;
}

int discover_topology(Topology* out, std::string* error) {
  *out = Topology{};
  std::vector<NodeInfo> nodes;
  if (int rc = discover_nodes(&nodes, error); rc != 0) return rc;
  return build_topology(std::move(nodes), "/sys", out, error);
}

Topology single_node_topology(uint64_t bytes) {
  Topology topo;
  topo.nodes.push_back(NodeInfo{.id = 0, .has_cpus = true, .bytes = bytes, .distances = {10}});
  topo.tiers.push_back(empty_tier(0, {0}, TierKind::kDram));
  finish_tier(topo, &topo.tiers[0]);
  return topo;
}

std::string describe(const std::vector<MemoryTierInfo>& tiers) {
  std::string out = "memory tiers: ";
  if (tiers.empty()) return out + "none";
  for (size_t i = 0; i < tiers.size(); i++) {
    const MemoryTierInfo& t = tiers[i];
    if (i > 0) out += "; ";
    out += std::string(tier_kind_name(t.kind)) + "(" + format_nodes(t.nodes) + ", " +
           format_bytes(t.bytes) + ")";
  }
  return out;
}

int parse_tier_override(std::string_view text, std::vector<TierSpec>* out, std::string* error) {
  out->clear();
  if (trim(text).empty()) return override_error(error, "empty override", text);
  for (std::string_view group : split(text, ';')) {
    std::string_view g = trim(group);
    if (g.empty()) return override_error(error, "empty group in", text);
    TierSpec spec;
    if (int rc = parse_group(g, &spec, error); rc != 0) return rc;
    if (spec.nodes.empty()) return override_error(error, "no nodes in", g);
    out->push_back(std::move(spec));
  }
  return check_unique(*out, error);
}

int apply_tier_override(const Topology& topo, const std::vector<TierSpec>& specs,
                        std::vector<MemoryTierInfo>* out, std::string* error) {
  out->clear();
  for (size_t i = 0; i < specs.size(); i++) {
    for (int id : specs[i].nodes) {
      const NodeInfo* n = topo.node(id);
      if (!n) return override_error(error, "no such node:", std::to_string(id));
      if (n->bytes == 0) return override_error(error, "node has no memory:", std::to_string(id));
    }
    MemoryTierInfo tier = empty_tier(static_cast<int>(i), specs[i].nodes, specs[i].kind);
    finish_tier(topo, &tier);
    out->push_back(std::move(tier));
  }
  return 0;
}

}  // namespace mtier
