// SPDX-License-Identifier: Apache-2.0
// Striped locks that serialise state transitions of a page (PageState): the
// fault handler, the evictor and table teardown take the stripe of a page
// before changing its state (LOCKING in page/core.h: rank kPage, after the
// registry). Region page index -> stripe.
#pragma once
#include <cstdint>

#include "page/lock_order.h"

namespace mtier {

using PageMutex = RankedMutex<LockRank::kPage>;

class PageLocks {
 public:
  static constexpr unsigned kStripes = 4096;
  PageMutex& of(uint64_t region_page) { return locks_[region_page % kStripes]; }

 private:
  PageMutex locks_[kStripes];
};

}  // namespace mtier
