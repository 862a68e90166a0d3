// SPDX-License-Identifier: Apache-2.0
// The evictor's moves between memory tiers: cold DRAM pages to the slow
// memory tier (move_pages through the alias) and the accounting of a move.
#include "evict/evictor.h"

#include <cerrno>
#include <mutex>
#include <shared_mutex>

#include "evict/page_runs.h"
#include "sys/numa.h"
#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier {

// Moves cold DRAM pages to the slow memory tier while it has room, and
// evicts the rest to a store. Returns the DRAM pages freed.
uint64_t Evictor::demote_or_evict(const std::vector<PageRef>& victims, int* err, bool force) {
  int64_t room = static_cast<int64_t>(core_.slow.budget_pages()) - core_.slow.resident();
  size_t n = static_cast<size_t>(std::clamp<int64_t>(room, 0, victims.size()));
  std::vector<PageRef> rest = demote(std::vector<PageRef>(victims.begin(), victims.begin() + n));
  uint64_t moved = n - rest.size();
  rest.insert(rest.end(), victims.begin() + n, victims.end());
  return moved + (rest.empty() ? 0 : evict(rest, force, err));
}

// move_pages through the alias mapping: the pages stay resident and mapped
// (a MINOR fault away), only their node changes. With the trainer's view
// zapped (zap_view; a CLOCK victim's is already), the alias, populated for
// the move and zapped after, is the page's only mapping: MPOL_MF_MOVE
// refuses shared pages. Only the evictor changes tiers or punches, and the
// registry is held shared, so the pages stay resident throughout.
std::vector<int> Evictor::move_runs(const std::vector<PageRef>& pages, int node, bool zap_view) {
  std::vector<const void*> addrs;
  std::vector<int> nodes, status, where(pages.size(), -1);
  for_each_run(pages, [&](size_t i, size_t j) {
    size_t n = j - i;
    char* alias = core_.alias_of(pages[i].table, pages[i].page);
    if (zap_view)
      (void)sys::zap(core_.region->base() + core_.region_offset(pages[i].table, pages[i].page),
                     n * kPageSize);
    addrs.resize(n);
    for (size_t k = 0; k < n; k++) addrs[k] = alias + k * kPageSize;
    nodes.assign(n, node);
    status.assign(n, -1);
    long rc = sys::populate_read(alias, n * kPageSize);
    if (rc == 0)
      rc = sys::move_pages(0, n, addrs.data(), nodes.data(), status.data(), MPOL_MF_MOVE);
    (void)sys::zap(alias, n * kPageSize);
    for (size_t k = 0; k < n; k++) where[i + k] = rc >= 0 ? status[k] : -1;
  });
  return where;
}

// A daemon's demotion order takes pages the trainer may have mapped (the
// CLOCK's victims are zapped already), so the view is zapped in both cases.
// Returns the pages that did not move.
std::vector<PageRef> Evictor::demote(const std::vector<PageRef>& pages) {
  std::vector<PageRef> failed;
  std::vector<int> where = move_runs(pages, core_.opts.slow_node, true);
  for (size_t i = 0; i < pages.size(); i++) account_demotion(pages[i], where[i], &failed);
  core_.counters.demote_failures.fetch_add(failed.size(), std::memory_order_relaxed);
  return failed;
}

void Evictor::account_demotion(const PageRef& v, int node, std::vector<PageRef>* failed) {
  if (node != core_.opts.slow_node) {
    failed->push_back(v);
    return;
  }
  account_tier_move(v, true);
}

// A page moved between DRAM and the slow memory tier: its tier bit, both
// tiers' residency and the table's counters. Under pass_mu_ (the tier bit
// changes only there).
void Evictor::account_tier_move(const PageRef& v, bool to_slow) {
  set_slow(core_.word(v.table, v.page), to_slow);
  (to_slow ? core_.residency : core_.slow).sub(1);
  (to_slow ? core_.slow : core_.residency).add(1);
  auto& c = v.table->counters;
  (to_slow ? c.demotions : c.promotions).fetch_add(1, std::memory_order_relaxed);
  c.slow_pages.fetch_add(to_slow ? 1 : -1, std::memory_order_relaxed);
}

}  // namespace mtier
