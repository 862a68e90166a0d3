// SPDX-License-Identifier: Apache-2.0
#include "store/slot_allocator.h"

#include <cerrno>
#include <cstdlib>

#include "log/log.h"

namespace mtier {
namespace {

constexpr uint64_t kAll = ~uint64_t{0};
constexpr uint64_t bit(uint64_t i) { return uint64_t{1} << (i % 64); }

}  // namespace

int64_t SlotAllocator::alloc() {
  std::lock_guard<std::mutex> lock(mu_);
  if (used_ < high_water_) {
    ++used_;
    return static_cast<int64_t>(take_lowest_freed());
  }
  if (high_water_ == capacity_) return -ENOSPC;
  uint64_t slot = high_water_;
  grow();
  ++used_;
  return static_cast<int64_t>(slot);
}

int64_t SlotAllocator::alloc_run(uint64_t n, uint64_t* got) {
  std::lock_guard<std::mutex> lock(mu_);
  n = n < 1 ? 1 : (n > kMaxRun ? kMaxRun : n);
  uint64_t first = run_end_;  // at the high-water mark, growth comes last
  uint64_t len = first < high_water_ ? take_run_at(first, n) : 0;
  if (len == 0) {
    int64_t word_start = find_free_word();
    if (word_start >= 0) len = take_run_at(first = static_cast<uint64_t>(word_start), n);
  }
  if (len == 0) len = take_run_at(first = high_water_, n);
  if (len == 0) return -ENOSPC;
  run_end_ = first + len;
  *got = len;
  return static_cast<int64_t>(first);
}

void SlotAllocator::free(uint64_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slot >= capacity_) die(slot, "out-of-range");
  if (slot >= high_water_ || !marked(slot)) die(slot, "unallocated");
  unmark(slot);
  --used_;
  if (slot / 4096 < hint_) hint_ = slot / 4096;
}

uint64_t SlotAllocator::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

bool SlotAllocator::is_allocated(uint64_t slot) const {
  std::lock_guard<std::mutex> lock(mu_);
  return slot < high_water_ && marked(slot);
}

// The lowest zero bit overall lies below high_water_ because a freed slot
// exists there (bits at or above it are zero only past the lowest free one).
uint64_t SlotAllocator::take_lowest_freed() {
  while (full_[hint_] == kAll) ++hint_;
  uint64_t word = hint_ * 64 + static_cast<uint64_t>(__builtin_ctzll(~full_[hint_]));
  uint64_t slot = word * 64 + static_cast<uint64_t>(__builtin_ctzll(~bits_[word]));
  mark(slot);
  return slot;
}

// Free slots below the high-water mark are taken as they come; at the mark
// the run goes on with fresh slots while may_grow() allows.
uint64_t SlotAllocator::take_run_at(uint64_t first, uint64_t n) {
  uint64_t len = 0;
  for (uint64_t s = first; len < n; ++s, ++len) {
    if (s < high_water_) {
      if (marked(s)) break;
      mark(s);
    } else if (s == high_water_ && may_grow()) {
      grow();
    } else {
      break;
    }
    ++used_;
  }
  return len;
}

// A word of 64 free slots wholly below the high-water mark, looked for from
// the last run's word on (wrapping), kScanWords words at most: a run's cost
// stays bounded on a store of any size.
int64_t SlotAllocator::find_free_word() const {
  uint64_t words = high_water_ / 64;  // the last, partial word is the mark's
  if (words == 0) return -1;
  uint64_t w = (run_end_ / 64) % words;
  for (uint64_t k = 0; k < kScanWords && k < words; ++k, w = w + 1 == words ? 0 : w + 1)
    if (bits_[w] == 0) return static_cast<int64_t>(w * 64);
  return -1;
}

bool SlotAllocator::may_grow() const {
  return high_water_ < capacity_ && 2 * (high_water_ - used_) <= used_;
}

void SlotAllocator::grow() {
  uint64_t slot = high_water_++;
  if (slot / 64 >= bits_.size()) bits_.push_back(0);
  if (slot / 4096 >= full_.size()) full_.push_back(0);
  mark(slot);
}

void SlotAllocator::mark(uint64_t slot) {
  uint64_t w = slot / 64;
  bits_[w] |= bit(slot);
  if (bits_[w] == kAll) full_[w / 64] |= bit(w);
}

void SlotAllocator::unmark(uint64_t slot) {
  uint64_t w = slot / 64;
  bits_[w] &= ~bit(slot);
  full_[w / 64] &= ~bit(w);
}

bool SlotAllocator::marked(uint64_t slot) const { return (bits_[slot / 64] & bit(slot)) != 0; }

void SlotAllocator::die(uint64_t slot, const char* why) const {
  MTIER_LOG_ERROR("store slot allocator: free of %s slot %llu (capacity %llu, high-water %llu)",
                  why, static_cast<unsigned long long>(slot),
                  static_cast<unsigned long long>(capacity_),
                  static_cast<unsigned long long>(high_water_));
  std::abort();
}

}  // namespace mtier
