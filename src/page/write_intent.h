// SPDX-License-Identifier: Apache-2.0
// Whether a table's pages, fetched from a store, are mapped writable at
// once - learned from what became of the pages it mapped write-protected.
//
// Why: a page fetched for a read is mapped write-protected so that a page
// nobody writes leaves DRAM without a write-back. A training step reads an
// embedding row in the forward pass and writes it in the backward pass, so
// that page then costs a second userfault round trip (a WP fault) on top of
// its fetch. Measured with `mtier bench replay` (meta2022, 512 MiB of
// tables, 25% budget): every fetched page mapped writable ran the replay
// in 19-21 s against 26-30 s, with the same pages written back.
//
// How: one score per table, moved by the pages mapped write-protected: +1
// when one is written (its WP fault), -1 when one leaves DRAM unwritten.
// While the score is positive, fetched pages are mapped writable (DIRTY),
// except every kProbeEvery-th, still mapped write-protected, so that the
// score keeps learning and a table that turns read-only goes back within
// about kMax * kProbeEvery fetches. A page mapped writable and then not
// written costs one needless write-back; a wrong guess never costs data.
//
// Contract: lock-free, callable from any engine thread; no allocation.
#pragma once
#include <atomic>
#include <cstdint>

namespace mtier {

class WriteIntent {
 public:
  static constexpr int32_t kMax = 64;
  static constexpr uint32_t kProbeEvery = 16;

  // A page of the table is about to be placed from a store for an access
  // that does not write: true to map it writable. Counts the placement.
  bool map_writable() {
    if (score_.load(std::memory_order_relaxed) <= 0) return false;
    return placements_.fetch_add(1, std::memory_order_relaxed) % kProbeEvery != 0;
  }
  // A page mapped write-protected was written.
  void written() { move(+1); }
  // A page mapped write-protected left DRAM without being written.
  void dropped_clean() { move(-1); }
  int32_t score() const { return score_.load(std::memory_order_relaxed); }

 private:
  void move(int32_t by) {
    int32_t s = score_.load(std::memory_order_relaxed);
    int32_t next;
    do {
      next = s + by;
      if (next > kMax || next < -kMax) return;
    } while (!score_.compare_exchange_weak(s, next, std::memory_order_relaxed));
  }

  std::atomic<int32_t> score_{0};
  std::atomic<uint32_t> placements_{0};
};

}  // namespace mtier
