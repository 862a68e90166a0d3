// SPDX-License-Identifier: Apache-2.0
// The state the engine's threads share: the region, its userfaultfd, the
// tables, the page locks, the budget and the stores. Owned by Engine; the
// fault handler, evictor and sampler each hold a reference.
//
// LOCKING
// -------
// The locks of the runtime, what each guards, and the one order in which a
// thread may take them (a thread holding one may take only a later one).
// Builds configured with lock checks (--enable-sanitizers, or
// --enable-lock-checks) assert the order of the three ranked locks at run
// time (page/lock_order.h).
//
//   1. Evictor::pass_mu_ (rank kEvictPass): one eviction pass or daemon order
//      (evict_range, promote_range) at a time; the CLOCK hands and the tier
//      bit of a page word (set_slow) change only under it.
//   2. TableRegistry::mutex() (rank kRegistry, shared_mutex): the set of
//      tables and their extents. Exclusive: create_table, free_table,
//      discard (teardown). Shared: a whole fault batch (claim .. place), an
//      eviction pass, a sampler tick, the daemon's orders, stats readers - so
//      a table never disappears under them, and no page is FETCHING while it
//      is held exclusively.
//   3. PageLocks stripes (rank kPage; core.lock_of(t, page)): a page word's
//      state. Every state change goes through transition() under the page's
//      stripe lock, teardown's discard included; bits outside the state
//      (referenced, heat) change by atomic RMW without it. Only the evictor
//      and the fault handler (placing a run of never-written pages) hold
//      several stripes at once: a run of consecutive pages (RunLock, in
//      page order, shorter than half the stripes, so that two runs never
//      deadlock: page/run_lock.h); everyone else holds one.
//   4. Leaves, taken last and holding nothing else while held: Residency's
//      mutex (the room/work condition variables), the stores' slot
//      allocators, FaultHandler::request_mu_, Lookahead::mu_ (its queue),
//      DaemonLink::state_mu_, ForkedChildren::hold_mu_, the log.
//
// Pins (the lookahead window's bit in a page word) change under the page's
// stripe lock, like the state; the lookahead's worker pins with the
// registry shared, and an eviction never starts on a pinned page but for
// the program's own mtier_table_evict. The program's locks (mlock:
// Table::held) change by atomic RMW with the registry shared; no eviction
// starts on a locked page.
//
// Waits:
//   - for DRAM room (Residency::wait_for_room: the fault handler, and the
//     lookahead's worker before a read ahead claims its pages): with no
//     ranked lock held. The evictor that makes the room takes pass_mu_ and
//     the registry (shared); a waiter holding the registry would deadlock
//     behind a writer (create_table) queued between the two on a
//     writer-preferring rwlock. The handler waits before it takes the
//     registry for a batch (FaultHandler::handle_batch); checked builds
//     assert it.
//   - for store I/O: the fault handler and the lookahead read with the
//     registry shared and no stripe lock (its pages are FETCHING: a fault on one finds it so and
//     waits for the wake); the evictor writes back with pass_mu_ and the
//     registry shared and no stripe lock (its pages are EVICTING and
//     unmapped or write-protected: a write faults and cancels). A table's teardown waits
//     for that I/O, which is bounded by the device; no stripe lock is ever
//     held across I/O.
//   - a UFFDIO_COPY the kernel refuses with EAGAIN (its address space
//     changing: fork, mremap) is retried a bounded number of times under the
//     page's stripe lock; then the page goes back to ABSENT and the thread is
//     woken to fault again (FaultHandler::place).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "config/options.h"
#include "page/page_locks.h"
#include "page/residency.h"
#include "page/table_registry.h"
#include "region/region.h"
#include "store/store.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "uffd/forked_children.h"

