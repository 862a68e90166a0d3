// SPDX-License-Identifier: Apache-2.0
// mtierfs' layout (fs/fs_tree.h), its stats file (fs/prometheus.h) and its
// status cache (fs/daemon_cache.h), on a status document written here:
// path recognition (good and bad paths), what exists for a document, every
// directory's entries, owners and modes, every file's contents, who may
// write and every way a write is rejected, the Prometheus text against the
// exposition grammar, and the cache's ageing and error mapping with a fake
// daemon and clock. Also man/mtierfs.8 against the files and metrics.
#include "fs_tree.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_cache.h"
#include "prometheus.h"

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for man/mtierfs.8)"
#endif

namespace mtier::fs {
namespace {

// Two processes: 4242 of user 1000 with table 1 "hot" (8 pages, one heat
// extent a slice, two pins) and table 7 whose name needs escaping
// (no pins key); 77 of root with table 3 "cold" (empty heat map, a heat
// the daemon could not write as a number).
const char kStatus[] = R"({
  "daemon": {"pid": 10, "socket": "/run/mtier/mtierd.sock", "policy": "lfu",
             "policy_params": "keep_fraction=0.9 cool_period_s=1", "heat_source": "page-faults",
             "sources": [{"name": "pebs", "available": false, "reason": "no PMU"},
                         {"name": "ibs", "available": false, "reason": "no PMU"},
                         {"name": "page-faults", "available": true, "reason": ""}],
             "dram_bytes": 0, "slow_bytes": 0, "migrate_bytes_per_second": 268435456, "tick_seconds": 0.1,
             "heat_buckets": 16, "window_seconds": 1, "version": "0.2.0", "license": "Apache-2.0",
             "page_size_bytes": 4096,
             "moves": {"new>dram": 10, "new>slow": 0, "store>dram": 5, "store>slow": 1,
                       "slow>dram": 0, "dram>slow": 1, "dram>store": 6, "slow>store": 0},
             "tick_duration": {"buckets": [{"le": 0.001, "count": 3}, {"le": 0.01, "count": 5}],
                               "count": 6, "sum_seconds": 0.125}},
  "tiers": [
    {"name": "dram", "kind": "dram", "nodes": "0,1", "capacity_bytes": 8589934592,
     "budget_bytes": 4194304, "used_bytes": 20480, "in_bytes_per_second": 4096.4,
     "out_bytes_per_second": 8191.6},
    {"name": "slow", "kind": "slow-memory", "nodes": "", "capacity_bytes": 0, "budget_bytes": 0,
     "used_bytes": 4096, "in_bytes_per_second": 0, "out_bytes_per_second": 0},
    {"name": "store", "kind": "store", "nodes": "", "capacity_bytes": 0, "budget_bytes": 0,
     "used_bytes": 12288, "in_bytes_per_second": 0, "out_bytes_per_second": 0}],
  "processes": [
    {"pid": 4242, "uid": 1000, "name": "trainer", "weight": 100, "stale": false,
     "dram_budget_bytes": 4194304, "dram_assigned_bytes": 0, "dram_resident_bytes": 20480,
     "slow_budget_bytes": 0, "slow_resident_bytes": 4096, "missing_faults": 321,
     "minor_faults": 5, "evictions": 6, "fetches": 7, "faults_per_second": 2.5, "heat_source": true,
     "job": "j1", "rank": 0, "prefetch_pages": 8, "prefetch_reads": 4, "prefetch_hits": 3,
     "prefetch_late": 1, "pinned_bytes": 8192, "store_errors": 2, "store_full": 1,
     "page_size_bytes": 4096, "wp_faults": 11, "zero_fills": 12, "prefetches": 13,
     "writebacks": 14, "demotions": 15, "promotions": 16, "evict_cancels": 17,
     "budget_overruns": 18, "child_faults": 19, "held_bytes": 40960,
     "samples": 900, "unattributed_samples": 9, "orders_sent": 3, "orders_dropped": 0,
     "pages_ordered": 12,
     "tables": [
       {"id": 1, "name": "hot", "bytes": 32768, "pages": 8, "dram_pages": 4, "slow_pages": 1,
        "store_pages": 2, "untouched_pages": 1, "heat": 349.125, "samples_per_second": 10.75,
        "active_bytes": 16384,
        "moves": {"new>dram": 4, "new>slow": 0, "store>dram": 3, "store>slow": 1,
                  "slow>dram": 0, "dram>slow": 1, "dram>store": 2, "slow>store": 0},
        "moves_per_second": {"new>dram": 1, "new>slow": 0, "store>dram": 2.5, "store>slow": 0.5,
                        "slow>dram": 0, "dram>slow": 0, "dram>store": 1, "slow>store": 0},
        "heat_map": [100, 90, 80, 70, 5, 4, 0.125, 0],
        "place": "DDDDms~ ",
        "pins": [{"first_page": 0, "pages": 4, "tier": "dram"},
                 {"first_page": 6, "pages": 2, "tier": "store"}]},
       {"id": 7, "name": "emb \"user\"/id\\x", "bytes": 4096, "pages": 1, "dram_pages": 1,
        "slow_pages": 0, "store_pages": 0, "untouched_pages": 0, "heat": 0,
        "samples_per_second": 0, "active_bytes": 0, "moves": {}, "moves_per_second": {},
        "heat_map": [0], "place": "D"}]},
    {"pid": 77, "uid": 0, "name": "we\"ird\\name", "weight": 1, "stale": true,
     "dram_budget_bytes": 0, "dram_assigned_bytes": 0, "dram_resident_bytes": 0,
     "slow_budget_bytes": 0, "slow_resident_bytes": 0, "missing_faults": 0, "minor_faults": 0,
     "evictions": 0, "fetches": 0, "faults_per_second": 0, "heat_source": false, "samples": 0,
     "unattributed_samples": 0, "orders_sent": 0, "orders_dropped": 0, "pages_ordered": 0,
     "tables": [
       {"id": 3, "name": "cold", "bytes": 8192, "pages": 2, "dram_pages": 0, "slow_pages": 0,
        "store_pages": 0, "untouched_pages": 2, "heat": null, "samples_per_second": 0,
        "active_bytes": 0, "moves": {"new>dram": 0}, "moves_per_second": {"new>dram": 0},
        "heat_map": [], "place": "", "pins": []}]}],
  "jobs": [{"name": "j1", "uid": 1000, "dram_budget_bytes": 4194304, "dram_assigned_bytes": 0,
            "dram_resident_bytes": 20480, "ranks": [{"pid": 4242, "rank": 0}], "world_size": 4,
            "conflict": ""}]
})";

json::Json parse_doc(const std::string& text) {
  json::Json v;
  std::string why;
  EXPECT_EQ(json::parse(text, &v, &why), 0) << why;
  return v;
}

const json::Json& doc() {
  static const json::Json v = parse_doc(kStatus);
  return v;
}

