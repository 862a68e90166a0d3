// SPDX-License-Identifier: Apache-2.0
// Internal to src/plot (not part of its API): the layout of each chart kind,
// computed before anything is drawn (text measured with draw.h's fonts), so
// that every output format puts every mark at the same place, and the tests
// can ask where things are (chart_geometry, heatmap_geometry).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "plot/axis.h"
#include "plot/chart.h"
#include "plot/heatmap_chart.h"
#include "plot/line_chart.h"

namespace mtier::plot {

// --- Line charts (line_chart.cc) ---------------------------------------------

constexpr int kInset = 10;  // frame to the data range's ends
constexpr int kLineWidth = 2;
constexpr int kLegendRow = 16;     // legend line spacing
constexpr int kLegendSwatch = 22;  // legend sample line length

using Points = std::vector<std::pair<double, double>>;

struct LinePlan {
  ChartGeometry g;
  std::vector<Tick> x_ticks, y_ticks;
  std::vector<Points> points;  // per series: the plottable points, in x order
  size_t x_label_every = 1;    // x labels (and major grid lines) at every n-th x tick
};

// The layout chart_geometry() reports, with the ticks and points drawn.
// Errors as chart_geometry().
int plan_line_chart(const LineChart& c, LinePlan* p, std::string* err);

// --- Heat maps (heatmap_chart.cc) --------------------------------------------

constexpr Rgb kNoData{214, 214, 214};
constexpr int kBarWidth = 14;    // the colour bar's ramp, frame excluded
constexpr int kMinBandLine = 6;  // see HeatmapPlan::separator_lines

// Cells [lo, hi) drawn over pixels [px0, px1) along one axis of the plot's
// inside, counted from its left edge (columns) or its bottom edge (rows).
// Either one cell over one or more pixels, or, when there are more cells than
// pixels, several cells sharing one pixel. The spans of an axis tile it: each
// starts where the previous one ended, in pixels and in cells.
struct CellSpan {
  int px0, px1;
  unsigned lo, hi;
};

struct BandLabel {
  int row;  // image row of the band's middle
  std::string label;
};

struct HeatmapPlan {
  HeatmapGeometry g;
  Rect inner;                          // g.plot less its frame: exactly the cells
  std::vector<CellSpan> xs, ys;        // ys from the bottom (row 0)
  std::vector<Tick> x_ticks, y_ticks;  // y_ticks empty when the chart has bands
  size_t x_label_every = 1;
  std::vector<Tick> bar_ticks;         // the colour bar's scale, thinned to fit
  std::vector<BandLabel> band_labels;  // those that fit, bottom band first
  std::vector<int> separators;         // image rows of the boundaries between bands
  // Whether the separators are also lines across the cells (each hides a
  // pixel row): only when every band is at least kMinBandLine pixels tall, so
  // that many thin bands are not buried under their separators. Otherwise
  // only tick marks outside the frame show the boundaries.
  bool separator_lines = false;
  int colour_label_x = 0;  // left column of the colour bar's label
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  bool log_colour = false;

  int x_col(double x) const;  // image column of data x, clamped to the plot's inside
  int y_row(double y) const;  // image row of data y, clamped likewise
  // Where value v (>= 0) falls on the colour ramp, 0..1: v / v_max, or
  // log10(1 + v) / log10(1 + v_max) when log_colour.
  double frac(double v) const;
  int bar_row(double v) const;  // image row of value v on the colour bar
};

// Where heat_colour's ramp bends, 0 and 1 included: between two of these it is
// linear, so a gradient through heat_colour at these stops draws it exactly.
std::vector<double> heat_ramp_stops();

// Errors as heatmap_geometry().
int plan_heatmap(const HeatmapChart& c, HeatmapPlan* p, std::string* err);

// The colour of the pixels where spans x and y cross: the heat of the largest
// value among their cells, or kNoData when none of them has a value.
Rgb block_colour(const HeatmapChart& c, const HeatmapPlan& p, const CellSpan& x, const CellSpan& y);

}  // namespace mtier::plot
