// SPDX-License-Identifier: Apache-2.0
// `mtier demo`'s results, side by side: the text table (and the heat map)
// or one JSON object, the bit-identity of every run against all-DRAM, and
// the goal at the 25% budget: mtier+lookahead at >= 0.1x all-DRAM and
// >= 3x the kernel's swap, in steps/s over the whole run.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "demo_runs.h"

namespace mtier::tools::demo {

struct Report {
  Setup setup;
  std::vector<ConfigResult> configs;  // dram first, then swap, mtier, mtier+lookahead
  std::string swap_environment;       // how the swap run ran ("" when skipped)
  uint64_t cgroup_limit = 0;          // the swap run's memory limit
  std::string slack_how;              // how the limit's slack beyond the budget was chosen
  std::string heat_run;               // the run whose heat map is shown ("": none)
};

// Same losses at every step (bit for bit) and the same final weights hash
// as the dram run; false when either did not complete.
bool bit_identical(const ConfigResult& r, const ConfigResult& dram);

struct GoalPart {
  std::string what;    // "mtier+lookahead >= 0.1x dram"
  std::string status;  // "PASS", "MISS" or "not measured"
  std::string detail;  // the figure, or why it was not measured
};
std::vector<GoalPart> evaluate_goal(const Report& r);

// 0 when dram and both mtier runs completed and every completed run is
// bit-identical to dram; 1 otherwise (the swap baseline failing or being
// skipped is reported, not an error of the demo).
int exit_status(const Report& r);

void print_text(FILE* out, const Report& r, bool color);
void print_json(FILE* out, const Report& r);

}  // namespace mtier::tools::demo