// The same node with a slow memory tier (node 2, of unknown capacity).
const json::Json& doc_with_slow() {
  static const json::Json v = [] {
    std::string text = kStatus;
    const std::string none = R"("kind": "slow-memory", "nodes": "")";
    text.replace(text.find(none), none.size(), R"("kind": "slow-memory", "nodes": "2")");
    return parse_doc(text);
  }();
  return v;
}

Node node(const std::string& path) {
  Node n;
  EXPECT_EQ(parse_path(path, &n), 0) << path;
  return n;
}

std::string content(const std::string& path, const json::Json* heat = nullptr) {
  std::string out, why;
  int rc = file_content(doc(), heat ? heat : &doc(), node(path), &out, &why);
  EXPECT_EQ(rc, 0) << path << ": " << why;
  return out;
}

// ---- paths

TEST(FsPath, RecognizesEveryKindOfNode) {
  Node n = node("/");
  EXPECT_EQ(n.type, NodeType::kRoot);
  EXPECT_EQ(node("/policy").file, FileKind::kPolicy);
  EXPECT_EQ(node("/stats").file, FileKind::kStats);
  EXPECT_EQ(node("/tiers").type, NodeType::kTiers);
  EXPECT_EQ(node("/tiers/").type, NodeType::kTiers);
  n = node("/tiers/slow");
  EXPECT_EQ(n.type, NodeType::kTier);
  EXPECT_EQ(n.tier, 1);
  n = node("/tiers/store/bandwidth");
  EXPECT_EQ(n.type, NodeType::kFile);
  EXPECT_EQ(n.file, FileKind::kTierBandwidth);
  EXPECT_EQ(n.tier, 2);
  EXPECT_EQ(node("/procs").type, NodeType::kProcs);
  n = node("/procs/4242");
  EXPECT_EQ(n.type, NodeType::kProc);
  EXPECT_EQ(n.pid, 4242u);
  EXPECT_EQ(node("/procs/4242/name").file, FileKind::kProcName);
  EXPECT_EQ(node("/procs/4242/weight").file, FileKind::kProcWeight);
  EXPECT_EQ(node("/procs/4242/tables").type, NodeType::kTables);
  n = node("/procs/4242/tables/1-hot");
  EXPECT_EQ(n.type, NodeType::kTable);
  EXPECT_EQ(n.table_id, 1u);
  EXPECT_EQ(n.table_dir, "1-hot");
  n = node("/procs/4242/tables/1-hot/pin");
  EXPECT_EQ(n.file, FileKind::kTablePin);
  EXPECT_EQ(n.pid, 4242u);
  EXPECT_EQ(n.table_id, 1u);
  const std::map<std::string, FileKind> files = {{"size", FileKind::kTableSize},
                                                 {"resident", FileKind::kTableResident},
                                                 {"tier_bytes", FileKind::kTableTierBytes},
                                                 {"heat", FileKind::kTableHeat},
                                                 {"faults", FileKind::kTableFaults},
                                                 {"migrations", FileKind::kTableMigrations},
                                                 {"placement", FileKind::kTablePlacement},
                                                 {"heatmap", FileKind::kTableHeatmap},
                                                 {"pin", FileKind::kTablePin}};
  for (const auto& [name, kind] : files)
    EXPECT_EQ(node("/procs/4242/tables/1-hot/" + name).file, kind) << name;
}

TEST(FsPath, RejectsWhatIsNotInTheLayout) {
  for (const char* bad : {"",
                          "policy",
                          "/nosuch",
                          "/policy/x",
                          "//",
                          "/./policy",
                          "/tiers/..",
                          "/tiers//dram",
                          "/tiers/nvme",
                          "/tiers/dram/nosuch",
                          "/tiers/dram/used/x",
                          "/procs/0",
                          "/procs/012",
                          "/procs/abc",
                          "/procs/-1",
                          "/procs/+5",
                          "/procs/4294967296",
                          "/procs/42/nosuch",
                          "/procs/42/name/x",
                          "/procs/42/tables/hot",
                          "/procs/42/tables/x-hot",
                          "/procs/42/tables/01-hot",
                          "/procs/42/tables/-hot",
                          "/procs/42/tables/1-hot/nosuch",
                          "/procs/42/tables/1-hot/pin/x",
                          "/procs/42/tables/1-hot/./pin",
                          "/procs/42/weight/tables"}) {
    Node n;
    EXPECT_EQ(parse_path(bad, &n), -ENOENT) << "'" << bad << "'";
  }
}

TEST(FsPath, TableDirectoryNames) {
  EXPECT_EQ(table_dir_name(1, "hot"), "1-hot");
  EXPECT_EQ(table_dir_name(12, "emb.user_id-2"), "12-emb.user_id-2");
  EXPECT_EQ(table_dir_name(7, "emb \"user\"/id\\x"), "7-emb__user__id_x");
  EXPECT_EQ(table_dir_name(3, "\xc3\xa9t\xc3\xa9"), "3-__t__");
  EXPECT_EQ(table_dir_name(4, ""), "4-");
  EXPECT_EQ(table_dir_name(5, "a\nb"), "5-a_b");
}

TEST(FsPath, ResolvesAgainstTheDocument) {
  for (const char* good :
       {"/", "/policy", "/stats", "/tiers/dram/used", "/procs", "/procs/4242", "/procs/77/name",
        "/procs/4242/tables", "/procs/4242/tables/1-hot",
        "/procs/4242/tables/7-emb__user__id_x/size", "/procs/77/tables/3-cold/pin"})
    EXPECT_EQ(resolve(&doc(), node(good)), 0) << good;
  for (const char* gone :
       {"/procs/999", "/procs/999/name", "/procs/4242/tables/2-hot", "/procs/4242/tables/1-cold",
        "/procs/4242/tables/1-hot_", "/procs/4242/tables/3-cold", "/procs/77/tables/1-hot/size",
        "/procs/4242/tables/7-emb \"user\"/id\\x"}) {
    Node n;
    if (parse_path(gone, &n) == 0) {
      EXPECT_EQ(resolve(&doc(), n), -ENOENT) << gone;
    }
  }
  // No daemon: the fixed layout is there, no process is.
  EXPECT_EQ(resolve(nullptr, node("/tiers/dram/budget")), 0);
  EXPECT_EQ(resolve(nullptr, node("/procs")), 0);
  EXPECT_EQ(resolve(nullptr, node("/procs/4242")), -ENOENT);
}

// ---- directories, owners, modes

