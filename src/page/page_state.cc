// SPDX-License-Identifier: Apache-2.0
#include "page/page_state.h"

#include <cstdio>
#include <cstdlib>

#include "log/log.h"

namespace mtier {
namespace {

constexpr int A = static_cast<int>(PageState::kAbsent);
constexpr int F = static_cast<int>(PageState::kFetching);
constexpr int C = static_cast<int>(PageState::kClean);
constexpr int D = static_cast<int>(PageState::kDirty);
constexpr int E = static_cast<int>(PageState::kEvicting);
constexpr int X = static_cast<int>(PageState::kFailed);
constexpr int _ = -1;

// kTransitions[state][event]; events in PageEvent order:
//  claim placed_clean placed_dirty fetch_failed write evict_begin writeback_failed
//  evict_commit discard unclaim
constexpr int kTransitions[kPageStateCount][kPageEventCount] = {
    /* absent   */ {F, _, _, _, _, _, _, _, A, _},
    /* fetching */ {_, C, D, X, _, _, _, _, _, A},
    /* clean    */ {_, _, _, _, D, _, _, A, A, _},
    /* dirty    */ {_, _, _, _, _, E, _, _, A, _},
    /* evicting */ {_, _, _, _, D, _, D, A, A, _},
    /* failed   */ {_, _, _, _, _, _, _, _, A, _},
};

uint64_t with_state(uint64_t w, int s) {
  return (w & ~PageWord::kStateMask) | static_cast<uint64_t>(s);
}

}  // namespace

const char* page_state_name(PageState s) {
  static const char* const kNames[] = {"absent", "fetching", "clean", "dirty", "evicting", "failed"};
  return kNames[static_cast<int>(s)];
}

const char* page_event_name(PageEvent e) {
  static const char* const kNames[] = {"claim", "placed_clean", "placed_dirty",
                                       "fetch_failed", "write", "evict_begin",
                                       "writeback_failed", "evict_commit", "discard",
                                       "unclaim"};
  return kNames[static_cast<int>(e)];
}

int next_page_state(PageState s, PageEvent e) {
  return kTransitions[static_cast<int>(s)][static_cast<int>(e)];
}

uint64_t transition(PageWordAtomic& word, PageEvent e, int table_id, uint64_t page) {
  uint64_t old = word.load(std::memory_order_acquire);
  for (;;) {
    int next = next_page_state(PageWord::state(old), e);
    if (next < 0) {
      fprintf(stderr, "%smtier: internal error: table %d page %llu: no edge %s --%s-->\n",
              log::stderr_is_journal() ? "<2>" : "", table_id, static_cast<unsigned long long>(page),
              page_state_name(PageWord::state(old)), page_event_name(e));
      abort();
    }
    uint64_t w = with_state(old, next);
    // A discarded page is forgotten: no slot (its owner freed it), no heat.
    if (e == PageEvent::kDiscard) w = with_state(0, next);
    if (next == static_cast<int>(PageState::kAbsent))
      w &= ~(PageWord::kSlowTier | PageWord::kWaiter | PageWord::kWalked);
    if (word.compare_exchange_weak(old, w, std::memory_order_acq_rel)) return w;
  }
}

void set_slot(PageWordAtomic& word, unsigned store, uint64_t slot) {
  uint64_t old = word.load(std::memory_order_relaxed);
  uint64_t w;
  do {
    w = (old & ((1ull << PageWord::kSlotShift) - 1) & ~PageWord::kStoreMask) |
        PageWord::kHasSlot | (static_cast<uint64_t>(store) << PageWord::kStoreShift) |
        (slot << PageWord::kSlotShift);
  } while (!word.compare_exchange_weak(old, w, std::memory_order_acq_rel));
}

void clear_slot(PageWordAtomic& word) {
  uint64_t old = word.load(std::memory_order_relaxed);
  uint64_t w;
  do {
    w = old & ((1ull << PageWord::kSlotShift) - 1) & ~(PageWord::kStoreMask | PageWord::kHasSlot);
  } while (!word.compare_exchange_weak(old, w, std::memory_order_acq_rel));
}

void set_slow(PageWordAtomic& word, bool slow) {
  if (slow) word.fetch_or(PageWord::kSlowTier, std::memory_order_acq_rel);
  else word.fetch_and(~PageWord::kSlowTier, std::memory_order_acq_rel);
}

void mark_access(PageWordAtomic& word) {
  uint64_t old = word.load(std::memory_order_relaxed);
  uint64_t w;
  do {
    w = (old | PageWord::kReferenced) & ~PageWord::kWalked;
    if (PageWord::heat(old) < 255) w += 1ull << PageWord::kHeatShift;
  } while (!word.compare_exchange_weak(old, w, std::memory_order_acq_rel));
}

bool test_and_clear_referenced(PageWordAtomic& word) {
  return word.fetch_and(~PageWord::kReferenced, std::memory_order_acq_rel) & PageWord::kReferenced;
}

bool pin(PageWordAtomic& word, uint64_t batch) {
  uint64_t old = word.load(std::memory_order_relaxed);
  uint64_t w;
  do {
    uint8_t b = static_cast<uint8_t>(batch);
    if (PageWord::pinned(old) && static_cast<int8_t>(PageWord::pin_batch(old) - b) > 0)
      return false;  // a later batch holds it
    w = (old & ~PageWord::kPinBatchMask) | PageWord::kPinned |
        (static_cast<uint64_t>(b) << PageWord::kPinBatchShift);
  } while (!word.compare_exchange_weak(old, w, std::memory_order_acq_rel));
  return !PageWord::pinned(old);
}

bool unpin(PageWordAtomic& word, uint64_t batch) {
  uint64_t old = word.load(std::memory_order_relaxed);
  uint64_t w;
  do {
    if (!PageWord::pinned(old) || PageWord::pin_batch(old) != static_cast<uint8_t>(batch))
      return false;
    w = old & ~(PageWord::kPinned | PageWord::kPinBatchMask);
  } while (!word.compare_exchange_weak(old, w, std::memory_order_acq_rel));
  return true;
}

void decay_heat(PageWordAtomic& word) {
  uint64_t old = word.load(std::memory_order_relaxed);
  uint64_t w;
  do {
    unsigned h = PageWord::heat(old) / 2;
    w = (old & ~PageWord::kHeatMask) | (static_cast<uint64_t>(h) << PageWord::kHeatShift);
  } while (!word.compare_exchange_weak(old, w, std::memory_order_acq_rel));
}

}  // namespace mtier
