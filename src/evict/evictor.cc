// SPDX-License-Identifier: Apache-2.0
#include "evict/evictor.h"

#include "evict/page_runs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "log/log.h"
#include "page/page_checksum.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "sys/vm.h"
#include "util/runtime_thread.h"

namespace mtier {

Evictor::Evictor(Core& core)
    : core_(core),
      hand_(core, {.by_frequency = core.opts.evict_lfu}),
      scan_hand_(core, {.scan_only = true}),
      sampler_(core) {}

Evictor::~Evictor() { stop(); }

int Evictor::prepare() {
  if (!channels_.empty() || core_.stores.empty()) return 0;
  return open_channels(core_, &channels_);
}

int Evictor::start() {
  if (int rc = prepare(); rc < 0) return rc;
  running_ = true;
  int rc = start_runtime_thread(&thread_, "evictor", "DRAM is no longer made room in",
                                [this] { run(); });
  if (rc < 0) running_ = false;
  return rc;
}

void Evictor::stop() {
  if (!running_.exchange(false)) return;
  stopping_ = true;
  core_.residency.kick();
  thread_.join();
}

// A pass that frees nothing is tried again after 10 ms; when the stores
// refused its pages (full, or failing) the pause doubles up to
// kMaxIdlePauseMs: each pass visits the pages twice and zaps the
// referenced ones, a MINOR fault each for the trainer, which a full store
// would otherwise cost it every 10 ms for as long as it stays full. (Pages
// merely pinned or in use are soon free again: no back-off for those.)
void Evictor::run() {
  unsigned pause_ms = kMinIdlePauseMs;
  while (running_.load(std::memory_order_acquire)) {
    core_.residency.wait_for_work(20);
    if (!running_.load(std::memory_order_acquire)) break;
    bool dram = core_.residency.over_high();
    if (dram || (core_.has_slow_tier() && core_.slow.over_high())) {
      if (evict_pass(!dram) > 0) {
        pause_ms = kMinIdlePauseMs;
        continue;
      }
      // In steps, so that stop() is not kept waiting.
      for (unsigned t = 0; t < pause_ms && running_.load(std::memory_order_acquire);
           t += kMinIdlePauseMs)
        std::this_thread::sleep_for(std::chrono::milliseconds(kMinIdlePauseMs));
      bool refused = pass_error_.load(std::memory_order_relaxed) != 0;
      pause_ms = refused ? std::min(2 * pause_ms, kMaxIdlePauseMs) : kMinIdlePauseMs;
    } else if (sampling_useful()) {
      sampler_.tick();
    }
  }
}

// The sampler's referenced bits only matter to an eviction that is near:
// while every tier is below its low watermark it idles (unless scan_idle),
// so that a trainer whose tables fit pays nothing for it. Measured with
// scripts/bench-trainer.sh, budget 2x the tables, sampler always on: 0.93
// of all-DRAM, against 1.02 with scan_rate=0. Heat then comes from faults.
bool Evictor::sampling_useful() const {
  if (core_.opts.scan_idle) return true;
  // Every table fits in the budget: no eviction will need the bits.
  if (!core_.has_slow_tier() && core_.tables.table_pages() <= core_.residency.budget_pages())
    return false;
  if (core_.residency.resident() >= static_cast<int64_t>(core_.residency.low_pages())) return true;
  return core_.has_slow_tier() &&
         core_.slow.resident() >= static_cast<int64_t>(core_.slow.low_pages());
}

// What a pass frees: down to the low watermark, but in the background (no
// fault waiting for room) no more than the tables could still bring in
// beyond the budget - all their pages less the budget. While the tables
// fit, nothing: a budget that holds them costs no eviction (nor, by
// sampling_useful, any sampling). DRAM with a slow tier below it keeps the
// watermarks (its victims stay in memory).
uint64_t Evictor::useful_target(const Residency& r, bool slow_tier) const {
  uint64_t excess = r.excess_over_low();
  if (r.waiters() > 0 || slow_tier || core_.has_slow_tier()) return std::max<uint64_t>(excess, 1);
  uint64_t tables = core_.tables.table_pages(), budget = r.budget_pages();
  return std::min(excess, tables > budget ? tables - budget : 0);
}

// The CLOCK's victims go down a tier (DRAM's to the slow tier where there
// is one) or to a store (the slow tier's, or DRAM's without one). `force`:
// a page referenced since it was chosen goes too (the last resort's).
uint64_t Evictor::evict_clock_victims(const std::vector<PageRef>& victims, bool slow_tier,
                                      int* err, bool force) {
  return slow_tier || !core_.has_slow_tier() ? evict(victims, force, err)
                                             : demote_or_evict(victims, err, force);
}

uint64_t Evictor::evict_pass(bool slow_tier) {
  std::lock_guard pass(pass_mu_);
  std::shared_lock tables(core_.tables.mutex());
  Residency& r = slow_tier ? core_.slow : core_.residency;
  uint64_t target = useful_target(r, slow_tier);
  if (target == 0) return 0;  // the tables fit: nothing to evict, nor to call stuck
  uint64_t total = 0;
  for (Table* t : core_.tables.ordered()) total += t->pages;
  uint64_t freed = 0, visited = 0;
  std::vector<PageRef> victims;
  int err = 0;
  freeing_seen_ = false;
  // Pages walked in since the last time the scan hand found none: it takes
  // them (the walks' pages the walks are past: PageWord::kWalked) first,
  // for one rotation at most, without touching the others; the CLOCK goes
  // on from there.
  // Why: a checkpoint's save reads every table front to back while the
  // trainer waits; had its pages entered referenced as others do, the
  // CLOCK would clear every hot page's bit in one rotation and evict the
  // hot set in the next (EngineTest.AWalkOverAColdTableLeavesAHotSetThatFitsInDram).
  uint64_t scan_visited = 0;
  uint64_t placed = core_.scan_placed.load(std::memory_order_relaxed);
  // Or while a walk goes on (a second pass over pages still in DRAM
  // places none: without this, a pass then went straight to the CLOCK and
  // took the hot set, 2 to 15 runs in 30 of the engine test under load).
  bool scans = core_.opts.scan_resistant && !slow_tier &&
               (placed != scan_placed_seen_ || walk_live(Table::walk_clock_ms()));
  while (scans && freed < target && scan_visited <= total && !stopping_.load() && !freeing_seen_) {
    victims.clear();
    // The daemon's keep hints hold here as in the CLOCK's first rotation.
    const bool hints = core_.hints_active.load(std::memory_order_acquire);
    // The sweep looks at every page of the tables no walk is reading; once
    // it found none, it finds none until a walk ends (its table's pages
    // join the sweep's), and a walk that reads in would otherwise pay a
    // look at every page of every table for each batch of its own victims
    // (2M pages, milliseconds a pass, in a 4 GiB load).
    uint64_t v = 0;
    const uint64_t now_ms = Table::walk_clock_ms();
    if (sweep_dry_ms_ == 0 || walk_ended_since(sweep_dry_ms_, now_ms)) {
      v = scan_hand_.sweep(total ? total : 1, &victims, core_.opts.evict_batch, 0, hints);
      sweep_dry_ms_ = victims.empty() ? now_ms : 0;
    }
    // The walks' own pages behind their fronts last, the newest first (a
    // second pass over the same tensor reads the oldest again soonest).
    if (victims.empty()) v += scan_hand_.take_behind_walks(&victims, core_.opts.evict_batch, hints);
    scan_visited += v ? v : total + 1;
    if (victims.empty()) {
      scan_placed_seen_ = placed;
      // None left, but nobody needs the CLOCK's victims yet: the pages
      // resident, on their way in and waited for fit in the budget (a
      // waiter is woken by the room there is), or pages are on their way
      // in (a walk's window: the scan hand's victims at the next pass, 10
      // ms on). Only then do hot pages spend their second chances; a
      // fallback at every pass that found the scan's pages gone evicted
      // the hot set in 6 runs of 20 of the engine test.
      Residency& dram = core_.residency;
      if (freed == 0 && (dram.excess_over_low() + dram.low_pages() <= dram.budget_pages() ||
                         dram.claimed() > 0)) {
        dram.notify_progress();
        pass_error_.store(err, std::memory_order_relaxed);
        dram.set_stuck(false);
        return freed;
      }
      break;
    }
    freed += evict_clock_victims(victims, false, &err);
    core_.residency.notify_progress();
  }
  // A walk reading tables in (a checkpoint's save) goes on making its own
  // pages victims as it passes them: what the scan hand found this pass
  // is enough for now (a fault waiting for room is woken by it). Why:
  // taking the rest of the target from the CLOCK evicted the hot rows a
  // little at a time all through a save (36,000 of a 1 GiB save's 290,000
  // evictions).
  if (scans && freed > 0 && walk_reading_in()) {
    pass_error_.store(err, std::memory_order_relaxed);
    core_.residency.set_stuck(false);
    return freed;
  }
  // Two rotations at most: the first may only clear referenced bits. A
  // table being freed ends the pass: its free, waiting for the registry,
  // gives its memory back, and a pass that freed nothing for that reason
  // is not stuck.
  while (freed < target && visited <= 2 * total + 1 && !stopping_.load() && !freeing_seen_) {
    victims.clear();
    // The daemon's hints steer the first rotation only: stale or greedy
    // hints never stop eviction.
    bool hints = visited < total && core_.hints_active.load(std::memory_order_acquire);
    hand_.set_spare_walks(visited < total);
    uint64_t v = hand_.sweep(total ? total : 1, &victims, core_.opts.evict_batch, slow_tier, hints);
    visited += v ? v : total + 1;
    if (!victims.empty()) freed += evict_clock_victims(victims, slow_tier, &err);
    core_.residency.notify_progress();
  }
  // The last resort: rotations that found nothing to free (no victim, as
  // opposed to victims a full or failing store refused: err) while the
  // budget is full or a fault waits for room take any page the hand may
  // (hot ones too: ClockHand::set_take_any), from where the hand stands,
  // so that only pages nothing may evict (pinned, held, on their way) or
  // a store's failure make a pass stuck.
  if (freed == 0 && err == 0 && !freeing_seen_ && !stopping_.load() &&
      (r.waiters() > 0 || r.resident() >= static_cast<int64_t>(r.budget_pages()))) {
    victims.clear();
    hand_.set_take_any(true);
    hand_.sweep(total ? total : 1, &victims,
                std::min<uint64_t>(core_.opts.evict_batch, std::max<uint64_t>(target, 1)),
                slow_tier, false);
    hand_.set_take_any(false);
    if (!victims.empty()) freed += evict_clock_victims(victims, slow_tier, &err, true);
    core_.residency.notify_progress();
  }
  pass_error_.store(err, std::memory_order_relaxed);
  if (!slow_tier)
    core_.residency.set_stuck(freed == 0 && !freeing_seen_ &&
                              core_.residency.resident() >= (int64_t)core_.residency.budget_pages());
  return freed;
}


uint64_t Evictor::evict(const std::vector<PageRef>& victims, bool force, int* err) {
  uint64_t freed = 0;
  std::vector<PageRef> dirty;
  unmap_named_ahead(victims, force);
  for_each_run(victims, [&](size_t i, size_t j) {
    freed += start_run(&victims[i], j - i, force, &dirty);
  });
  // Slots first, then the seal: a page no store has room for goes back to
  // DIRTY untouched (a full store would otherwise unmap, or protect and
  // unprotect, every dirty victim of every pass: TLB shootdowns and
  // faults for nothing).
  std::vector<std::vector<PageRef>> by_store(core_.stores.size());
  std::vector<PageRef> no_room;
  // A page with no entry (zapped by the sampler) may have taken a write
  // fault since start_run: DIRTY again, nothing to write.
  std::erase_if(dirty, [&](const PageRef& v) {
    return PageWord::state(core_.word(v.table, v.page).load()) != PageState::kEvicting;
  });
  if (core_.opts.cluster_writes) {
    place_in_runs(dirty, &by_store, &no_room);
  } else {
    for (const PageRef& v : dirty) {
      int s = assign_slot(v);
      if (s >= 0) by_store[s].push_back(v);
      else no_room.push_back(v);
    }
  }
  if (!no_room.empty()) {
    if (!*err) *err = -ENOSPC;
    std::vector<int> results(no_room.size(), kNoSlot);
    for_each_run(no_room, [&](size_t i, size_t j) { finish_run(&no_room[i], &results[i], j - i); });
  }
  for (unsigned s = 0; s < by_store.size(); s++) {
    if (by_store[s].empty()) continue;
    seal(by_store[s]);
    std::erase_if(by_store[s], [&](const PageRef& v) {  // a failed seal: DIRTY again
      return PageWord::state(core_.word(v.table, v.page).load()) != PageState::kEvicting;
    });
    write_back(s, by_store[s], err, &freed);
  }
  return freed;
}

// Under the run's locks: clean, unreferenced pages (their data is in their
// slot, or is zeros) are dropped at once, one punch per stretch; dirty ones
// become EVICTING and are appended to *dirty for write-back. A racing write
// fault waits for the locks, then refetches or cancels. Returns pages freed.
uint64_t Evictor::start_run(const PageRef* run, size_t n, bool force, std::vector<PageRef>* dirty) {
  if (run[0].table->freeing.load(std::memory_order_acquire)) {
    freeing_seen_ = true;  // the free drops them, and ends this pass
    return 0;
  }
  RunLock lk(core_, run[0].table, run[0].page, n);
  std::vector<bool> drop(n, false);
  for (size_t k = 0; k < n; k++) {
    uint64_t now = core_.word(run[k].table, run[k].page).load(std::memory_order_acquire);
    // Referenced since chosen: only an order (force) takes it. Pinned by
    // the lookahead window: only the program's own mtier_table_evict
    // (pins_too_). Locked by the program (mlock): nothing takes it.
    if (PageWord::referenced(now) && !force) continue;
    if (PageWord::pinned(now) && !pins_too_) continue;
    if (run[k].table->held(run[k].page)) continue;
    if (PageWord::state(now) == PageState::kClean) {
      drop[k] = true;
      run[k].table->write_intent.dropped_clean();
    }
    if (PageWord::state(now) != PageState::kDirty) continue;
    transition(core_.word(run[k].table, run[k].page), PageEvent::kEvictBegin, run[k].table->id,
               run[k].page);
    dirty->push_back(run[k]);
  }
  return punch_and_commit(run, n, drop, false);
}

// Punches the pages marked in `mark` (a stretch of marked pages in one
// call) and moves them to ABSENT; a page whose punch fails stays resident
// (CLEAN pages as they are, EVICTING ones back to DIRTY). Caller holds the
// run's locks. Returns the pages freed.
uint64_t Evictor::punch_and_commit(const PageRef* run, size_t n, std::vector<bool>& mark,
                                   bool written) {
  Table* t = run[0].table;
  uint64_t freed = 0, freed_slow = 0;
  for (size_t i = 0; i < n;) {
    if (!mark[i]) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && mark[j]) j++;
    int rc = core_.region->punch(core_.region_offset(t, run[i].page), (j - i) * kPageSize);
    for (size_t k = i; k < j; k++) {
      if (rc < 0) {
        fail_run_page(run[k], rc);
        continue;
      }
      freed_slow += PageWord::slow(core_.word(t, run[k].page).load());
      transition(core_.word(t, run[k].page), PageEvent::kEvictCommit, t->id, run[k].page);
      t->counters.evictions.fetch_add(1, std::memory_order_relaxed);
      if (written) t->counters.writebacks.fetch_add(1, std::memory_order_relaxed);
      freed++;
    }
    i = j;
  }
  core_.residency.sub(static_cast<int64_t>(freed - freed_slow));
  core_.slow.sub(static_cast<int64_t>(freed_slow));
  t->counters.resident_pages.fetch_sub(static_cast<int64_t>(freed), std::memory_order_relaxed);
  t->counters.slow_pages.fetch_sub(static_cast<int64_t>(freed_slow), std::memory_order_relaxed);
  return freed;
}

