// SPDX-License-Identifier: Apache-2.0
// Heat maps: plan_heatmap lays the chart out (margins sized from the text
// they hold, the spans of pixels each run of cells covers, the ticks of both
// axes and of the colour bar, band labels and separators); write_heatmap
// draws that plan through cairo, into whichever file format (draw.h).
//
// Cells tile the plot's inside exactly: along an axis of P pixels and n cells,
// cell i covers pixels [ceil(i * P / n), ceil((i + 1) * P / n)) when n <= P
// (at least one each), and when n > P pixel p shows cells
// [floor(p * n / P), floor((p + 1) * n / P)), the hottest of them, so a short
// burst in one column still shows however many columns share its pixel.
#include "plot/heatmap_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "plot/draw.h"
#include "plot/plan.h"

namespace mtier::plot {
namespace {

constexpr int kBarGap = 16;       // plot frame to the colour bar's frame, at least
constexpr int kMinPlotSide = 16;  // the plot's frame, at least, a side

// ceil(a / b) for b > 0.
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The first and last pixel (0-based along an axis of `pixels`) that show cell i
// of n: see the file comment. When n > pixels both are the one pixel it shares.
int span_last(uint64_t i, uint64_t n, uint64_t pixels) {
  return static_cast<int>(ceil_div((i + 1) * pixels, n) - 1);
}
int span_first(uint64_t i, uint64_t n, uint64_t pixels) {
  return std::min(static_cast<int>(ceil_div(i * pixels, n)), span_last(i, n, pixels));
}

std::vector<CellSpan> spans(unsigned n, int pixels) {
  std::vector<CellSpan> out;
  const uint64_t p = static_cast<uint64_t>(pixels);
  if (n <= p) {
    out.reserve(n);
    for (unsigned i = 0; i < n; ++i)
      out.push_back(CellSpan{span_first(i, n, p), span_last(i, n, p) + 1, i, i + 1});
  } else {
    out.reserve(p);
    for (uint64_t q = 0; q < p; ++q)
      out.push_back(CellSpan{static_cast<int>(q), static_cast<int>(q + 1),
                             static_cast<unsigned>(q * n / p),
                             static_cast<unsigned>((q + 1) * n / p)});
  }
  return out;
}

bool has_value(double v) { return std::isfinite(v) && v >= 0; }

// Ticks of [lo, hi] that lie inside it: the axis spans exactly the data range
// the cells cover, so the widened nice range cannot be used.
bool inner_ticks(double lo, double hi, int target, std::vector<Tick>* ticks) {
  double a = lo, b = hi;
  std::vector<Tick> all;
  if (!linear_ticks(&a, &b, target, &all)) return false;
  const double eps = (hi - lo) * 1e-9;
  for (Tick& t : all)
    if (t.v >= lo - eps && t.v <= hi + eps) ticks->push_back(std::move(t));
  return true;
}

// The colour bar's scale, 0..v_max: 3 to 5 values where possible. A log
// scale names the decades (0, 1, 10, 100, ...; every n-th when there are
// many) when there are at least two of them; otherwise nice linear values
// (placed on the bar by where their colour is).
std::vector<Tick> colour_ticks(bool log_colour, double v_max) {
  std::vector<Tick> out;
  if (log_colour && v_max >= 10) {
    const int top = static_cast<int>(std::floor(std::log10(v_max) + 1e-12));
    const int every = (top + 4) / 4;  // at most 4 decades besides 0
    out.push_back(Tick{0, "0", true});
    std::vector<Tick> decades;
    for (int e = top; e >= 0; e -= every) {
      const double d = std::pow(10, e);
      decades.push_back(Tick{d, format_value(d), true});
    }
    out.insert(out.end(), decades.rbegin(), decades.rend());
    return out;
  }
  for (int target : {4, 3, 5, 2, 6}) {
    std::vector<Tick> t;
    if (!inner_ticks(0, v_max, target, &t)) break;
    if (out.empty() || (t.size() >= 3 && t.size() <= 5)) out = std::move(t);
    if (out.size() >= 3 && out.size() <= 5) break;
  }
  if (out.size() < 2) out = {Tick{0, "0", true}, Tick{v_max, format_value(v_max), true}};
  return out;
}

// Drops labels that would overlap the previous one kept: `pos` gives each a
// pixel position along the axis, in the order given.
template <typename T, typename Pos>
void thin(std::vector<T>* v, Pos pos, int spacing) {
  std::vector<T> kept;
  for (T& t : *v)
    if (kept.empty() || std::abs(pos(t) - pos(kept.back())) >= spacing)
      kept.push_back(std::move(t));
  *v = std::move(kept);
}

std::string size_text(const HeatmapChart& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height);
}

// The heat ramp as key colours; between two keys every channel moves
// linearly in k = 0..N steps, N the largest channel change. Luminance rises
// with k on every segment: where a channel falls (blue, from blue to red) it
// falls by exactly one per step while red rises by one, and red weighs more
// in luminance (Rec. 709: 0.2126 against 0.0722).
struct Key {
  double at;
  int r, g, b;
};
constexpr Key kRamp[] = {
    {0.00, 0, 0, 0},     {0.22, 0, 0, 200},   {0.45, 200, 0, 0},
    {0.65, 255, 110, 0}, {0.83, 255, 255, 0}, {1.00, 255, 255, 255},
};

}  // namespace

