#include "managed_map.h"

#include <algorithm>

namespace mtier::lib {

uint64_t Managed::unmapped_pages() const {
  uint64_t n = 0;
  for (auto& [a, b] : unmapped) n += b - a;
  return n;
}

void Managed::add_unmapped(uint64_t first, uint64_t last) {
  unmapped.emplace_back(first, last);
  std::sort(unmapped.begin(), unmapped.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (auto& iv : unmapped) {
    if (!merged.empty() && iv.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, iv.second);
    else
      merged.push_back(iv);
  }
  unmapped = std::move(merged);
}

void Managed::remove_unmapped(uint64_t first, uint64_t last) {
  std::vector<std::pair<uint64_t, uint64_t>> kept;
  for (auto& [a, b] : unmapped) {
    if (a < first) kept.emplace_back(a, std::min(b, first));
    if (b > last) kept.emplace_back(std::max(a, last), b);
  }
  unmapped = std::move(kept);
}

Managed* ManagedMap::find(const void* p) {
  auto key = reinterpret_cast<uintptr_t>(p);
  auto it = by_base_.upper_bound(key);
  if (it == by_base_.begin()) return nullptr;
  --it;
  Managed& m = it->second;
  return key < reinterpret_cast<uintptr_t>(m.end()) ? &m : nullptr;
}

Managed* ManagedMap::insert(const Managed& m) {
  return &by_base_.insert_or_assign(reinterpret_cast<uintptr_t>(m.base), m).first->second;
}

void ManagedMap::erase(const Managed* m) { by_base_.erase(reinterpret_cast<uintptr_t>(m->base)); }

std::vector<char*> ManagedMap::overlapping(const char* lo, const char* hi) const {
  std::vector<char*> out;
  auto it = by_base_.upper_bound(reinterpret_cast<uintptr_t>(lo));
  if (it != by_base_.begin()) --it;
  for (; it != by_base_.end() && it->second.base < hi; ++it)
    if (it->second.end() > lo) out.push_back(it->second.base);
  return out;
}

}  // namespace mtier::lib