// A page whose eviction failed (`err`, or kNoSlot: no store had a slot,
// counted in store_full by assign_slot): an EVICTING page goes back to the
// trainer as DIRTY and writable; a CLEAN one simply stays. Lock held.
void Evictor::fail_run_page(const PageRef& v, int err) {
  PageWordAtomic& w = core_.word(v.table, v.page);
  if (err == kFreeing) {
    // Given up for a free that drops the page (and its slot): back to
    // DIRTY, no error, and no unprotect - the free zaps the page.
    if (PageWord::state(w.load(std::memory_order_acquire)) == PageState::kEvicting)
      transition(w, PageEvent::kWritebackFailed, v.table->id, v.page);
    return;
  }
  if (err != kNoSlot) {
    v.table->counters.errors.fetch_add(1, std::memory_order_relaxed);
    core_.counters.store_errors.fetch_add(1, std::memory_order_relaxed);
    log_error_once(v, err);
  }
  if (PageWord::state(w.load(std::memory_order_acquire)) != PageState::kEvicting) return;
  transition(w, PageEvent::kWritebackFailed, v.table->id, v.page);
  // Only a write-protected page needs its protection lifted: one refused a
  // slot was never sealed, and an unmapped one is mapped writable at its
  // next (MINOR) fault, being DIRTY.
  if (err != kNoSlot && !core_.continue_wp)
    (void)core_.uffd->writeprotect(v.table->page_addr(v.page), kPageSize, false);
}

