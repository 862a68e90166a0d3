// SPDX-License-Identifier: Apache-2.0
// Pages the program locks in memory (mlock, mlock2 through the preload):
// held in DRAM - brought in if they were out, never a victim of any
// eviction - until it unlocks them, unmaps them or frees their table.
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

bool test_bit(std::atomic<uint64_t>* b, uint64_t p) {
  return b[p / 64].load(std::memory_order_relaxed) >> (p % 64) & 1;
}

}  // namespace

int Engine::hold_range(const void* addr, uint64_t len, bool hold, bool bring_in) {
  auto lo = reinterpret_cast<uintptr_t>(addr) & ~(uintptr_t{kPageSize} - 1);
  uintptr_t hi = (reinterpret_cast<uintptr_t>(addr) + len + kPageSize - 1) & ~(uintptr_t{kPageSize} - 1);
  if (hold) {  // each table's bitmap, made once (the registry exclusively)
    std::unique_lock lk(core_->tables.mutex());
    int err = 0;
    for_each_part(core_->tables, lo, hi, [&](const Span& s) {
      if (s.t->held_bits.load() || err) return;
      try {
        uint64_t words = (s.t->pages + 63) / 64;
        s.t->held_storage.reset(new std::atomic<uint64_t>[words]);
        for (uint64_t i = 0; i < words; i++) s.t->held_storage[i].store(0);
        s.t->held_bits.store(s.t->held_storage.get(), std::memory_order_release);
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
    for_each_part(core_->tables, lo, hi, [&](const Span& s) {
      std::atomic<uint64_t>* b = s.t->held_bits.load(std::memory_order_acquire);
      for (uint64_t p = s.first; p < s.end; p++) more += !test_bit(b, p);
    });
    uint64_t limit = core_->residency.budget_pages() * kHeldSharePercent / 100;
    if (held.load() + more > static_cast<int64_t>(limit)) return -EAGAIN;
    held.fetch_add(more);
  }
  for_each_part(core_->tables, lo, hi, [&](const Span& s) {
    std::atomic<uint64_t>* b = s.t->held_bits.load(std::memory_order_acquire);
    if (!b) return;
    for (uint64_t p = s.first; p < s.end; p++) {
      uint64_t bit = uint64_t{1} << (p % 64);
      if (hold) {
        b[p / 64].fetch_or(bit, std::memory_order_acq_rel);
      } else if (b[p / 64].fetch_and(~bit, std::memory_order_acq_rel) & bit) {
        held.fetch_sub(1);
      }
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

// Under the registry's exclusive lock: the locks of pages [first, end) of
// t go (their pages are dropped or the table freed).
void Engine::release_holds(Table* t, uint64_t first, uint64_t end) {
  std::atomic<uint64_t>* b = t->held_bits.load(std::memory_order_acquire);
  if (!b) return;
  for (uint64_t p = first; p < end; p++) {
    uint64_t bit = uint64_t{1} << (p % 64);
    if (b[p / 64].fetch_and(~bit, std::memory_order_acq_rel) & bit)
      core_->counters.held_pages.fetch_sub(1);
  }
}

}  // namespace mtier
