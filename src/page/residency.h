// SPDX-License-Identifier: Apache-2.0
// The DRAM budget as a counter of resident pages (pages the memfd holds) and
// the hand-off between the fault handler, which needs room, and the evictor,
// which makes it. The handler never waits with a page lock held.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "tier/budget.h"

namespace mtier {

class Residency {
 public:
  // The limits are MemoryBudget's (page counts rounded down).
  Residency(uint64_t budget_bytes, unsigned high_pct, unsigned low_pct);

  uint64_t budget_pages() const { return budget_.load(std::memory_order_relaxed); }
  uint64_t high_pages() const { return high_.load(std::memory_order_relaxed); }
  uint64_t low_pages() const { return low_.load(std::memory_order_relaxed); }
  // The configured budget (what the process asked for).
  uint64_t own_budget_pages() const { return own_.pages_budget(); }
  uint64_t own_low_pages() const { return own_.pages_low(); }
  uint64_t own_high_pages() const { return own_.pages_high(); }
  // A budget assigned from outside (the daemon's share of a node budget),
  // clamped to [1, own budget] pages - or to [1, `ceiling`] when that is
  // larger (a job's rank: the job's budget is its ranks' own budgets
  // summed, and one rank may hold more than its own part of it) -
  // watermarks scaled by the same percentages; 0 restores the configured
  // budget. The evictor is kicked so that a smaller budget takes effect at
  // once.
  void set_budget_pages(uint64_t pages, uint64_t ceiling = 0);
  int64_t resident() const { return resident_.load(std::memory_order_acquire); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // Over the high watermark, or a fault is waiting for room: with
  // high_watermark=100 the budget itself is the mark, which residency never
  // passes, and a full budget must still be made room in when asked.
  bool over_high() const {
    return resident() > static_cast<int64_t>(high_pages()) ||
           waiters_.load(std::memory_order_acquire) > 0;
  }
  // Pages the evictor should free to get back to the low watermark, with
  // the claimed pages and those waiters need counted as resident.
  uint64_t excess_over_low() const;

  void add(int64_t pages);
  void sub(int64_t pages);
  // Pages claimed for placement (FETCHING) and not placed yet: the fault
  // handler and the lookahead claim concurrently, so each counts the
  // other's claims before it claims more (room_below). claim() when a page
  // is claimed into DRAM; placed() when it lands (it becomes resident);
  // unclaimed() when it does not (unclaim, failure).
  void claim() { claimed_.fetch_add(1, std::memory_order_acq_rel); }
  void placed() {
    add(1);
    claimed_.fetch_sub(1, std::memory_order_acq_rel);
  }
  void unclaimed(int64_t pages = 1) { claimed_.fetch_sub(pages, std::memory_order_acq_rel); }
  // placed() undone (the page did not land after all): claimed again first,
  // so that resident and claimed pages together never read low.
  void unplaced() {
    claimed_.fetch_add(1, std::memory_order_acq_rel);
    sub(1);
  }
  // Claims one page if resident and claimed pages stay within `limit`;
  // false, nothing claimed, otherwise. Threads that claim this way never
  // both take the last page of room (the fault handler's pages brought
  // with a fault against the lookahead's): the count is compared and
  // bumped in one step. resident() only grows through placed(), which
  // takes the page off claimed() as it adds it: never past the limit.
  bool try_claim(uint64_t limit, uint64_t pages = 1) {
    int64_t c = claimed_.load(std::memory_order_acquire), n = static_cast<int64_t>(pages);
    for (;;) {
      if (static_cast<int64_t>(limit) - resident() - c < n) return false;
      if (claimed_.compare_exchange_weak(c, c + n, std::memory_order_acq_rel)) return true;
    }
  }
  int64_t claimed() const { return claimed_.load(std::memory_order_acquire); }
  // Pages that can still be claimed below `limit` (the budget, or a
  // watermark): limit less resident and claimed pages; may be negative.
  int64_t room_below(uint64_t limit) const {
    return static_cast<int64_t>(limit) - resident() - claimed();
  }

  // Blocks until `pages` more fit in the budget (besides the claimed ones). Wakes the evictor. If the
  // evictor reports that it cannot make progress (a full or failing store),
  // returns false at once: the caller goes over budget rather than hang.
  // The caller holds no ranked lock (LOCKING in page/core.h).
  // With timeout_ms >= 0, also returns false when that passed (the
  // lookahead's wait: a read ahead is worth a bounded wait only).
  bool wait_for_room(uint64_t pages, int timeout_ms = -1);
  // wait_for_room, and the room taken in the same step as it is found: the
  // pages count as claimed at once, so that no other claimant (the
  // lookahead's worker, try_claim) takes the room between the wait and the
  // caller's claims - which put DRAM one page over the budget, seen by the
  // torture test's mincore count. The caller claims its pages without
  // counting them again and gives back what it did not use (unclaimed(n)).
  // False as wait_for_room: nothing reserved, the caller goes over budget.
  bool reserve_room(uint64_t pages);
  // The evictor's side: progress or its lack, and its wake-up.
  void notify_progress();
  void set_stuck(bool stuck);
  bool stuck() const { return stuck_.load(std::memory_order_acquire); }
  // Waits until over the high watermark, kicked, or `timeout_ms` passed.
  void wait_for_work(unsigned timeout_ms);
  void kick();
  uint64_t overruns() const { return overruns_.load(std::memory_order_relaxed); }
  // Faults blocked in wait_for_room now.
  int waiters() const { return waiters_.load(std::memory_order_acquire); }

 private:
  const MemoryBudget own_;
  std::atomic<uint64_t> budget_, high_, low_;
  std::atomic<int64_t> resident_{0};
  std::atomic<int64_t> claimed_{0};
  std::atomic<int64_t> wanted_{0};  // pages the waiters in wait_for_room need
  std::atomic<uint64_t> peak_{0};
  std::atomic<bool> stuck_{false};
  std::atomic<uint64_t> overruns_{0};
  std::atomic<int> waiters_{0};  // faults blocked in wait_for_room
  std::mutex mu_;
  std::condition_variable room_, work_;
  bool kicked_ = false;
};

}  // namespace mtier
