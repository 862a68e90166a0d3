// SPDX-License-Identifier: Apache-2.0
// Size ranges for the preload's selection options (include_sizes,
// exclude_sizes): "LO-HI" inclusive, sizes as options take them ("64M"),
// either end may be left out ("8M-", "-2M"), a single size means exactly
// that size, several ranges are separated by commas.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mtier {

struct SizeRange {
  uint64_t lo = 0, hi = UINT64_MAX;
  bool contains(uint64_t v) const { return v >= lo && v <= hi; }
};

// Parses `text` into *out (cleared first; "" gives no ranges). Returns 0,
// or -EINVAL with *why (if given) saying which part is wrong and why.
[[nodiscard]] int parse_size_ranges(const std::string& text, std::vector<SizeRange>* out,
                                    std::string* why);

// True when any range contains v.
bool any_contains(const std::vector<SizeRange>& ranges, uint64_t v);

}  // namespace mtier