// Names each error (ENOSPC: the store's filesystem is full) the first time
// it is seen; later ones are only counted (store_errors), not a line a page.
void Evictor::log_error_once(const PageRef& v, int err) {
  unsigned e = static_cast<unsigned>(-err);
  if (e < kLoggedErrnos && logged_errnos_.test(e)) return;
  if (e < kLoggedErrnos) logged_errnos_.set(e);
  const char* name = strerrorname_np(-err);
  MTIER_LOG_ERROR("evict: table %s page %llu: %s (%s)%s; the page stays in DRAM (over the "
                  "budget while eviction cannot make room); further %s errors are counted in "
                  "store_errors, not logged",
                  v.table->name.c_str(), static_cast<unsigned long long>(v.page), strerror(-err),
                  name ? name : "?", err == -ENOSPC ? ": the store's filesystem is full" : "",
                  name ? name : "such");
}

// Finishes the eviction of a run of written-back (or failed) pages: those
// still EVICTING with a good write are punched; failed ones go back to
// DIRTY. A page a write took back meanwhile (DIRTY again) is left alone.
uint64_t Evictor::finish_run(const PageRef* run, const int* results, size_t n) {
  RunLock lk(core_, run[0].table, run[0].page, n);
  std::vector<bool> punch(n, false);
  for (size_t k = 0; k < n; k++) {
    uint64_t now = core_.word(run[k].table, run[k].page).load(std::memory_order_acquire);
    if (PageWord::state(now) != PageState::kEvicting) continue;
    if (results[k] < 0) fail_run_page(run[k], results[k]);
    else punch[k] = true;
  }
  return punch_and_commit(run, n, punch, true);
}

