// SPDX-License-Identifier: Apache-2.0
#include "tier/budget.h"

#include <algorithm>

namespace mtier {

uint64_t percent_of(uint64_t n, unsigned pct) {
  // n = 100q + r, so floor(n*pct/100) = q*pct + floor(r*pct/100); q*pct <= n.
  return n / 100 * pct + n % 100 * pct / 100;
}

MemoryBudget::MemoryBudget(uint64_t budget_bytes, unsigned high_pct, unsigned low_pct,
                           uint64_t page_size)
    : budget_bytes_(budget_bytes),
      high_pct_(std::min(high_pct, 100u)),
      low_pct_(std::min(low_pct, high_pct_)),
      page_size_(page_size == 0 ? kDefaultPageSize : page_size),
      pages_budget_(budget_bytes_ / page_size_),
      pages_high_(percent_of(pages_budget_, high_pct_)),
      pages_low_(percent_of(pages_budget_, low_pct_)) {}

uint64_t MemoryBudget::pages_to_evict(uint64_t resident_pages) const {
  return over_high(resident_pages) ? resident_pages - pages_low_ : 0;
}

}  // namespace mtier
