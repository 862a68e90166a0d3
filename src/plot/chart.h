// SPDX-License-Identifier: Apache-2.0
// What every chart kind shares in its API: colours, pixel rectangles, and the
// output formats. A chart is drawn once, through cairo, onto the surface its
// file's extension names: .png (an image), .svg or .pdf (vectors, real text).
#pragma once
#include <cstdint>
#include <string>

namespace mtier::plot {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};

// Integer pixel rectangle: columns [x, x + w), rows [y, y + h). Pixel (x, y)
// is the unit square from (x, y), in PNG pixels and in SVG and PDF units alike.
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool contains(int px, int py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

enum class ChartFormat { kPng, kSvg, kPdf };

// The format path's extension names (.png, .svg or .pdf, in any case): 0, or
// -EINVAL with *err naming the three.
int chart_format(const std::string& path, ChartFormat* format, std::string* err);

// Whether charts can be written: 0 when mtier was built with cairo, else
// -ENOTSUP with *err naming the package to build with (a tool checks this
// before its work, so that it refuses at once with that one line).
int charts_available(std::string* err);

}  // namespace mtier::plot