Rgb heat_colour(double frac) {
  if (!(frac > 0)) frac = 0;  // NaN too
  if (frac > 1) frac = 1;
  size_t i = 1;
  while (i + 1 < std::size(kRamp) && frac > kRamp[i].at) ++i;
  const Key& a = kRamp[i - 1];
  const Key& b = kRamp[i];
  const int n = std::max({std::abs(b.r - a.r), std::abs(b.g - a.g), std::abs(b.b - a.b), 1});
  const int k = static_cast<int>(std::lround((frac - a.at) / (b.at - a.at) * n));
  // Integer division truncates towards zero: each channel moves monotonically in k.
  return Rgb{static_cast<uint8_t>(a.r + (b.r - a.r) * k / n),
             static_cast<uint8_t>(a.g + (b.g - a.g) * k / n),
             static_cast<uint8_t>(a.b + (b.b - a.b) * k / n)};
}

std::vector<double> heat_ramp_stops() {
  std::vector<double> out;
  for (const Key& k : kRamp) out.push_back(k.at);
  return out;
}

int HeatmapGeometry::cell_x(const HeatmapChart& c, unsigned col) const {
  const int w = plot.w - 2;
  if (col >= c.cols || w <= 0) return -1;
  return plot.x + 1 + (span_first(col, c.cols, w) + span_last(col, c.cols, w)) / 2;
}

int HeatmapGeometry::cell_y(const HeatmapChart& c, unsigned row) const {
  const int h = plot.h - 2;
  if (row >= c.rows || h <= 0) return -1;
  return plot.y + plot.h - 2 - (span_first(row, c.rows, h) + span_last(row, c.rows, h)) / 2;
}

int HeatmapPlan::x_col(double x) const {
  const double f = (x - x_lo) / (x_hi - x_lo);
  return std::clamp(static_cast<int>(std::floor(inner.x + f * inner.w)), inner.x,
                    inner.x + inner.w - 1);
}

int HeatmapPlan::y_row(double y) const {
  const double f = (y - y_lo) / (y_hi - y_lo);
  return std::clamp(static_cast<int>(std::floor(inner.y + (1 - f) * inner.h)), inner.y,
                    inner.y + inner.h - 1);
}

double HeatmapPlan::frac(double v) const {
  if (!(v > 0)) return 0;
  const double f = log_colour ? std::log1p(v) / std::log1p(g.v_max) : v / g.v_max;
  return std::min(f, 1.0);
}

int HeatmapPlan::bar_row(double v) const {
  const Rect& b = g.colour_bar;
  return b.y + b.h - 1 - static_cast<int>(std::lround(frac(v) * (b.h - 1)));
}