namespace mtier {

struct EngineCounters {
  std::atomic<uint64_t> wild_faults{0};   // faults in the region outside any table
  std::atomic<uint64_t> store_full{0};    // evictions refused for lack of store space
  std::atomic<uint64_t> store_errors{0};  // failed store reads and writes
  std::atomic<uint64_t> sampled_pages{0}; // PTEs zapped by the sampler and clock
  std::atomic<uint64_t> demote_failures{0}; // pages move_pages did not move
  // The lookahead (lookahead/; the names are the public counters', mtier_stats): calls served, pages named (deduplicated per
  // call), pages read ahead of any access, pages named that were resident
  // already, pages read ahead that an access reached while they were still
  // in flight (the read ahead came late: the access waited for the read),
  // pages pinned now, and pages named but not pinned (the window was full).
  std::atomic<uint64_t> prefetch_calls{0};
  std::atomic<uint64_t> prefetch_pages{0};
  std::atomic<uint64_t> prefetch_late{0};
  std::atomic<uint64_t> prefetch_reads{0};
  std::atomic<uint64_t> prefetch_hits{0};
  std::atomic<int64_t> pinned_pages{0};
  std::atomic<uint64_t> window_overflows{0};
  // Faults of forked children served (uffd/forked_children.h).
  std::atomic<uint64_t> child_faults{0};
  // Pages the program locked in DRAM (mlock: Engine::hold_range).
  std::atomic<int64_t> held_pages{0};
};

struct Core {
  Core(const Options& o, std::unique_ptr<Region> r)
      : opts(o),
        region(std::move(r)),
        tables(region->base(), region->bytes() / kPageSize),
        residency(o.dram_bytes, o.high_watermark, o.low_watermark),
        slow(o.slow_bytes, o.high_watermark, o.low_watermark) {}

  Options opts;
  // Where opts.dram_bytes came from: "given", or the default's reasoning
  // (engine/default_budget.h), for the start line.
  std::string budget_from = "given";
  // Where the region's size came from: "given", "default", or the
  // RLIMIT_AS cap (engine_create.cc), for the start line.
  std::string region_from = "given";
  std::unique_ptr<Region> region;
  // The registered userfaultfd's calls (the fault path's seam: a test puts
  // a fake here); nullptr until the engine has registered the region.
  std::unique_ptr<sys::Uffd> uffd;
  uint64_t uffd_features = 0;
  // UFFDIO_CONTINUE can keep a clean page write-protected (Linux >= 6.3).
  // Without it a MINOR fault maps the page writable, so it must count as
  // a write: the page becomes DIRTY (more write-backs, never a lost write).
  bool continue_wp = false;
  TableRegistry tables;
  PageLocks locks;
  Residency residency;  // DRAM
  Residency slow;       // the slow memory tier (budget 0: none)
  std::vector<std::unique_ptr<Store>> stores;  // eviction order: first with room wins
  // What the tables freed so far counted (Engine::counter_totals). Written
  // with the registry held exclusively, read with it held shared.
  CounterTotals freed_totals;
  // The forked children that read the tables (nullptr: children cannot).
  std::unique_ptr<ForkedChildren> children;
  EngineCounters counters;
  // The daemon's keep priority per region page (the shared segment's hints;
  // nullptr without a segment), honoured by the evictor's first rotation
  // while hints_active (a daemon is registered and alive).
  const uint8_t* hints = nullptr;
  std::atomic<bool> hints_active{false};
  // Pages placed for front-to-back walks so far (scan_resistant: placed
  // without heat): while it grows, the evictor looks for such pages
  // before the CLOCK's second chances (Evictor::evict_pass).
  std::atomic<uint64_t> scan_placed{0};
  // When a MISSING fault last continued a front-to-back walk over any
  // table (monotonic ms, FaultHandler::add_followers). While that is recent
  // (Table::kWalkLiveMs) a walk is reading tables in - a checkpoint's save,
  // a set-up - and the evictor's unmaps also cover the resident pages
  // between its victims (Evictor::stretch_end).
  std::atomic<uint64_t> walk_miss_ms{0};

  bool has_slow_tier() const { return slow.budget_pages() > 0; }
  // The memory tier's residency a page (word) counts against.
  Residency& tier_of(uint64_t w) { return PageWord::slow(w) ? slow : residency; }
  PageWordAtomic& word(Table* t, uint64_t page) { return t->words[page]; }
  PageMutex& lock_of(Table* t, uint64_t page) { return locks.of(t->first_page + page); }
  uint64_t region_offset(Table* t, uint64_t page) const { return (t->first_page + page) * kPageSize; }
  char* alias_of(Table* t, uint64_t page) const {
    return region->alias() + region_offset(t, page);
  }
};

// One I/O channel per store, in store order, for the calling thread's use
// (queue_depth staging buffers each). 0 or -ENOMEM.
[[nodiscard]] int open_channels(Core& core, std::vector<std::unique_ptr<StoreChannel>>* out);

// Makes the access at `addr` (by thread `tid`) fail with SIGBUS: a poison
// marker where the kernel has UFFDIO_POISON, else a signal to the thread.
void fail_access(Core& core, void* addr, unsigned tid);

}  // namespace mtier
