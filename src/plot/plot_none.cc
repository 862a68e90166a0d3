// SPDX-License-Identifier: Apache-2.0
// src/plot without cairo (configure found none): every chart refuses with
// charts_available()'s line, naming the package to build with.
#include <cerrno>

#include "plot/heatmap_chart.h"
#include "plot/line_chart.h"

namespace mtier::plot {

int chart_geometry(const LineChart&, ChartGeometry*, std::string* err) {
  return charts_available(err);
}

int write_line_chart(const LineChart&, const std::string&, std::string* err) {
  return charts_available(err);
}

int heatmap_geometry(const HeatmapChart&, HeatmapGeometry*, std::string* err) {
  return charts_available(err);
}

int write_heatmap(const HeatmapChart&, const std::string&, std::string* err) {
  return charts_available(err);
}

}  // namespace mtier::plot