// Makes every later access to the dirty victims fault before their data is
// read for write-back (contiguous runs in one call): a write from then on
// faults, and the handler cancels the eviction. Where CONTINUE can keep a
// page write-protected (Core::continue_wp), their page-table entries are
// zapped rather than write-protected: the write-back reads through the
// memfd, so the punch that follows has no entry to clear - one TLB
// shootdown a victim instead of two (write-protect, then punch; in a
// lookahead replay's profile the write-protects were 11% of cycles and the
// punches fell from 16% to 6%) - and a read in between is a MINOR
// fault mapped write-protected. A page that cannot be sealed goes back to
// DIRTY at once.
//
// Where they are zapped, one zap also covers the gaps between victims whose
// pages have no page-table entry (absent, or on their way out; while a walk
// reads tables in, resident pages too: bridgeable_between): a zap of
// dirty shared-memory entries flushes the TLB before it returns, one
// shootdown per call however many pages it clears, and process_madvise()
// does not batch it either (the kernel's delayed rmap of a dirty file
// page). A gap page faulted in after the check loses its fresh entry, which
// costs it a MINOR fault and nothing else: its data is in the memfd.
void Evictor::seal(const std::vector<PageRef>& pages) {
  for (size_t i = 0; i < pages.size();) {
    size_t j = stretch_end(pages, i, core_.continue_wp);
    char* addr = pages[i].table->page_addr(pages[i].page);
    size_t len = (pages[j - 1].page - pages[i].page + 1) * kPageSize;
    unmap_calls_.fetch_add(1, std::memory_order_relaxed);
    int rc = core_.continue_wp ? sys::zap(addr, len) : core_.uffd->writeprotect(addr, len, true);
    if (rc < 0) {
      MTIER_LOG_ERROR("evict: %s of table %s pages %llu-%llu: %s",
                      core_.continue_wp ? "unmapping" : "write-protect",
                      pages[i].table->name.c_str(), (unsigned long long)pages[i].page,
                      (unsigned long long)pages[j - 1].page, strerror(-rc));
      for (size_t k = i; k < j; k++) {
        std::lock_guard lk(core_.lock_of(pages[k].table, pages[k].page));
        fail_run_page(pages[k], rc);
      }
    }
    i = j;
  }
}

