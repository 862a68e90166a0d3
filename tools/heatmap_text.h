// SPDX-License-Identifier: Apache-2.0
// Renders a table's per-extent heat and residency as one line of text: a
// glyph per extent from a 10-step ramp (" .:-=+*#%@") scaled to the hottest
// extent of all tables, with ANSI colour (blue cold to red hot) when `color`.
// A second line marks where each extent lives: D = all in DRAM, s = all in a
// store, ~ = split, space = never touched.
//
// The ramp itself (record/heat_ramp.h) is shared with the other text views
// (heat_view.h, `mtier report heatmap`), so every heat map reads the same.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mtier.h"
#include "record/heat_ramp.h"

namespace mtier::tools {

// The shared ramp (record/heat_ramp.h), under the names this tool's views use.
using record::heat_color;
using record::heat_glyph;
using record::heat_level;
using record::kHeatRamp;
using record::kHeatSteps;

std::string heat_row(const std::vector<mtier_extent>& extents, double max_heat_per_byte,
                     bool color);
std::string residency_row(const std::vector<mtier_extent>& extents);
std::string heat_legend(double max_heat_per_byte, bool color);

}  // namespace mtier::tools
