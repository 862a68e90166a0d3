// SPDX-License-Identifier: Apache-2.0
// Weighted water-filling of a page budget (see fair_share.h).
#include "policy/fair_share.h"

#include <algorithm>
#include <numeric>

#include "policy/plan_common.h"

namespace mtier::policy {

namespace {

using u128 = unsigned __int128;

uint64_t clamp_weight(unsigned w) { return std::clamp(w, 1u, 1000u); }

// floor(amount * w / total), exact: the product fits in 128 bits.
uint64_t portion(uint64_t amount, uint64_t w, uint64_t total) {
  return static_cast<uint64_t>(static_cast<u128>(amount) * w / total);
}

// Gives `amount` to the requests in `who` by weight, adding to (*out)[i];
// the rounding remainder goes one page each in ascending index order.
// `who` is sorted by index.
void split_by_weight(uint64_t amount, const std::vector<size_t>& who,
                     const std::vector<ShareRequest>& req, std::vector<uint64_t>* out) {
  uint64_t total = 0;
  for (size_t i : who) total += clamp_weight(req[i].weight);
  uint64_t given = 0;
  for (size_t i : who) {
    uint64_t p = portion(amount, clamp_weight(req[i].weight), total);
    (*out)[i] += p;
    given += p;
  }
  // Each portion lost less than one page to rounding: left < who.size().
  uint64_t left = amount - given;
  for (size_t k = 0; k < who.size() && left > 0; ++k, --left) ++(*out)[who[k]];
}

}  // namespace

void fair_share(uint64_t budget, const std::vector<ShareRequest>& requests, bool spread_surplus,
                std::vector<uint64_t>* out) {
  size_t n = requests.size();
  out->assign(n, 0);
  if (n == 0) return;
  // Ascending demand per unit of weight: the order in which water-filling
  // satisfies them (d_a / w_a < d_b / w_b, cross-multiplied).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    u128 l = static_cast<u128>(requests[a].demand) * clamp_weight(requests[b].weight);
    u128 r = static_cast<u128>(requests[b].demand) * clamp_weight(requests[a].weight);
    return l != r ? l < r : a < b;
  });
  uint64_t left = budget;
  uint64_t weights = 0;
  for (const ShareRequest& r : requests) weights += clamp_weight(r.weight);
  size_t k = 0;
  for (; k < n; ++k) {
    const ShareRequest& r = requests[order[k]];
    uint64_t w = clamp_weight(r.weight);
    // demand <= floor(left * w / weights) iff demand <= left * w / weights.
    if (r.demand > portion(left, w, weights)) break;
    (*out)[order[k]] = r.demand;
    left -= r.demand;
    weights -= w;
  }
  std::vector<size_t> who;
  if (k < n) {
    // Every later request has a higher demand per weight, so none of them
    // fits its share either: they split what is left by weight. Each gets
    // less than its demand, so the rounding pages keep them within it.
    who.assign(order.begin() + static_cast<std::ptrdiff_t>(k), order.end());
  } else if (spread_surplus && left > 0) {
    who = order;
  } else {
    return;
  }
  std::sort(who.begin(), who.end());
  split_by_weight(left, who, requests, out);
}

