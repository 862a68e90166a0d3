// SPDX-License-Identifier: Apache-2.0
// The text heat ramp every heat map of the tool draws with (`mtier demo`,
// `mtier heat`, `mtier report heatmap`), so that they all read the same: ten
// glyphs " .:-=+*#%@" from no heat to the hottest, and in colour an
// xterm-256 background from blue (cold) to red (hot).
#pragma once
#include <string>

namespace mtier::record {

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

}  // namespace mtier::record
