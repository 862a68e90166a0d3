#include "region/extent_allocator.h"

#include <cerrno>

namespace mtier {

ExtentAllocator::ExtentAllocator(uint64_t capacity_pages) : capacity_(capacity_pages) {
  if (capacity_pages) insert(0, capacity_pages);
}

void ExtentAllocator::insert(uint64_t first, uint64_t pages) {
  by_start_.emplace(first, pages);
  by_size_.emplace(pages, first);
  free_pages_ += pages;
}

void ExtentAllocator::erase(std::map<uint64_t, uint64_t>::iterator it) {
  by_size_.erase({it->second, it->first});
  free_pages_ -= it->second;
  by_start_.erase(it);
}

int64_t ExtentAllocator::alloc(uint64_t pages) {
  if (pages == 0) return -EINVAL;
  auto best = by_size_.lower_bound({pages, 0});
  if (best == by_size_.end()) return -ENOMEM;
  uint64_t first = best->second, have = best->first;
  erase(by_start_.find(first));
  if (have > pages) insert(first + pages, have - pages);
  return static_cast<int64_t>(first);
}

int ExtentAllocator::free(uint64_t first, uint64_t pages) {
  if (pages == 0 || first + pages > capacity_ || first + pages < first) return -EINVAL;
  auto next = by_start_.lower_bound(first);
  if (next != by_start_.end() && next->first < first + pages) return -EINVAL;
  if (next != by_start_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second > first) return -EINVAL;
    if (prev->first + prev->second == first) {
      first = prev->first;
      pages += prev->second;
      erase(prev);
    }
  }
  if (next != by_start_.end() && next->first == first + pages) {
    pages += next->second;
    erase(next);
  }
  insert(first, pages);
  return 0;
}

uint64_t ExtentAllocator::largest_free() const {
  return by_size_.empty() ? 0 : by_size_.rbegin()->first;
}

}  // namespace mtier
