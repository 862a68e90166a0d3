// SPDX-License-Identifier: Apache-2.0
// Which allocations become managed tables, and their names: allocations of
// at least min_bytes, or of a size in include_sizes, and never of a size in
// exclude_sizes; `names` names the selected allocations in order, where "-"
// leaves that one to the next allocator (a setup temporary, say).
// Not thread-safe: the interposer calls it under its lock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/options.h"
#include "config/size_ranges.h"

namespace mtier::lib {

class Selection {
 public:
  // From validated options (the option table checked the ranges).
  explicit Selection(const Options& o);
  Selection() = default;

  // The smallest size that can be selected: a fast test before the lock.
  uint64_t smallest() const { return smallest_; }
  uint64_t min_bytes() const { return min_bytes_; }
  // True when an allocation of `bytes` is a candidate by size.
  bool by_size(uint64_t bytes) const;
  // Decides for the next candidate: true to manage it, with *name its name
  // ("" = the engine's default). Counts the candidate either way.
  bool take(uint64_t bytes, std::string* name);

 private:
  uint64_t min_bytes_ = UINT64_MAX, smallest_ = UINT64_MAX;
  std::vector<SizeRange> include_, exclude_;
  std::vector<std::string> names_;
  size_t taken_ = 0;  // candidates seen, for names_
};

}  // namespace mtier::lib
