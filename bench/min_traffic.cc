// SPDX-License-Identifier: Apache-2.0
#include "min_traffic.h"

#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

namespace mtier::bench {
namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// next[i]: the index of the next reference to refs[i].page, or kNever.
std::vector<uint64_t> next_uses(std::span<const PageRef> refs) {
  std::vector<uint64_t> next(refs.size(), kNever);
  std::unordered_map<uint64_t, uint64_t> later;
  later.reserve(refs.size() / 2);
  for (uint64_t i = refs.size(); i-- > 0;) {
    auto [it, fresh] = later.try_emplace(refs[i].page, i);
    if (!fresh) {
      next[i] = it->second;
      it->second = i;
    }
  }
  return next;
}

struct PageState {
  uint64_t next = kNever;  // while resident: its next use
  bool resident = false, dirty = false, seen = false;
};

}  // namespace

Traffic min_traffic(std::span<const PageRef> refs, uint64_t capacity) {
  Traffic t;
  t.references = refs.size();
  if (capacity == 0) capacity = 1;
  const std::vector<uint64_t> next = next_uses(refs);
  std::unordered_map<uint64_t, PageState> pages;
  pages.reserve(refs.size() / 2);
  std::set<std::pair<uint64_t, uint64_t>> by_next;  // (next use, page) of resident pages
  uint64_t resident = 0;
  for (uint64_t i = 0; i < refs.size(); i++) {
    PageState& p = pages[refs[i].page];
    if (p.resident) {
      by_next.erase({p.next, refs[i].page});
    } else {
      if (resident == capacity) {
        // Farthest next use goes; ties among pages never used again are free.
        auto victim = std::prev(by_next.end());
        PageState& v = pages[victim->second];
        if (v.dirty && victim->first != kNever) t.writes++;
        v.dirty = v.dirty && victim->first == kNever;
        v.resident = false;
        by_next.erase(victim);
        resident--;
      }
      if (p.seen) t.reads++;
      else t.zero_fills++;
      p.resident = p.seen = true;
      resident++;
    }
    p.dirty |= refs[i].write;
    p.next = next[i];
    by_next.insert({p.next, refs[i].page});
  }
  return t;
}

std::vector<PageRef> dlrm_reference_refs(unsigned tables, uint64_t table_bytes,
                                         uint64_t page_size) {
  const uint64_t n = (table_bytes + page_size - 1) / page_size;  // pages of one table
  std::vector<PageRef> refs;
  refs.reserve(tables * 8 * n + tables * n);
  uint64_t fresh = 0;
  auto take = [&](uint64_t pages) {
    uint64_t first = fresh;
    fresh += pages;
    return first;
  };
  std::vector<uint64_t> d_first;
  for (unsigned t = 0; t < tables; t++) {
    const uint64_t a = take(n), b = take(2 * n), c = take(n), d = take(n);
    for (uint64_t k = 0; k < n; k++) refs.push_back({a + k, true});
    for (uint64_t k = 0; k < 2 * n; k++) refs.push_back({b + k, true});
    for (uint64_t k = 0; k < n; k++) {
      refs.push_back({b + 2 * k, false});
      refs.push_back({b + 2 * k + 1, false});
      refs.push_back({c + k, true});
    }
    for (uint64_t k = 0; k < n; k++) {
      refs.push_back({c + k, false});
      refs.push_back({d + k, true});
    }
    d_first.push_back(d);
  }
  for (uint64_t d : d_first)
    for (uint64_t k = 0; k < n; k++) refs.push_back({d + k, false});
  return refs;
}

}  // namespace mtier::bench
