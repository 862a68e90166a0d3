// SPDX-License-Identifier: Apache-2.0
// Heat maps as PNG, SVG or PDF (chart.h): a title, a plot area of rows x cols
// coloured cells (black-blue-red-yellow-white ramp, `heat_colour`), labelled
// axes with ticks, optional horizontal bands (one per table) named at the
// left, and a colour bar with its own label and scale.
#pragma once
#include <string>
#include <vector>

#include "plot/chart.h"

namespace mtier::plot {

struct HeatmapBand {
  unsigned first_row = 0, rows = 0;  // rows of the matrix the band covers
  std::string label;                 // e.g. the table's name
};

struct HeatmapChart {
  std::string title, x_label, y_label, colour_label;
  unsigned rows = 0, cols = 0;
  // values[r * cols + c]; row 0 is drawn at the bottom (lowest offset), col 0
  // at the left (earliest time). Negative or non-finite values are drawn as
  // "no data" (light grey).
  std::vector<double> values;
  double x_lo = 0, x_hi = 1;  // the data range the columns span (x axis ticks)
  // The data range the rows span (y axis ticks), used when bands is empty.
  double y_lo = 0, y_hi = 1;
  std::vector<HeatmapBand> bands;  // non-empty: the y axis names bands instead of numbers
  bool log_colour = false;         // colour by log10(1 + v) instead of v
  unsigned width = 900, height = 560;
};

// The ramp: 0 -> black/dark blue, 1 -> white/yellow, monotonic in luminance
// (so "hotter" is always brighter). frac is clamped to [0, 1].
Rgb heat_colour(double frac);

// Where the cells are drawn (the tests read pixels back through this).
struct HeatmapGeometry {
  Rect plot;        // the cells' area, frame included
  Rect colour_bar;  // the colour bar's ramp
  // The value drawn as the hottest colour: the largest value (1 when no
  // value is above 0, so that zeros are drawn coldest).
  double v_max = 0;
  // The pixel centre of cell (row, col): the middle of the pixels it covers,
  // or of the one pixel it shares with its neighbours when there are more
  // cells than pixels; -1 when col >= c.cols or row >= c.rows.
  int cell_x(const HeatmapChart& c, unsigned col) const;
  int cell_y(const HeatmapChart& c, unsigned row) const;
};

// 0, or -EINVAL with *err: no cells, values not rows * cols, bands out of
// range, empty or overlapping, x_lo >= x_hi or y_lo >= y_hi (or either not
// finite), too small (below 120 a side, or no room left for the cells after
// the labels) or above 16384 a side.
int heatmap_geometry(const HeatmapChart& c, HeatmapGeometry* g, std::string* err);
// Draws the heat map into path, as PNG, SVG or PDF by its extension
// (chart.h), via path + ".tmp" renamed into place. Errors as
// heatmap_geometry, -EINVAL for an unknown extension, or the -errno of a
// failed write; on error no file is left at path.
int write_heatmap(const HeatmapChart& c, const std::string& path, std::string* err);

}  // namespace mtier::plot
