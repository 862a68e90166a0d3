// SPDX-License-Identifier: Apache-2.0
// The tables of the region: creation carves an extent, lookup maps a fault
// address to its table, teardown frees it. Readers (fault handler, evictor,
// sampler) hold the shared lock for a whole batch; create and free take it
// exclusively, so a table never disappears under a batch. (LOCKING in
// page/core.h: rank kRegistry; never held while waiting for DRAM room.)
#pragma once
#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "page/lock_order.h"
#include "page/table.h"
#include "region/extent_allocator.h"

namespace mtier {

class TableRegistry {
 public:
  TableRegistry(char* base, uint64_t capacity_pages);

  using Mutex = RankedSharedMutex<LockRank::kRegistry>;
  Mutex& mutex() { return mu_; }
  // Page words for the whole region (capacity_pages of them, zero), shared
  // with the daemon; set once before the first add. Without it each table
  // allocates its own. Shared words must be zero when a table is added:
  // their owner zeroes them after remove().
  void use_shared_words(PageWordAtomic* words) { shared_words_ = words; }
  // Under the exclusive lock: a new table of `bytes` (rounded up to pages),
  // or nullptr with *err = -ENOMEM (region full, or out of memory: the
  // registry then unchanged) / -EINVAL (bytes == 0). Never throws.
  Table* add(const std::string& name, uint64_t bytes, int* err) noexcept;
  // Under the exclusive lock: forgets the table and returns its extent.
  void remove(Table* t) noexcept;
  // Under the exclusive lock: makes the table `bytes` long, in place -
  // into the free extent right after it. 0, -ENOSPC (no room after it:
  // unchanged), -ENOMEM (unchanged) or -EINVAL (shorter). Never throws.
  [[nodiscard]] int grow(Table* t, uint64_t bytes) noexcept;
  // The id the next table will get (tables with smaller ids exist or
  // existed). Read without the lock.
  int next_id() const { return next_id_.load(std::memory_order_relaxed); }
  // Under the shared lock.
  Table* find(const void* addr) const;
  Table* by_id(int id) const;
  // Tables in address order (for the clock hands). Its storage grows
  // geometrically: adding n tables reallocates it O(log n) times.
  const std::vector<Table*>& ordered() const { return ordered_; }
  // First table whose first_page >= region_page, wrapping to the first.
  size_t index_at_or_after(uint64_t region_page) const;
  uint64_t free_pages() const { return extents_.free_pages(); }
  // The pages of all tables together (read without the lock).
  uint64_t table_pages() const { return table_pages_.load(std::memory_order_relaxed); }

 private:
  Mutex mu_;
  char* base_;
  ExtentAllocator extents_;
  std::map<int, std::unique_ptr<Table>> by_id_;
  std::vector<Table*> ordered_;
  std::atomic<int> next_id_{1};
  PageWordAtomic* shared_words_ = nullptr;
  std::atomic<uint64_t> table_pages_{0};
};

}  // namespace mtier
