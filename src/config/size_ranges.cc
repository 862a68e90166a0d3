// SPDX-License-Identifier: Apache-2.0
#include "config/size_ranges.h"

#include <cerrno>

#include "config/options.h"

namespace mtier {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// One end of a range: "" keeps *out (the open end), else a size.
int parse_end(const std::string& part, const std::string& end, uint64_t* out, std::string* why) {
  if (end.empty()) return 0;
  if (parse_size(end, out) == 0) return 0;
  if (why) *why = "\"" + part + "\": \"" + end + "\" is not a size (use e.g. 4096, 512K, 64M, 2G)";
  return -EINVAL;
}

int parse_one(const std::string& part, SizeRange* r, std::string* why) {
  size_t dash = part.find('-');
  if (dash == std::string::npos) {
    if (int rc = parse_end(part, part, &r->lo, why)) return rc;
    r->hi = r->lo;
    return 0;
  }
  if (part.find('-', dash + 1) != std::string::npos || part == "-") {
    if (why) *why = "\"" + part + "\" is not a range (use LO-HI, LO- or -HI)";
    return -EINVAL;
  }
  if (int rc = parse_end(part, trim(part.substr(0, dash)), &r->lo, why)) return rc;
  if (int rc = parse_end(part, trim(part.substr(dash + 1)), &r->hi, why)) return rc;
  if (r->lo > r->hi) {
    if (why) *why = "\"" + part + "\": the low end is above the high end";
    return -EINVAL;
  }
  return 0;
}

}  // namespace

int parse_size_ranges(const std::string& text, std::vector<SizeRange>* out, std::string* why) {
  out->clear();
  std::vector<SizeRange> got;
  for (size_t at = 0; at <= text.size();) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    std::string part = trim(text.substr(at, comma - at));
    at = comma + 1;
    if (part.empty()) {
      if (comma == text.size() && got.empty() && trim(text).empty()) break;
      if (why) *why = "an empty range in \"" + text + "\"";
      return -EINVAL;
    }
    SizeRange r;
    if (int rc = parse_one(part, &r, why)) return rc;
    got.push_back(r);
  }
  *out = std::move(got);
  return 0;
}

bool any_contains(const std::vector<SizeRange>& ranges, uint64_t v) {
  for (const SizeRange& r : ranges)
    if (r.contains(v)) return true;
  return false;
}

}  // namespace mtier
