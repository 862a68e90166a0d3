// SPDX-License-Identifier: Apache-2.0
// `mtier demo`'s heat map: taken inside the mtier run's child right after
// the last training step (before the weights are hashed, which reads every
// table once), carried to the parent as plain data, drawn there as text.
#pragma once
#include <string>
#include <vector>

#include "mtier.h"

namespace mtier::tools::demo {

struct TableHeat {
  struct mtier_table_stats stats {};
  std::vector<mtier_extent> extents;  // `columns` equal extents (fewer for a small table)
};
using HeatSnapshot = std::vector<TableHeat>;

// The stats and extent map of every table in `ids`; tables whose stats
// cannot be read are left out.
HeatSnapshot snapshot_heat(const std::vector<int>& ids, unsigned columns);

// The text heat map: a heat row and a residency row per table, scaled to the
// hottest extent of all tables, and the legend. `label` names the run.
std::string draw_heat(const HeatSnapshot& heat, const std::string& label, bool color);

}  // namespace mtier::tools::demo