// The end of the stretch of `pages` (sorted) that starts at i: the pages
// after it of the same table that follow it directly or, with `bridge`,
// across gaps of pages with no page-table entry - and, while a walk reads
// tables in (walk_reading_in), of resident pages too (bridgeable_between) -
// unless scan_resistant: its victims are the walk's own pages, and the hot
// rows between them, covered, took a MINOR fault each when torch.save's
// second pass read them (48,000 in a 1 GiB save; 256 without).
size_t Evictor::stretch_end(const std::vector<PageRef>& pages, size_t i, bool bridge) const {
  const bool resident_too = bridge && !core_.opts.scan_resistant && walk_reading_in();
  size_t j = i + 1;
  while (j < pages.size() && pages[j].table == pages[i].table &&
         (pages[j].page == pages[j - 1].page + 1 ||
          (bridge && bridgeable_between(pages[j - 1], pages[j], resident_too))))
    j++;
  return j;
}

// Victims of tables named ahead (which the CLOCK leaves mapped), clean and
// dirty, lose their page-table entries here, a stretch a call across absent
// pages (stretch_end), before start_run: a zap or punch that clears entries
// is a TLB shootdown per call, and one that finds none is not, so the clean
// ones' punch and the dirty ones' seal() then cost no shootdown. Why the
// dirty ones too: sealed apart, they were stretches of their own, and a
// save's clean and dirty victims lie interleaved (in a 1 GiB save at 25%,
// 13,282 seal calls beside 7,122 here; with them here the save took 6.00 s
// against 6.56 s, medians of 6 interleaved). Only where the handler maps a page back in
// any state (Core::continue_wp). A victim accessed after this takes a
// MINOR fault and, referenced, stays.
void Evictor::unmap_named_ahead(const std::vector<PageRef>& victims, bool force) {
  if (!core_.continue_wp) return;
  std::vector<PageRef> mapped;
  for (const PageRef& v : victims) {
    if (!v.table->named_ahead.load(std::memory_order_relaxed)) continue;
    uint64_t w = core_.word(v.table, v.page).load(std::memory_order_acquire);
    if (PageWord::state(w) != PageState::kClean && PageWord::state(w) != PageState::kDirty)
      continue;
    if (!force && PageWord::referenced(w)) continue;
    if ((PageWord::pinned(w) && !pins_too_) || v.table->held(v.page)) continue;
    mapped.push_back(v);
  }
  for (size_t i = 0; i < mapped.size();) {
    size_t j = stretch_end(mapped, i, true);
    unmap_calls_.fetch_add(1, std::memory_order_relaxed);
    // A failure leaves them mapped: the punch or the seal clears them instead.
    (void)sys::zap(mapped[i].table->page_addr(mapped[i].page),
                   (mapped[j - 1].page - mapped[i].page + 1) * kPageSize);
    i = j;
  }
}

