// Striped locks that serialise state transitions of a page (PageState): the
// fault handler, the evictor and table teardown take the stripe of a page
// before changing its state. Region page index -> stripe.
#pragma once
#include <cstdint>
#include <mutex>

namespace mtier {

class PageLocks {
 public:
  static constexpr unsigned kStripes = 4096;
  std::mutex& of(uint64_t region_page) { return locks_[region_page % kStripes]; }

 private:
  std::mutex locks_[kStripes];
};

}  // namespace mtier
