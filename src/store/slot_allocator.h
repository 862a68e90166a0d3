// Thread-safe allocator of fixed store slots [0, capacity): freed slots are
// reused lowest first (which keeps a sparse backing file compact), then a
// high-water mark is bumped. Memory: two bits per slot below the high-water mark.
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
  // Releases a slot. Freeing a slot that is not allocated or out of range is
  // an internal inconsistency: logs the slot and aborts.
  void free(uint64_t slot);
  uint64_t used() const;
  uint64_t capacity() const { return capacity_; }
  bool is_allocated(uint64_t slot) const;

 private:
  uint64_t take_lowest_freed();  // caller holds mu_ and knows one exists
  void mark(uint64_t slot);
  void unmark(uint64_t slot);
  bool marked(uint64_t slot) const;
  [[noreturn]] void die(uint64_t slot, const char* why) const;

  mutable std::mutex mu_;
  const uint64_t capacity_;
  uint64_t high_water_ = 0;  // every slot below it was handed out at least once
  uint64_t used_ = 0;
  uint64_t hint_ = 0;           // no word of full_ below this has a zero bit
  std::vector<uint64_t> bits_;  // bit set: slot allocated
  std::vector<uint64_t> full_;  // bit w set: bits_[w] is all ones
};

}  // namespace mtier