TEST(FsTree, ListsEveryDirectory) {
  using V = std::vector<std::string>;
  EXPECT_EQ(list_dir(&doc(), node("/")), (V{"policy", "procs", "stats", "tiers"}));
  EXPECT_EQ(list_dir(&doc(), node("/tiers")), (V{"dram", "slow", "store"}));
  EXPECT_EQ(list_dir(&doc(), node("/tiers/slow")),
            (V{"kind", "node", "capacity", "budget", "used", "bandwidth"}));
  EXPECT_EQ(list_dir(&doc(), node("/procs")), (V{"4242", "77"}));
  EXPECT_EQ(list_dir(&doc(), node("/procs/77")), (V{"name", "weight", "counters", "tables"}));
  EXPECT_EQ(list_dir(&doc(), node("/procs/4242/tables")), (V{"1-hot", "7-emb__user__id_x"}));
  EXPECT_EQ(list_dir(&doc(), node("/procs/4242/tables/1-hot")),
            (V{"size", "resident", "tier_bytes", "heat", "faults", "migrations", "placement",
               "heatmap", "pin"}));
  // Without a daemon: the same fixed directories, no processes.
  EXPECT_EQ(list_dir(nullptr, node("/")), (V{"policy", "procs", "stats", "tiers"}));
  EXPECT_EQ(list_dir(nullptr, node("/tiers")), (V{"dram", "slow", "store"}));
  EXPECT_TRUE(list_dir(nullptr, node("/procs")).empty());
}

TEST(FsTree, OwnersAndModes) {
  struct Case {
    const char* path;
    bool dir;
    mode_t mode;
    uid_t uid;
  } cases[] = {
      {"/", true, 0555, 0},
      {"/policy", false, 0644, 0},
      {"/stats", false, 0444, 0},
      {"/tiers", true, 0555, 0},
      {"/tiers/dram", true, 0555, 0},
      {"/tiers/dram/budget", false, 0644, 0},
      {"/tiers/slow/budget", false, 0644, 0},
      {"/tiers/store/budget", false, 0444, 0},
      {"/tiers/dram/used", false, 0444, 0},
      {"/tiers/dram/kind", false, 0444, 0},
      {"/procs", true, 0555, 0},
      {"/procs/4242", true, 0555, 1000},
      {"/procs/4242/name", false, 0444, 1000},
      {"/procs/4242/weight", false, 0444, 1000},
      {"/procs/4242/tables", true, 0555, 1000},
      {"/procs/4242/tables/1-hot", true, 0555, 1000},
      {"/procs/4242/tables/1-hot/size", false, 0444, 1000},
      {"/procs/4242/tables/1-hot/heatmap", false, 0444, 1000},
      {"/procs/4242/tables/1-hot/placement", false, 0444, 1000},
      {"/procs/4242/tables/1-hot/pin", false, 0644, 1000},
      {"/procs/77/tables/3-cold/pin", false, 0644, 0},
  };
  for (const Case& c : cases) {
    Attr a = attributes(&doc(), node(c.path));
    EXPECT_EQ(a.dir, c.dir) << c.path;
    EXPECT_EQ(a.mode, c.mode) << c.path;
    EXPECT_EQ(a.uid, c.uid) << c.path;
  }
  EXPECT_TRUE(writable(node("/policy")));
  EXPECT_TRUE(writable(node("/tiers/dram/budget")));
  EXPECT_FALSE(writable(node("/tiers/store/budget")));
  EXPECT_FALSE(writable(node("/stats")));
  EXPECT_FALSE(writable(node("/procs/4242/tables/1-hot")));
  EXPECT_FALSE(writable(node("/procs/4242/tables/1-hot/placement")));
}

// ---- contents

TEST(FsContent, DaemonFiles) {
  EXPECT_EQ(content("/policy"), "lfu keep_fraction=0.9 cool_period_s=1\n");
  json::Json bare = parse_doc(R"({"daemon": {"policy": "static", "policy_params": ""}})");
  std::string out, why;
  ASSERT_EQ(file_content(bare, nullptr, node("/policy"), &out, &why), 0);
  EXPECT_EQ(out, "static\n");
  EXPECT_EQ(file_content(doc(), nullptr, node("/stats"), &out, &why), -EINVAL);
  EXPECT_EQ(file_content(doc(), nullptr, node("/tiers"), &out, &why), -EINVAL);
}

TEST(FsContent, TierFiles) {
  EXPECT_EQ(content("/tiers/dram/kind"), "dram\n");
  EXPECT_EQ(content("/tiers/dram/node"), "0,1\n");
  EXPECT_EQ(content("/tiers/dram/capacity"), "8589934592\n");
  EXPECT_EQ(content("/tiers/dram/budget"), "4194304\n");
  EXPECT_EQ(content("/tiers/dram/used"), "20480\n");
  EXPECT_EQ(content("/tiers/dram/bandwidth"), "in 4096 out 8192\n");
  EXPECT_EQ(content("/tiers/slow/kind"), "slow-memory\n");
  EXPECT_EQ(content("/tiers/slow/node"), "\n");
  EXPECT_EQ(content("/tiers/slow/capacity"), "0\n");
  EXPECT_EQ(content("/tiers/slow/used"), "4096\n");
  EXPECT_EQ(content("/tiers/store/kind"), "store\n");
  EXPECT_EQ(content("/tiers/store/used"), "12288\n");
  EXPECT_EQ(content("/tiers/store/bandwidth"), "in 0 out 0\n");
  json::Json no_tiers = parse_doc(R"({"tiers": []})");
  std::string out, why;
  EXPECT_EQ(file_content(no_tiers, nullptr, node("/tiers/slow/used"), &out, &why), -ENOENT);
  EXPECT_NE(why.find("slow"), std::string::npos) << why;
}

