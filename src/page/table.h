// SPDX-License-Identifier: Apache-2.0
// A managed table: a page-aligned extent of the region with one page word
// per page and its counters. Tables are created and freed by the registry.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "page/page_state.h"
#include "page/sequential_streams.h"
#include "page/write_intent.h"
#include "sys/page_size.h"
#include "util/monotonic.h"

namespace mtier {

struct TableCounters {
  std::atomic<uint64_t> missing_faults{0};   // first touches and fetches
  std::atomic<uint64_t> minor_faults{0};     // sampled accesses (zapped PTEs)
  std::atomic<uint64_t> wp_faults{0};        // first writes to clean pages
  std::atomic<uint64_t> zero_fills{0};
  std::atomic<uint64_t> fetches{0};          // pages read from a store
  // Pages read from a store ahead of a fault, by all three paths: the
  // read-around, fetch orders and the lookahead (the public name).
  std::atomic<uint64_t> prefetches{0};
  std::atomic<uint64_t> evictions{0};        // pages that left DRAM
  std::atomic<uint64_t> writebacks{0};       // of which were dirty and written
  std::atomic<uint64_t> evict_cancels{0};    // writes that raced an eviction
  std::atomic<uint64_t> errors{0};           // store errors that hit this table
  std::atomic<uint64_t> demotions{0};        // pages moved DRAM -> slow memory tier
  std::atomic<uint64_t> promotions{0};       // pages moved slow memory tier -> DRAM
  std::atomic<int64_t> resident_pages{0};    // CLEAN + DIRTY + EVICTING, any memory tier
  std::atomic<int64_t> slow_pages{0};        // of which on the slow memory tier
};

// The counters of many tables added up: a process's totals, freed tables
// included (Engine::counter_totals: the exit summary's and the daemon's).
struct CounterTotals {
  uint64_t missing_faults = 0, minor_faults = 0, wp_faults = 0, zero_fills = 0, fetches = 0,
           prefetches = 0, evictions = 0, writebacks = 0, evict_cancels = 0, errors = 0,
           demotions = 0, promotions = 0;
  void add(const TableCounters& c) {
    auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    missing_faults += r(c.missing_faults);
    minor_faults += r(c.minor_faults);
    wp_faults += r(c.wp_faults);
    zero_fills += r(c.zero_fills);
    fetches += r(c.fetches);
    prefetches += r(c.prefetches);
    evictions += r(c.evictions);
    writebacks += r(c.writebacks);
    evict_cancels += r(c.evict_cancels);
    errors += r(c.errors);
    demotions += r(c.demotions);
    promotions += r(c.promotions);
  }
};

struct Table {
  int id = 0;
  std::string name;
  uint64_t first_page = 0;  // page index of the table in the region
  uint64_t pages = 0;
  uint64_t bytes = 0;       // as requested
  char* base = nullptr;     // address in the region's trainer mapping
  // One word per page: in the shared segment (the daemon reads them) when
  // the registry has one, else in own_words.
  PageWordAtomic* words = nullptr;
  std::unique_ptr<PageWordAtomic[]> own_words;
  // The crc32c of what each page's store slot holds, recorded from the
  // exact bytes the evictor wrote (Evictor::write_back) and verified after
  // every read before the page is placed (page/page_checksum.h). 4 bytes a
  // page, allocated with the table (never on the fault path); meaningful
  // only while the page word has a slot. Written with the page EVICTING,
  // read with it FETCHING: the stripe lock's transitions order the two.
  std::unique_ptr<uint32_t[]> sums;
  TableCounters counters;
  // Set (never cleared) once the lookahead names a page of this table: its
  // accesses are then seen through the names (the lookahead marks every
  // page it names as accessed), so the CLOCK's second chance clears the
  // referenced bit without zapping the page - a zap would only cost the
  // next access a MINOR fault that tells nothing new.
  std::atomic<bool> named_ahead{false};
  // Whether its pages fetched for a read are mapped writable (write_intent.h).
  WriteIntent write_intent;
  // Set by Engine::free_table before it waits for the registry: the
  // evictor writes none of the table's pages back from then on (their
  // eviction is given up, the free drops them).
  std::atomic<bool> freeing{false};
  // Freed by the program while a forked child may still read it
  // (Engine::free_table): gone for the program, kept with its pages for
  // the children until none of them can read it. Set under the registry's
  // exclusive lock, never cleared.
  std::atomic<bool> retired{false};
  // Its front-to-back walks over missing pages: the fault handler thread's
  // alone (sequential_streams.h).
  SequentialStreams streams;
  // Its front-to-back walks over pages in DRAM whose entries were zapped
  // (MINOR faults, page by page): the fault handler thread's alone.
  SequentialStreams resident_walks;
  // The page of the latest fault that continued a front-to-back walk over
  // this table (MISSING or MINOR), UINT64_MAX when its latest MISSING fault
  // was no walk's, and when (walk_clock_ms). While the walk goes on (a
  // fault within kWalkLiveMs), the evictor's first rotation passes over the
  // marked pages from there on (ClockHand::set_spare_walks), which the walk
  // is about to read. Why: a CLOCK evicts a buffer read back in the order it
  // was written just ahead of the read (the oldest pages) and fetches each
  // back moments later: a DLRM set-up's float64 array, in DRAM when its
  // read began, was written back and read back whole. Why the expiry: a
  // walk that ended (a set-up's, a checkpoint's) is followed by faults
  // that never clear its front (the lookahead brings the rows, so no
  // fault comes), and a stale front kept a table's rest from the first
  // rotation: the steps after a save ran at 0.62 of those before (0.97
  // without). Written by the fault handler (walked()), read by the evictor
  // (relaxed: a torn pair costs one pass's choice).
  static constexpr uint64_t kWalkLiveMs = 100;
  std::atomic<uint64_t> walk_front{UINT64_MAX};
  std::atomic<uint64_t> walk_ms{0};
  static uint64_t walk_clock_ms() { return monotonic_ms(); }
  // Returns the time it stamped (walk_clock_ms).
  uint64_t walked(uint64_t page) {
    const uint64_t now = walk_clock_ms();
    walk_front.store(page, std::memory_order_relaxed);
    walk_ms.store(now, std::memory_order_relaxed);
    return now;
  }
  // The first page a live walk spares (UINT64_MAX: none), at `now_ms`.
  uint64_t spared_from(uint64_t now_ms) const {
    uint64_t front = walk_front.load(std::memory_order_relaxed);
    return now_ms - walk_ms.load(std::memory_order_relaxed) <= kWalkLiveMs ? front : UINT64_MAX;
  }
  // The pages behind a live walk's front that the scan hand has looked at
  // from the newest down (ClockHand::take_behind_walks): [behind_lo,
  // behind_hi). Pages there were taken or passed over; a later call looks
  // at the pages the walk has passed since (from its front down to
  // behind_hi), then below behind_lo. A walk that restarts behind
  // behind_hi (a second pass) starts them again. The evictor's alone
  // (its pass lock). Kept here rather than in the hand because it lives
  // and dies with its table: a hand's map keyed by table would outlive a
  // freed table and hand its cursor to the next table at that address.
  uint64_t behind_lo = 0, behind_hi = 0;
  // Why each page is held in DRAM (Engine::hold_range): never a victim,
  // not even of an explicit eviction, while its word is not 0. The top bit
  // is the program's lock (mlock: on or off, not nested); the rest count
  // its pins (an io_uring fixed-buffer registration or an RDMA memory
  // region each: the kernel keeps using the page frame, so it must never
  // be punched). One word a page, allocated (and reallocated by a growth)
  // under the registry's exclusive lock and published through holds; words
  // change by atomic RMW with the registry held shared.
  static constexpr uint16_t kHoldLocked = 0x8000;
  static constexpr uint16_t kHoldPins = 0x7fff;
  std::unique_ptr<std::atomic<uint16_t>[]> hold_storage;
  std::atomic<std::atomic<uint16_t>*> holds{nullptr};
  bool held(uint64_t page) const {
    std::atomic<uint16_t>* h = holds.load(std::memory_order_acquire);
    return h && h[page].load(std::memory_order_relaxed) != 0;
  }

  bool contains(const void* p) const {
    auto c = static_cast<const char*>(p);
    return c >= base && c < base + pages * kPageSize;
  }
  uint64_t page_of(const void* p) const {
    return static_cast<uint64_t>(static_cast<const char*>(p) - base) / kPageSize;
  }
  char* page_addr(uint64_t page) const { return base + page * kPageSize; }
};

}  // namespace mtier
