// SPDX-License-Identifier: Apache-2.0
// Runs of consecutive pages of one table, as the evictor handles them: a
// walk over the maximal runs of a list (their lock: page/run_lock.h).
#pragma once
#include <cstddef>
#include <vector>

#include "page/core.h"
#include "page/run_lock.h"
#include "page/page_ref.h"

namespace mtier {


constexpr size_t kMaxRun = 256;
static_assert(2 * kMaxRun < PageLocks::kStripes, "a run must be shorter than half the stripes (run_lock.h)");

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
