// SPDX-License-Identifier: Apache-2.0
// The page state machine (docs/architecture.md, "The page model"), in one
// place. Every managed page has one 64-bit word; its state changes only
// through transition(), under the page's stripe lock (PageLocks), and only
// along the edges of kTransitions.
// Bits outside the state (referenced, heat) change with atomic RMW, no lock.
//
//   ABSENT (no slot = zero page)  --claim-->          FETCHING
//   ABSENT (store s, slot n)      --claim-->          FETCHING
//   FETCHING --placed_clean / placed_dirty-->          CLEAN / DIRTY
//   FETCHING --fetch_failed-->                         FAILED (access gets SIGBUS)
//   FETCHING --unclaim-->                              ABSENT (a read ahead that failed)
//   CLEAN    --write-->                                DIRTY
//   DIRTY    --evict_begin-->                          EVICTING (unmapped, or write-
//                                                      protected without CONTINUE_MODE_WP)
//   EVICTING --write-->                                DIRTY (eviction cancelled)
//   EVICTING --writeback_failed-->                     DIRTY
//   EVICTING --evict_commit-->                         ABSENT (store s, slot n)
//   CLEAN    --evict_commit-->                         ABSENT (its slot, or zero)
//   any but FETCHING --discard-->                      ABSENT (free, MADV_DONTNEED;
//                                                      the whole word cleared:
//                                                      slot, heat, tier bits)
//
// Pinned is a flag beside the state, not a state: the lookahead window
// (lookahead/window.h) sets it on the pages its batches name, in any state,
// and clears it when the window passes the batch that pinned it last (the
// word keeps that batch's number, modulo 256). The evictor's CLOCK and the
// daemon's orders, for every tier, never start an eviction of a pinned page
// (only mtier_table_evict, which the program asks for, does: evictor.cc
// start_run, evictor_orders.cc); a discard clears the flag with the rest of
// the word. Set and cleared under the stripe lock. Locked pages (the
// program's mlock: Table::held, outside the word) are never evicted at all.
#pragma once
#include <atomic>
#include <cstdint>

#include "sys/page_size.h"

namespace mtier {

enum class PageState : uint8_t { kAbsent, kFetching, kClean, kDirty, kEvicting, kFailed };
inline constexpr int kPageStateCount = 6;

enum class PageEvent : uint8_t {
  kClaim,
  kPlacedClean,
  kPlacedDirty,
  kFetchFailed,
  kWrite,
  kEvictBegin,
  kWritebackFailed,
  kEvictCommit,
  kDiscard,
  kUnclaim,
};
inline constexpr int kPageEventCount = 10;

const char* page_state_name(PageState s);
const char* page_event_name(PageEvent e);

// The next state for (state, event), or -1 when the edge does not exist.
int next_page_state(PageState s, PageEvent e);

// Layout of a page word:
//   bits 0-2 state | bit 3 referenced | bit 4 has slot | bits 5-7 store index
//   bits 8-15 heat (saturating) | bit 16 on the slow memory tier
//   bit 17 pinned | bits 18-25 the pinning batch (modulo 256)
//   bit 26 a thread waits on the FETCHING page (the fault handler saw its
//   fault): the placement must wake it
//   bit 27 walked: placed by a front-to-back walk (scan_resistant) and not
//   used since (mark_access clears it); the evictor's scan hand takes only
//   these (heat/clock.h)
//   bits 28-63 slot number (2^36 slots: 256 TiB of store per store)
struct PageWord {
  static constexpr uint64_t kStateMask = 0x7;
  static constexpr uint64_t kReferenced = 1u << 3;
  static constexpr uint64_t kHasSlot = 1u << 4;
  static constexpr int kStoreShift = 5;
  static constexpr uint64_t kStoreMask = 0x7ull << kStoreShift;
  static constexpr int kHeatShift = 8;
  static constexpr uint64_t kHeatMask = 0xffull << kHeatShift;
  static constexpr uint64_t kSlowTier = 1ull << 16;
  static constexpr uint64_t kPinned = 1ull << 17;
  static constexpr int kPinBatchShift = 18;
  static constexpr uint64_t kPinBatchMask = 0xffull << kPinBatchShift;
  static constexpr uint64_t kWaiter = 1ull << 26;
  static constexpr uint64_t kWalked = 1ull << 27;
  static constexpr int kSlotShift = 28;
  // Slots a store may have (256 TiB of 4 KiB pages): store_bytes and
  // pmem_bytes are bounded by it.
  static constexpr uint64_t kMaxSlots = 1ull << (64 - kSlotShift);
  static_assert(kMaxSlots * kPageSize == 1ull << 48, "store_bytes' bound (config/options.cc)");
  static constexpr unsigned kMaxStores = 8;

  static PageState state(uint64_t w) { return static_cast<PageState>(w & kStateMask); }
  static bool referenced(uint64_t w) { return w & kReferenced; }
  static bool has_slot(uint64_t w) { return w & kHasSlot; }
  static unsigned store(uint64_t w) { return (w & kStoreMask) >> kStoreShift; }
  static uint64_t slot(uint64_t w) { return w >> kSlotShift; }
  static unsigned heat(uint64_t w) { return (w & kHeatMask) >> kHeatShift; }
  static bool slow(uint64_t w) { return w & kSlowTier; }
  static bool pinned(uint64_t w) { return w & kPinned; }
  static bool waiter(uint64_t w) { return w & kWaiter; }
  static bool walked(uint64_t w) { return w & kWalked; }
  static uint8_t pin_batch(uint64_t w) { return (w & kPinBatchMask) >> kPinBatchShift; }
  static bool resident(uint64_t w) {
    PageState s = state(w);
    return s == PageState::kClean || s == PageState::kDirty || s == PageState::kEvicting;
  }
};

using PageWordAtomic = std::atomic<uint64_t>;

// Moves the page along edge `e`; aborts (an internal inconsistency, named
// with the page's table, index and state) if the edge does not exist.
// `table_id` and `page` are only for that message. Returns the new word.
uint64_t transition(PageWordAtomic& word, PageEvent e, int table_id, uint64_t page);

// Sets or clears the slot (store index + number) of the page.
void set_slot(PageWordAtomic& word, unsigned store, uint64_t slot);
void clear_slot(PageWordAtomic& word);
// Records that the page now lives on the slow memory tier (or DRAM again).
void set_slow(PageWordAtomic& word, bool slow);
// Marks an access: referenced bit and one more unit of heat (saturating);
// the page is no longer only a walk's (kWalked cleared).
void mark_access(PageWordAtomic& word);
// Clears the referenced bit; returns whether it was set.
bool test_and_clear_referenced(PageWordAtomic& word);
// Pins the page for batch `batch` (its low 8 bits are kept), unless it is
// pinned already for a later batch (modular comparison: windows are shorter
// than 128 batches). Returns whether the page was not pinned before.
// Caller holds the stripe lock.
bool pin(PageWordAtomic& word, uint64_t batch);
// Unpins the page if the batch that pinned it last is `batch` (a later
// batch's pin stays). Returns whether it was unpinned. Stripe lock held.
bool unpin(PageWordAtomic& word, uint64_t batch);
// Halves the heat (periodic decay, as HeMem cools).
void decay_heat(PageWordAtomic& word);

}  // namespace mtier
