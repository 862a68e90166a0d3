// SPDX-License-Identifier: Apache-2.0
// Carves page-aligned extents out of [0, capacity) pages. Best fit over the
// free extents (least leftover, lowest offset on ties) keeps big holes whole;
// freed extents coalesce with their neighbours. Not thread-safe: the caller
// (the table registry) serialises it.
//
// Out of memory (it runs inside the program's malloc, lib/boundary.h):
// alloc() allocates nothing (it shrinks a free extent's nodes in place), and
// free() allocates only for a hole with no free neighbour; if that fails,
// it keeps everything as it was and says so: the extent's pages are then
// lost to later tables (address space only), never the allocator's state.
#pragma once
#include <cstdint>
#include <cstddef>
#include <map>
#include <set>
#include <utility>

namespace mtier {

class ExtentAllocator {
 public:
  explicit ExtentAllocator(uint64_t capacity_pages);
  // Returns the first page of a free extent of `pages`, or -ENOMEM. Never throws.
  [[nodiscard]] int64_t alloc(uint64_t pages) noexcept;
  // Returns an extent previously handed out by alloc(). Returns 0, -EINVAL
  // when it overlaps free space or the end (a caller bug), or -ENOMEM when
  // out of memory (the extent stays out of use). Never throws.
  [[nodiscard]] int free(uint64_t first, uint64_t pages) noexcept;
  // Grows the extent [first, first+pages) by `more` pages into the free
  // extent right after it, when that one has them. Returns whether it did.
  // Allocates nothing.
  [[nodiscard]] bool extend(uint64_t first, uint64_t pages, uint64_t more) noexcept;
  uint64_t free_pages() const { return free_pages_; }
  uint64_t largest_free() const;
  size_t free_extents() const { return by_start_.size(); }

 private:
  using Iter = std::map<uint64_t, uint64_t>::iterator;
  // Adds a free extent; may throw std::bad_alloc, then nothing changed.
  void insert(uint64_t first, uint64_t pages);
  void erase(Iter it) noexcept;
  // Makes the free extent at `it` [first, first+pages), reusing its nodes.
  void reshape(Iter it, uint64_t first, uint64_t pages) noexcept;

  uint64_t capacity_;
  uint64_t free_pages_ = 0;
  std::map<uint64_t, uint64_t> by_start_;           // first -> pages
  std::set<std::pair<uint64_t, uint64_t>> by_size_;  // (pages, first)
};

}  // namespace mtier
