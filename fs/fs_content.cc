// SPDX-License-Identifier: Apache-2.0
// mtierfs' file contents (all but `stats`, see prometheus.cc), from the
// status document. The formats are mtierfs(8)'s; one value or one
// "key value" pair a line, so that `cat`, `read` and `awk` take them apart.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>

#include "fs_tree.h"
#include "ipc/page_moves.h"

namespace mtier::fs {
namespace {

using Value = json::Json;

// Bytes in a page of process p: what its runtime says, else kPageBytes.
double page_size(const Value& p) {
  const Value& v = json::at(p, "page_size_bytes");
  return v.is_number() && v.get<double>() > 0 ? v.get<double>() : kPageBytes;
}

// Pages of process p as bytes; the document's page counts are exact doubles.
std::string page_bytes(const Value& v, const Value& p) {
  return number_text((v.is_number() ? v.get<double>() : 0) * page_size(p));
}

// Sums a table's moves_per_second over the kinds that bring a page into memory
// (the pages faulted in, as `mtier status` counts them).
double faults_per_s(const Value& t) {
  double sum = 0;
  for (unsigned m : {ipc::kNewToDram, ipc::kNewToSlow, ipc::kStoreToDram, ipc::kStoreToSlow})
    sum += json::num(json::at(t, "moves_per_second"), ipc::page_move_name(m));
  return sum;
}

const char* pin_tier_name(const Value& pin) {
  const std::string& s = json::str(pin, "tier");
  for (const char* name : kTierNames)
    if (s == name) return name;
  return "?";
}

// "dram 0 512\n" per pin; a missing `pins` key (a daemon without pins) is
// no pins.
std::string pin_lines(const Value& t, const char* prefix) {
  std::string out;
  for (const Value& p : json::items(json::at(t, "pins")))
    out += prefix + std::string(pin_tier_name(p)) + " " + number_text(json::at(p, "first_page")) + " " +
           number_text(json::at(p, "pages")) + "\n";
  return out;
}

// Pages per heat extent for the slices of `t` in a document whose daemon
// object is `d`. The document does not say it for sure: a table key
// `extent_pages` or a daemon key `heat_granularity` wins when a daemon
// sends one; otherwise, with fewer slices than the document's
// heat_buckets, each slice is one extent (the daemon never cuts an extent)
// and the smallest extent size that gives that many extents is taken;
// otherwise mtierd's default, one page. With one-page extents (the default)
// every slice boundary is exact.
uint64_t extent_pages(const Value& t, const Value& d, uint64_t pages, size_t slices) {
  for (const Value* v : {&json::at(t, "extent_pages"), &json::at(d, "heat_granularity")})
    if (v->is_number() && v->get<double>() >= 1) return v->get<uint64_t>();
  if (slices < json::num(d, "heat_buckets")) return (pages + slices - 1) / slices;
  return 1;
}

// One line per slice: "first_page pages heat place", cut as the daemon cuts
// them (daemon/status_json.cc: slice b holds extents [X*b/n, X*(b+1)/n) of
// X). An untouched slice (place ' ') shows '.', so that every line has four
// fields.
std::string heatmap_lines(const Value& t, const Value& d) {
  const auto& heat = json::items(json::at(t, "heat_map"));
  size_t n = heat.size();
  uint64_t pages = static_cast<uint64_t>(json::num(t, "pages"));
  if (n == 0 || pages == 0) return "";
  uint64_t e = extent_pages(t, d, pages, n);
  uint64_t extents = (pages + e - 1) / e;
  if (extents < n) extents = n, e = (pages + n - 1) / n;
  const std::string& place = json::str(t, "place");
  std::string out;
  for (size_t b = 0; b < n; b++) {
    uint64_t first = std::min(extents * b / n * e, pages);
    uint64_t end = std::min(extents * (b + 1) / n * e, pages);
    char mark = b < place.size() ? place[b] : '?';
    out += number_text(static_cast<double>(first)) + " " +
           number_text(static_cast<double>(end - first)) + " " + number_text(heat[b]) + " " +
           (mark == ' ' ? '.' : mark) + "\n";
  }
  return out;
}

// The runtime's counters since it started (the exit summary's), then the
// daemon's for the process: "key value" a line, in the status document's
// names; a key the runtime did not publish (an older one) is left out.
std::string counter_lines(const Value& p) {
  static constexpr const char* kKeys[] = {
      "missing_faults", "minor_faults",   "wp_faults",      "child_faults",   "zero_fills",
      "fetches",        "prefetches",     "evictions",      "writebacks",     "demotions",
      "promotions",     "evict_cancels",  "budget_overruns", "store_errors",  "store_full",
      "prefetch_pages", "prefetch_reads", "prefetch_late",  "prefetch_hits",  "samples",
      "unattributed_samples", "orders_sent", "orders_dropped", "pages_ordered"};
  std::string out;
  for (const char* k : kKeys)
    if (p.contains(k)) out += std::string(k) + " " + number_text(json::at(p, k)) + "\n";
  return out;
}

int missing(std::string* why, const std::string& what) {
  *why = what + " is not in mtierd's status";
  return -ENOENT;
}

int tier_content(const Value& status, const Node& n, std::string* out, std::string* why) {
  const Value* t = find_tier(status, n.tier);
  if (!t) return missing(why, std::string("tier ") + kTierNames[n.tier]);
  switch (n.file) {
    case FileKind::kTierKind:
      *out = json::str(*t, "kind") + "\n";
      break;
    case FileKind::kTierNode:
      *out = json::str(*t, "nodes") + "\n";
      break;
    case FileKind::kTierCapacity:
      *out = number_text(json::at((*t), "capacity_bytes")) + "\n";
      break;
    case FileKind::kTierBudget:
      *out = number_text(json::at((*t), "budget_bytes")) + "\n";
      break;
    case FileKind::kTierUsed:
      *out = number_text(json::at((*t), "used_bytes")) + "\n";
      break;
    default:  // kTierBandwidth: whole bytes per second
      *out = "in " + number_text(std::round(json::num(*t, "in_bytes_per_second"))) + " out " +
             number_text(std::round(json::num(*t, "out_bytes_per_second"))) + "\n";
  }
  return 0;
}

int table_content(const Value& t, const Value& p, const Value* heat, const Node& n,
                  std::string* out, std::string* why) {
  switch (n.file) {
    case FileKind::kTableSize:
      *out = number_text(json::at(t, "bytes")) + "\n";
      break;
    case FileKind::kTableResident:
      *out = number_text((json::num(t, "dram_pages") + json::num(t, "slow_pages")) * page_size(p)) + "\n";
      break;
    case FileKind::kTableTierBytes:
      *out = "dram " + page_bytes(json::at(t, "dram_pages"), p) + "\nslow " +
             page_bytes(json::at(t, "slow_pages"), p) + "\nstore " +
             page_bytes(json::at(t, "store_pages"), p) + "\nuntouched " +
             page_bytes(json::at(t, "untouched_pages"), p) + "\n";
      break;
    case FileKind::kTableHeat:
      *out = "heat " + number_text(json::at(t, "heat")) + "\nsamples_per_second " +
             number_text(json::at(t, "samples_per_second")) + "\n";
      break;
    case FileKind::kTableFaults:
      *out = "faults_per_second " + number_text(faults_per_s(t)) + "\nmissing_faults " +
             number_text(json::at(p, "missing_faults")) + "\n";
      break;
    case FileKind::kTableMigrations:
      out->clear();
      for (const std::string& k : move_kinds_of(json::at(t, "moves")))
        *out += k + " " + number_text(json::at(json::at(t, "moves"), k.c_str())) + " " +
                number_text(json::at(json::at(t, "moves_per_second"), k.c_str())) + "\n";
      break;
    case FileKind::kTablePlacement:
      *out = "place " + json::str(t, "place") + "\n" + pin_lines(t, "pin ");
      break;
    case FileKind::kTablePin:
      *out = pin_lines(t, "");
      break;
    default: {  // kTableHeatmap: from the HEAT_REQUEST document
      const Value* hp = heat ? find_process(*heat, n.pid) : nullptr;
      const Value* ht = hp ? find_table(*hp, n.table_id) : nullptr;
      if (!ht) return missing(why, "table " + n.table_dir + " of process " + std::to_string(n.pid));
      *out = heatmap_lines(*ht, json::at((*heat), "daemon"));
    }
  }
  return 0;
}

}  // namespace

int file_content(const Value& status, const Value* heat, const Node& n, std::string* out,
                 std::string* why) {
  if (n.type != NodeType::kFile || n.file == FileKind::kStats) {
    *why = "not a file with contents of its own";
    return -EINVAL;
  }
  if (resolve(&status, n) < 0)
    return missing(why, n.table_dir.empty()
                            ? "process " + std::to_string(n.pid)
                            : "table " + n.table_dir + " of process " + std::to_string(n.pid));
  if (n.file == FileKind::kPolicy) {
    const std::string& params = json::str(json::at(status, "daemon"), "policy_params");
    *out = json::str(json::at(status, "daemon"), "policy") + (params.empty() ? "" : " " + params) + "\n";
    return 0;
  }
  if (n.tier >= 0) return tier_content(status, n, out, why);
  const Value& p = *find_process(status, n.pid);
  if (n.file == FileKind::kProcName) return *out = json::str(p, "name") + "\n", 0;
  if (n.file == FileKind::kProcWeight) return *out = number_text(json::at(p, "weight")) + "\n", 0;
  if (n.file == FileKind::kProcCounters) return *out = counter_lines(p), 0;
  return table_content(*find_table(p, n.table_id), p, heat, n, out, why);
}

}  // namespace mtier::fs