TEST(FsContent, ProcessAndTableFiles) {
  EXPECT_EQ(content("/procs/4242/name"), "trainer\n");
  EXPECT_EQ(content("/procs/4242/weight"), "100\n");
  // The runtime's counters; a version-1 runtime's (77) has no wp_faults.
  std::string counters = content("/procs/4242/counters");
  for (const char* line : {"missing_faults 321\n", "wp_faults 11\n", "evictions 6\n",
                           "store_full 1\n", "prefetch_reads 4\n", "orders_sent 3\n"})
    EXPECT_NE(counters.find(line), std::string::npos) << line << "in:\n" << counters;
  EXPECT_EQ(content("/procs/77/counters").find("wp_faults"), std::string::npos);
  EXPECT_EQ(content("/procs/77/name"), "we\"ird\\name\n");
  const std::string t = "/procs/4242/tables/1-hot/";
  EXPECT_EQ(content(t + "size"), "32768\n");
  EXPECT_EQ(content(t + "resident"), "20480\n");  // (4 + 1) pages
  EXPECT_EQ(content(t + "tier_bytes"), "dram 16384\nslow 4096\nstore 8192\nuntouched 4096\n");
  EXPECT_EQ(content(t + "heat"), "heat 349.125\nsamples_per_second 10.75\n");
  // 1 + 0 + 2.5 + 0.5 pages faulted in per second; the process's counter.
  EXPECT_EQ(content(t + "faults"), "faults_per_second 4\nmissing_faults 321\n");
  EXPECT_EQ(content(t + "migrations"),
            "new>dram 4 1\nnew>slow 0 0\nstore>dram 3 2.5\nstore>slow 1 0.5\n"
            "slow>dram 0 0\ndram>slow 1 0\ndram>store 2 1\nslow>store 0 0\n");
  EXPECT_EQ(content(t + "placement"), "place DDDDms~ \npin dram 0 4\npin store 6 2\n");
  EXPECT_EQ(content(t + "pin"), "dram 0 4\nstore 6 2\n");
  // A table without a pins key (a daemon without pins) has none.
  const std::string e = "/procs/4242/tables/7-emb__user__id_x/";
  EXPECT_EQ(content(e + "pin"), "");
  EXPECT_EQ(content(e + "placement"), "place D\n");
  EXPECT_EQ(content(e + "migrations"), "");
  EXPECT_EQ(content(e + "heatmap"), "0 1 0 D\n");
  // A heat the daemon wrote as null; an empty heat map.
  const std::string c = "/procs/77/tables/3-cold/";
  EXPECT_EQ(content(c + "heat"), "heat nan\nsamples_per_second 0\n");
  EXPECT_EQ(content(c + "heatmap"), "");
  EXPECT_EQ(content(c + "migrations"), "new>dram 0 0\n");
  // Rates that are not an object, a kind they lack: nan, never a throw.
  json::Json odd = parse_doc(R"({"processes": [{"pid": 5, "name": "p", "tables": [{"id": 1,
      "name": "t", "pages": 1, "moves": {"zz>new": 1, "new>dram": 2}, "moves_per_second": "x"}]}]})");
  std::string odd_out, odd_why;
  EXPECT_EQ(file_content(odd, &odd, node("/procs/5/tables/1-t/migrations"), &odd_out, &odd_why), 0)
      << odd_why;
  EXPECT_EQ(odd_out, "new>dram 2 nan\nzz>new 1 nan\n");
  EXPECT_EQ(content(c + "tier_bytes"), "dram 0\nslow 0\nstore 0\nuntouched 8192\n");
  std::string out, why;
  EXPECT_EQ(file_content(doc(), &doc(), node("/procs/999/name"), &out, &why), -ENOENT);
  EXPECT_EQ(file_content(doc(), &doc(), node("/procs/4242/tables/2-x/size"), &out, &why), -ENOENT);
}

TEST(FsContent, HeatmapOneLinePerExtent) {
  // 8 slices of 8 pages, fewer than heat_buckets: one extent (page) each;
  // the untouched slice shows '.'.
  EXPECT_EQ(content("/procs/4242/tables/1-hot/heatmap"),
            "0 1 100 D\n1 1 90 D\n2 1 80 D\n3 1 70 D\n4 1 5 m\n5 1 4 s\n6 1 0.125 ~\n7 1 0 .\n");
  // The heat document is another one than the status (HEAT_REQUEST): the
  // heatmap comes from it, and a table it lacks is an error.
  json::Json heat = parse_doc(R"({"daemon": {"heat_buckets": 4096}, "processes": [
      {"pid": 4242, "tables": [{"id": 1, "pages": 10, "heat_map": [1, 2, 3], "place": "DsD"}]}]})");
  // 3 slices of 10 pages: extents of 4 pages (the smallest size giving 3).
  EXPECT_EQ(content("/procs/4242/tables/1-hot/heatmap", &heat), "0 4 1 D\n4 4 2 s\n8 2 3 D\n");
  std::string out, why;
  EXPECT_EQ(
      file_content(doc(), &heat, node("/procs/4242/tables/7-emb__user__id_x/heatmap"), &out, &why),
      -ENOENT);
  EXPECT_EQ(file_content(doc(), nullptr, node("/procs/4242/tables/1-hot/heatmap"), &out, &why),
            -ENOENT);
}

TEST(FsContent, HeatmapSlicesOfSeveralExtents) {
  // As many slices as the document's heat_buckets: extents of one page
  // (mtierd's default) unless the daemon says; 10 pages in 4 slices is
  // extents [0,2) [2,5) [5,7) [7,10), as daemon/status_json.cc cuts them.
  json::Json heat = parse_doc(R"({"daemon": {"heat_buckets": 4}, "processes": [
      {"pid": 4242, "tables": [{"id": 1, "pages": 10, "heat_map": [1, 2, 3, 4],
                                "place": "DDss"}]}]})");
  EXPECT_EQ(content("/procs/4242/tables/1-hot/heatmap", &heat),
            "0 2 1 D\n2 3 2 D\n5 2 3 s\n7 3 4 s\n");
  // With heat_granularity 2: 5 extents, slices of extents [0,1) [1,2) [2,3) [3,5).
  heat["daemon"]["heat_granularity"] = 2;
  EXPECT_EQ(content("/procs/4242/tables/1-hot/heatmap", &heat),
            "0 2 1 D\n2 2 2 D\n4 2 3 s\n6 4 4 s\n");
}

// ---- writes

TEST(FsWrite, WhoMayWrite) {
  std::string why;
  EXPECT_EQ(check_writer(doc(), node("/policy"), 0, &why), 0);
  EXPECT_EQ(check_writer(doc(), node("/tiers/dram/budget"), 0, &why), 0);
  EXPECT_EQ(check_writer(doc(), node("/procs/4242/tables/1-hot/pin"), 0, &why), 0);
  EXPECT_EQ(check_writer(doc(), node("/procs/4242/tables/1-hot/pin"), 1000, &why), 0);
  EXPECT_EQ(check_writer(doc(), node("/procs/4242/tables/1-hot/pin"), 65534, &why), -EACCES);
  EXPECT_EQ(why, "not the process's user");
  EXPECT_EQ(check_writer(doc(), node("/procs/77/tables/3-cold/pin"), 1000, &why), -EACCES);
  EXPECT_EQ(why, "not the process's user");
  EXPECT_EQ(check_writer(doc(), node("/policy"), 1000, &why), -EACCES);
  EXPECT_EQ(why, "not root");
  EXPECT_EQ(check_writer(doc(), node("/tiers/slow/budget"), 65534, &why), -EACCES);
  EXPECT_EQ(why, "not root");
}

ipc::Message policy_msg(const std::string& name, const std::string& params) {
  return ipc::Message{ipc::PolicySet{name, params}};
}
ipc::Message budget_msg(uint32_t tier, uint64_t bytes) {
  return ipc::Message{ipc::BudgetSet{tier, bytes}};
}
ipc::Message pin_msg(uint32_t pid, uint32_t table, uint64_t first, uint64_t pages, uint32_t tier) {
  return ipc::Message{ipc::PinSet{pid, table, first, pages, tier}};
}

ipc::Message parsed(const std::string& path, const std::string& text,
                    const json::Json& status = doc()) {
  ipc::Message m;
  std::string why;
  EXPECT_EQ(parse_write(status, node(path), text, &m, &why), 0)
      << path << " '" << text << "': " << why;
  return m;
}

