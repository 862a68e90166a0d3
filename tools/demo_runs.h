// SPDX-License-Identifier: Apache-2.0
// `mtier demo`'s configurations: the sample trainer on the same workload,
// each run in a child process of its own (demo_child.h):
//   dram             tables malloc'd, no limit
//   swap             tables malloc'd, in a memory cgroup of the budget (plus
//                    the process's own memory), the kernel swapping
//   mtier            tables under mtier with the DRAM budget and a file store
//   mtier+lookahead  the same, the trainer naming the steps ahead
#pragma once
#include <cstdint>
#include <string>

#include "demo_heat.h"
#include "mtier.h"
#include "sample_trainer.h"

namespace mtier::bench {
class MemoryCgroup;
}

namespace mtier::tools::demo {

struct Setup {
  Workload workload;
  uint64_t budget = 0;        // DRAM budget, bytes
  std::string scratch;        // the mtier store and the swap file go here
  unsigned columns = 64;      // heat-map extents per table
  LookaheadOptions lookahead; // of mtier+lookahead (depth > 0)
  unsigned timeout_s = 300;   // per run
  bool quiet = false;         // no progress line on stderr
};

struct ConfigResult {
  std::string name;         // "dram", "swap", "mtier", "mtier+lookahead"
  std::string skipped;      // why it was not run ("": it was)
  std::string failure;      // why the run failed ("": it did not)
  TrainResult train;        // when ok()
  uint64_t peak_rss = 0;    // the child's peak RSS, bytes (getrusage)
  bool has_stats = false;   // mtier runs: the engine's figures at the end
  struct mtier_stats stats {};
  std::string describe;     // mtier runs: mtier_describe()
  HeatSnapshot heat;        // mtier runs, when asked for
  // A run killed at its timeout: how far it got, and the most steps/s the
  // whole run could have reached (every step after the first took at least
  // the time it had been running since the first ended).
  uint64_t steps_done = 0;
  double sps_upper_bound = 0;
  bool ok() const { return skipped.empty() && failure.empty(); }
};

ConfigResult run_dram(const Setup& s);
// In `cg`, which the caller made with the limit it wants (not null).
ConfigResult run_swap(const Setup& s, bench::MemoryCgroup* cg);
ConfigResult run_mtier(const Setup& s, bool lookahead, bool take_heat);

}  // namespace mtier::tools::demo
