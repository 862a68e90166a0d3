// SPDX-License-Identifier: Apache-2.0
// Layout first (plan_line_chart, plan.h: ranges, ticks, margins, the legend's
// corner), then drawing through cairo in layers: grid, frame and ticks,
// series lines, markers, legend, titles. Margins are sized from the text they
// hold, measured with draw.h's fonts; ticks and style come from axis.h.
#include "plot/line_chart.h"

#include <algorithm>
#include <cmath>

#include "plot/draw.h"
#include "plot/plan.h"

namespace mtier::plot {
namespace {

// The pixel samples of the drawn series (every couple of pixels along each
// segment, and each marker), for choosing the legend's corner.
int overlap(const ChartGeometry& g, const std::vector<Points>& points, const Rect& box) {
  const Rect r{box.x - 4, box.y - 4, box.w + 8, box.h + 8};
  int n = 0;
  for (const Points& s : points) {
    for (size_t i = 0; i < s.size(); ++i) {
      const double x1 = g.px(s[i].first), y1 = g.py(s[i].second);
      if (r.contains(static_cast<int>(std::lround(x1)), static_cast<int>(std::lround(y1)))) n += 4;
      if (i == 0) continue;
      const double x0 = g.px(s[i - 1].first), y0 = g.py(s[i - 1].second);
      const int steps = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0)) / 2) + 1;
      for (int k = 1; k < steps; ++k) {
        const double t = static_cast<double>(k) / steps;
        if (r.contains(static_cast<int>(std::lround(x0 + t * (x1 - x0))),
                       static_cast<int>(std::lround(y0 + t * (y1 - y0)))))
          ++n;
      }
    }
  }
  return n;
}

}  // namespace

