#include "heatmap_text.h"

#include <cstdio>

namespace mtier::tools {
namespace {

constexpr const char kRamp[] = " .:-=+*#%@";
constexpr int kSteps = 10;
// xterm-256 colours from cold (blue) to hot (red).
constexpr int kColors[kSteps] = {17, 19, 27, 33, 44, 118, 226, 214, 202, 196};

int level(const mtier_extent& e, double max) {
  if (max <= 0 || e.bytes == 0 || e.heat == 0) return 0;
  int l = 1 + static_cast<int>((kSteps - 1) * (e.heat / double(e.bytes)) / max);
  return l >= kSteps ? kSteps - 1 : l;
}

std::string glyph(int l, bool color) {
  if (!color) return std::string(1, kRamp[l]);
  char buf[32];
  snprintf(buf, sizeof buf, "\033[48;5;%dm%c\033[0m", kColors[l], kRamp[l]);
  return buf;
}

}  // namespace

std::string heat_row(const std::vector<mtier_extent>& extents, double max, bool color) {
  std::string out;
  for (const auto& e : extents) out += glyph(level(e, max), color);
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
  for (int l = 0; l < kSteps; l++) out += glyph(l, color);
  char buf[64];
  snprintf(buf, sizeof buf, " %.3g", max * 1024);
  return out + buf + "   residency: D dram, s store, ~ split";
}

}  // namespace mtier::tools
