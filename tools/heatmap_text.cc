// SPDX-License-Identifier: Apache-2.0
#include "heatmap_text.h"

#include <cstdio>

namespace mtier::tools {
namespace {

int level(const mtier_extent& e, double max) {
  if (e.bytes == 0) return 0;
  return heat_level(e.heat / double(e.bytes), max);
}

}  // namespace

std::string heat_row(const std::vector<mtier_extent>& extents, double max, bool color) {
  std::string out;
  for (const auto& e : extents) out += heat_glyph(level(e, max), color);
  return out;
}

std::string residency_row(const std::vector<mtier_extent>& extents) {
  std::string out;
  for (const auto& e : extents) {
    if (e.resident_bytes == 0 && e.stored_bytes == 0) out += ' ';
    else if (e.resident_bytes == e.bytes) out += 'D';
    else if (e.resident_bytes == 0) out += 's';
    else out += '~';
  }
  return out;
}

std::string heat_legend(double max, bool color) {
  std::string out = "heat (sampled accesses per KiB, decayed): 0 ";
  for (int l = 0; l < kHeatSteps; l++) out += heat_glyph(l, color);
  char buf[64];
  snprintf(buf, sizeof buf, " %.3g", max * 1024);
  return out + buf + "   residency: D dram, s store, ~ split";
}

}  // namespace mtier::tools
