// SPDX-License-Identifier: Apache-2.0
#include "perf/address_map.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "sys/page_size.h"

namespace mtier {

AddressMap::AddressMap(uint64_t page_size) : page_size_(page_size), page_shift_(0) {
  if (page_size_ < 512 || (page_size_ & (page_size_ - 1)) != 0) page_size_ = kPageSize;
  while ((uint64_t{1} << page_shift_) < page_size_) page_shift_++;
}

int AddressMap::replace(pid_t pid, std::vector<AddressRange> ranges) {
  const uint64_t max_pages = ~uint64_t{0} >> page_shift_;
  for (const AddressRange& r : ranges) {
    if (r.pages == 0 || r.base % page_size_ != 0) return -EINVAL;
    // base + pages * page_size must not wrap (end == 2^64 is fine).
    if (r.pages > max_pages + 1 || r.pages > (max_pages + 1) - (r.base >> page_shift_))
      return -EINVAL;
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const AddressRange& a, const AddressRange& b) { return a.base < b.base; });
  for (size_t i = 1; i < ranges.size(); i++) {
    const AddressRange& prev = ranges[i - 1];
    // In pages, so that a range ending at 2^64 does not overflow.
    if ((prev.base >> page_shift_) + prev.pages > (ranges[i].base >> page_shift_)) return -EINVAL;
  }
  if (ranges.empty()) {
    by_pid_.erase(pid);
  } else {
    by_pid_[pid] = std::move(ranges);
  }
  return 0;
}

void AddressMap::remove(pid_t pid) { by_pid_.erase(pid); }

std::optional<AddressHit> AddressMap::lookup(pid_t pid, uint64_t addr) {
  auto it = by_pid_.find(pid);
  if (it != by_pid_.end()) {
    const std::vector<AddressRange>& v = it->second;
    // The last range starting at or below addr is the only candidate.
    auto next = std::upper_bound(v.begin(), v.end(), addr,
                                 [](uint64_t a, const AddressRange& r) { return a < r.base; });
    if (next != v.begin()) {
      const AddressRange& r = *(next - 1);
      uint64_t page = (addr - r.base) >> page_shift_;
      if (page < r.pages) {
        attributed_++;
        return AddressHit{r.owner, page};
      }
    }
  }
  unattributed_++;
  return std::nullopt;
}

size_t AddressMap::ranges(pid_t pid) const {
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? 0 : it->second.size();
}

}  // namespace mtier