// Whether one zap may cover every page strictly between a and b (of one
// table, a before b, at most kMaxBridgedGap apart): each has no page-table
// entry to lose (absent, being evicted - its entry zapped - or failed) or,
// with `resident_too`, is in DRAM and neither pinned by the lookahead nor
// held (mlock, a fixed buffer). Read without the pages' locks: a race
// costs a MINOR fault (seal()). A covered resident page keeps its data
// and state (the memfd holds it); only its next access is a MINOR fault.
bool Evictor::bridgeable_between(const PageRef& a, const PageRef& b, bool resident_too) const {
  if (b.page <= a.page || b.page - a.page > kMaxBridgedGap) return false;
  for (uint64_t p = a.page + 1; p < b.page; p++) {
    uint64_t w = core_.word(a.table, p).load(std::memory_order_relaxed);
    PageState s = PageWord::state(w);
    if (s == PageState::kAbsent || s == PageState::kEvicting || s == PageState::kFailed) continue;
    if (resident_too && (s == PageState::kClean || s == PageState::kDirty) &&
        !PageWord::pinned(w) && !a.table->held(p))
      continue;
    return false;
  }
  return true;
}

bool Evictor::walk_live(uint64_t now_ms) const {
  for (Table* t : core_.tables.ordered())
    if (t->spared_from(now_ms) != UINT64_MAX) return true;
  return false;
}

bool Evictor::walk_ended_since(uint64_t since_ms, uint64_t now_ms) const {
  for (Table* t : core_.tables.ordered()) {
    const uint64_t end = t->walk_ms.load(std::memory_order_relaxed) + Table::kWalkLiveMs;
    if (end >= since_ms && end <= now_ms) return true;
  }
  return false;
}

