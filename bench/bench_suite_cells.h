// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: looking up cells and formatting figures, shared by the
// report (bench_suite_report.cc) and the goals (bench_suite_goals.cc).
#pragma once
#include <cstdio>
#include <string>

#include "bench_suite.h"

namespace mtier::tools::suite {

// The cell of configuration c, hinted or not (the suite runs one K).
inline const Cell* find(const BudgetResult& b, Config c, bool hinted = false) {
  for (auto& cell : b.cells)
    if (cell.config == c && (cell.lookahead > 0) == hinted) return &cell;
  return nullptr;
}

inline unsigned ok_runs(const Cell& c) {
  unsigned n = 0;
  for (auto& r : c.runs) n += r.ok;
  return n;
}

// The fastest kernel configuration, hinted or not, by the median of its
// runs that replayed the whole trace (one failed run does not hide a fast
// configuration).
inline const Cell* best_kernel(const BudgetResult& b, bool hinted = false) {
  const Cell* best = nullptr;
  for (auto& cell : b.cells)
    if (is_kernel(cell.config) && (cell.lookahead > 0) == hinted && ok_runs(cell) > 0 &&
        (!best || cell.lookups_per_second > best->lookups_per_second))
      best = &cell;
  return best;
}

inline std::string fmt(const char* f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

inline std::string cell_status(const Cell& c) {
  if (!c.skipped.empty()) return "not run: " + c.skipped;
  for (auto& r : c.runs)
    if (!r.ok) return r.failure;
  return c.runs.empty() ? "not run" : "ok";
}

}  // namespace mtier::tools::suite
