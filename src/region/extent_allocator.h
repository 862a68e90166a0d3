// Carves page-aligned extents out of [0, capacity) pages. Best fit over the
// free extents (least leftover, lowest offset on ties) keeps big holes whole;
// freed extents coalesce with their neighbours. Not thread-safe: the caller
// (the table registry) serialises it.
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
  // Returns the first page of a free extent of `pages`, or -ENOMEM.
  [[nodiscard]] int64_t alloc(uint64_t pages);
  // Returns an extent previously handed out by alloc(). Returns 0, or
  // -EINVAL when it overlaps free space or the end (a caller bug).
  [[nodiscard]] int free(uint64_t first, uint64_t pages);
  uint64_t free_pages() const { return free_pages_; }
  uint64_t largest_free() const;
  size_t free_extents() const { return by_start_.size(); }

 private:
  void insert(uint64_t first, uint64_t pages);
  void erase(std::map<uint64_t, uint64_t>::iterator it);

  uint64_t capacity_;
  uint64_t free_pages_ = 0;
  std::map<uint64_t, uint64_t> by_start_;           // first -> pages
  std::set<std::pair<uint64_t, uint64_t>> by_size_;  // (pages, first)
};

}  // namespace mtier
