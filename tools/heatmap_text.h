// Renders a table's per-extent heat and residency as one line of text: a
// glyph per extent from a 10-step ramp (" .:-=+*#%@") scaled to the hottest
// extent of all tables, with ANSI colour (blue cold to red hot) when `color`.
// A second line marks where each extent lives: D = all in DRAM, s = all in a
// store, ~ = split, space = never touched.
//
// The ramp itself (heat_level, heat_glyph, heat_color) is shared with other
// text views (heat_view.h), so every heat map of the tool reads the same.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mtier.h"

namespace mtier::tools {

// The ramp's steps: level 0 is "no heat" (a blank), kHeatSteps - 1 the hottest.
inline constexpr int kHeatSteps = 10;
inline constexpr char kHeatRamp[] = " .:-=+*#%@";

// The level of `value` on a scale whose hottest value is `max`: 0 when
// value <= 0 or max <= 0 (or either is not a number), else
// 1 + floor((kHeatSteps - 1) * value / max), at most kHeatSteps - 1. So any
// heat at all shows as at least '.', and the top ninth of the scale as '@'.
int heat_level(double value, double max);
// The xterm-256 colour of level l (clamped to 0..kHeatSteps - 1), blue cold to red hot.
int heat_color(int l);
// One cell of level l (clamped): its glyph, on its colour and followed by an
// attribute reset when `color`, else the bare glyph. One visible character.
std::string heat_glyph(int l, bool color);

std::string heat_row(const std::vector<mtier_extent>& extents, double max_heat_per_byte,
                     bool color);
std::string residency_row(const std::vector<mtier_extent>& extents);
std::string heat_legend(double max_heat_per_byte, bool color);

}  // namespace mtier::tools