int plan_line_chart(const LineChart& c, LinePlan* p, std::string* err) {
  if (c.width < kMinSide || c.height < kMinSide || c.width > kMaxSide || c.height > kMaxSide)
    return fail(err, "chart size " + std::to_string(c.width) + "x" + std::to_string(c.height) +
                         " is outside " + std::to_string(kMinSide) + ".." +
                         std::to_string(kMaxSide) + " a side");
  if (c.series.empty()) return fail(err, "chart has no series");
  if (!c.x_tick_labels.empty() && c.x_tick_labels.size() != c.x_ticks.size())
    return fail(err, "chart has " + std::to_string(c.x_tick_labels.size()) + " x tick labels for " +
                         std::to_string(c.x_ticks.size()) + " x ticks");
  for (double t : c.x_ticks)
    if (!std::isfinite(t)) return fail(err, "chart has a non-finite x tick");

  ChartGeometry& g = p->g;
  g = ChartGeometry{};
  g.log_y = c.log_y;
  g.x_reversed = c.x_reversed;
  g.inset = kInset;

  // The plottable points, and the data ranges.
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  p->points.assign(c.series.size(), {});
  for (size_t i = 0; i < c.series.size(); ++i) {
    for (const auto& [x, y] : c.series[i].points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (c.log_y && y <= 0)) continue;
      p->points[i].emplace_back(x, y);
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
    std::stable_sort(p->points[i].begin(), p->points[i].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  if (xmin > xmax)
    return fail(err, c.log_y ? "chart has no finite points with positive y (log axis)"
                             : "chart has no finite points");

  // y axis: ticks first, since their labels' width sets the left margin.
  g.y_lo = ymin, g.y_hi = ymax;
  p->y_ticks.clear();
  if (c.log_y)
    log_ticks(&g.y_lo, &g.y_hi, &p->y_ticks);
  else if (!linear_ticks(&g.y_lo, &g.y_hi, 6, &p->y_ticks))
    return fail(err, "chart's y range is too large to draw");

  const int th = text_height();
  const int left =
      kPad + (c.y_label.empty() ? 0 : th + 8) + max_label_width(p->y_ticks) + kTickGap + kTickLen;
  const int top = kPad + (c.title.empty() ? 4 : text_height(kTitleFont) + 10);
  const int bottom = static_cast<int>(c.height) - kPad - (c.x_label.empty() ? 0 : th + 6) - th -
                     kTickGap - kTickLen;  // one past the frame's bottom row

  // x axis: the given ticks (their range joins the data's), or nice ones.
  p->x_ticks.clear();
  g.x_lo = xmin, g.x_hi = xmax;
  if (!c.x_ticks.empty()) {
    for (size_t i = 0; i < c.x_ticks.size(); ++i) {
      const double v = c.x_ticks[i];
      p->x_ticks.push_back(
          Tick{v, c.x_tick_labels.empty() ? format_value(v) : c.x_tick_labels[i], true});
      g.x_lo = std::min(g.x_lo, v), g.x_hi = std::max(g.x_hi, v);
    }
    // In value order, so that neighbours in the list are neighbours on the axis.
    std::stable_sort(p->x_ticks.begin(), p->x_ticks.end(),
                     [](const Tick& a, const Tick& b) { return a.v < b.v; });
    if (g.x_hi <= g.x_lo) {  // one x value: centre it
      const double s = g.x_lo == 0 ? 1 : std::fabs(g.x_lo) * 0.1;
      g.x_lo -= s, g.x_hi += s;
    }
    if (!std::isfinite(g.x_hi - g.x_lo)) return fail(err, "chart's x range is too large to draw");
  } else {
    const int target = std::clamp((static_cast<int>(c.width) - left - kPad) / 90, 3, 10);
    if (!linear_ticks(&g.x_lo, &g.x_hi, target, &p->x_ticks))
      return fail(err, "chart's x range is too large to draw");
  }
  // Room on the right for half the widest x label, which may sit on the edge.
  const int overhang = std::max(0, max_label_width(p->x_ticks) / 2 - kInset);
  const int right = static_cast<int>(c.width) - kPad - overhang;  // one past the frame

  g.plot = Rect{left, top, right - left, bottom - top};
  if (g.plot.w < 4 * kInset || g.plot.h < 4 * kInset)
    return fail(err, "chart is too small for its labels (" + std::to_string(c.width) + "x" +
                         std::to_string(c.height) + ")");

  // The legend: in the plot area's corner where it hides the least data.
  int widest = 0, rows = 0;
  for (const Series& s : c.series)
    if (!s.name.empty()) widest = std::max(widest, text_width(s.name)), ++rows;
  g.legend = Rect{};
  if (rows > 0) {
    const int w = 8 + kLegendSwatch + 6 + widest + 8, h = rows * kLegendRow + 10, m = 8;
    const Rect corners[] = {
        {g.plot.x + g.plot.w - m - w, g.plot.y + m, w, h},
        {g.plot.x + m, g.plot.y + m, w, h},
        {g.plot.x + g.plot.w - m - w, g.plot.y + g.plot.h - m - h, w, h},
        {g.plot.x + m, g.plot.y + g.plot.h - m - h, w, h},
    };
    int best = -1;
    for (const Rect& r : corners) {
      const int n = overlap(g, p->points, r);
      if (best < 0 || n < best) best = n, g.legend = r;
    }
  }
  p->x_label_every = label_every(p->x_ticks, [&g](double x) { return g.px(x); });
  return 0;
}

namespace {

// A series marker, filled, centred on pixel (x, y): a disc, a square, a
// diamond or a triangle, by the series' index.
void marker(cairo_t* cr, size_t shape, int x, int y, Rgb c) {
  const double cx = x + 0.5, cy = y + 0.5;
  switch (shape % 4) {
    case 0:
      cairo_arc(cr, cx, cy, 3.5, 0, 2 * M_PI);
      break;
    case 1:
      cairo_rectangle(cr, x - 3, y - 3, 7, 7);
      break;
    case 2:
      cairo_move_to(cr, cx, cy - 4.5);
      cairo_line_to(cr, cx + 4.5, cy);
      cairo_line_to(cr, cx, cy + 4.5);
      cairo_line_to(cr, cx - 4.5, cy);
      cairo_close_path(cr);
      break;
    default:
      cairo_move_to(cr, cx, cy - 4.5);
      cairo_line_to(cr, cx + 4.5, cy + 3.5);
      cairo_line_to(cr, cx - 4.5, cy + 3.5);
      cairo_close_path(cr);
      break;
  }
  set_colour(cr, c);
  cairo_fill(cr);
}

int round_px(double v) { return static_cast<int>(std::lround(v)); }

void draw(cairo_t* cr, const LineChart& c, const LinePlan& p) {
  const ChartGeometry& g = p.g;
  const Rect& a = g.plot;
  const Rect inner{a.x + 1, a.y + 1, a.w - 2, a.h - 2};

  // x tick labels go under every n-th tick when they would collide; only
  // those ticks get a grid line.
  const size_t every = p.x_label_every;

  // Grid: minor lines, then major ones over them, inside the frame.
  cairo_save(cr);
  cairo_rectangle(cr, inner.x, inner.y, inner.w, inner.h);
  cairo_clip(cr);
  for (int pass = 0; pass < 2; ++pass) {
    const bool major = pass == 1;
    for (const Tick& t : p.y_ticks)
      if (t.major == major)
        hline(cr, a.x, a.x + a.w - 1, round_px(g.py(t.v)), major ? kGrid : kGridMinor);
    for (size_t i = 0; i < p.x_ticks.size(); i += every)
      if (p.x_ticks[i].major == major)
        vline(cr, round_px(g.px(p.x_ticks[i].v)), a.y, a.y + a.h - 1, major ? kGrid : kGridMinor);
  }
  cairo_restore(cr);
  stroke_rect(cr, a, kAxis);

  // y ticks: labels right-aligned, their digits centred on the tick.
  for (const Tick& t : p.y_ticks) {
    const int row = round_px(g.py(t.v)), len = t.major ? kTickLen : kMinorTickLen;
    hline(cr, a.x - len, a.x - 1, row, kAxis);
    text(cr, a.x - kTickLen - kTickGap, row + 0.5, t.label, kText, kLabelFont, Align::kRight,
         VAlign::kMiddle);
  }
  // x ticks: labels centred under them.
  const int label_top = a.y + a.h + kTickLen + kTickGap;
  for (size_t i = 0; i < p.x_ticks.size(); ++i) {
    const int col = round_px(g.px(p.x_ticks[i].v));
    vline(cr, col, a.y + a.h, a.y + a.h + kTickLen - 1, kAxis);
    if (i % every == 0)
      text(cr, col + 0.5, label_top, p.x_ticks[i].label, kText, kLabelFont, Align::kCentre);
  }

  // Series: every line, then every marker, so no line hides a marker; all
  // inside the frame.
  cairo_save(cr);
  cairo_rectangle(cr, inner.x, inner.y, inner.w, inner.h);
  cairo_clip(cr);
  cairo_set_line_width(cr, kLineWidth);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  for (size_t i = 0; i < p.points.size(); ++i) {
    if (p.points[i].size() < 2) continue;
    for (const auto& [x, y] : p.points[i]) cairo_line_to(cr, g.px(x) + 0.5, g.py(y) + 0.5);
    set_colour(cr, series_colour(i));
    cairo_stroke(cr);
  }
  for (size_t i = 0; i < p.points.size(); ++i)
    for (const auto& [x, y] : p.points[i])
      marker(cr, i, round_px(g.px(x)), round_px(g.py(y)), series_colour(i));
  cairo_restore(cr);

  // Legend.
  if (g.legend.w > 0) {
    const Rect& l = g.legend;
    fill_rect(cr, l.x, l.y, l.w, l.h, kWhite);
    stroke_rect(cr, l, kLegendBorder);
    int row = 0;
    for (size_t i = 0; i < c.series.size(); ++i) {
      if (c.series[i].name.empty()) continue;
      const int cy = l.y + 13 + row++ * kLegendRow, sx = l.x + 8;
      fill_rect(cr, sx, cy, kLegendSwatch, kLineWidth, series_colour(i));
      marker(cr, i, sx + kLegendSwatch / 2, cy, series_colour(i));
      text(cr, sx + kLegendSwatch + 6, cy + 0.5, c.series[i].name, kText, kLabelFont, Align::kLeft,
           VAlign::kMiddle);
    }
  }

  text(cr, c.width / 2.0, kPad, c.title, kText, kTitleFont, Align::kCentre);
  text(cr, a.x + a.w / 2.0, static_cast<int>(c.height) - kPad - text_height(), c.x_label, kText,
       kLabelFont, Align::kCentre);
  text_vertical(cr, kPad, a.y + a.h / 2.0, c.y_label, kText);
}

}  // namespace

double ChartGeometry::px(double x) const {
  const double f = x_reversed ? (x_hi - x) / (x_hi - x_lo) : (x - x_lo) / (x_hi - x_lo);
  return plot.x + inset + f * (plot.w - 1 - 2 * inset);
}

double ChartGeometry::py(double y) const {
  double f;
  if (log_y) {
    if (!(y > 0)) return NAN;
    f = (std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo));
  } else {
    f = (y - y_lo) / (y_hi - y_lo);
  }
  return plot.y + plot.h - 1 - inset - f * (plot.h - 1 - 2 * inset);
}

Rgb series_colour(size_t i) {
  // Tableau 10 (as in matplotlib's tab10): distinct in hue and lightness.
  static constexpr Rgb kPalette[] = {
      {0x1f, 0x77, 0xb4}, {0xff, 0x7f, 0x0e}, {0x2c, 0xa0, 0x2c}, {0xd6, 0x27, 0x28},
      {0x94, 0x67, 0xbd}, {0x8c, 0x56, 0x4b}, {0xe3, 0x77, 0xc2}, {0x7f, 0x7f, 0x7f},
      {0xbc, 0xbd, 0x22}, {0x17, 0xbe, 0xcf},
  };
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

int chart_geometry(const LineChart& c, ChartGeometry* g, std::string* err) {
  LinePlan p;
  if (int rc = plan_line_chart(c, &p, err); rc < 0) return rc;
  *g = p.g;
  return 0;
}

int write_line_chart(const LineChart& c, const std::string& path, std::string* err) {
  LinePlan p;
  if (int rc = plan_line_chart(c, &p, err); rc < 0) return rc;
  return write_chart(path, c.width, c.height, c.title, [&](cairo_t* cr) { draw(cr, c, p); }, err);
}

}  // namespace mtier::plot
