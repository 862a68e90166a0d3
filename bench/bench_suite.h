// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: one trace replayed against every configuration at
// every DRAM budget (all in DRAM; mtier with a file store; the kernel page
// cache with and without MADV_RANDOM; kernel swap), with --lookahead K each
// also hinted ("<config>+lookahead": the replayer names the pages of the
// next K batches before each batch; see lookahead.h), each run in its own
// child process, the kernel configurations (and mtier) under a memory
// cgroup of the budget plus a slack; beside them the offline oracle's MIN
// and LRU hit ratios, and the device's own QD32 IOPS, which turn each run's
// pages read and written into a device-bound time. The results feed a text
// table, JSON and a plot (PNG, SVG or PDF).
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "oracle.h"
#include "replayer.h"
#include "suite_device.h"
#include "trace.h"

namespace mtier::tools::suite {

enum class Config { kDram, kMtier, kMtierPmem, kPageCache, kPageCacheRandom, kSwap };
// "dram", "mtier", "mtier-pmem", "pagecache", "pagecache-random", "swap"
const char* config_name(Config c);
std::string config_what(Config c);  // one line for the table's legend
bool parse_config(const std::string& s, Config* out);
inline bool is_kernel(Config c) { return c == Config::kPageCache || c == Config::kPageCacheRandom || c == Config::kSwap; }

struct SuiteOptions {
  std::string preset = "meta2022";
  uint64_t table_bytes = 0;      // 0: the preset's
  uint32_t batches = 0;          // 0: the preset's
  uint64_t seed = 0;             // 0: the preset's
  std::string trace_file;        // replay this trace instead of generating one
  std::vector<unsigned> budgets{100, 50, 25, 10};  // % of the table bytes
  std::vector<Config> configs{Config::kDram, Config::kMtier, Config::kPageCache,
                              Config::kPageCacheRandom, Config::kSwap};
  unsigned repeats = 3;
  unsigned threads = 1;
  unsigned lookahead = 0;        // > 0: every configuration but dram also runs hinted, K batches ahead
  // mtier's hints in the synchronous form (each call returns once its pages
  // are in) instead of the asynchronous one (a batch waits for its own
  // hints just before it runs), which matches the kernel's MADV_WILLNEED:
  // that starts the reads and returns.
  bool lookahead_sync = false;
  uint64_t device_bytes = 256ull << 20;  // the device probe's file; 0: no probe (no device-bound times)
  std::string dir = "/var/tmp";  // store, page-cache file and swap file go here
  uint64_t slack = 0;            // cgroup limit = budget + slack; 0: measured (see run_suite)
  std::string mtier_options;     // extra mtier options ("name=value,...")
  std::string pmem;              // PMem for mtier-pmem (a DAX device, or a file or
                                 // directory on a DAX filesystem); "" = not run
  unsigned timeout_s = 600;      // per run; a run past it is killed
  bool json = false;
  std::string plot;              // chart path: .png, .svg or .pdf ("" = none)
  std::string self;              // this program (for the child runs)
  bool quiet = false;            // no progress on stderr
};

struct Run {
  bool ok = false;
  std::string failure;  // why not ok: "OOM-killed", "timed out after 600 s", the child's error
  bench::ReplayResult result;
};

struct Cell {  // one configuration at one budget, hinted or not
  Cell() = default;
  Cell(Config c, unsigned pct, unsigned k = 0) : config(c), budget_pct(pct), lookahead(k) {}
  Config config = Config::kDram;
  unsigned budget_pct = 0;
  unsigned lookahead = 0;  // > 0: replayed with --lookahead K
  std::string name() const;  // config_name, and "+lookahead" when hinted
  std::vector<Run> runs;
  std::string skipped;  // why it was not run at all
  bool stopped = false; // a run timed out: not run again
  // Medians over the successful runs:
  double lookups_per_second = 0, p99_ms = 0;
  double hit_ratio = -1;  // measured (1 - misses / references); -1 unknown
  double read_bytes = 0, written_bytes = 0;
  double seconds = 0;            // replay time
  double misses = -1;            // pages read below DRAM (mtier: fetched, prefetches included); -1 unknown
  double device_seconds = -1;    // device-bound time of its pages read and written; -1 unknown
  double over_device = -1;       // replay time / device-bound time (median of the runs' ratios)
  bool complete() const;  // every run ok and replayed the whole trace
};

struct BudgetResult {
  unsigned pct = 0;
  uint64_t bytes = 0;
  uint64_t cgroup_limit = 0;
  bench::OracleResult oracle;
  // MIN's misses from the residency the replay starts with (the set-up's
  // last-written pages), not from the one MIN would pick: what any policy
  // could reach from there (bench::min_misses_from). -1: not computed.
  int64_t min_misses_same_start = -1;
  std::vector<Cell> cells;
};

struct Goal {
  Goal() = default;
  explicit Goal(std::string w) : what(std::move(w)) {}
  std::string what;
  bool evaluated = false, met = false;
  std::string figure;
  std::string reason;  // not evaluated: why (a configuration or budget that did not run)
};

struct SuiteResults {
  bench::WorkloadSpec spec;
  std::string locality;         // the trace's measured statistics, one line
  uint64_t lookups = 0, references = 0;  // trace lookups; page references (oracle)
  std::string machine, environment;      // where it ran; cgroup, swap, store
  DeviceSpeed device;                      // measured in --dir before the runs
  Cell dram;                               // the baseline (budget-independent)
  std::vector<BudgetResult> budgets;
  std::vector<Goal> goals;
  std::vector<std::string> notes;          // refusals, mismatches
  bool data_identical = true;              // every run's loss and checksum equal the baseline's
};

// Runs everything; progress goes to stderr (a line per step unless quiet;
// on a terminal a live line too: util/progress.h). Returns 0, or 1 with *err
// when the suite cannot run at all (bad trace, nothing to compare).
int run_suite(const SuiteOptions& o, SuiteResults* r, std::string* err);
void evaluate_goals(SuiteResults* r);

void print_text(FILE* out, const SuiteOptions& o, const SuiteResults& r);
void print_json(FILE* out, const SuiteOptions& o, const SuiteResults& r);
int write_plot(const SuiteResults& r, const std::string& path, std::string* err);

}  // namespace mtier::tools::suite