namespace {

// Pages of its usable tables a process ever touched.
uint64_t touched_pages(const ProcessView& pv) {
  if (pv.touched_pages != ProcessView::kCountTouched) return pv.touched_pages;
  uint64_t touched = 0;
  for (const TableView& t : pv.tables) {
    if (!detail::usable(t)) continue;
    uint64_t untouched = 0;
    for (uint64_t i = 0; i < t.pages; ++i) untouched += t.place[i] == Place::kUntouched;
    touched += t.pages - untouched;
  }
  return touched;
}

// What holds a DRAM budget: a process without a job, or a job's ranks.
struct Holder {
  std::vector<size_t> members;  // indices into node.procs, ascending
  uint64_t own = 0;             // their own budgets, summed (0 if one is 0: no cap)
  uint64_t demand = 0;          // their touched pages, summed, capped by `own`
  unsigned weight = 0;          // their weights, summed (fair_share clamps to 1000)
  bool uncapped = false;        // a member has no own budget
};

std::vector<Holder> holders_of(const NodeView& node, const std::vector<uint64_t>& touched) {
  std::vector<Holder> h;
  std::vector<std::pair<uint32_t, size_t>> job_at;  // job -> its holder
  for (size_t p = 0; p < node.procs.size(); ++p) {
    const ProcessView& pv = node.procs[p];
    size_t k = h.size();
    for (auto [job, at] : job_at)
      if (pv.job != 0 && job == pv.job) k = at;
    if (k == h.size()) {
      h.push_back({});
      if (pv.job != 0) job_at.emplace_back(pv.job, k);
    }
    Holder& x = h[k];
    x.uncapped |= pv.own_budget_pages == 0;
    x.own += pv.own_budget_pages;
    x.members.push_back(p);
    x.demand += touched[p];
    x.weight += std::clamp(pv.weight, 1u, 1000u);
  }
  for (Holder& x : h) {
    if (x.uncapped) x.own = 0;
    if (x.own > 0) x.demand = std::min(x.demand, x.own);
  }
  return h;
}

// A job's budget among its ranks by need: water-filling on the pages each
// touched, and where they do not all fit, by weight times 1 + n x its
// share of the job's misses (n ranks): a rank that misses more gets more,
// none less than its plain weight's part of an equal split.
void split_job(uint64_t budget, const Holder& job, const NodeView& node,
               const std::vector<uint64_t>& touched, std::vector<uint64_t>* out) {
  double misses = 0;
  for (size_t p : job.members) misses += std::max(node.procs[p].misses_per_s, 0.0);
  std::vector<ShareRequest> req;
  for (size_t p : job.members) {
    const ProcessView& pv = node.procs[p];
    double need = 1;
    if (misses > 0)
      need += static_cast<double>(job.members.size()) * std::max(pv.misses_per_s, 0.0) / misses;
    double w = std::clamp(static_cast<double>(std::clamp(pv.weight, 1u, 1000u)) * need, 1.0, 1000.0);
    req.push_back({static_cast<unsigned>(w), touched[p]});
  }
  std::vector<uint64_t> share;
  fair_share(budget, req, true, &share);
  for (size_t k = 0; k < job.members.size(); ++k) (*out)[job.members[k]] = share[k];
}

}  // namespace

void assign_budgets(const NodeView& node, Plan* plan) {
  size_t n = node.procs.size();
  std::vector<uint64_t> touched(n, 0);
  for (size_t p = 0; p < n; ++p) touched[p] = touched_pages(node.procs[p]);
  std::vector<Holder> holders = holders_of(node, touched);
  // DRAM: each holder's budget, its own or a share of the node's, then a
  // job's among its ranks.
  std::vector<uint64_t> held(holders.size());
  if (node.dram_pages == 0) {
    for (size_t k = 0; k < holders.size(); ++k) held[k] = holders[k].own;
  } else {
    std::vector<ShareRequest> req;
    for (const Holder& x : holders) req.push_back({std::min(x.weight, 1000u), x.demand});
    fair_share(node.dram_pages, req, true, &held);
  }
  plan->dram_budget_pages.assign(n, 0);
  for (size_t k = 0; k < holders.size(); ++k) {
    const Holder& x = holders[k];
    if (x.members.size() == 1 && node.procs[x.members[0]].job == 0)
      plan->dram_budget_pages[x.members[0]] = held[k];
    else
      split_job(held[k], x, node, touched, &plan->dram_budget_pages);
  }
  if (node.slow_pages == 0) {
    plan->slow_budget_pages.resize(n);
    for (size_t p = 0; p < n; ++p) plan->slow_budget_pages[p] = node.procs[p].own_slow_budget_pages;
    return;
  }
  std::vector<ShareRequest> req(n);
  for (size_t p = 0; p < n; ++p) {
    uint64_t dram = plan->dram_budget_pages[p];
    req[p] = {node.procs[p].weight, touched[p] > dram ? touched[p] - dram : 0};
  }
  fair_share(node.slow_pages, req, true, &plan->slow_budget_pages);
}

}  // namespace mtier::policy
