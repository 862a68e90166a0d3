// SPDX-License-Identifier: Apache-2.0
#include "selection.h"

namespace mtier::lib {
namespace {

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  for (size_t at = 0;;) {
    size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

}  // namespace

Selection::Selection(const Options& o) : min_bytes_(o.min_bytes), names_(split_names(o.names)) {
  (void)parse_size_ranges(o.include_sizes, &include_, nullptr);
  (void)parse_size_ranges(o.exclude_sizes, &exclude_, nullptr);
  smallest_ = min_bytes_;
  for (const SizeRange& r : include_)
    if (r.lo < smallest_) smallest_ = r.lo;
  if (smallest_ == 0) smallest_ = 1;  // malloc(0) is never a table
}

bool Selection::by_size(uint64_t bytes) const {
  if (bytes == 0 || any_contains(exclude_, bytes)) return false;
  return bytes >= min_bytes_ || any_contains(include_, bytes);
}

bool Selection::take(uint64_t bytes, std::string* name) {
  if (!by_size(bytes)) return false;
  size_t i = taken_++;
  name->clear();
  if (i < names_.size()) {
    if (names_[i] == "-") return false;
    *name = names_[i];
  }
  return true;
}

}  // namespace mtier::lib
