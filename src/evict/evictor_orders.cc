// SPDX-License-Identifier: Apache-2.0
// The daemon's orders (and mtier_table_evict) carried out by the evictor:
// evict or demote a range of a table, promote a range back to DRAM.
#include "evict/evictor.h"

#include <cerrno>
#include <mutex>
#include <shared_mutex>

#include "evict/page_runs.h"
#include "sys/numa.h"
#include "sys/vm.h"

namespace mtier {

int Evictor::evict_range(int table_id, uint64_t first, uint64_t count, bool dram_only,
                         bool explicit_evict) {
  std::lock_guard pass(pass_mu_);
  std::shared_lock tables(core_.tables.mutex());
  Table* t = core_.tables.by_id(table_id);
  if (!t) return -ENOENT;
  struct PinsToo {  // for this order only (pass_mu_ held)
    bool& flag;
    PinsToo(bool& f, bool on) : flag(f) { flag = on; }
    ~PinsToo() { flag = false; }
  } pins_too(pins_too_, explicit_evict);
  std::vector<PageRef> victims;
  int err = 0;
  auto flush = [&] {
    if (dram_only && core_.has_slow_tier())
      demote_or_evict(victims, &err, true);
    else
      evict(victims, true, &err);
    victims.clear();
  };
  // No unlocked pre-filter on the state: a page the handler is placing
  // right now is FETCHING until it lets go of the page lock, and must not
  // be skipped. start_run decides under the page locks. (The slow bit only
  // changes on this thread, under pass_mu_.)
  uint64_t end = first + std::min(count, t->pages);
  end = std::min(t->pages, end);
  for (uint64_t p = first; p < end; p++) {
    uint64_t w = core_.word(t, p).load();
    if (PageWord::state(w) == PageState::kAbsent) continue;
    if (dram_only && PageWord::slow(w)) continue;
    // A daemon's order leaves the lookahead window and the program's locked
    // pages alone, for every tier (start_run looks again under the page
    // locks, so a pin that comes after this look keeps its page too); the
    // program's own mtier_table_evict takes pinned pages, not locked ones.
    if ((PageWord::pinned(w) && !explicit_evict) || t->held(p)) continue;
    victims.push_back({t, p});
    if (victims.size() == core_.opts.evict_batch) flush();
  }
  if (!victims.empty()) flush();
  core_.residency.notify_progress();
  return err;
}

// A slow page may be mapped in the trainer's view (a MINOR fault since its
// demotion mapped it): that view is zapped first, so the alias is the only
// mapping and MPOL_MF_MOVE moves it. An access racing the move maps the page
// again; move_pages then leaves it where it is, and it stays slow.
long Evictor::promote_range(int table_id, uint64_t first, uint64_t count) {
  std::lock_guard pass(pass_mu_);
  std::shared_lock tables(core_.tables.mutex());
  Table* t = core_.tables.by_id(table_id);
  if (!t) return -ENOENT;
  int64_t room = static_cast<int64_t>(core_.residency.high_pages()) - core_.residency.resident();
  std::vector<PageRef> pages;
  uint64_t end = first + std::min(count, t->pages);
  end = std::min(t->pages, end);
  for (uint64_t p = first; p < end && static_cast<int64_t>(pages.size()) < room; p++) {
    uint64_t w = core_.word(t, p).load();
    if (PageWord::resident(w) && PageWord::slow(w)) pages.push_back({t, p});
  }
  int dram = core_.opts.dram_node >= 0 ? core_.opts.dram_node : 0;
  long moved = 0, failed = 0;
  std::vector<int> where = move_runs(pages, dram, true);
  for (size_t i = 0; i < pages.size(); i++) {
    const PageRef& v = pages[i];
    if (where[i] != dram) {
      failed++;
      continue;
    }
    account_tier_move(v, false);
    moved++;
  }
  core_.counters.demote_failures.fetch_add(failed, std::memory_order_relaxed);
  return moved;
}

}  // namespace mtier
