// SPDX-License-Identifier: Apache-2.0
#include "record/heat_ramp.h"

#include <cstdio>

namespace mtier::record {
namespace {

// xterm-256 colours from cold (blue) to hot (red).
constexpr int kColors[kHeatSteps] = {17, 19, 27, 33, 44, 118, 226, 214, 202, 196};

int clamp_level(int l) { return l < 0 ? 0 : l >= kHeatSteps ? kHeatSteps - 1 : l; }

}  // namespace

int heat_level(double value, double max) {
  // Written so that NaN fails every comparison into level 0.
  if (!(max > 0) || !(value > 0)) return 0;
  double l = 1 + (kHeatSteps - 1) * (value / max);
  return l >= kHeatSteps - 1 ? kHeatSteps - 1 : static_cast<int>(l);
}

int heat_color(int l) { return kColors[clamp_level(l)]; }

std::string heat_glyph(int l, bool color) {
  l = clamp_level(l);
  if (!color) return std::string(1, kHeatRamp[l]);
  char buf[32];
  snprintf(buf, sizeof buf, "\033[48;5;%dm%c\033[0m", kColors[l], kHeatRamp[l]);
  return buf;
}

}  // namespace mtier::record