std::string rejected(const std::string& path, const std::string& text) {
  ipc::Message m;
  std::string why;
  EXPECT_EQ(parse_write(doc(), node(path), text, &m, &why), -EINVAL) << path << " '" << text << "'";
  EXPECT_FALSE(why.empty()) << path << " '" << text << "'";
  return why;
}

TEST(FsWrite, Policy) {
  EXPECT_EQ(parsed("/policy", "lru\n"), policy_msg("lru", ""));
  EXPECT_EQ(parsed("/policy", "lru keep_fraction=0.5\n"), policy_msg("lru", "keep_fraction=0.5"));
  EXPECT_EQ(parsed("/policy", "  lfu\tkeep_fraction=0.8   cool_period_s=2 "),
            policy_msg("lfu", "keep_fraction=0.8 cool_period_s=2"));
  EXPECT_NE(rejected("/policy", "nosuch\n").find("unknown policy"), std::string::npos);
  EXPECT_NE(rejected("/policy", "lru bogus=1").find("bogus"), std::string::npos);
  EXPECT_NE(rejected("/policy", "lru keep_fraction=7").find("keep_fraction"), std::string::npos);
  EXPECT_NE(rejected("/policy", "lru keep_fraction").find("not key=value"), std::string::npos);
  EXPECT_EQ(rejected("/policy", ""), "an empty write");
  EXPECT_EQ(rejected("/policy", " \n"), "an empty write");
  EXPECT_EQ(rejected("/policy", "lru\nlfu\n"), "more than one line");
  EXPECT_NE(rejected("/policy", std::string(5000, 'x')).find("more than"), std::string::npos);
  EXPECT_NE(rejected("/policy", std::string(65, 'x')).find("too long"), std::string::npos);
  EXPECT_NE(rejected("/policy", "lru " + std::string(1100, 'k') + "=1").find("too long"),
            std::string::npos);
}

TEST(FsWrite, Budget) {
  EXPECT_EQ(parsed("/tiers/dram/budget", "64M\n"), budget_msg(0, 64ull << 20));
  EXPECT_EQ(parsed("/tiers/dram/budget", "0"), budget_msg(0, 0));
  EXPECT_EQ(parsed("/tiers/dram/budget", "1073741824"), budget_msg(0, 1ull << 30));
  EXPECT_EQ(parsed("/tiers/dram/budget", "8G"), budget_msg(0, 8ull << 30));
  // The slow tier's capacity is unknown (0): no local bound.
  EXPECT_EQ(parsed("/tiers/slow/budget", "4T", doc_with_slow()), budget_msg(1, 4ull << 40));
  // A node without one: a budget for it is refused; 0 (none) is not.
  EXPECT_NE(rejected("/tiers/slow/budget", "4T").find("tier slow does not exist"),
            std::string::npos);
  EXPECT_EQ(parsed("/tiers/slow/budget", "0"), budget_msg(1, 0));
  EXPECT_NE(rejected("/tiers/dram/budget", "12x\n").find("not a size"), std::string::npos);
  EXPECT_NE(rejected("/tiers/dram/budget", "1.5G").find("not a size"), std::string::npos);
  EXPECT_NE(rejected("/tiers/dram/budget", "-1").find("not a size"), std::string::npos);
  EXPECT_NE(rejected("/tiers/dram/budget", "64M 1").find("not one size"), std::string::npos);
  EXPECT_NE(rejected("/tiers/dram/budget", "99999999999999999999").find("too large"),
            std::string::npos);
  EXPECT_NE(rejected("/tiers/dram/budget", "8193M").find("capacity"), std::string::npos);
  EXPECT_EQ(rejected("/tiers/dram/budget", ""), "an empty write");
  EXPECT_EQ(rejected("/tiers/store/budget", "1G"), "the file is read-only");
}

TEST(FsWrite, Pin) {
  const std::string hot = "/procs/4242/tables/1-hot/pin";
  EXPECT_EQ(parsed(hot, "dram\n"), pin_msg(4242, 1, 0, 8, ipc::kPinDram));
  EXPECT_EQ(parsed(hot, "slow", doc_with_slow()), pin_msg(4242, 1, 0, 8, ipc::kPinSlow));
  EXPECT_NE(rejected(hot, "slow").find("tier slow does not exist"), std::string::npos);
  EXPECT_NE(rejected(hot, "slow 2 5").find("tier slow does not exist"), std::string::npos);
  EXPECT_EQ(parsed(hot, "store 2 5\n"), pin_msg(4242, 1, 2, 5, ipc::kPinStore));
  EXPECT_EQ(parsed(hot, "dram 7 1"), pin_msg(4242, 1, 7, 1, ipc::kPinDram));
  EXPECT_EQ(parsed(hot, "none"), pin_msg(4242, 1, 0, 8, ipc::kUnpin));
  EXPECT_EQ(parsed(hot, "none 6 2"), pin_msg(4242, 1, 6, 2, ipc::kUnpin));
  EXPECT_NE(rejected(hot, "nvme").find("unknown tier"), std::string::npos);
  EXPECT_NE(rejected(hot, "DRAM").find("unknown tier"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 5").find("TIER [FIRST_PAGE PAGES]"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 1 2 3").find("TIER [FIRST_PAGE PAGES]"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 0 0").find("no pages"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 8 1").find("outside the table"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 0 9").find("outside the table"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 999999999 5").find("outside the table"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 1 18446744073709551615").find("outside the table"),
            std::string::npos);
  EXPECT_NE(rejected(hot, "dram 99999999999999999999 1").find("not a page number"),
            std::string::npos);
  EXPECT_NE(rejected(hot, "dram -1 5").find("not a page number"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram +1 5").find("not a page number"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 0x1 5").find("not a page number"), std::string::npos);
  EXPECT_NE(rejected(hot, "dram 1 4K").find("not a page count"), std::string::npos);
  EXPECT_EQ(rejected(hot, "dram\nnone"), "more than one line");
  EXPECT_EQ(rejected(hot, ""), "an empty write");
  // A table that went away since the path was looked up.
  EXPECT_NE(rejected("/procs/4242/tables/9-gone/pin", "dram").find("gone"), std::string::npos);
  EXPECT_EQ(rejected("/procs/4242/tables/1-hot/size", "1"), "the file is read-only");
}

// ---- numbers

TEST(FsNumbers, Text) {
  EXPECT_EQ(number_text(0.0), "0");
  EXPECT_EQ(number_text(10697285632.0), "10697285632");
  EXPECT_EQ(number_text(349.125), "349.125");
  EXPECT_EQ(number_text(-2.5), "-2.5");
  EXPECT_EQ(number_text(1e20), "1e+20");
  EXPECT_EQ(number_text(NAN), "nan");
  EXPECT_EQ(number_text(parse_doc("null")), "nan");
}

// ---- Prometheus

// The text format 0.0.4's grammar, by hand (std::regex trips g++ 12's
// -Wmaybe-uninitialized under the sanitizers, and -Werror is on).
bool name_char(char c, bool first, bool colon) {
  return isalpha(static_cast<unsigned char>(c)) || c == '_' || (colon && c == ':') ||
         (!first && isdigit(static_cast<unsigned char>(c)));
}

// A metric name (colon allowed) or label name at s[*i]; advances *i.
bool take_name(std::string_view s, size_t* i, bool metric, std::string* out) {
  size_t start = *i;
  while (*i < s.size() && name_char(s[*i], *i == start, metric)) ++*i;
  *out = std::string(s.substr(start, *i - start));
  return *i > start;
}

bool digits(std::string_view s, size_t* i) {
  size_t start = *i;
  while (*i < s.size() && isdigit(static_cast<unsigned char>(s[*i]))) ++*i;
  return *i > start;
}

// NaN, +Inf, -Inf or a decimal number with an optional exponent.
bool sample_value_ok(std::string_view v) {
  if (v == "NaN" || v == "+Inf" || v == "-Inf") return true;
  size_t i = 0;
  if (i < v.size() && (v[i] == '-' || v[i] == '+')) i++;
  if (!digits(v, &i)) return false;
  if (i < v.size() && v[i] == '.' && !(++i, digits(v, &i))) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    i++;
    if (i < v.size() && (v[i] == '-' || v[i] == '+')) i++;
    if (!digits(v, &i)) return false;
  }
  return i == v.size();
}

