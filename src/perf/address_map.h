// SPDX-License-Identifier: Apache-2.0
// Attribution of sampled addresses: per pid, the sorted ranges of managed
// memory {base, pages, owner key}. lookup() turns (pid, address) into the
// owner and the page index inside its range in O(log n); an address outside
// every range (the rest of the heap, the stack, kernel addresses from IBS)
// is counted as unattributed. Not thread-safe: one sampler thread owns it.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sys/page_size.h"

namespace mtier {

struct AddressRange {
  uint64_t base = 0;   // page aligned
  uint64_t pages = 0;  // > 0
  uint64_t owner = 0;  // the caller's key (a table / region id)
};

struct AddressHit {
  uint64_t owner;
  uint64_t page;  // index of the page inside its range
};

class AddressMap {
 public:
  // `page_size`: a power of two, at least 512 (else kPageSize is used).
  explicit AddressMap(uint64_t page_size = kPageSize);

  // Sets the ranges of `pid`, replacing what it had (an empty list removes
  // it). -EINVAL, leaving the map as it was, if a range is empty, not page
  // aligned, runs past the end of the address space, or overlaps another.
  [[nodiscard]] int replace(pid_t pid, std::vector<AddressRange> ranges);
  void remove(pid_t pid);

  // The range of `pid` holding `addr`: its owner and page index. Counts the
  // lookup as attributed or unattributed (unknown pid included).
  std::optional<AddressHit> lookup(pid_t pid, uint64_t addr);

  size_t ranges(pid_t pid) const;
  size_t pids() const { return by_pid_.size(); }
  uint64_t page_size() const { return page_size_; }
  uint64_t attributed() const { return attributed_; }
  uint64_t unattributed() const { return unattributed_; }

 private:
  uint64_t page_size_;
  unsigned page_shift_;
  std::unordered_map<pid_t, std::vector<AddressRange>> by_pid_;  // sorted by base
  uint64_t attributed_ = 0;
  uint64_t unattributed_ = 0;
};

}  // namespace mtier