// Whether a MISSING fault continued a front-to-back walk within the last
// Table::kWalkLiveMs (Core::walk_miss_ms): a checkpoint's save or a
// set-up reading tables in, the program waiting on it. Its victims lie
// between the resident pages it passes over (a trainer's hot rows,
// scattered), a few pages a stretch, and each unmap of dirty shared-memory
// entries is a TLB shootdown of its own: in a 1 GiB save at 25%, 52,000
// unmaps, half of them of one page, were half of the evictor's time. Then
// one unmap also covers the resident pages between victims: 1,600 unmaps,
// the save 7.65 -> 5.68 s (medians of 3), each covered page a MINOR fault
// at its next use. Not while training: its victims lie between the rows
// the next steps read (tried without this condition: 12,000-12,500 MINOR
// faults in 10 steps, which ran at 0.6-0.7x the speed; single runs).
bool Evictor::walk_reading_in() const {
  uint64_t last = core_.walk_miss_ms.load(std::memory_order_relaxed);
  return last != 0 && Table::walk_clock_ms() - last <= Table::kWalkLiveMs;
}

// The store index the page's data goes to: its own slot if it has one,
// else a new slot in the first store with room. -ENOSPC when all are full.
int Evictor::assign_slot(const PageRef& v) {
  PageWordAtomic& w = core_.word(v.table, v.page);
  uint64_t now = w.load(std::memory_order_acquire);
  if (PageWord::has_slot(now)) return static_cast<int>(PageWord::store(now));
  for (unsigned s = 0; s < core_.stores.size(); s++) {
    int64_t slot = core_.stores[s]->alloc_slot();
    if (slot < 0) continue;
    set_slot(w, s, static_cast<uint64_t>(slot));
    full_logged_ = false;
    return static_cast<int>(s);
  }
  say_store_full(v);
  return -ENOSPC;
}

// Logged once until a slot is found again: a full store refuses every
// dirty page of every pass, and one line says it.
void Evictor::say_store_full(const PageRef& v) {
  if (core_.counters.store_full.fetch_add(1, std::memory_order_relaxed) == 0 || !full_logged_)
    MTIER_LOG_ERROR("evict: no store has room for table %s page %llu: store full, dirty pages "
                    "stay in DRAM over the budget", v.table->name.c_str(),
                    static_cast<unsigned long long>(v.page));
  full_logged_ = true;
}

// cluster_writes: the pages of `dirty` (EVICTING, in the pass's order) get
// consecutive slots in runs, so that write_back's channel writes each run
// as one transfer instead of a 4 KiB write at each page's own slot. Pages
// whose own slots already follow each other (kKeptStretch or more: a table
// written front to back) keep them, and with them the layout a front-to-back
// read merges. Any other page that had a slot goes to a run in its own
// store, and its old slot is freed (its bytes are stale: the page is dirty
// and stays in DRAM until the new write lands; a failed write leaves it
// DIRTY with the new slot; no read of a slot is in flight for a page that
// is EVICTING, as only ABSENT pages are read). A page
// with none gets a run in the first store with room. Where a store has no
// run to give, a page keeps its slot, or gets a single one. Caller holds
// pass_mu_ and the registry shared (drop_pages, which frees slots, holds it
// exclusively).
void Evictor::place_in_runs(const std::vector<PageRef>& dirty,
                            std::vector<std::vector<PageRef>>* by_store,
                            std::vector<PageRef>* no_room) {
  std::vector<PageRef> unslotted;
  std::vector<std::vector<PageRef>> scattered(core_.stores.size());
  for (size_t i = 0; i < dirty.size();) {
    uint64_t w = core_.word(dirty[i].table, dirty[i].page).load(std::memory_order_acquire);
    if (!PageWord::has_slot(w)) {
      unslotted.push_back(dirty[i++]);
      continue;
    }
    size_t j = slot_stretch_end(dirty, i);
    auto& to = j - i >= kKeptStretch ? (*by_store)[PageWord::store(w)]
                                     : scattered[PageWord::store(w)];
    to.insert(to.end(), dirty.begin() + static_cast<long>(i), dirty.begin() + static_cast<long>(j));
    i = j;
  }
  bool found = false;  // a slot was handed out: "store full" may be said again
  for (unsigned s = 0; s < core_.stores.size(); s++) {
    std::vector<PageRef>& group = (*by_store)[s];
    size_t i = group.size();  // the stretches kept in place come first
    group.insert(group.end(), scattered[s].begin(), scattered[s].end());
    group.insert(group.end(), unslotted.begin(), unslotted.end());
    unslotted.clear();
    Store& store = *core_.stores[s];
    while (i < group.size()) {
      uint64_t got = 0;
      int64_t first = store.alloc_run(group.size() - i, &got);
      if (first < 0) break;
      found = true;
      // A run of one merges nothing: a page with a slot keeps it.
      if (got == 1 && PageWord::has_slot(core_.word(group[i].table, group[i].page).load()))
        store.free_slot(static_cast<uint64_t>(first));
      else
        for (uint64_t k = 0; k < got; k++) move_to_slot(group[i + k], s, first + k);
      i += got;
    }
    // No run left: slotted pages keep theirs, the others take single slots
    // here or try the next store.
    std::erase_if(group, [&](const PageRef& v) {
      PageWordAtomic& w = core_.word(v.table, v.page);
      if (PageWord::has_slot(w.load(std::memory_order_acquire))) return false;
      int64_t slot = store.alloc_slot();
      if (slot >= 0) set_slot(w, s, static_cast<uint64_t>(slot));
      else unslotted.push_back(v);
      found |= slot >= 0;
      return slot < 0;
    });
  }
  if (found) full_logged_ = false;
  for (const PageRef& v : unslotted) say_store_full(v);
  no_room->insert(no_room->end(), unslotted.begin(), unslotted.end());
}