// name [{label="value"[,label="value"...]}] value, with the escapes \\ \" \n
// only; *name gets the metric name.
bool sample_line_ok(std::string_view s, std::string* name) {
  size_t i = 0;
  std::string label;
  if (!take_name(s, &i, true, name)) return false;
  if (i < s.size() && s[i] == '{') {
    do {
      i++;
      if (!take_name(s, &i, false, &label) || s.substr(i, 2) != "=\"") return false;
      for (i += 2; i < s.size() && s[i] != '"'; i++)
        if (s[i] == '\\' && (++i >= s.size() || (s[i] != '\\' && s[i] != '"' && s[i] != 'n')))
          return false;
      if (i++ >= s.size()) return false;  // the closing quote
    } while (i < s.size() && s[i] == ',');
    if (i >= s.size() || s[i++] != '}') return false;
  }
  if (i >= s.size() || s[i++] != ' ') return false;
  return sample_value_ok(s.substr(i));
}

// "# HELP name text" (text escaping \\ and \n only) or "# TYPE name
// counter|gauge": *name and *rest (the text or the type).
bool comment_line_ok(std::string_view s, std::string_view keyword, std::string* name,
                     std::string* rest) {
  std::string head = "# " + std::string(keyword) + " ";
  if (!s.starts_with(head)) return false;
  size_t i = head.size();
  if (!take_name(s, &i, true, name) || i >= s.size() || s[i++] != ' ') return false;
  *rest = std::string(s.substr(i));
  if (keyword == "TYPE") return *rest == "counter" || *rest == "gauge" || *rest == "histogram";
  for (size_t j = 0; j < rest->size(); j++)
    if ((*rest)[j] == '\\' && (++j >= rest->size() || ((*rest)[j] != '\\' && (*rest)[j] != 'n')))
      return false;
  return true;
}

TEST(Prometheus, GrammarCheckerItself) {
  std::string name, rest;
  for (const char* good : {"a 1", "a_b:c{x=\"y\"} -1.5e+3", "m{a=\"\\\"\\\\\\n\",b=\"\"} NaN",
                           "m +Inf", "m 10", "m 0.25"})
    EXPECT_TRUE(sample_line_ok(good, &name)) << good;
  for (const char* bad : {"", "1a 1", "a", "a  1", "a 1 ", "a{} 1", "a{x=y} 1", "a{x=\"y} 1",
                          "a{x=\"\\q\"} 1", "a{x=\"y\",} 1", "a{1x=\"y\"} 1", "a{x:y=\"z\"} 1",
                          "a 1.", "a .5", "a 1e", "a nan", "a Inf", "a{x=\"y\"}1"})
    EXPECT_FALSE(sample_line_ok(bad, &name)) << bad;
  EXPECT_TRUE(comment_line_ok("# HELP a_b x \\\\ y \\n z", "HELP", &name, &rest));
  EXPECT_FALSE(comment_line_ok("# HELP a_b bad \\t", "HELP", &name, &rest));
  EXPECT_TRUE(comment_line_ok("# TYPE a_total counter", "TYPE", &name, &rest));
  EXPECT_FALSE(comment_line_ok("# TYPE a summary", "TYPE", &name, &rest));
}

struct Family {
  std::string type;
  int samples = 0;
};

// Checks the grammar and the order of `text`; returns the families.
std::map<std::string, Family> check_exposition(const std::string& text) {
  std::map<std::string, Family> families;
  std::istringstream in(text);
  std::string line, help_of, current;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  while (std::getline(in, line)) {
    std::string name, rest;
    if (comment_line_ok(line, "HELP", &name, &rest)) {
      EXPECT_EQ(families.count(name), 0u) << "HELP twice for " << name;
      help_of = name;
    } else if (comment_line_ok(line, "TYPE", &name, &rest)) {
      EXPECT_EQ(help_of, name) << "TYPE without HELP just before: " << line;
      EXPECT_EQ(families.count(name), 0u) << "TYPE twice: " << line;
      current = name;
      families[current].type = rest;
      EXPECT_EQ(rest == "counter", current.ends_with("_total")) << line;
    } else {
      bool sample = sample_line_ok(line, &name);
      EXPECT_TRUE(sample) << "not a sample: '" << line << "'";
      if (!sample) continue;
      if (families[current].type == "histogram")
        for (const char* suffix : {"_bucket", "_sum", "_count"})
          if (name == current + suffix) name = current;
      EXPECT_EQ(name, current) << "a sample outside its family's block: " << line;
      EXPECT_TRUE(name.starts_with("mtier_")) << line;
      families[current].samples++;
    }
  }
  return families;
}

