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
  uint64_t slot = high_water_++;
  if (slot / 64 >= bits_.size()) bits_.push_back(0);
  if (slot / 4096 >= full_.size()) full_.push_back(0);
  mark(slot);
  ++used_;
  return static_cast<int64_t>(slot);
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
