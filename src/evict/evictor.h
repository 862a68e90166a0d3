// SPDX-License-Identifier: Apache-2.0
// The evictor thread: when a memory tier passes its high watermark it moves
// the coldest pages (CLOCK) out until the low watermark. From DRAM they go to
// the slow memory tier while it has room (move_pages), else to a store; from
// the slow tier to a store. Into a store, a clean page is dropped (its store
// copy or the zero page stays valid); a dirty page is write-protected, copied
// to a store slot and then punched, unless a write cancelled the eviction
// meanwhile. Between passes it runs the access sampler.
#pragma once
#include <atomic>
#include <bitset>
#include <memory>
#include <thread>
#include <vector>

#include "heat/clock.h"
#include "heat/sampler.h"
#include "page/core.h"

namespace mtier {

class Evictor {
 public:
  explicit Evictor(Core& core);
  ~Evictor();
  // prepare(), then starts the thread. 0 or -errno.
  [[nodiscard]] int start();
  void stop();
  // Opens the store channels (idempotent): what a test that drives the
  // passes itself needs instead of start(). 0 or -errno.
  [[nodiscard]] int prepare();

  // One pass over DRAM (or the slow tier) down to its low watermark (the
  // thread's body; public for tests). Returns the pages freed from that
  // tier. Caller holds no locks.
  uint64_t evict_pass(bool slow_tier = false);
  // Calls that unmapped or write-protected victims (seal(), unmap_named_ahead();
  // each a TLB shootdown where it cleared an entry): for tests.
  uint64_t unmap_calls() const { return unmap_calls_.load(std::memory_order_relaxed); }
  // Evicting a whole table (mtier_table_evict) is evict_range(id, 0,
  // UINT64_MAX, false, true). Returns 0, or the first error (-ENOSPC: no
  // store room; -EIO: write-back failed).
  // Evicts the resident pages of [first, first+count) of table `table_id`
  // (clipped to the table), referenced or not: with `dram_only` only pages
  // in DRAM, which go to the slow memory tier while it has room (a daemon's
  // order); else every resident page goes to a store (evict_table). Pages
  // pinned by the lookahead window stay, unless `explicit_evict` (the
  // program's own mtier_table_evict); pages the program locked (mlock)
  // always stay. -ENOENT: no such table (looked up under the registry lock).
  [[nodiscard]] int evict_range(int table_id, uint64_t first, uint64_t count, bool dram_only,
                                bool explicit_evict = false);
  // The pages of [first, first+count) of table `table_id` (clipped) that are
  // in the slow memory tier, moved back to DRAM (dram_node; node 0 when it
  // is -1) by move_pages, as many as fit below DRAM's high watermark.
  // Returns the pages moved (those move_pages did not move stay where they
  // are, counted in demote_failures), or -ENOENT: no such table.
  [[nodiscard]] long promote_range(int table_id, uint64_t first, uint64_t count);