TEST(Prometheus, EveryLineFollowsTheFormat) {
  std::string text = prometheus_text(&doc());
  std::map<std::string, Family> f = check_exposition(text);
  for (const char* name :
       {"mtier_daemon_up", "mtier_daemon_info", "mtier_build_info", "mtier_tier_used_bytes",
        "mtier_tier_capacity_bytes", "mtier_process_missing_faults_total",
        "mtier_table_resident_bytes", "mtier_table_heat", "mtier_table_moved_bytes_total",
        "mtier_table_placed_bytes_total", "mtier_table_pinned_bytes", "mtier_moved_bytes_total",
        "mtier_placed_bytes_total", "mtier_daemon_tick_duration_seconds",
        "mtier_process_store_errors_total", "mtier_process_store_full_refusals_total",
        "mtier_process_lookahead_read_bytes_total", "mtier_job_dram_resident_bytes"})
    EXPECT_EQ(f.count(name), 1u) << name;
  // Rates are left to rate(): no gauge over the last second (the
  // configured migration limit is a setting, not a rate).
  for (const auto& [name, family] : f) {
    bool setting = name == "mtier_daemon_migrate_limit_bytes_per_second";
    EXPECT_TRUE(setting || name.find("per_second") == std::string::npos) << name;
    EXPECT_EQ(name.find("_pages"), std::string::npos) << name << ": bytes are the base unit";
  }
  EXPECT_EQ(text.find("untouched"), std::string::npos) << "not a tier";
  EXPECT_EQ(text.find("kind="), std::string::npos) << "moves have from and to labels";
  EXPECT_EQ(f["mtier_table_moved_bytes_total"].type, "counter");
  EXPECT_EQ(f["mtier_daemon_tick_duration_seconds"].type, "histogram");
  EXPECT_EQ(f["mtier_tier_used_bytes"].type, "gauge");
  EXPECT_EQ(f["mtier_tier_used_bytes"].samples, 3);
  // 6 moves between tiers of hot, none of table 7 or cold (only "new>dram").
  EXPECT_EQ(f["mtier_table_moved_bytes_total"].samples, 6);
  EXPECT_EQ(f["mtier_table_placed_bytes_total"].samples, 3);
  // Tables with a pins key (two of three) get one sample per tier.
  EXPECT_EQ(f["mtier_table_pinned_bytes"].samples, 6);
  // 2 bounds, +Inf, sum and count.
  EXPECT_EQ(f["mtier_daemon_tick_duration_seconds"].samples, 5);
  for (const char* sample :
       {"mtier_daemon_up 1\n", "mtier_tier_used_bytes{tier=\"dram\"} 20480\n",
        "mtier_build_info{version=\"0.2.0\",license=\"Apache-2.0\"} 1\n",
        "mtier_daemon_info{policy=\"lfu\",policy_params=\"keep_fraction=0.9 cool_period_s=1\","
        "heat_source=\"page-faults\"} 1\n",
        "mtier_table_resident_bytes{pid=\"4242\",table=\"1-hot\"} 20480\n",
        "mtier_table_moved_bytes_total{pid=\"4242\",table=\"1-hot\",from=\"store\",to=\"dram\"} 12288\n",
        "mtier_table_placed_bytes_total{pid=\"4242\",table=\"1-hot\",tier=\"dram\"} 16384\n",
        "mtier_moved_bytes_total{from=\"dram\",to=\"store\"} 24576\n",
        "mtier_daemon_tick_duration_seconds_bucket{le=\"0.001\"} 3\n",
        "mtier_daemon_tick_duration_seconds_bucket{le=\"+Inf\"} 6\n",
        "mtier_daemon_tick_duration_seconds_sum 0.125\n",
        "mtier_daemon_tick_duration_seconds_count 6\n",
        "mtier_table_heat{pid=\"77\",table=\"3-cold\"} NaN\n",
        "mtier_table_pinned_bytes{pid=\"4242\",table=\"1-hot\",tier=\"store\"} 8192\n",
        "mtier_process_missing_faults_total{pid=\"4242\"} 321\n",
        "mtier_process_evicted_bytes_total{pid=\"4242\"} 24576\n",
        "mtier_process_wp_faults_total{pid=\"4242\"} 11\n",
        "mtier_process_store_full_refusals_total{pid=\"4242\"} 1\n",
        "mtier_process_held_bytes{pid=\"4242\"} 40960\n",
        "mtier_process_info{pid=\"4242\",name=\"trainer\",uid=\"1000\",job_name=\"j1\",rank=\"0\"} 1\n",
        "mtier_job_dram_resident_bytes{job_name=\"j1\",uid=\"1000\"} 20480\n",
        "mtier_job_world_size{job_name=\"j1\",uid=\"1000\"} 4\n",
        "mtier_process_resident_bytes{pid=\"4242\",tier=\"slow\"} 4096\n",
        "mtier_process_info{pid=\"77\",name=\"we\\\"ird\\\\name\",uid=\"0\"} 1\n",
        "mtier_process_stale{pid=\"77\"} 1\n"})
    EXPECT_NE(text.find(sample), std::string::npos) << sample << "in:\n" << text;
}

TEST(Prometheus, DaemonDown) {
  EXPECT_EQ(prometheus_text(nullptr),
            "# HELP mtier_daemon_up 1 if mtierd answered (mtierfs: its last status request), else 0\n"
            "# TYPE mtier_daemon_up gauge\nmtier_daemon_up 0\n");
  check_exposition(prometheus_text(nullptr));
  // A document with nothing in it still gives valid text.
  json::Json empty = parse_doc("{}");
  check_exposition(prometheus_text(&empty));
}

TEST(Prometheus, Escaping) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(escape_help("x\\y\nz\"q"), "x\\\\y\\nz\"q");
  EXPECT_EQ(sample_value(NAN), "NaN");
  EXPECT_EQ(sample_value(INFINITY), "+Inf");
  EXPECT_EQ(sample_value(-INFINITY), "-Inf");
  EXPECT_EQ(sample_value(1.5), "1.5");
  // A name with every character that needs escaping, in a real exposition.
  json::Json v = doc();
  v["processes"][0]["name"] = "a\"b\\c\nd";
  std::string text = prometheus_text(&v);
  check_exposition(text);
  EXPECT_NE(text.find("name=\"a\\\"b\\\\c\\nd\""), std::string::npos) << text;
}

// ---- the cache

struct FakeDaemon {
  int calls = 0;
  int transport_rc = 0;  // what daemon_request returns
  ipc::Reply reply{0, kStatus};
  std::vector<ipc::Message> seen;
  std::chrono::steady_clock::time_point now{};

  DaemonCache cache() {
    return DaemonCache(
        [this](const ipc::Message& m, ipc::Reply* r, std::string* why) {
          calls++;
          seen.push_back(m);
          if (transport_rc < 0) return *why = "no mtierd at /x", transport_rc;
          *r = reply;
          return 0;
        },
        std::chrono::milliseconds(200), [this] { return now; });
  }
};

TEST(DaemonCache, OneFetchPerAge) {
  FakeDaemon d;
  DaemonCache c = d.cache();
  std::shared_ptr<const Snapshot> s;
  std::string why;
  ASSERT_EQ(c.status(&s, &why), 0) << why;
  EXPECT_EQ(json::str(json::at(s->doc, "daemon"), "policy"), "lfu");
  EXPECT_EQ(d.seen.back(), (ipc::Message{ipc::StatusRequest{0, ""}}));
  d.now += std::chrono::milliseconds(150);
  ASSERT_EQ(c.status(&s, &why), 0);
  EXPECT_EQ(d.calls, 1);
  d.now += std::chrono::milliseconds(100);
  ASSERT_EQ(c.status(&s, &why), 0);
  EXPECT_EQ(d.calls, 2);
  // A control request goes out at once and drops the cached document.
  ipc::Reply r;
  ASSERT_EQ(c.control(policy_msg("lru", ""), &r, &why), 0);
  EXPECT_EQ(d.calls, 3);
  ASSERT_EQ(c.status(&s, &why), 0);
  EXPECT_EQ(d.calls, 4);
}