Rgb block_colour(const HeatmapChart& c, const HeatmapPlan& p, const CellSpan& x,
                 const CellSpan& y) {
  double best = -1;
  for (unsigned r = y.lo; r < y.hi; ++r) {
    const double* row = &c.values[static_cast<size_t>(r) * c.cols];
    for (unsigned k = x.lo; k < x.hi; ++k)
      if (has_value(row[k])) best = std::max(best, row[k]);
  }
  return best < 0 ? kNoData : heat_colour(p.frac(best));
}

int plan_heatmap(const HeatmapChart& c, HeatmapPlan* p, std::string* err) {
  if (c.width < kMinSide || c.height < kMinSide || c.width > kMaxSide || c.height > kMaxSide)
    return fail(err, "heat map size " + size_text(c) + " is outside " + std::to_string(kMinSide) +
                         ".." + std::to_string(kMaxSide) + " a side");
  if (c.rows == 0 || c.cols == 0)
    return fail(err, "heat map has no cells (" + std::to_string(c.rows) + " rows, " +
                         std::to_string(c.cols) + " columns)");
  if (c.values.size() != uint64_t{c.rows} * c.cols)
    return fail(err, "heat map has " + std::to_string(c.values.size()) + " values for " +
                         std::to_string(c.rows) + " x " + std::to_string(c.cols) + " cells");
  if (!std::isfinite(c.x_lo) || !std::isfinite(c.x_hi) || !(c.x_lo < c.x_hi) ||
      !std::isfinite(c.x_hi - c.x_lo))
    return fail(err, "heat map's x range is empty or not finite");
  if (!std::isfinite(c.y_lo) || !std::isfinite(c.y_hi) || !(c.y_lo < c.y_hi) ||
      !std::isfinite(c.y_hi - c.y_lo))
    return fail(err, "heat map's y range is empty or not finite");
  std::vector<const HeatmapBand*> bands;
  for (const HeatmapBand& b : c.bands) {
    if (b.rows == 0 || uint64_t{b.first_row} + b.rows > c.rows)
      return fail(err, "heat map band \"" + b.label + "\" (rows " + std::to_string(b.first_row) +
                           " + " + std::to_string(b.rows) + ") is empty or beyond the " +
                           std::to_string(c.rows) + " rows");
    bands.push_back(&b);
  }
  std::stable_sort(bands.begin(), bands.end(), [](const HeatmapBand* a, const HeatmapBand* b) {
    return a->first_row < b->first_row;
  });
  for (size_t i = 1; i < bands.size(); ++i)
    if (bands[i]->first_row < bands[i - 1]->first_row + bands[i - 1]->rows)
      return fail(err, "heat map bands \"" + bands[i - 1]->label + "\" and \"" + bands[i]->label +
                           "\" overlap");

  *p = HeatmapPlan{};
  HeatmapGeometry& g = p->g;
  p->x_lo = c.x_lo, p->x_hi = c.x_hi, p->y_lo = c.y_lo, p->y_hi = c.y_hi;
  p->log_colour = c.log_colour;
  for (double v : c.values)
    if (has_value(v)) g.v_max = std::max(g.v_max, v);
  // Nothing above 0: every value is the coldest colour; the scale reads 0..1.
  if (!(g.v_max > 0)) g.v_max = 1;

  const int th = text_height();
  const int width = static_cast<int>(c.width), height = static_cast<int>(c.height);
  const int top = kPad + (c.title.empty() ? 4 : text_height(kTitleFont) + 10);
  // One past the frame's bottom row: below it the ticks, their labels, the x label.
  const int bottom = height - kPad - (c.x_label.empty() ? 0 : th + 6) - th - kTickGap - kTickLen;
  const int inner_h = bottom - top - 2;
  if (inner_h < kMinPlotSide)
    return fail(err, "heat map is too small for its labels (" + size_text(c) + ")");

  // The y axis: numbers, or the bands' names.
  int y_text = 0;
  if (bands.empty()) {
    const int target = std::clamp(inner_h / 60, 2, 6);
    if (!inner_ticks(c.y_lo, c.y_hi, target, &p->y_ticks))
      return fail(err, "heat map's y range is too large to draw");
    y_text = max_label_width(p->y_ticks);
  } else {
    for (const HeatmapBand* b : bands) y_text = std::max(y_text, text_width(b->label));
  }
  const int left = kPad + (c.y_label.empty() ? 0 : th + 8) + y_text + kTickGap + kTickLen;

  // The colour bar's column, from the right edge inwards: its label, its
  // scale's labels and ticks, its frame, then the ramp.
  p->bar_ticks = colour_ticks(c.log_colour, g.v_max);
  p->colour_label_x = width - kPad - th;
  const int scale = max_label_width(p->bar_ticks) + kTickGap + kTickLen + 1;
  const int bar_left = width - kPad - (c.colour_label.empty() ? 0 : th + 8) - scale - kBarWidth;

  // The x axis: its labels may hang half their width past the plot's right edge.
  const int target = std::clamp((bar_left - 1 - kBarGap - left) / 90, 3, 10);
  if (!inner_ticks(c.x_lo, c.x_hi, target, &p->x_ticks))
    return fail(err, "heat map's x range is too large to draw");
  const int gap = std::max(kBarGap, max_label_width(p->x_ticks) / 2 + 6);
  const int right = bar_left - 1 - gap;  // one past the frame

  g.plot = Rect{left, top, right - left, bottom - top};
  if (g.plot.w < kMinPlotSide || g.plot.h < kMinPlotSide)
    return fail(err, "heat map is too small for its labels (" + size_text(c) + ")");
  p->inner = Rect{g.plot.x + 1, g.plot.y + 1, g.plot.w - 2, g.plot.h - 2};
  g.colour_bar = Rect{bar_left, p->inner.y, kBarWidth, p->inner.h};
  p->xs = spans(c.cols, p->inner.w);
  p->ys = spans(c.rows, p->inner.h);
  p->x_label_every = label_every(p->x_ticks, [p](double x) { return p->x_col(x); });
  const auto bar_row = [p](const Tick& t) { return p->bar_row(t.v); };
  thin(&p->bar_ticks, bar_row, th + 1);

  // Bands: a label at each one's middle, a separator at each inner edge.
  const uint64_t h = static_cast<uint64_t>(p->inner.h);
  const int base = p->inner.y + p->inner.h - 1;  // the image row of pixel 0 from the bottom
  p->separator_lines = true;
  for (const HeatmapBand* b : bands) {
    const int lo = span_first(b->first_row, c.rows, h);
    const int hi = span_last(b->first_row + b->rows - 1, c.rows, h);
    if (hi - lo + 1 < kMinBandLine) p->separator_lines = false;
    p->band_labels.push_back(BandLabel{base - (lo + hi) / 2, b->label});
    for (unsigned edge : {b->first_row, b->first_row + b->rows})
      if (edge > 0 && edge < c.rows) p->separators.push_back(base - span_first(edge, c.rows, h));
  }
  const auto label_row = [](const BandLabel& l) { return l.row; };
  thin(&p->band_labels, label_row, th + 1);
  std::sort(p->separators.begin(), p->separators.end());
  p->separators.erase(std::unique(p->separators.begin(), p->separators.end()), p->separators.end());
  return 0;
}

