// SPDX-License-Identifier: Apache-2.0
#include "pins.h"

#include <algorithm>
#include <cerrno>

namespace mtier::daemon {

const char* pin_tier_name(PinTier t) {
  switch (t) {
    case PinTier::kDram:
      return "dram";
    case PinTier::kSlow:
      return "slow";
    case PinTier::kStore:
      return "store";
  }
  return "?";
}

int set_pin(std::vector<Pin>* pins, uint32_t table_id, uint64_t first, uint64_t pages,
            const PinTier* tier) {
  const uint64_t end = first + pages;
  std::vector<Pin> next;
  next.reserve(pins->size() + 2);
  for (const Pin& p : *pins) {
    uint64_t p_end = p.first_page + p.pages;
    if (p.table_id != table_id || p_end <= first || p.first_page >= end) {
      next.push_back(p);
      continue;
    }
    // The parts of p outside [first, end) stay.
    if (p.first_page < first)
      next.push_back({p.table_id, p.first_page, first - p.first_page, p.tier});
    if (p_end > end) next.push_back({p.table_id, end, p_end - end, p.tier});
  }
  if (tier) next.push_back({table_id, first, pages, *tier});
  if (next.size() > kMaxPins) return -ENOSPC;
  std::sort(next.begin(), next.end(), [](const Pin& a, const Pin& b) {
    return a.table_id != b.table_id ? a.table_id < b.table_id : a.first_page < b.first_page;
  });
  *pins = std::move(next);
  return 0;
}

bool against_pins(const std::vector<Pin>& pins, uint32_t table_id, uint64_t first,
                  uint64_t pages, bool into_dram) {
  for (const Pin& p : pins) {
    if (p.table_id != table_id || p.first_page >= first + pages ||
        p.first_page + p.pages <= first)
      continue;
    if (into_dram != (p.tier == PinTier::kDram)) return true;
  }
  return false;
}

void drop_pins_except(std::vector<Pin>* pins, const std::vector<uint32_t>& live) {
  std::erase_if(*pins, [&](const Pin& p) {
    return std::find(live.begin(), live.end(), p.table_id) == live.end();
  });
}

}  // namespace mtier::daemon