TEST(DaemonCache, HeatPerProcess) {
  FakeDaemon d;
  DaemonCache c = d.cache();
  std::shared_ptr<const Snapshot> s;
  std::string why;
  ASSERT_EQ(c.heat(4242, &s, &why), 0) << why;
  EXPECT_EQ(d.seen.back(),
            (ipc::Message{ipc::HeatRequest{4242, kHeatmapBuckets, kHeatmapWindowMs, ""}}));
  ASSERT_EQ(c.heat(4242, &s, &why), 0);
  EXPECT_EQ(d.calls, 1);
  ASSERT_EQ(c.heat(77, &s, &why), 0);
  EXPECT_EQ(d.calls, 2);
  d.reply = ipc::Reply{-ESRCH, "pid 5 is not registered"};
  EXPECT_EQ(c.heat(5, &s, &why), -ENOENT);
  EXPECT_NE(why.find("not registered"), std::string::npos);
}

// A reply that is not well-formed JSON (a lone surrogate, bad UTF-8, cut
// off): EIO with the parse error, no document, no crash; then a good one.
TEST(DaemonCache, MalformedReplyIsEio) {
  FakeDaemon d;
  DaemonCache c = d.cache();
  std::shared_ptr<const Snapshot> s;
  std::string why;
  for (const char* bad : {R"({"processes": [{"pid": 1, "name": "\ud800"}]})",
                          "{\"processes\": [{\"pid\": 1, \"name\": \"\xff\"}]}",
                          R"({"processes": [{"pid": 1, "na)"}) {
    d.reply = ipc::Reply{0, bad};
    d.now += std::chrono::milliseconds(300);
    EXPECT_EQ(c.status(&s, &why), -EIO) << bad;
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(why.find("mtierd's status does not parse"), std::string::npos) << why;
  }
  d.reply = ipc::Reply{0, kStatus};
  d.now += std::chrono::milliseconds(300);
  ASSERT_EQ(c.status(&s, &why), 0) << why;
}

TEST(DaemonCache, ErrorsMappedAndRemembered) {
  FakeDaemon d;
  DaemonCache c = d.cache();
  std::shared_ptr<const Snapshot> s;
  std::string why;
  auto later = [&] { d.now += std::chrono::milliseconds(250); };
  d.transport_rc = -ENOENT;
  EXPECT_EQ(c.status(&s, &why), -ENOTCONN);
  EXPECT_EQ(why, "no mtierd at /x");
  EXPECT_EQ(s, nullptr);
  EXPECT_FALSE(c.connected());
  // A failure serves as long as a document would: one attempt per age.
  EXPECT_EQ(c.status(&s, &why), -ENOTCONN);
  EXPECT_EQ(why, "no mtierd at /x");
  EXPECT_EQ(d.calls, 1);
  later();
  d.transport_rc = -ECONNREFUSED;
  EXPECT_EQ(c.status(&s, &why), -ENOTCONN);
  later();
  d.transport_rc = -ETIMEDOUT;
  EXPECT_EQ(c.status(&s, &why), -ENOTCONN);
  EXPECT_EQ(d.calls, 3);
  d.transport_rc = -ENOMSG;  // an older daemon: an unknown message type
  ipc::Reply r;
  EXPECT_EQ(c.control(budget_msg(0, 1), &r, &why), -EOPNOTSUPP);
  EXPECT_TRUE(c.connected());
  d.transport_rc = 0;
  d.reply = ipc::Reply{0, "not json"};
  EXPECT_EQ(c.status(&s, &why), -EIO);  // the control request dropped the cached error
  later();
  d.reply = ipc::Reply{-EMSGSIZE, "does not fit"};
  EXPECT_EQ(c.status(&s, &why), -EIO);
  EXPECT_EQ(why, "mtierd: does not fit");
  later();
  d.reply = ipc::Reply{0, kStatus};
  EXPECT_EQ(c.status(&s, &why), 0);
  EXPECT_TRUE(why.empty());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(map_reply_status(-EPERM), -EACCES);
  EXPECT_EQ(map_reply_status(-EINVAL), -EINVAL);
  EXPECT_EQ(map_reply_status(-ESRCH), -ENOENT);
}

// ---- the man page

TEST(FsManPage, NamesEveryFileAndMetric) {
  std::ifstream in(std::string(MTIER_SRCDIR) + "/man/mtierfs.8");
  ASSERT_TRUE(in) << "man/mtierfs.8";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string man = ss.str();  // the names have no hyphen roff would escape
  std::set<std::string> names;
  for (std::string dir : {"/", "/tiers/dram", "/procs/4242", "/procs/4242/tables/1-hot"})
    for (const std::string& n : list_dir(&doc(), node(dir)))
      if (!node(dir + (dir == "/" ? "" : "/") + n).is_dir()) names.insert(n);
  EXPECT_EQ(names.size(), 20u);
  for (const std::string& n : names)
    EXPECT_NE(man.find("\\fB" + n + "\\fR"), std::string::npos) << "file " << n;
}

// mtierd(8)'s METRICS names every family the exposition has, and names no
// other (mtier_ followed by a name, outside the scrape example).
TEST(FsManPage, MtierdListsTheMetricsTheCodeWrites) {
  std::ifstream in(std::string(MTIER_SRCDIR) + "/man/mtierd.8");
  ASSERT_TRUE(in) << "man/mtierd.8";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string man = ss.str();
  size_t from = man.find(".SH METRICS"), to = man.find(".SH", from + 1);
  ASSERT_NE(from, std::string::npos);
  const std::string metrics = man.substr(from, to - from);
  std::set<std::string> written;
  for (const auto& [name, f] : check_exposition(prometheus_text(&doc()))) written.insert(name);
  for (const std::string& name : written) {
    bool found = false;
    for (const char* after : {" ", "\n", "{"}) found = found || metrics.find(name + after) != std::string::npos;
    EXPECT_TRUE(found) << "metric " << name << " is not in mtierd(8)";
  }
  std::set<std::string> named;
  for (size_t i = metrics.find("mtier_"); i != std::string::npos; i = metrics.find("mtier_", i + 1)) {
    size_t end = i;
    while (end < metrics.size() && (std::islower(static_cast<unsigned char>(metrics[end])) || metrics[end] == '_'))
      end++;
    std::string name = metrics.substr(i, end - i);
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(metrics[i - 1])) || metrics[i - 1] == '_')) continue;
    if (name == "mtier_prefetch") continue;  // mtier_prefetch(3), the C API
    named.insert(name);
  }
  for (const std::string& name : named)
    EXPECT_EQ(written.count(name), 1u) << "mtierd(8) names " << name << ", which the daemon does not write";
}

}  // namespace
}  // namespace mtier::fs
