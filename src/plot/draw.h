// SPDX-License-Identifier: Apache-2.0
// Internal to src/plot (not part of its API): drawing through cairo in image
// pixel coordinates, and the writer that puts one drawing into a PNG, SVG or
// PDF file. Text uses cairo's toy font API (a sans-serif face, hinting off so
// that text measures the same on every surface); any byte string may be drawn:
// bytes that are not UTF-8, and control characters, are drawn as '?'.
#pragma once
#include <cairo.h>

#include <functional>
#include <string>
#include <string_view>

#include "plot/chart.h"

namespace mtier::plot {

struct Font {
  double size;
  bool bold;
};
constexpr Font kLabelFont{11, false};  // tick labels, axis labels, the legend
constexpr Font kTitleFont{16, true};

enum class Align { kLeft, kCentre, kRight };
enum class VAlign {
  kTop,     // y is the top of the font's ascent
  kMiddle,  // y is the middle of the digits and capitals
};

// The advance width of s and the font's height (ascent + descent), rounded up.
int text_width(std::string_view s, Font f = kLabelFont);
int text_height(Font f = kLabelFont);

void set_colour(cairo_t* cr, Rgb c);
void fill_rect(cairo_t* cr, double x, double y, double w, double h, Rgb c);
// A 1-pixel outline just inside r.
void stroke_rect(cairo_t* cr, const Rect& r, Rgb c);
// A 1-pixel line over pixels [x0, x1] of row y, or [y0, y1] of column x.
void hline(cairo_t* cr, int x0, int x1, int y, Rgb c);
void vline(cairo_t* cr, int x, int y0, int y1, Rgb c);

// Text at column x (its left edge, centre or right edge as align says) and row
// y as valign says.
void text(cairo_t* cr, double x, double y, std::string_view s, Rgb c, Font f = kLabelFont,
          Align align = Align::kLeft, VAlign valign = VAlign::kTop);
// Text turned 90 degrees anticlockwise (read bottom to top), the tops of its
// letters at column x, its middle at row y.
void text_vertical(cairo_t* cr, double x, double y, std::string_view s, Rgb c,
                   Font f = kLabelFont);

// Draws a width x height chart on a white background with `draw`, onto the
// surface chart_format(path) names, written via path + ".tmp" renamed into
// place, so a failed write leaves neither a partial file at path nor the
// temporary. `title` names the document (PDF metadata). Returns 0, -EINVAL
// (an unknown extension, a drawing cairo refused), or the -errno of the
// failing call; *err (when not null) says what failed.
int write_chart(const std::string& path, unsigned width, unsigned height, const std::string& title,
                const std::function<void(cairo_t*)>& draw, std::string* err);

}  // namespace mtier::plot
