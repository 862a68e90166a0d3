// SPDX-License-Identifier: Apache-2.0
// Pages the program locks in memory (mlock, mlock2 through the preload) or
// pins for a device (io_uring fixed buffers, RDMA memory regions): held in
// DRAM - brought in if they were out, never a victim of any eviction -
// until it unlocks or unpins them, unmaps them or frees their table.
#include <cerrno>
#include <mutex>
#include <shared_mutex>

#include "engine/engine.h"
#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier {
namespace {

// Held pages are at most this share of the DRAM budget: the rest must stay
// free for every other page the program touches (as the lookahead's pins).
constexpr uint64_t kHeldSharePercent = 75;

struct Span {
  Table* t;
  uint64_t first, end;  // pages of t
};

// Calls f(span) for each table's part of [lo, hi). Registry held.
template <class F>
void for_each_part(TableRegistry& tables, uintptr_t lo, uintptr_t hi, F f) {
  for (Table* t : tables.ordered()) {
    auto base = reinterpret_cast<uintptr_t>(t->base);
    uintptr_t end = base + t->pages * kPageSize;
    if (end <= lo || base >= hi || t->retired.load()) continue;
    uint64_t first = lo > base ? (lo - base) / kPageSize : 0;
    uint64_t last = (hi < end ? hi : end) - base;
    f(Span{t, first, (last + kPageSize - 1) / kPageSize});
  }
}

// The word a hold or release of kind makes of old, or old itself when the
// call changes nothing (an unlock of an unlocked page, a release of an
// unpinned one; a pin past the counter's range is refused by the caller).
uint16_t next_word(uint16_t old, HoldKind kind, bool hold) {
  if (kind == HoldKind::kLock)
    return static_cast<uint16_t>(hold ? old | Table::kHoldLocked : old & ~Table::kHoldLocked);
  uint16_t pins = old & Table::kHoldPins;
  if (hold) return pins == Table::kHoldPins ? old : static_cast<uint16_t>(old + 1);
  return pins ? static_cast<uint16_t>(old - 1) : old;
}

}  // namespace

int Engine::hold_range(const void* addr, uint64_t len, bool hold, bool bring_in, HoldKind kind) {
  auto lo = reinterpret_cast<uintptr_t>(addr) & ~(uintptr_t{kPageSize} - 1);
  uintptr_t hi = (reinterpret_cast<uintptr_t>(addr) + len + kPageSize - 1) & ~(uintptr_t{kPageSize} - 1);
  if (hold) {  // each table's words, made once (the registry exclusively)
    std::unique_lock lk(core_->tables.mutex());
    int err = 0;
    for_each_part(core_->tables, lo, hi, [&](const Span& s) {
      if (s.t->holds.load() || err) return;
      try {
        s.t->hold_storage.reset(new std::atomic<uint16_t>[s.t->pages]);
        for (uint64_t i = 0; i < s.t->pages; i++) s.t->hold_storage[i].store(0);
        s.t->holds.store(s.t->hold_storage.get(), std::memory_order_release);
      } catch (const std::bad_alloc&) {
        err = -ENOMEM;
      }
    });
    if (err) return err;
  }
  std::shared_lock lk(core_->tables.mutex());
  auto& held = core_->counters.held_pages;
  if (hold) {
    int64_t more = 0;
    bool full = false;
    for_each_part(core_->tables, lo, hi, [&](const Span& s) {
      std::atomic<uint16_t>* h = s.t->holds.load(std::memory_order_acquire);
      for (uint64_t p = s.first; p < s.end; p++) {
        uint16_t w = h[p].load(std::memory_order_relaxed);
        more += w == 0;
        full |= kind == HoldKind::kPin && (w & Table::kHoldPins) == Table::kHoldPins;
      }
    });
    uint64_t limit = core_->residency.budget_pages() * kHeldSharePercent / 100;
    if (full || held.load() + more > static_cast<int64_t>(limit)) return -EAGAIN;
  }
  for_each_part(core_->tables, lo, hi, [&](const Span& s) {
    std::atomic<uint16_t>* h = s.t->holds.load(std::memory_order_acquire);
    if (!h) return;
    for (uint64_t p = s.first; p < s.end; p++) {
      uint16_t old = h[p].load(std::memory_order_relaxed), now;
      do {
        now = next_word(old, kind, hold);
      } while (now != old && !h[p].compare_exchange_weak(old, now, std::memory_order_acq_rel));
      held.fetch_add(int64_t{old == 0 && now != 0} - int64_t{old != 0 && now == 0});
    }
  });
  if (!hold || !bring_in) return 0;
  // In DRAM before the lock returns, as mlock's pages are: read faults
  // through the program's mapping, which the fault handler serves.
  int rc = 0;
  for_each_part(core_->tables, lo, hi, [&](const Span& s) {
    if (rc == 0)
      rc = sys::populate_read(s.t->page_addr(s.first), (s.end - s.first) * kPageSize);
  });
  return rc;
}

// Under the registry's exclusive lock: the locks and pins of pages
// [first, end) of t go (their pages are dropped or the table freed).
void Engine::release_holds(Table* t, uint64_t first, uint64_t end) {
  std::atomic<uint16_t>* h = t->holds.load(std::memory_order_acquire);
  if (!h) return;
  for (uint64_t p = first; p < end; p++)
    if (h[p].exchange(0, std::memory_order_acq_rel) != 0) core_->counters.held_pages.fetch_sub(1);
}

}  // namespace mtier
