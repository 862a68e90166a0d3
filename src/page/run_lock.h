// SPDX-License-Identifier: Apache-2.0
// A lock over the stripes of a run of consecutive pages of one table.
#pragma once
#include <cstddef>
#include <cstdint>

#include "page/core.h"

namespace mtier {

// Holds the page locks of a run of consecutive pages of one table, taken in
// page order. Two threads hold runs (the evictor's, at most kMaxRun pages,
// and the fault handler's zero runs, at most kZeroRunPages), and a run is
// shorter than half the stripe count: its stripes are distinct, and any two
// runs meet their common stripes in the same cyclic order, so they never
// wait on each other in a cycle.
class RunLock {
 public:
  RunLock(Core& core, Table* t, uint64_t first, size_t n) : core_(core), t_(t), first_(first), n_(n) {
    for (size_t i = 0; i < n_; i++) core_.lock_of(t_, first_ + i).lock();
  }
  ~RunLock() {
    for (size_t i = n_; i-- > 0;) core_.lock_of(t_, first_ + i).unlock();
  }

 private:
  Core& core_;
  Table* t_;
  uint64_t first_;
  size_t n_;
};

}  // namespace mtier
