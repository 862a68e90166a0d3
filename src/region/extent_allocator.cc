// SPDX-License-Identifier: Apache-2.0
#include "region/extent_allocator.h"

#include <cerrno>
#include <iterator>
#include <new>

namespace mtier {

ExtentAllocator::ExtentAllocator(uint64_t capacity_pages) : capacity_(capacity_pages) {
  if (capacity_pages) insert(0, capacity_pages);
}

void ExtentAllocator::insert(uint64_t first, uint64_t pages) {
  auto it = by_start_.emplace(first, pages).first;
  try {
    by_size_.emplace(pages, first);
  } catch (...) {
    by_start_.erase(it);
    throw;
  }
  free_pages_ += pages;
}

void ExtentAllocator::erase(Iter it) noexcept {
  by_size_.erase({it->second, it->first});
  free_pages_ -= it->second;
  by_start_.erase(it);
}

// Node handles move an entry to a new key without allocating.
void ExtentAllocator::reshape(Iter it, uint64_t first, uint64_t pages) noexcept {
  auto size_node = by_size_.extract({it->second, it->first});
  free_pages_ -= it->second;
  auto start_node = by_start_.extract(it);
  start_node.key() = first;
  start_node.mapped() = pages;
  size_node.value() = {pages, first};
  by_start_.insert(std::move(start_node));
  by_size_.insert(std::move(size_node));
  free_pages_ += pages;
}

int64_t ExtentAllocator::alloc(uint64_t pages) noexcept {
  if (pages == 0) return -EINVAL;
  auto best = by_size_.lower_bound({pages, 0});
  if (best == by_size_.end()) return -ENOMEM;
  uint64_t first = best->second, have = best->first;
  if (have > pages)
    reshape(by_start_.find(first), first + pages, have - pages);
  else
    erase(by_start_.find(first));
  return static_cast<int64_t>(first);
}

int ExtentAllocator::free(uint64_t first, uint64_t pages) noexcept {
  if (pages == 0 || first + pages > capacity_ || first + pages < first) return -EINVAL;
  auto next = by_start_.lower_bound(first);
  if (next != by_start_.end() && next->first < first + pages) return -EINVAL;
  auto prev = next == by_start_.begin() ? by_start_.end() : std::prev(next);
  if (prev != by_start_.end() && prev->first + prev->second > first) return -EINVAL;
  bool join_prev = prev != by_start_.end() && prev->first + prev->second == first;
  bool join_next = next != by_start_.end() && next->first == first + pages;
  if (join_prev && join_next) {
    uint64_t total = prev->second + pages + next->second;
    erase(next);
    reshape(prev, prev->first, total);
  } else if (join_prev) {
    reshape(prev, prev->first, prev->second + pages);
  } else if (join_next) {
    reshape(next, first, pages + next->second);
  } else {
    try {
      insert(first, pages);
    } catch (const std::bad_alloc&) {
      return -ENOMEM;
    }
  }
  return 0;
}

bool ExtentAllocator::extend(uint64_t first, uint64_t pages, uint64_t more) noexcept {
  if (more == 0) return true;
  auto next = by_start_.find(first + pages);
  if (next == by_start_.end() || next->second < more) return false;
  if (next->second > more)
    reshape(next, next->first + more, next->second - more);
  else
    erase(next);
  return true;
}

uint64_t ExtentAllocator::largest_free() const {
  return by_size_.empty() ? 0 : by_size_.rbegin()->first;
}

}  // namespace mtier