int heatmap_geometry(const HeatmapChart& c, HeatmapGeometry* g, std::string* err) {
  HeatmapPlan p;
  if (int rc = plan_heatmap(c, &p, err); rc < 0) return rc;
  *g = p.g;
  return 0;
}

namespace {

void draw(cairo_t* cr, const HeatmapChart& c, const HeatmapPlan& p) {
  const Rect& a = p.g.plot;
  const Rect& in = p.inner;
  const Rect& bar = p.g.colour_bar;

  // Cells: a rectangle per run of equal colour along each row of spans, on
  // whole pixels, so neighbours meet without seams.
  std::vector<Rgb> colours(p.xs.size());
  for (const CellSpan& y : p.ys) {
    for (size_t i = 0; i < p.xs.size(); ++i) colours[i] = block_colour(c, p, p.xs[i], y);
    for (size_t i = 0; i < p.xs.size();) {
      size_t j = i + 1;
      while (j < p.xs.size() && colours[j] == colours[i]) ++j;
      fill_rect(cr, in.x + p.xs[i].px0, in.y + in.h - y.px1, p.xs[j - 1].px1 - p.xs[i].px0,
                y.px1 - y.px0, colours[i]);
      i = j;
    }
  }
  // Separators: black dashes on white, seen on any heat; a tick outside.
  for (int row : p.separators) {
    if (p.separator_lines) {
      hline(cr, in.x, in.x + in.w - 1, row, kWhite);
      for (int x = in.x; x < in.x + in.w; x += 8)
        hline(cr, x, std::min(x + 3, in.x + in.w - 1), row, kBlack);
    }
    hline(cr, a.x - kTickLen, a.x - 1, row, kAxis);
  }
  stroke_rect(cr, a, kAxis);

  const double label_right = a.x - kTickLen - kTickGap;
  for (const Tick& t : p.y_ticks) {
    const int row = p.y_row(t.v);
    hline(cr, a.x - kTickLen, a.x - 1, row, kAxis);
    text(cr, label_right, row + 0.5, t.label, kText, kLabelFont, Align::kRight, VAlign::kMiddle);
  }
  for (const BandLabel& l : p.band_labels)
    text(cr, label_right, l.row + 0.5, l.label, kText, kLabelFont, Align::kRight, VAlign::kMiddle);
  const int label_top = a.y + a.h + kTickLen + kTickGap;
  for (size_t i = 0; i < p.x_ticks.size(); ++i) {
    const int col = p.x_col(p.x_ticks[i].v);
    vline(cr, col, a.y + a.h, a.y + a.h + kTickLen - 1, kAxis);
    if (i % p.x_label_every == 0)
      text(cr, col + 0.5, label_top, p.x_ticks[i].label, kText, kLabelFont, Align::kCentre);
  }

  // The colour bar: the ramp from 0 at the bottom row's centre to v_max at
  // the top row's, a linear gradient through the ramp's bends (where it is
  // piecewise linear), framed, its scale on the right.
  cairo_pattern_t* ramp = cairo_pattern_create_linear(0, bar.y + bar.h - 0.5, 0, bar.y + 0.5);
  for (double f : heat_ramp_stops()) {
    const Rgb k = heat_colour(f);
    cairo_pattern_add_color_stop_rgb(ramp, f, k.r / 255.0, k.g / 255.0, k.b / 255.0);
  }
  cairo_set_source(cr, ramp);
  cairo_rectangle(cr, bar.x, bar.y, bar.w, bar.h);
  cairo_fill(cr);
  cairo_pattern_destroy(ramp);
  stroke_rect(cr, Rect{bar.x - 1, bar.y - 1, bar.w + 2, bar.h + 2}, kAxis);
  const int tick_x = bar.x + bar.w + 1;
  for (const Tick& t : p.bar_ticks) {
    const int row = p.bar_row(t.v);
    hline(cr, tick_x, tick_x + kTickLen - 1, row, kAxis);
    text(cr, tick_x + kTickLen + kTickGap, row + 0.5, t.label, kText, kLabelFont, Align::kLeft,
         VAlign::kMiddle);
  }

  text(cr, c.width / 2.0, kPad, c.title, kText, kTitleFont, Align::kCentre);
  text(cr, a.x + a.w / 2.0, static_cast<int>(c.height) - kPad - text_height(), c.x_label, kText,
       kLabelFont, Align::kCentre);
  text_vertical(cr, kPad, a.y + a.h / 2.0, c.y_label, kText);
  text_vertical(cr, p.colour_label_x, bar.y + bar.h / 2.0, c.colour_label, kText);
}

}  // namespace

int write_heatmap(const HeatmapChart& c, const std::string& path, std::string* err) {
  HeatmapPlan p;
  if (int rc = plan_heatmap(c, &p, err); rc < 0) return rc;
  return write_chart(path, c.width, c.height, c.title, [&](cairo_t* cr) { draw(cr, c, p); }, err);
}

}  // namespace mtier::plot
