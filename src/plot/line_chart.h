// SPDX-License-Identifier: Apache-2.0
// Line charts as PNG, SVG or PDF (chart.h): a title, framed plot area with
// light grid, labelled axes with tick marks and tick labels (nice 1-2-5 steps
// on linear axes, decades on a log y axis), each series as a coloured line
// with a marker at each point, and a legend naming each series with its colour.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "plot/chart.h"

namespace mtier::plot {

struct Series {
  std::string name;                               // legend text; empty: not in the legend
  std::vector<std::pair<double, double>> points;  // (x, y), plotted in x order
};

struct LineChart {
  std::string title, x_label, y_label;
  bool log_y = false;                      // log10 axis; non-positive y values skipped
  bool x_reversed = false;                 // x grows leftwards, e.g. budgets from 100% down to 10%
  std::vector<double> x_ticks;             // empty: automatic "nice" ticks
  std::vector<std::string> x_tick_labels;  // optional, same length as x_ticks (e.g. "25%")
  std::vector<Series> series;
  unsigned width = 900, height = 560;
};

// The mapping from data to pixels a chart is drawn with. The data ranges
// cover every plotted point and every tick; they map onto the plot area less
// `inset` pixels on each side, so markers at the ends stay off the frame.
struct ChartGeometry {
  Rect plot;  // the plot area, its 1-pixel frame included
  int inset = 0;
  double x_lo = 0, x_hi = 1;  // x_lo < x_hi; x_lo at the left unless x_reversed
  double y_lo = 0, y_hi = 1;  // y_lo < y_hi, y_lo at the bottom; both > 0 when log_y
  bool log_y = false, x_reversed = false;
  Rect legend;  // the legend box, in a corner of the plot area; w == 0 when no series is named

  double px(double x) const;  // image column of data x (fractional)
  double py(double y) const;  // image row of data y (fractional); NaN for y <= 0 on a log axis
};

// The colour of the i-th series: the Tableau 10 palette, repeating after 10.
Rgb series_colour(size_t i);

// Where write_line_chart would put things, without drawing. Returns 0 or
// -EINVAL with *err saying why: no series, no finite (for log_y: positive)
// points, tick labels not matching the ticks, a non-finite tick, a size too
// small to lay out or above 16384 pixels a side.
int chart_geometry(const LineChart& c, ChartGeometry* g, std::string* err);

// Draws the chart into path, as PNG, SVG or PDF by its extension (chart.h),
// via path + ".tmp" renamed into place. Errors as chart_geometry, -EINVAL for
// an unknown extension, or the -errno of a failed write; on error no file is
// left at path.
int write_line_chart(const LineChart& c, const std::string& path, std::string* err);

}  // namespace mtier::plot
