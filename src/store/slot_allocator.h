// SPDX-License-Identifier: Apache-2.0
// Thread-safe allocator of fixed store slots [0, capacity): single slots
// reuse the lowest freed one first (which keeps a sparse backing file
// compact), then bump a high-water mark; runs of consecutive slots (one
// write-back transfer each) come from where the last run ended, from a
// wholly free 64-slot word, or from above the high-water mark while the
// slots freed below it stay few. Memory: two bits per slot below the
// high-water mark.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

namespace mtier {

class SlotAllocator {
 public:
  explicit SlotAllocator(uint64_t capacity) : capacity_(capacity) {}
  SlotAllocator(const SlotAllocator&) = delete;
  SlotAllocator& operator=(const SlotAllocator&) = delete;

  // Returns the slot reserved, or -ENOSPC when all are in use.
  [[nodiscard]] int64_t alloc();
  // Reserves up to n consecutive slots (n is clamped to [1, kMaxRun]) and
  // returns the first, with *got set to how many (>= 1): continuing the
  // last run where its slots are free, else a wholly free word found within
  // kScanWords words of it, else fresh slots above the high-water mark while
  // the freed slots below it are at most half of those in use (the backing
  // file then holds at most 1.5x the data). -ENOSPC when none of these has a
  // slot: alloc() may still find a single one.
  [[nodiscard]] int64_t alloc_run(uint64_t n, uint64_t* got);
  static constexpr uint64_t kMaxRun = 64;
  static constexpr uint64_t kScanWords = 1024;
  // Releases a slot. Freeing a slot that is not allocated or out of range is
  // an internal inconsistency: logs the slot and aborts.
  void free(uint64_t slot);
  uint64_t used() const;
  uint64_t capacity() const { return capacity_; }
  bool is_allocated(uint64_t slot) const;

 private:
  uint64_t take_lowest_freed();  // caller holds mu_ and knows one exists
  // The run helpers; the caller holds mu_.
  uint64_t take_run_at(uint64_t first, uint64_t n);  // slots taken from `first` on
  int64_t find_free_word() const;                    // its first slot, or -1
  bool may_grow() const;
  void grow();  // marks the slot at the high-water mark and bumps it
  void mark(uint64_t slot);
  void unmark(uint64_t slot);
  bool marked(uint64_t slot) const;
  [[noreturn]] void die(uint64_t slot, const char* why) const;

  mutable std::mutex mu_;
  const uint64_t capacity_;
  uint64_t high_water_ = 0;  // every slot below it was handed out at least once
  uint64_t used_ = 0;
  uint64_t hint_ = 0;           // no word of full_ below this has a zero bit
  uint64_t run_end_ = 0;        // where the last run ended
  std::vector<uint64_t> bits_;  // bit set: slot allocated
  std::vector<uint64_t> full_;  // bit w set: bits_[w] is all ones
};

}  // namespace mtier
