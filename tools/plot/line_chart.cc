// Layout first (plan_chart: ranges, ticks, margins, the legend's corner), then
// drawing in layers: grid, frame and ticks, series lines, markers, legend,
// titles. Margins are sized from the text they hold, measured with the font.
#include "line_chart.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>

#include "png.h"

namespace mtier::plot {
namespace {

constexpr Rgb kText{34, 34, 34};
constexpr Rgb kAxis{68, 68, 68};
constexpr Rgb kGrid{224, 224, 224};
constexpr Rgb kGridMinor{241, 241, 241};
constexpr Rgb kLegendBorder{170, 170, 170};

constexpr int kPad = 12;          // image edge to anything drawn
constexpr int kTitleScale = 2;    // title font scale; everything else is 1
constexpr int kTickLen = 5;       // major tick mark length, outside the frame
constexpr int kMinorTickLen = 3;  // log axis 2..9 marks
constexpr int kTickGap = 4;       // tick mark end to its label
constexpr int kInset = 10;        // frame to the data range's ends
constexpr int kLineWidth = 2;
constexpr int kLegendRow = 14;     // legend line spacing
constexpr int kLegendSwatch = 22;  // legend sample line length
constexpr unsigned kMinSide = 120, kMaxSide = 16384;

struct Tick {
  double v;
  std::string label;  // empty: a mark without a label
  bool major;
};

using Points = std::vector<std::pair<double, double>>;

struct Plan {
  ChartGeometry g;
  std::vector<Tick> x_ticks, y_ticks;
  std::vector<Points> points;  // per series: the plottable points, in x order
};

int fail(std::string* err, const std::string& why) {
  if (err) *err = why;
  return -EINVAL;
}

// printf's exponents made shorter: "2.5e-07" -> "2.5e-7", "1e+300" -> "1e300".
std::string tidy_exponent(std::string s) {
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  size_t digits = e + 1;
  if (digits < s.size() && s[digits] == '+') s.erase(digits, 1);
  if (digits < s.size() && s[digits] == '-') ++digits;
  while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  return s;
}

// A label for a value on its own (log axes, given x ticks): %g, with k/M/G/T
// from 1000 up so decades read 1, 10, 100, 1k, 10k.
std::string format_value(double v) {
  static const struct {
    double div;
    const char* suffix;
  } kSi[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  char buf[48];
  const double a = std::fabs(v);
  if (a >= 1e3 && a < 1e15)
    for (const auto& s : kSi)
      if (a >= s.div) {
        std::snprintf(buf, sizeof buf, "%.4g%s", v / s.div, s.suffix);
        return buf;
      }
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return tidy_exponent(buf);
}

// Labels for evenly spaced linear ticks: one suffix for the whole axis (from
// 10000 up) and as many decimals as the step needs, so they read alike.
// Outside 1e-4..1e15 fixed point gets long, so those axes use %g with the
// significant digits that tell neighbouring ticks apart.
void label_linear(std::vector<Tick>* ticks, double step) {
  double max_abs = 0;
  for (const Tick& t : *ticks) max_abs = std::max(max_abs, std::fabs(t.v));
  const bool exponent = max_abs >= 1e15 || step < 1e-4;
  double div = 1;
  const char* suffix = "";
  if (!exponent) {
    if (max_abs >= 1e12) {
      div = 1e12, suffix = "T";
    } else if (max_abs >= 1e9) {
      div = 1e9, suffix = "G";
    } else if (max_abs >= 1e6) {
      div = 1e6, suffix = "M";
    } else if (max_abs >= 1e4) {
      div = 1e3, suffix = "k";
    }
  }
  const int decimals =
      std::clamp(static_cast<int>(-std::floor(std::log10(step / div) + 1e-9)), 0, 12);
  const int digits =
      std::clamp(static_cast<int>(std::ceil(std::log10(max_abs / step) + 1e-9)) + 1, 1, 15);
  for (Tick& t : *ticks) {
    char buf[64];
    if (t.v == 0)
      std::snprintf(buf, sizeof buf, "0");
    else if (exponent)
      std::snprintf(buf, sizeof buf, "%.*g", digits, t.v);
    else
      std::snprintf(buf, sizeof buf, "%.*f%s", decimals, t.v / div, suffix);
    t.label = tidy_exponent(buf);
  }
}

// Nice linear ticks: a 1, 2 or 5 x 10^k step giving about `target` intervals,
// the range widened to whole steps. False when the range is not finite.
bool linear_ticks(double* lo, double* hi, int target, std::vector<Tick>* ticks) {
  if (*hi <= *lo) {  // one value: open a range around it
    const double s = *lo == 0 ? 1 : std::fabs(*lo) * 0.1;
    *lo -= s;
    *hi += s;
  }
  const double span = *hi - *lo;
  if (!std::isfinite(span) || span <= 0) return false;
  const double raw = span / target, mag = std::pow(10, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  const double a = std::floor(*lo / step + 1e-9), b = std::ceil(*hi / step - 1e-9);
  if (!std::isfinite(a * step) || !std::isfinite(b * step)) return false;
  for (double i = a; i <= b + 0.5; ++i) {
    double v = i * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0"
    ticks->push_back(Tick{v, "", true});
  }
  *lo = a * step;
  *hi = b * step;
  label_linear(ticks, step);
  return true;
}

// Log ticks: the range widened to whole decades; a labelled major tick on
// each decade (only every n-th when there are many: a grid line on each of
// hundreds of decades would grey the plot), minor 2..9 marks when there are
// few, labelled at 2 and 5 when there are at most two decades.
void log_ticks(double* lo, double* hi, std::vector<Tick>* ticks) {
  int e0 = static_cast<int>(std::floor(std::log10(*lo) + 1e-12));
  int e1 = static_cast<int>(std::ceil(std::log10(*hi) - 1e-12));
  e0 = std::clamp(e0, -307, 307);
  e1 = std::clamp(e1, -307, 308);
  if (e1 <= e0) e1 = e0 + 1;
  *lo = std::pow(10, e0);
  *hi = std::pow(10, e1);
  const int decades = e1 - e0, every = (decades + 7) / 8;
  for (int e = e0; e <= e1; ++e) {
    const double d = std::pow(10, e);
    if ((e - e0) % every == 0) ticks->push_back(Tick{d, format_value(d), true});
    if (e == e1 || decades > 6) continue;
    for (int m = 2; m <= 9; ++m) {
      const bool label = decades <= 2 && (m == 2 || m == 5);
      ticks->push_back(Tick{m * d, label ? format_value(m * d) : "", false});
    }
  }
}

int max_label_width(const std::vector<Tick>& ticks) {
  int w = 0;
  for (const Tick& t : ticks) w = std::max(w, Canvas::text_width(t.label));
  return w;
}

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

int plan_chart(const LineChart& c, Plan* p, std::string* err) {
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

  const int th = Canvas::text_height();
  const int left =
      kPad + (c.y_label.empty() ? 0 : th + 8) + max_label_width(p->y_ticks) + kTickGap + kTickLen;
  const int top = kPad + (c.title.empty() ? 4 : Canvas::text_height(kTitleScale) + 10);
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
    if (!s.name.empty()) widest = std::max(widest, Canvas::text_width(s.name)), ++rows;
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
  return 0;
}

void marker(Canvas* cv, size_t shape, int x, int y, Rgb c) {
  switch (shape % 4) {
    case 0:
      cv->fill_circle(x, y, 3, c);
      break;
    case 1:
      cv->fill_rect(x - 3, y - 3, 7, 7, c);
      break;
    case 2:  // diamond
      for (int dy = -4; dy <= 4; ++dy)
        cv->fill_rect(x - (4 - std::abs(dy)), y + dy, 9 - 2 * std::abs(dy), 1, c);
      break;
    default:  // triangle, point up
      for (int dy = -4; dy <= 3; ++dy) {
        const int half = (dy + 4) * 4 / 7;
        cv->fill_rect(x - half, y + dy, 2 * half + 1, 1, c);
      }
      break;
  }
}

int round_px(double v) { return static_cast<int>(std::lround(v)); }

void draw(const LineChart& c, const Plan& p, Image* img) {
  const ChartGeometry& g = p.g;
  Canvas cv(img);
  const Rect& a = g.plot;
  const Rect inner{a.x + 1, a.y + 1, a.w - 2, a.h - 2};
  const int th = Canvas::text_height();

  // x tick labels go under every n-th tick when they would collide; only
  // those ticks get a grid line.
  double min_gap = INFINITY;
  for (size_t i = 1; i < p.x_ticks.size(); ++i)
    min_gap = std::min(min_gap, std::fabs(g.px(p.x_ticks[i].v) - g.px(p.x_ticks[i - 1].v)));
  const int need = max_label_width(p.x_ticks) + 8;
  const size_t every =
      min_gap >= need ? 1 : static_cast<size_t>(std::ceil(need / std::max(min_gap, 1.0)));

  // Grid: minor lines, then major ones over them.
  cv.set_clip(inner);
  for (int pass = 0; pass < 2; ++pass) {
    const bool major = pass == 1;
    for (const Tick& t : p.y_ticks)
      if (t.major == major) {
        const int row = round_px(g.py(t.v));
        cv.line(a.x, row, a.x + a.w - 1, row, major ? kGrid : kGridMinor);
      }
    for (size_t i = 0; i < p.x_ticks.size(); i += every)
      if (p.x_ticks[i].major == major) {
        const int col = round_px(g.px(p.x_ticks[i].v));
        cv.line(col, a.y, col, a.y + a.h - 1, major ? kGrid : kGridMinor);
      }
  }
  cv.reset_clip();
  cv.stroke_rect(a.x, a.y, a.w, a.h, kAxis);

  // y ticks: labels right-aligned, their capitals centred on the tick.
  for (const Tick& t : p.y_ticks) {
    const int row = round_px(g.py(t.v)), len = t.major ? kTickLen : kMinorTickLen;
    cv.line(a.x - len, row, a.x - 1, row, kAxis);
    if (!t.label.empty())
      cv.text(a.x - kTickLen - kTickGap, row - 3, t.label, kText, 1, Align::kRight);
  }
  // x ticks: labels centred under them.
  const int label_top = a.y + a.h + kTickLen + kTickGap;
  for (size_t i = 0; i < p.x_ticks.size(); ++i) {
    const int col = round_px(g.px(p.x_ticks[i].v));
    cv.line(col, a.y + a.h, col, a.y + a.h + kTickLen - 1, kAxis);
    if (i % every == 0) cv.text(col, label_top, p.x_ticks[i].label, kText, 1, Align::kCentre);
  }

  // Series: every line, then every marker, so no line hides a marker.
  cv.set_clip(inner);
  for (size_t i = 0; i < p.points.size(); ++i)
    for (size_t k = 1; k < p.points[i].size(); ++k)
      cv.line(g.px(p.points[i][k - 1].first), g.py(p.points[i][k - 1].second),
              g.px(p.points[i][k].first), g.py(p.points[i][k].second), series_colour(i),
              kLineWidth);
  for (size_t i = 0; i < p.points.size(); ++i)
    for (const auto& [x, y] : p.points[i])
      marker(&cv, i, round_px(g.px(x)), round_px(g.py(y)), series_colour(i));
  cv.reset_clip();

  // Legend.
  if (g.legend.w > 0) {
    const Rect& l = g.legend;
    cv.fill_rect(l.x, l.y, l.w, l.h, kWhite);
    cv.stroke_rect(l.x, l.y, l.w, l.h, kLegendBorder);
    int row = 0;
    for (size_t i = 0; i < c.series.size(); ++i) {
      if (c.series[i].name.empty()) continue;
      const int cy = l.y + 12 + row++ * kLegendRow, sx = l.x + 8;
      cv.line(sx, cy, sx + kLegendSwatch - 1, cy, series_colour(i), kLineWidth);
      marker(&cv, i, sx + kLegendSwatch / 2, cy, series_colour(i));
      cv.text(sx + kLegendSwatch + 6, cy - 3, c.series[i].name, kText);
    }
  }

  cv.text(static_cast<int>(c.width) / 2, kPad, c.title, kText, kTitleScale, Align::kCentre);
  cv.text(a.x + a.w / 2, static_cast<int>(c.height) - kPad - th, c.x_label, kText, 1,
          Align::kCentre);
  cv.text_vertical(kPad, a.y + a.h / 2, c.y_label, kText, 1, Align::kCentre);
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
  Plan p;
  if (int rc = plan_chart(c, &p, err); rc < 0) return rc;
  *g = p.g;
  return 0;
}

int render(const LineChart& c, Image* img, std::string* err) {
  Plan p;
  if (int rc = plan_chart(c, &p, err); rc < 0) return rc;
  Image out(c.width, c.height, kWhite);
  draw(c, p, &out);
  *img = std::move(out);
  return 0;
}

int render_png(const LineChart& c, const std::string& path, std::string* err) {
  Image img;
  if (int rc = render(c, &img, err); rc < 0) return rc;
  return write_png(path, img, err);
}

}  // namespace mtier::plot
