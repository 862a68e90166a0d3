// SPDX-License-Identifier: Apache-2.0
// Runs of consecutive pages of one table, as the evictor handles them: a
// lock over a run's stripes and a walk over the maximal runs of a list.
#pragma once
#include <cstddef>
#include <vector>

#include "page/core.h"
#include "page/page_ref.h"

namespace mtier {


// Holds the page locks of a run of consecutive pages of one table. The
// evictor is the only thread that holds more than one page lock (its passes
// are serialised by pass_mu_), so the order needs no care; a run is shorter
// than the stripe count, so its stripes are distinct.
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

constexpr size_t kMaxRun = 256;

// Calls f(i, j) for each maximal run refs[i..j) of consecutive pages of one table.
template <class F>
inline void for_each_run(const std::vector<PageRef>& refs, F f) {
  for (size_t i = 0; i < refs.size();) {
    size_t j = i + 1;
    while (j < refs.size() && j - i < kMaxRun && refs[j].table == refs[i].table &&
           refs[j].page == refs[j - 1].page + 1)
      j++;
    f(i, j);
    i = j;
  }
}

}  // namespace mtier
