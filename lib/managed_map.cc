// SPDX-License-Identifier: Apache-2.0
#include "managed_map.h"

#include <algorithm>
#include <new>

namespace mtier::lib {

uint64_t Managed::unmapped_pages() const {
  uint64_t n = 0;
  for (auto& [a, b] : unmapped) n += b - a;
  return n;
}

// Both build the new set aside and swap it in: out of memory changes nothing.
bool Managed::add_unmapped(uint64_t first, uint64_t last) noexcept {
  try {
    std::vector<std::pair<uint64_t, uint64_t>> all(unmapped);
    all.emplace_back(first, last);
    std::sort(all.begin(), all.end());
    std::vector<std::pair<uint64_t, uint64_t>> merged;
    merged.reserve(all.size());
    for (auto& iv : all) {
      if (!merged.empty() && iv.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, iv.second);
      else
        merged.push_back(iv);
    }
    unmapped.swap(merged);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

bool Managed::remove_unmapped(uint64_t first, uint64_t last) noexcept {
  try {
    std::vector<std::pair<uint64_t, uint64_t>> kept;
    kept.reserve(unmapped.size() + 1);  // one interval may split in two
    for (auto& [a, b] : unmapped) {
      if (a < first) kept.emplace_back(a, std::min(b, first));
      if (b > last) kept.emplace_back(std::max(a, last), b);
    }
    unmapped.swap(kept);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

Managed* ManagedMap::find(const void* p) noexcept {
  auto key = reinterpret_cast<uintptr_t>(p);
  auto it = by_base_.upper_bound(key);
  if (it == by_base_.begin()) return nullptr;
  --it;
  Managed& m = it->second;
  return key < reinterpret_cast<uintptr_t>(m.end()) ? &m : nullptr;
}

Managed* ManagedMap::insert(const Managed& m) noexcept {
  try {
    return &by_base_.insert_or_assign(reinterpret_cast<uintptr_t>(m.base), m).first->second;
  } catch (const std::bad_alloc&) {  // the node, or the copy of m.unmapped
    return nullptr;
  }
}

void ManagedMap::erase(const Managed* m) noexcept {
  by_base_.erase(reinterpret_cast<uintptr_t>(m->base));
}

Managed* ManagedMap::first_overlapping(const char* lo, const char* hi) noexcept {
  auto it = by_base_.upper_bound(reinterpret_cast<uintptr_t>(lo));
  if (it != by_base_.begin()) --it;
  for (; it != by_base_.end() && it->second.base < hi; ++it)
    if (it->second.end() > lo) return &it->second;
  return nullptr;
}

}  // namespace mtier::lib
