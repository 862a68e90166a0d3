// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: the goals, each PASS, MISS or not measured (with why).
#include <string>
#include <vector>

#include "bench_suite.h"
#include "bench_suite_cells.h"

namespace mtier::tools::suite {
namespace {

// The suite's first goals: unhinted mtier against the kernel, all budgets.
std::vector<Goal> tiering_goals(const SuiteResults* r) {
  double dram = r->dram.complete() ? r->dram.lookups_per_second : 0;
  Goal g25("mtier >= 2x the best kernel configuration at the 25% budget");
  Goal never("mtier never below the best kernel configuration at any budget");
  Goal hit("mtier's page hit ratio within 10% (relative) of Belady's MIN at every budget");
  Goal full("mtier at the 100% budget at most 3% below all-DRAM");
  bool never_ok = true, hit_ok = true;
  std::string never_fig, hit_fig;
  for (auto& b : r->budgets) {
    const Cell* m = find(b, Config::kMtier);
    const Cell* k = best_kernel(b);
    if (!m) continue;
    if (!m->complete()) {
      // mtier failed where it ran: every goal that covers this budget is missed.
      if (m->runs.empty() && !m->skipped.empty()) continue;
      std::string why = std::to_string(b.pct) + "%: mtier did not complete (" + cell_status(*m) + ")";
      never.evaluated = hit.evaluated = true;
      never_ok = hit_ok = false;
      never_fig += (never_fig.empty() ? "" : ", ") + why;
      hit_fig += (hit_fig.empty() ? "" : ", ") + why;
      if (b.pct == 25) g25.evaluated = true, g25.met = false, g25.figure = why;
      if (b.pct == 100) full.evaluated = true, full.met = false, full.figure = why;
      continue;
    }
    if (k && k->lookups_per_second > 0) {
      double x = m->lookups_per_second / k->lookups_per_second;
      never.evaluated = true;
      never_ok &= x >= 1.0;
      never_fig += (never_fig.empty() ? "" : ", ") + std::to_string(b.pct) + "%: " + fmt("%.2fx", x);
      if (b.pct == 25) {
        g25.evaluated = true;
        g25.met = x >= 2.0;
        g25.figure = fmt("%.2fx", x) + " (best kernel: " + config_name(k->config) + ")";
      }
    }
    if (m->hit_ratio >= 0 && b.oracle.min_hit_ratio() > 0) {
      double rel = (b.oracle.min_hit_ratio() - m->hit_ratio) / b.oracle.min_hit_ratio();
      hit.evaluated = true;
      hit_ok &= rel <= 0.10;
      hit_fig += (hit_fig.empty() ? "" : ", ") + std::to_string(b.pct) + "%: " +
                 fmt("%.3f", m->hit_ratio) + " vs " + fmt("%.3f", b.oracle.min_hit_ratio());
    }
    if (b.pct == 100 && dram > 0) {
      double x = m->lookups_per_second / dram;
      full.evaluated = true;
      full.met = x >= 0.97;
      full.figure = fmt("%.3f of all-DRAM", x);
    }
  }
  never.met = never_ok;
  never.figure = never_fig;
  hit.met = hit_ok;
  hit.figure = hit_fig;
  return {g25, never, hit, full};
}


const BudgetResult* budget(const SuiteResults& r, unsigned pct) {
  for (auto& b : r.budgets)
    if (b.pct == pct) return &b;
  return nullptr;
}

// Why a cell gives no figure: not there, not run, or no run completed.
// Empty when it has one (a cell with a failed run still has a median of
// the others; a goal on it is then missed, not unmeasured).
std::string unmeasured(const Cell* c, const std::string& name, const std::string& absent) {
  if (!c) return name + " not run (" + absent + ")";
  if (!c->skipped.empty()) return name + " not run: " + c->skipped;
  if (ok_runs(*c) == 0) return name + " did not complete: " + cell_status(*c);
  return "";
}

// The lookahead goals, at 25%: mtier with lookahead against the kernel with
// and without the same hints and against the device itself; unhinted mtier
// against the kernel and against MIN.
std::vector<Goal> lookahead_goals(const SuiteResults& r) {
  Goal vs_kernel("mtier+lookahead >= 3x the best unhinted kernel configuration at the 25% budget, K=1");
  Goal vs_hinted("mtier+lookahead >= 1.5x the best hinted kernel configuration at the 25% budget, K=1");
  Goal vs_device("mtier+lookahead's replay time <= 1.5x its device-bound time at the 25% budget, K=1");
  Goal unhinted("mtier >= 1x the best unhinted kernel configuration at the 25% budget");
  Goal misses("mtier's misses (pages read below DRAM) <= 2x Belady's MIN's at the 25% budget");
  Goal misses_start("mtier's misses <= 2x MIN's from the same starting residency at the 25% budget");
  std::vector<Goal*> all{&vs_kernel, &vs_hinted, &vs_device, &unhinted, &misses, &misses_start};
  const BudgetResult* b = budget(r, 25);
  if (!b) {
    for (Goal* g : all) g->reason = "no 25% budget (--budgets)";
    return {vs_kernel, vs_hinted, vs_device, unhinted, misses, misses_start};
  }
  // A configuration that ran but did not complete misses its goals.
  auto judge = [](Goal* g, const Cell* c, bool met, const std::string& figure) {
    g->evaluated = true;
    g->met = met && c->complete();
    g->figure = figure + (c->complete() ? "" : " (" + c->name() + ": " + cell_status(*c) + ")");
  };
  const Cell* m = find(*b, Config::kMtier);
  const Cell* ml = find(*b, Config::kMtier, true);
  const Cell* k = best_kernel(*b);
  const Cell* kl = best_kernel(*b, true);
  std::string why_ml = unmeasured(ml, "mtier+lookahead", "--lookahead 0, or mtier not in --configs");
  if (why_ml.empty() && ml->lookahead != 1)
    why_ml = "mtier+lookahead ran with --lookahead " + std::to_string(ml->lookahead) + "; the goal is for 1";
  std::string no_kernel = "no unhinted kernel configuration completed a run at 25% (--configs, root)";
  std::string no_hinted = "no hinted kernel configuration completed a run at 25% (--configs, root, --lookahead)";

  if (!why_ml.empty()) vs_kernel.reason = why_ml;
  else if (!k || k->lookups_per_second <= 0) vs_kernel.reason = no_kernel;
  else {
    double x = ml->lookups_per_second / k->lookups_per_second;
    judge(&vs_kernel, ml, x >= 3.0, fmt("%.2fx", x) + " (best unhinted kernel: " + k->name() + ")");
  }
  if (!why_ml.empty()) vs_hinted.reason = why_ml;
  else if (!kl || kl->lookups_per_second <= 0) vs_hinted.reason = no_hinted;
  else {
    double x = ml->lookups_per_second / kl->lookups_per_second;
    judge(&vs_hinted, ml, x >= 1.5, fmt("%.2fx", x) + " (best hinted kernel: " + kl->name() + ")");
  }
  if (!why_ml.empty()) vs_device.reason = why_ml;
  else if (!r.device.ok) vs_device.reason = "the device's IOPS were not measured: " + r.device.failure;
  else if (ml->over_device < 0) vs_device.reason = "mtier+lookahead read and wrote nothing below DRAM";
  else
    judge(&vs_device, ml, ml->over_device <= 1.5,
          fmt("%.2fx", ml->over_device) + " (replay " + fmt("%.2f s", ml->seconds) + ", device-bound " +
              fmt("%.2f s", ml->device_seconds) + ")");
  if (std::string why = unmeasured(m, "mtier", "not in --configs"); !why.empty()) {
    unhinted.reason = misses.reason = misses_start.reason = why;
  } else {
    if (!k || k->lookups_per_second <= 0) unhinted.reason = no_kernel;
    else {
      double x = m->lookups_per_second / k->lookups_per_second;
      judge(&unhinted, m, x >= 1.0, fmt("%.2fx", x) + " (best kernel: " + k->name() + ")");
    }
    uint64_t min_misses = b->oracle.min_misses();
    // LRU's beside it: what a policy that knows only the past reaches on
    // this trace (on a short trace MIN stays far ahead of any such policy).
    uint64_t lru_misses = b->oracle.lru_misses();
    if (m->misses < 0) {
      misses.reason = "mtier's reads below DRAM were not measured";
    } else {
      std::string detail = fmt("%.0f", m->misses) + " vs MIN's " + std::to_string(min_misses);
      if (min_misses)
        detail += fmt(" (%.2fx; ", m->misses / static_cast<double>(min_misses)) + "exact LRU's " +
                  std::to_string(lru_misses) +
                  fmt(", %.2fx MIN's)", static_cast<double>(lru_misses) / static_cast<double>(min_misses));
      judge(&misses, m, m->misses <= 2.0 * static_cast<double>(min_misses), detail);
    }
    // MIN above picked, knowing the replay, which pages the set-up left in
    // DRAM; no run can. From the start the runs have, MIN's misses are what
    // a replacement policy can be judged against.
    int64_t start = b->min_misses_same_start;
    if (m->misses < 0) misses_start.reason = misses.reason;
    else if (start <= 0) misses_start.reason = "MIN from the starting residency was not computed or is 0";
    else
      judge(&misses_start, m, m->misses <= 2.0 * static_cast<double>(start),
            fmt("%.0f", m->misses) + " vs " + std::to_string(start) +
                fmt(" (%.2fx)", m->misses / static_cast<double>(start)));
  }
  return {vs_kernel, vs_hinted, vs_device, unhinted, misses, misses_start};
}

// Why one of the first goals (in tiering_goals' order) could not be judged.
std::string tiering_reason(const SuiteResults& r, size_t goal) {
  unsigned pct = goal == 0 ? 25 : goal == 3 ? 100 : 0;
  const BudgetResult* b = pct ? budget(r, pct) : nullptr;
  if (pct && !b) return "no " + std::to_string(pct) + "% budget (--budgets)";
  if (goal == 3 && !r.dram.complete()) return "all-DRAM did not complete: " + cell_status(r.dram);
  std::vector<const BudgetResult*> where;
  if (b) where.push_back(b);
  else
    for (auto& x : r.budgets) where.push_back(&x);
  bool mtier = false;
  for (const BudgetResult* x : where) {
    const Cell* m = find(*x, Config::kMtier);
    mtier |= m && ok_runs(*m) > 0;
  }
  if (!mtier) return "mtier did not run (--configs)";
  if (goal == 2) return "the oracle's MIN hit ratio is 0";
  return "no kernel configuration completed a run (--configs, root)";
}

}  // namespace

void evaluate_goals(SuiteResults* r) {
  r->goals = lookahead_goals(*r);
  std::vector<Goal> first = tiering_goals(r);
  for (size_t i = 0; i < first.size(); i++) {
    if (!first[i].evaluated && first[i].reason.empty()) first[i].reason = tiering_reason(*r, i);
    r->goals.push_back(first[i]);
  }
}

}  // namespace mtier::tools::suite
