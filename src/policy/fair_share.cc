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

void assign_budgets(const NodeView& node, Plan* plan) {
  size_t n = node.procs.size();
  std::vector<uint64_t> touched(n, 0);
  for (size_t p = 0; p < n; ++p) {
    if (node.procs[p].touched_pages != ProcessView::kCountTouched) {
      touched[p] = node.procs[p].touched_pages;
      continue;
    }
    for (const TableView& t : node.procs[p].tables) {
      if (!detail::usable(t)) continue;
      uint64_t untouched = 0;
      for (uint64_t i = 0; i < t.pages; ++i) untouched += t.place[i] == Place::kUntouched;
      touched[p] += t.pages - untouched;
    }
  }
  std::vector<ShareRequest> req(n);
  if (node.dram_pages == 0) {
    plan->dram_budget_pages.resize(n);
    for (size_t p = 0; p < n; ++p) plan->dram_budget_pages[p] = node.procs[p].own_budget_pages;
  } else {
    for (size_t p = 0; p < n; ++p) {
      uint64_t own = node.procs[p].own_budget_pages;
      req[p] = {node.procs[p].weight, own > 0 ? std::min(own, touched[p]) : touched[p]};
    }
    fair_share(node.dram_pages, req, true, &plan->dram_budget_pages);
  }
  if (node.slow_pages == 0) {
    plan->slow_budget_pages.resize(n);
    for (size_t p = 0; p < n; ++p) plan->slow_budget_pages[p] = node.procs[p].own_slow_budget_pages;
    return;
  }
  for (size_t p = 0; p < n; ++p) {
    uint64_t dram = plan->dram_budget_pages[p];
    req[p] = {node.procs[p].weight, touched[p] > dram ? touched[p] - dram : 0};
  }
  fair_share(node.slow_pages, req, true, &plan->slow_budget_pages);
}

}  // namespace mtier::policy
