// SPDX-License-Identifier: Apache-2.0
// For the chart tests (plot_test, heatmap_chart_test): a written PNG read back
// through cairo, pixel by pixel, and the checks that SVG and PDF files are
// whole documents.
#pragma once
#include <cairo.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "plot/chart.h"

namespace mtier::plot::testing {

// A PNG file's pixels (cairo_image_surface_create_from_png).
class Png {
 public:
  explicit Png(const std::string& path) : s_(cairo_image_surface_create_from_png(path.c_str())) {
    if (cairo_surface_status(s_) == CAIRO_STATUS_SUCCESS) cairo_surface_flush(s_);
  }
  ~Png() { cairo_surface_destroy(s_); }
  Png(const Png&) = delete;
  Png& operator=(const Png&) = delete;

  bool ok() const { return cairo_surface_status(s_) == CAIRO_STATUS_SUCCESS; }
  int width() const { return cairo_image_surface_get_width(s_); }
  int height() const { return cairo_image_surface_get_height(s_); }
  // (x, y) must be inside. RGB24 and opaque ARGB32 pixels are 0x??RRGGBB.
  Rgb at(int x, int y) const {
    const unsigned char* row = cairo_image_surface_get_data(s_) +
                               static_cast<size_t>(y) * cairo_image_surface_get_stride(s_);
    const uint32_t p = reinterpret_cast<const uint32_t*>(row)[x];
    return Rgb{static_cast<uint8_t>(p >> 16), static_cast<uint8_t>(p >> 8),
               static_cast<uint8_t>(p)};
  }
  bool inside(long x, long y) const { return x >= 0 && y >= 0 && x < width() && y < height(); }

 private:
  cairo_surface_t* s_;
};

inline bool dark(Rgb c) { return c.r + c.g + c.b < 3 * 128; }

// Rec. 709 luma of the encoded values: what "brighter" means here.
inline double luminance(Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

// Each channel within tol of the other's.
inline bool close(Rgb a, Rgb b, int tol) {
  return std::abs(a.r - b.r) <= tol && std::abs(a.g - b.g) <= tol && std::abs(a.b - b.b) <= tol;
}

// The dark pixels in r (clipped to the image), and their bounding box.
struct Ink {
  int pixels = 0;
  Rect box;
};
inline Ink ink(const Png& img, const Rect& r) {
  Ink out;
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
  for (int y = std::max(r.y, 0); y < std::min(r.y + r.h, img.height()); ++y)
    for (int x = std::max(r.x, 0); x < std::min(r.x + r.w, img.width()); ++x)
      if (dark(img.at(x, y))) {
        ++out.pixels;
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
      }
  if (out.pixels) out.box = Rect{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
  return out;
}

// Whether a pixel within `r` of (x, y) is within tol of colour c.
inline bool near(const Png& img, double x, double y, Rgb c, int r = 2, int tol = 0) {
  const long cx = std::lround(x), cy = std::lround(y);
  for (long dy = -r; dy <= r; ++dy)
    for (long dx = -r; dx <= r; ++dx)
      if (img.inside(cx + dx, cy + dy) &&
          close(img.at(static_cast<int>(cx + dx), static_cast<int>(cy + dy)), c, tol))
        return true;
  return false;
}

inline bool has_colour(const Png& img, const Rect& r, Rgb c) {
  for (int y = r.y; y < r.y + r.h; ++y)
    for (int x = r.x; x < r.x + r.w; ++x)
      if (img.at(x, y) == c) return true;
  return false;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::string trim_end(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// An SVG document: the XML declaration, an <svg root element, closed last.
inline void expect_svg(const std::string& path) {
  const std::string s = trim_end(slurp(path));
  EXPECT_EQ(s.rfind("<?xml", 0), 0u) << path;
  EXPECT_NE(s.find("<svg"), std::string::npos) << path;
  ASSERT_GE(s.size(), 6u) << path;
  EXPECT_EQ(s.substr(s.size() - 6), "</svg>") << path;
}

// A PDF document: its header first, its end-of-file marker last.
inline void expect_pdf(const std::string& path) {
  const std::string s = trim_end(slurp(path));
  EXPECT_EQ(s.rfind("%PDF-", 0), 0u) << path;
  ASSERT_GE(s.size(), 5u) << path;
  EXPECT_EQ(s.substr(s.size() - 5), "%%EOF") << path;
}

}  // namespace mtier::plot::testing
