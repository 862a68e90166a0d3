// SPDX-License-Identifier: Apache-2.0
#include "bench_report.h"

#include <cmath>

#include "config/options.h"
#include "sys/page_size.h"
#include "util/json.h"

namespace mtier::tools::bench {
namespace {

struct CostRow {
  const char* key;  // Samples prefix: "<key>.median", "<key>.p99"
  const char* json;
  const char* label;
};

const CostRow kCostRows[] = {
    {"bare", "bare_uffdio_copy", "bare UFFDIO_COPY round trip (the limit)"},
    {"zero", "first_touch_zero_fill", "first touch through the engine (zero fill)"},
    {"fetch_pmem", "fetch_pmem", "fetch from the PMem store"},
    {"fetch_file", "fetch_file", "fetch from the file store"},
    {"minor", "sampling_minor_fault", "sampling MINOR fault (zapped PTE)"},
    {"sigbus", "sigbus_round_trip", "bare round trip, SIGBUS in the faulting thread"},
    {"place_copy", "placed_ahead_copy", "placed ahead: UFFDIO_COPY, then access"},
    {"place_continue", "placed_ahead_continue", "placed ahead: pwrite+CONTINUE, then access"},
    {"place_fill", "placed_ahead_page_cache", "placed ahead: pwrite, access maps it"},
    {"unmap_dirty_each", "unmap_dirty_page", "unmap a dirty page, one madvise a page"},
    {"unmap_dirty_vec", "unmap_dirty_64_a_call", "unmap dirty pages, 64 a process_madvise"},
    {"unmap_clean_each", "unmap_clean_page", "unmap a clean page, one madvise a page"},
    {"unmap_clean_vec", "unmap_clean_64_a_call", "unmap clean pages, 64 a process_madvise"},
    {"unmap_span", "unmap_span_then_remap", "unmap a 512-page span, CONTINUE the rest"},
};

struct RateRow {
  const char* key;
  const char* json;
  const char* label;
  const char* device;  // the device figure it is a share of, or nullptr
  const char* fresh;   // for eviction (into a new file): also its share of this one
  bool kiops;          // a device figure: also "<key>_kiops"
};

const RateRow kRateRows[] = {
    {"dev_write_fresh", "device_qd32_write_new_file", "device QD32 4 KiB random write, new file",
     nullptr, nullptr, true},
    {"dev_write", "device_qd32_write", "device QD32 4 KiB random overwrite", nullptr, nullptr,
     true},
    {"dev_read", "device_qd32_read", "device QD32 4 KiB random read", nullptr, nullptr, true},
    {"evict_pmem", "evict_pmem", "eviction to the PMem store", nullptr, nullptr, false},
    {"evict_file", "evict_file", "eviction to a new file store (batched)", "dev_write_fresh",
     nullptr, false},
    {"evict_file_again", "evict_file_again", "eviction to the file store, slots reused",
     "dev_write", nullptr, false},
    {"prefetch", "prefetch_seq_read", "read-around of 32 pages, sequential read", "dev_read", nullptr,
     false},
};

enum class Cmp { kAtMost, kBelow, kAtLeast };

struct Goal {
  const char* json;
  const char* text;
  double value;
  double target;
  Cmp cmp;
  const char* unit;
};

double share(const Samples& s, const char* part, const char* whole) {
  return 100.0 * median_of(s, part) / median_of(s, whole);
}

// Overhead of the sampler: the throughput the workload loses with it on.
double sampler_overhead(const Samples& s) {
  double off = median_of(s, "rw_off");
  return 100.0 * (off - median_of(s, "rw_on")) / off;
}

// The page checksum's cost as a share of the fetch it is part of (the goal's
// is the file store's; a PMem fetch is shorter, so its share is larger).
double checksum_share(const Samples& s, const char* fetch = "fetch_file.median") {
  return 100.0 * median_of(s, "checksum") / median_of(s, fetch);
}

std::vector<Goal> goals(const Samples& s) {
  return {
      {"pmem_fetch", "fetch from the PMem store within 1.5x the bare UFFDIO_COPY round trip",
       median_of(s, "fetch_pmem.median") / median_of(s, "bare.median"), 1.5, Cmp::kAtMost, "x"},
      {"file_eviction",
       "file-store batched eviction into a new store >= 80% of the device's QD32 4 KiB random "
       "write to a new file",
       share(s, "evict_file", "dev_write_fresh"), 80, Cmp::kAtLeast, "%"},
      {"file_eviction_again",
       "file-store batched eviction over reused slots >= 80% of the device's QD32 4 KiB random "
       "overwrite",
       share(s, "evict_file_again", "dev_write"), 80, Cmp::kAtLeast, "%"},
      {"prefetch", "read-around (sequential) >= 80% of the device's QD32 4 KiB random read",
       share(s, "prefetch", "dev_read"), 80, Cmp::kAtLeast, "%"},
      {"sampler_overhead", "sampler overhead on a DRAM-resident workload < 2%", sampler_overhead(s),
       2, Cmp::kBelow, "%"},
      {"checksum", "checksum (crc32c of a page, verified on every store read) <= 2% of a fetch "
       "from the file store", checksum_share(s), 2, Cmp::kAtMost, "%"},
  };
}

// "PASS", "MISS", or "n/a" when a figure behind the goal is missing.
const char* verdict(const Goal& g) {
  if (!std::isfinite(g.value)) return "n/a";
  bool ok = g.cmp == Cmp::kAtMost  ? g.value <= g.target
            : g.cmp == Cmp::kBelow ? g.value < g.target
                                   : g.value >= g.target;
  return ok ? "PASS" : "MISS";
}

// A number for the table: "-" when it was not measured.
std::string num(double v, const char* fmt = "%.2f") {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string or_unknown(const std::string& s) { return s.empty() ? "not opened" : s; }

void text_config(FILE* out, const BenchReport& r) {
  const BenchConfig& c = *r.config;
  fprintf(out, "mtier bench fault: %llu pages (%.1f MiB) a table, %u run%s, medians across runs\n",
          static_cast<unsigned long long>(c.pages), c.pages * kPageSize / 1048576.0, r.runs,
          r.runs == 1 ? "" : "s");
  fprintf(out, "  dir %s (%s); file store: %s; PMem store: %s\n", c.dir.c_str(), c.fs.c_str(),
          or_unknown(c.file_mode).c_str(), or_unknown(c.pmem_mode).c_str());
  fprintf(out,
          "  one toucher thread, pages in address order; engine: region 4 GiB, DRAM budget above "
          "the table,\n  sampler off while timing, no front-to-back walks or zero-fill ahead (a "
          "fault a page),\n  queue depth %u, evict batch %u, store files new each run;\n  device: one StoreChannel of depth %u, random slots of a new file, written, "
          "overwritten, read;\n  unmaps: every 4th page of a memfd mapping while another thread "
          "of the process runs\n\n",
          Options{}.queue_depth, Options{}.evict_batch, kDeviceDepth);
}

void text_costs(FILE* out, const Samples& s) {
  double bare = median_of(s, "bare.median");
  fprintf(out, "%-48s %10s %10s %10s\n", "per-page cost", "median us", "p99 us", "vs bare");
  for (const CostRow& row : kCostRows) {
    std::string k = row.key;
    double med = median_of(s, k + ".median");
    std::string ratio = std::isfinite(med / bare) ? num(med / bare) + "x" : "-";
    fprintf(out, "  %-46s %10s %10s %10s\n", row.label, num(med).c_str(),
            num(median_of(s, k + ".p99")).c_str(), ratio.c_str());
  }
  fprintf(out, "\n");
}

void text_checksum(FILE* out, const BenchReport& r) {
  const Samples& s = *r.samples;
  fprintf(out,
          "page checksum (%s), verified on every store read: %s us a page (out of cache),\n"
          "  %s%% of a fetch from the file store (%s us), %s%% of one from the PMem store\n\n",
          r.config->checksum_impl.empty() ? "crc32c" : r.config->checksum_impl.c_str(),
          num(median_of(s, "checksum"), "%.3f").c_str(), num(checksum_share(s), "%.2f").c_str(),
          num(median_of(s, "fetch_file.median")).c_str(),
          num(checksum_share(s, "fetch_pmem.median"), "%.2f").c_str());
}

void text_rates(FILE* out, const Samples& s) {
  fprintf(out, "%-48s %10s  %s\n", "throughput", "GiB/s", "vs device");
  for (const RateRow& row : kRateRows) {
    std::string extra;
    if (row.device)
      extra = num(share(s, row.key, row.device), "%.0f%%") + " of the device's random " +
              (row.device == std::string("dev_read")          ? "read"
               : row.device == std::string("dev_write_fresh") ? "write to a new file"
                                                              : "overwrite");
    if (row.fresh)
      extra += ", " + num(share(s, row.key, row.fresh), "%.0f%%") + " of new-file write";
    if (row.kiops)
      extra = "(" + num(median_of(s, std::string(row.key) + "_kiops"), "%.1f") + "k IOPS)";
    fprintf(out, "  %-46s %10s  %s\n", row.label, num(median_of(s, row.key), "%.3f").c_str(),
            extra.c_str());
  }
  fprintf(out, "  (%s%% of the read-around pass's pages came in ahead of their fault)\n\n",
          num(median_of(s, "prefetch_share"), "%.0f").c_str());
}

void text_sampler(FILE* out, const BenchReport& r) {
  const Samples& s = *r.samples;
  fprintf(out,
          "sampler overhead: random 8-byte read-modify-writes over the resident table, %.0f s, "
          "%u run%s each, alternating\n",
          kWorkloadSeconds, r.runs, r.runs == 1 ? "" : "s");
  fprintf(out, "  scan_rate 0: %s M ops/s; scan_rate %llu: %s M ops/s (%s sampled MINOR faults/s)",
          num(median_of(s, "rw_off")).c_str(), static_cast<unsigned long long>(Options{}.scan_rate),
          num(median_of(s, "rw_on")).c_str(), num(median_of(s, "sampled_per_s"), "%.0f").c_str());
  fprintf(out, "; overhead %s%%\n", num(sampler_overhead(s), "%.1f").c_str());
  // The measured difference is two noisy throughputs; the sampler's own
  // cost is its faults times what one costs, measured above in this run.
  double expected = median_of(s, "sampled_per_s") * median_of(s, "minor.median") / 1e4;
  fprintf(out,
          "  its cost from its own counts: %s MINOR faults/s x %s us each = %s%% of the time "
          "(the measured difference also holds this machine's noise)\n\n",
          num(median_of(s, "sampled_per_s"), "%.0f").c_str(),
          num(median_of(s, "minor.median")).c_str(), num(expected, "%.2f").c_str());
}

}  // namespace

void print_text(FILE* out, const BenchReport& r) {
  const Samples& s = *r.samples;
  text_config(out, r);
  text_costs(out, s);
  text_checksum(out, r);
  text_rates(out, s);
  text_sampler(out, r);
  fprintf(out, "goals\n");
  for (const Goal& g : goals(s))
    fprintf(out, "  %-4s  %s: %s%s\n", verdict(g), g.text,
            num(g.value, *g.unit == 'x' ? "%.2f" : "%.1f").c_str(), g.unit);
  for (const std::string& n : r.notes) fprintf(out, "note: %s\n", n.c_str());
}

}  // namespace mtier::tools::bench

namespace mtier::tools::bench {
namespace {

// A figure; null when it was not measured.
json::Json jnum(double v) { return json::number(v); }

json::Json json_config(const BenchReport& r) {
  const BenchConfig& c = *r.config;
  return {{"pages", c.pages},
          {"bytes", c.pages * kPageSize},
          {"runs", r.runs},
          {"dir", c.dir},
          {"fs", c.fs},
          {"file_store_mode", c.file_mode},
          {"o_direct", c.file_mode.rfind("O_DIRECT", 0) == 0},
          {"pmem_store_mode", c.pmem_mode},
          {"touch_order", "address"},
          {"device_depth", kDeviceDepth},
          {"prefetch_pages", kReadAroundPages},
          {"workload_seconds", json::number(kWorkloadSeconds)},
          {"scan_rate_on", Options{}.scan_rate}};
}

// The figures' members of the report, after "benchmark" and "config".
void json_figures(json::Json& j, const Samples& s) {
  // Units as every JSON output of mtier: seconds, bytes, per second, percent.
  auto scaled = [](double v, double by) { return jnum(v * by); };  // NaN: null
  json::Json& per_page = j["per_page_seconds"] = json::Json::object();
  for (const CostRow& row : kCostRows) {
    std::string k = row.key;
    per_page[row.json] = {{"median", scaled(median_of(s, k + ".median"), 1e-6)},
                          {"p99", scaled(median_of(s, k + ".p99"), 1e-6)}};
  }
  json::Json& throughput = j["throughput_bytes_per_second"] = json::Json::object();
  for (const RateRow& row : kRateRows)
    throughput[row.json] = scaled(median_of(s, row.key), 1024.0 * 1024 * 1024);
  j["device_operations_per_second"] = {
      {"write_new_file", scaled(median_of(s, "dev_write_fresh_kiops"), 1e3)},
      {"write", scaled(median_of(s, "dev_write_kiops"), 1e3)},
      {"read", scaled(median_of(s, "dev_read_kiops"), 1e3)}};
  j["prefetch_share_percent"] = jnum(median_of(s, "prefetch_share"));
  j["sampler"] = {{"rw_off_operations_per_second", scaled(median_of(s, "rw_off"), 1e6)},
                  {"rw_on_operations_per_second", scaled(median_of(s, "rw_on"), 1e6)},
                  {"sampled_minor_per_second", jnum(median_of(s, "sampled_per_s"))},
                  {"overhead_percent", jnum(sampler_overhead(s))}};
  j["checksum"] = {{"seconds_per_page", scaled(median_of(s, "checksum"), 1e-6)},
                   {"percent_of_file_fetch", jnum(checksum_share(s))},
                   {"percent_of_pmem_fetch", jnum(checksum_share(s, "fetch_pmem.median"))}};
}

}  // namespace

void print_json(FILE* out, const BenchReport& r) {
  json::Json j = {{"benchmark", "fault"}, {"config", json_config(r)}};
  json_figures(j, *r.samples);
  json::Json& goals_j = j["goals"] = json::Json::array();
  for (const Goal& g : goals(*r.samples))
    goals_j.push_back({{"name", g.json},
                       {"text", g.text},
                       {"value", jnum(g.value)},
                       {"target", json::number(g.target)},
                       {"unit", g.unit},
                       {"result", verdict(g)}});
  j["notes"] = r.notes;
  fprintf(out, "%s\n", json::dump(j).c_str());
}

}  // namespace mtier::tools::bench
