// SPDX-License-Identifier: Apache-2.0
// Placing a claimed page: the one way a FETCHING page becomes resident, for
// the fault handler and the lookahead alike.
#pragma once
#include <atomic>
#include <cstdint>

#include "page/core.h"

namespace mtier {

// The two ends of a claim that does not come from a placement: an ABSENT
// page claimed for placement (FETCHING, counted in Residency::claimed), and
// a claimed page given back (ABSENT again, its slot kept). Caller holds the
// page's stripe lock. Every claim ends in place_claimed, unclaim, or a
// failure that calls Residency::unclaimed itself.
void claim(Core& core, Table* t, uint64_t page);
// claim() of a page whose room the caller reserved (Residency::reserve_room):
// already counted in Residency::claimed.
void claim_reserved(Core& core, Table* t, uint64_t page);
void unclaim(Core& core, Table* t, uint64_t page);
// A claim of a page nobody waits for yet (read around a fault, a fetch order's, the lookahead's):
// only if DRAM's resident and claimed pages stay within `limit` pages
// (Residency::try_claim: atomic against the other claiming thread). False:
// nothing claimed, the page stays ABSENT. Caller holds its stripe lock.
bool claim_within(Core& core, Table* t, uint64_t page, uint64_t limit);

// A zero-filled page to place a never-written page from.
extern const char kZeroPage[];
// kZeroRunPages zero-filled pages in a row, to place a run of never-written
// pages from in one copy (never written: its pages are the kernel's zero
// page, no memory).
inline constexpr uint64_t kZeroRunPages = 64;
static_assert(2 * kZeroRunPages < PageLocks::kStripes, "a run must be shorter than half the stripes");
extern const char* const kZeroRun;

// Whether a page read from a store is mapped writable: when the access
// (or the hint) writes, or when its table's write intent says its pages
// get written after a read (predict_writes, page/write_intent.h; the hint
// says what the caller knows, the table what its pages met).
inline bool fetch_writable(Core& core, Table* t, bool write) {
  return write || (core.opts.predict_writes && t->write_intent.map_writable());
}

// Counts the FETCHING page `page` of `t` resident and in `placed` (the
// table's fetches, prefetches or zero_fills), copies `source` into it
// (UFFDIO_COPY, write-protected unless `write`; the same ioctl wakes the
// threads waiting on it), then moves it to CLEAN or DIRTY. EAGAIN (the
// address space changing: a fork, an mremap) is retried kCopyRetries
// times, then the page goes back to ABSENT and the waiters are woken to
// fault again. Returns 0, -EAGAIN (unclaimed as said), or another -errno
// from the copy (the counts undone, the page still FETCHING and claimed:
// the caller fails it). The page was counted in Residency::claim() when
// claimed; placed() or unclaimed() settles it.
// Caller holds the registry shared and the page's stripe lock.
// `demand`: false for the lookahead's placements, where a waiter the
// fault handler marked (PageWord::kWaiter) counts as a late read ahead.
// `scan`: a page of a front-to-back walk (the fault handler's), placed
// referenced but without heat: once the walk is past it (its bit cleared,
// FaultHandler::read_behind) the evictor's scan hand takes it before any
// page that was faulted in on its own (heat/clock.h, Mode::scan_only).
// `may_exist`: the page may already be in place from a run's copy that
// failed part of the way (place_zero_run): -EEXIST then counts as placed.
int place_claimed(Core& core, Table* t, uint64_t page, const void* source, bool write,
                  std::atomic<uint64_t>& placed, bool demand = true, bool scan = false,
                  bool may_exist = false);
// The FETCHING pages [first, first+n) of t (2 <= n <= kZeroRunPages)
// placed from the n contiguous pages at `source` in one UFFDIO_COPY, as
// place_claimed places one (counted in `placed`, mapped as `write` says,
// marked as `scan` says, woken by the copy). Why: the copy's fixed cost
// dominates a page's placement - on this project's 2-vCPU guest one ioctl
// a page cost 5.4 us a page, one a run of 64 1.1 us (2026-12-06). Returns
// 0 with every page placed, or the copy's -errno with nothing counted and
// every page still FETCHING and claimed: the caller then places them one
// at a time with may_exist (the failed copy may have placed the first few).
// Caller holds the registry shared and the run's stripe locks.
int place_run(Core& core, Table* t, uint64_t first, uint64_t n, const void* source, bool write,
              bool scan, std::atomic<uint64_t>& placed);
// place_run of never-written pages, from zeros (kZeroRun).
inline int place_zero_run(Core& core, Table* t, uint64_t first, uint64_t n, bool write, bool scan,
                          std::atomic<uint64_t>& placed) {
  return place_run(core, t, first, n, kZeroRun, write, scan, placed);
}
inline constexpr int kCopyRetries = 16;

}  // namespace mtier
