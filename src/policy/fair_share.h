// SPDX-License-Identifier: Apache-2.0
// Dividing a node's memory budget among processes: weighted water-filling
// (max-min fairness with weights). Every policy's budgets come from here.
#pragma once
#include <cstdint>
#include <vector>

#include "policy/policy.h"

namespace mtier::policy {

struct ShareRequest {
  unsigned weight = 100;  // clamped to 1..1000
  uint64_t demand = 0;    // pages the process can use now
};

// Sets (*out)[i] to request i's share of `budget` pages:
//  - a request whose demand is at most its weighted share of what is left
//    gets its demand, and the rest is shared among the others by weight,
//    again and again (water-filling); the requests left unsatisfied get
//    floor(left * weight / their weights), and the pages that rounding
//    leaves go one each to the unsatisfied requests in index order;
//  - when every demand is met and `spread_surplus`, the pages left over are
//    spread over all requests by weight the same way (headroom to grow into
//    until the next decision; demands are snapshots).
// The sum never exceeds `budget`; no share exceeds its demand unless
// surplus is spread. Deterministic: equal inputs give equal outputs, ties go
// to the lower index. O(n log n); no overflow for any budget.
void fair_share(uint64_t budget, const std::vector<ShareRequest>& requests, bool spread_surplus,
                std::vector<uint64_t>* out);

// The budgets step of every policy; sets plan->dram_budget_pages and
// slow_budget_pages (one per process) and leaves the moves alone.
// A process's demand is its touched pages (place not kUntouched) in its
// usable tables (ProcessView::touched_pages when the caller counted them).
//  - DRAM is held by processes without a job, each alone, and by jobs (the
//    processes with one nonzero ProcessView::job), each as one: its own
//    budget the sum of its ranks', its demand theirs summed, its weight
//    theirs summed; a holder's demand is capped by its own budget when
//    that is nonzero.
//    With node.dram_pages == 0 each holder keeps its own budget; else
//    fair_share(dram_pages, weights, demands, spread surplus).
//    A job's budget goes to its ranks by need: fair_share over their
//    touched pages, weights scaled by 1 + n x their share of the job's
//    misses (misses_per_s), surplus spread. So a rank that uses little
//    leaves the rest to the others, and one that misses more gets more.
//  - slow tier (per process; jobs are a DRAM budget only): with
//    node.slow_pages == 0, each process keeps own_slow_budget_pages (0
//    without a slow tier of its own); else fair_share(slow_pages, weights,
//    touched pages beyond the DRAM budget, spread surplus).
void assign_budgets(const NodeView& node, Plan* plan);

}  // namespace mtier::policy
