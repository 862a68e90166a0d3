#include "heatmap_text.h"

#include <cstdio>

namespace mtier::tools {
namespace {

// xterm-256 colours from cold (blue) to hot (red).
constexpr int kColors[kHeatSteps] = {17, 19, 27, 33, 44, 118, 226, 214, 202, 196};

int clamp_level(int l) { return l < 0 ? 0 : l >= kHeatSteps ? kHeatSteps - 1 : l; }

int level(const mtier_extent& e, double max) {
  if (e.bytes == 0) return 0;
  return heat_level(e.heat / double(e.bytes), max);
}

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