// The end of the stretch of dirty[i..] whose slots (in one store) follow
// each other: written in place, it is one transfer already.
size_t Evictor::slot_stretch_end(const std::vector<PageRef>& dirty, size_t i) const {
  uint64_t w = core_.word(dirty[i].table, dirty[i].page).load(std::memory_order_acquire);
  size_t j = i + 1;
  for (; j < dirty.size(); j++) {
    uint64_t n = core_.word(dirty[j].table, dirty[j].page).load(std::memory_order_acquire);
    if (!PageWord::has_slot(n) || PageWord::store(n) != PageWord::store(w) ||
        PageWord::slot(n) != PageWord::slot(w) + (j - i))
      break;
  }
  return j;
}

// Gives the page slot `slot` of store `s`, freeing the one it had there.
void Evictor::move_to_slot(const PageRef& v, unsigned s, uint64_t slot) {
  PageWordAtomic& w = core_.word(v.table, v.page);
  uint64_t old = w.load(std::memory_order_acquire);
  set_slot(w, s, slot);
  if (PageWord::has_slot(old)) core_.stores[PageWord::store(old)]->free_slot(PageWord::slot(old));
}

void Evictor::write_back(unsigned s, std::vector<PageRef>& group, int* err, uint64_t* freed) {
  StoreChannel& ch = *channels_[s];
  std::vector<StoreIo> ios;
  std::vector<int> results;
  for (size_t i = 0; i < group.size(); i += ch.depth()) {
    size_t n = std::min<size_t>(ch.depth(), group.size() - i);
    ios.clear();
    results.assign(n, 0);
    for (size_t k = 0; k < n; k++) {
      const PageRef& v = group[i + k];
      if (v.table->freeing.load(std::memory_order_acquire)) {
        results[k] = kFreeing;  // its table is being freed: nothing to write
        continue;
      }
      uint64_t slot = PageWord::slot(core_.word(v.table, v.page).load());
      void* buf = ch.buffer(static_cast<unsigned>(ios.size()));
      // Through the memfd, not the alias (Region::read: no TLB shootdown at
      // the punch). A failed read fails the page's write-back.
      if (int rc = core_.region->read(core_.region_offset(v.table, v.page), buf, kPageSize);
          rc < 0) {
        results[k] = rc;
        if (!*err) *err = rc;
        continue;
      }
      record_page_sum(v.table, v.page, buf);  // the bytes written (a write may race)
      ios.push_back({slot, buf, 0});
    }
    if (!ios.empty()) {
      int rc = ch.write_pages(ios.data(), ios.size());
      if (rc < 0 && !*err) *err = rc;
    }
    for (size_t k = 0, io = 0; k < n; k++)
      if (results[k] == 0) results[k] = ios[io++].result;
    std::vector<PageRef> chunk(group.begin() + i, group.begin() + i + n);
    for_each_run(chunk, [&](size_t a, size_t b) {
      *freed += finish_run(&chunk[a], &results[a], b - a);
    });
  }
}

}  // namespace mtier