 private:
  void run();
  // The pause after a pass that freed nothing (run()); doubling while the
  // stores refuse the pages.
  static constexpr unsigned kMinIdlePauseMs = 10, kMaxIdlePauseMs = 1000;
  // Whether the access sampler should run now (see evictor.cc).
  bool sampling_useful() const;
  uint64_t useful_target(const Residency& r, bool slow_tier) const;
  // Evicts the given cold pages (with `force`, referenced ones too);
  // returns the pages freed, *err the first error.
  uint64_t evict(const std::vector<PageRef>& victims, bool force, int* err);
  uint64_t start_run(const PageRef* run, size_t n, bool force, std::vector<PageRef>* dirty);
  uint64_t punch_and_commit(const PageRef* run, size_t n, std::vector<bool>& mark, bool written);
  void fail_run_page(const PageRef& v, int err);
  void log_error_once(const PageRef& v, int err);
  uint64_t finish_run(const PageRef* run, const int* results, size_t n);
  void seal(const std::vector<PageRef>& pages);
  void unmap_named_ahead(const std::vector<PageRef>& victims, bool force);
  size_t stretch_end(const std::vector<PageRef>& pages, size_t i, bool bridge) const;
  bool bridgeable_between(const PageRef& a, const PageRef& b, bool resident_too) const;
  bool walk_reading_in() const;
  // Whether a table's walk ended (its last walk fault kWalkLiveMs old)
  // between `since_ms` and `now_ms`. Registry held shared.
  bool walk_ended_since(uint64_t since_ms, uint64_t now_ms) const;
  // Whether any table's walk is live at `now_ms` (Table::spared_from).
  // Registry held shared.
  bool walk_live(uint64_t now_ms) const;
  // The widest gap a stretch bridges (pages): bounds bridgeable_between's walk.
  static constexpr uint64_t kMaxBridgedGap = 512;
  int assign_slot(const PageRef& v);
  void say_store_full(const PageRef& v);
  void place_in_runs(const std::vector<PageRef>& dirty, std::vector<std::vector<PageRef>>* by_store,
                     std::vector<PageRef>* no_room);
  void move_to_slot(const PageRef& v, unsigned store, uint64_t slot);
  size_t slot_stretch_end(const std::vector<PageRef>& dirty, size_t i) const;
  // Pages in a row on consecutive slots that keep them (place_in_runs).
  static constexpr size_t kKeptStretch = 4;
  uint64_t demote_or_evict(const std::vector<PageRef>& victims, int* err, bool force = false);
  uint64_t evict_clock_victims(const std::vector<PageRef>& victims, bool slow_tier, int* err,
                               bool force = false);
  std::vector<PageRef> demote(const std::vector<PageRef>& pages);
  void account_demotion(const PageRef& v, int node, std::vector<PageRef>* failed);
  void account_tier_move(const PageRef& v, bool to_slow);
  // move_pages of runs of pages to `node` through the alias (the trainer's
  // view zapped first, so the alias is the only mapping). Returns, for each
  // page, the node it is on now or a negative errno.
  std::vector<int> move_runs(const std::vector<PageRef>& pages, int node, bool zap_view);
  void write_back(unsigned store, std::vector<PageRef>& group, int* err, uint64_t* freed);

  Core& core_;
  ClockHand hand_;
  // Takes the unmarked pages first (scan_resistant; evict_pass).
  ClockHand scan_hand_;
  uint64_t scan_placed_seen_ = 0;  // Core::scan_placed when scan_hand_ last found none
  // When scan_hand_'s sweep (of the tables no walk is reading) last found
  // no victim, 0 when it last found some (evict_pass; under pass_mu_).
  uint64_t sweep_dry_ms_ = 0;
  Sampler sampler_;
  std::vector<std::unique_ptr<StoreChannel>> channels_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};  // stop() cuts a pass short (a pass runs without the thread in tests)
  RankedMutex<LockRank::kEvictPass> pass_mu_;  // one pass at a time (thread vs orders)
  // Under pass_mu_: the order being carried out is the program's own
  // mtier_table_evict, which takes pages the lookahead window pins.
  bool pins_too_ = false;
  bool full_logged_ = false;  // "store full" said since the last slot found
  bool freeing_seen_ = false;  // this pass met a table being freed (under pass_mu_)
  // fail_run_page's marker for "no store had a free slot" (not an errno).
  // The last pass's first store error (ENOSPC: no room), 0 when none;
  // written under pass_mu_, read by the evictor's thread.
  std::atomic<int> pass_error_{0};
  std::atomic<uint64_t> unmap_calls_{0};
  static constexpr int kNoSlot = -(1 << 20);
  // fail_run_page's marker for "its table is being freed" (Table::freeing).
  static constexpr int kFreeing = -(1 << 20) - 1;
  static constexpr unsigned kLoggedErrnos = 256;
  std::bitset<kLoggedErrnos> logged_errnos_;  // errors named once (under pass_mu_)
};

}  // namespace mtier
