// SPDX-License-Identifier: Apache-2.0
// Pins: ranges of a process's table the user wants kept in one tier
// (mtierfs' .../pin, PIN_SET), applied by mtierd after every plan: a DRAM
// pin marks its pages kHintKeep and fetches those out of DRAM; a slow or
// store pin marks them kHintNone and sends them down. Pins are best effort
// against the budgets: the runtime's evictor still keeps its process within
// its budget (hints count only on its first CLOCK rotation), so a DRAM pin
// larger than the budget keeps only what fits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mtier::daemon {

enum class PinTier : uint32_t { kDram = 0, kSlow = 1, kStore = 2 };
const char* pin_tier_name(PinTier t);  // "dram", "slow", "store"

struct Pin {
  uint32_t table_id = 0;
  uint64_t first_page = 0, pages = 0;  // within the table
  PinTier tier = PinTier::kDram;
  bool operator==(const Pin&) const = default;
};

// The most pins one process may hold (each PIN_SET may split one in two).
inline constexpr size_t kMaxPins = 1024;

// Sets pages [first, first + pages) of table_id to `tier` (unpin: nullptr),
// cutting that range out of the pins it overlaps. Pins stay sorted by
// (table, first page). 0, or -ENOSPC when the result would hold more than
// kMaxPins (then *pins is unchanged).
[[nodiscard]] int set_pin(std::vector<Pin>* pins, uint32_t table_id, uint64_t first, uint64_t pages,
                          const PinTier* tier);

// Whether a policy move of pages [first, first + pages) of table_id into
// DRAM (`into_dram`) or out of it would go against a pin: into DRAM over a
// slow or store pin, out of DRAM over a DRAM pin. Pins win over the policy.
bool against_pins(const std::vector<Pin>& pins, uint32_t table_id, uint64_t first,
                  uint64_t pages, bool into_dram);

// Drops the pins of tables not in `live` (freed tables).
void drop_pins_except(std::vector<Pin>* pins, const std::vector<uint32_t>& live);

}  // namespace mtier::daemon
