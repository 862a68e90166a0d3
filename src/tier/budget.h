// SPDX-License-Identifier: Apache-2.0
// The byte budget of one memory tier and its eviction watermarks, in pages.
// Integer math only. Rounding: every page count is rounded down, so the
// watermarks never exceed the budget and a partial page never counts as room:
//   pages_budget = floor(budget_bytes / page_size)
//   pages_high   = floor(pages_budget * high_pct / 100)
//   pages_low    = floor(pages_budget * low_pct / 100)
#pragma once
#include <cstdint>

#include "sys/page_size.h"

namespace mtier {

class MemoryBudget {
 public:
  static constexpr uint64_t kDefaultPageSize = kPageSize;

  // Percents are clamped to [0, 100] and low to at most high; a page_size of
  // 0 means kDefaultPageSize. (The config layer rejects bad values first.)
  MemoryBudget(uint64_t budget_bytes, unsigned high_pct, unsigned low_pct,
               uint64_t page_size = kDefaultPageSize);

  uint64_t budget_bytes() const { return budget_bytes_; }
  unsigned high_pct() const { return high_pct_; }
  unsigned low_pct() const { return low_pct_; }
  uint64_t page_size() const { return page_size_; }

  uint64_t pages_budget() const { return pages_budget_; }
  uint64_t pages_high() const { return pages_high_; }
  uint64_t pages_low() const { return pages_low_; }

  // Eviction starts once residency passes (is strictly above) the high mark.
  bool over_high(uint64_t resident_pages) const { return resident_pages > pages_high_; }
  // Pages to evict to bring residency down to the low mark: resident - low
  // when over_high(resident), else 0.
  uint64_t pages_to_evict(uint64_t resident_pages) const;

 private:
  uint64_t budget_bytes_;
  unsigned high_pct_;
  unsigned low_pct_;
  uint64_t page_size_;
  uint64_t pages_budget_;
  uint64_t pages_high_;
  uint64_t pages_low_;
};

// floor(n * pct / 100) for pct <= 100, exact and without overflow.
uint64_t percent_of(uint64_t n, unsigned pct);

}  // namespace mtier
