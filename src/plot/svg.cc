// SVG output, written as text: the same plans (plan.h) the PNG renderers draw,
// in the same pixel coordinates, so an SVG chart is its PNG twin drawn with
// vector shapes and real text. A pixel (x, y) of the PNG is the unit square
// from (x, y) in the SVG, so 1-pixel lines run through pixel centres (+ 0.5).
// Text uses a 10 px monospace font, whose advance (0.6 em) is the bitmap
// font's 6 px, so the margins sized with the bitmap font fit it too.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "plot/font.h"
#include "plot/heatmap_chart.h"
#include "plot/plan.h"
#include "plot/png.h"

namespace mtier::plot {
namespace {

constexpr int kFontSize = 10;

// Appends s as XML character data: markup characters escaped; bytes that are
// not valid UTF-8 or are control characters XML forbids become '?', as the
// bitmap font draws them, so any byte string gives a well-formed document.
void escape(std::string* out, std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&':
          *out += "&amp;";
          break;
        case '<':
          *out += "&lt;";
          break;
        case '>':
          *out += "&gt;";
          break;
        case '"':
          *out += "&quot;";
          break;
        case '\'':
          *out += "&apos;";
          break;
        default:
          *out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: its length from the lead byte, and the range
    // its second byte may take (excluding overlong forms and surrogates).
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = k == 1 ? (d >= lo && d <= hi) : (d >= 0x80 && d <= 0xbf);
    }
    if (ok) {
      out->append(s.substr(i, n));
      i += n;
    } else {
      *out += '?';
      ++i;
    }
  }
}

// A number as SVG wants it: locale-independent, at most two decimals, no
// trailing zeros.
std::string num(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 2);
  if (ec != std::errc()) return "0";
  std::string s(buf, end);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

// The document's start: size, font, title (also as <title>, which viewers
// show as the document's name), and a white background.
void open_svg(std::string* o, unsigned w, unsigned h, const std::string& title) {
  const std::string ws = std::to_string(w), hs = std::to_string(h);
  *o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  *o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + ws + "\" height=\"" + hs +
        "\" viewBox=\"0 0 " + ws + " " + hs + "\" font-family=\"monospace\" font-size=\"" +
        std::to_string(kFontSize) + "\">\n<title>";
  escape(o, title);
  *o += "</title>\n<rect width=\"" + ws + "\" height=\"" + hs + "\" fill=\"#ffffff\"/>\n";
}

// Text whose top edge is row y, as Canvas::text places it: SVG places text by
// its baseline, the font's ascent below the top.
void text(std::string* o, double x, int y, std::string_view s, int scale = 1,
          Align align = Align::kLeft) {
  if (s.empty()) return;
  const char* anchor = align == Align::kLeft ? "start" : align == Align::kCentre ? "middle" : "end";
  // Anchored at the pixel's centre (kCentre) or far edge (kRight), as Canvas aligns ink.
  if (align != Align::kLeft) x += align == Align::kCentre ? 0.5 : 1;
  *o += "<text x=\"" + num(x) + "\" y=\"" + std::to_string(y + font::kAscent * scale) + "\"";
  if (align != Align::kLeft) *o += std::string(" text-anchor=\"") + anchor + "\"";
  if (scale != 1) *o += " font-size=\"" + std::to_string(kFontSize * scale) + "\"";
  *o += " fill=\"" + hex(kText) + "\">";
  escape(o, s);
  *o += "</text>\n";
}

// Text read bottom to top, centred on row y, its tops at column x, as
// Canvas::text_vertical(x, y, s, ..., Align::kCentre) places it.
void text_vertical(std::string* o, int x, int y, std::string_view s) {
  if (s.empty()) return;
  *o += "<text transform=\"translate(" + std::to_string(x + font::kAscent) + " " + num(y + 0.5) +
        ") rotate(-90)\" text-anchor=\"middle\" fill=\"" + hex(kText) + "\">";
  escape(o, s);
  *o += "</text>\n";
}

// A 1-pixel outline just inside the rectangle, as Canvas::stroke_rect.
void stroke_rect(std::string* o, const Rect& r, Rgb c) {
  *o += "<rect x=\"" + num(r.x + 0.5) + "\" y=\"" + num(r.y + 0.5) + "\" width=\"" +
        std::to_string(r.w - 1) + "\" height=\"" + std::to_string(r.h - 1) +
        "\" fill=\"none\" stroke=\"" + hex(c) + "\"/>\n";
}

// Path data for a horizontal or vertical 1-pixel line over pixels
// [x0, x1] x [y0, y1] (one of the ranges a single pixel).
std::string segment(int x0, int y0, int x1, int y1) {
  if (y0 == y1)
    return "M" + std::to_string(x0) + " " + num(y0 + 0.5) + "H" + std::to_string(x1 + 1);
  return "M" + num(x0 + 0.5) + " " + std::to_string(y0) + "V" + std::to_string(y1 + 1);
}

void path(std::string* o, const std::string& d, Rgb c, const char* extra = "") {
  if (d.empty()) return;
  *o += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + hex(c) + "\"" + extra + "/>\n";
}

// A series marker as line_chart.cc's marker() draws it, centred on pixel (x, y).
void marker(std::string* o, size_t shape, int x, int y, Rgb c) {
  const double cx = x + 0.5, cy = y + 0.5;
  const std::string fill = "\" fill=\"" + hex(c) + "\"/>\n";
  switch (shape % 4) {
    case 0:
      *o += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"3.5" + fill;
      break;
    case 1:
      *o += "<rect x=\"" + std::to_string(x - 3) + "\" y=\"" + std::to_string(y - 3) +
            "\" width=\"7\" height=\"7" + fill;
      break;
    case 2:
      *o += "<polygon points=\"" + num(cx) + "," + num(cy - 4.5) + " " + num(cx + 4.5) + "," +
            num(cy) + " " + num(cx) + "," + num(cy + 4.5) + " " + num(cx - 4.5) + "," + num(cy) +
            fill;
      break;
    default:
      *o += "<polygon points=\"" + num(cx) + "," + num(cy - 4.5) + " " + num(cx + 4.5) + "," +
            num(cy + 3.5) + " " + num(cx - 4.5) + "," + num(cy + 3.5) + fill;
      break;
  }
}

int round_px(double v) { return static_cast<int>(std::lround(v)); }

}  // namespace

int heatmap_svg(const HeatmapChart& c, std::string* svg, std::string* err) {
  HeatmapPlan p;
  if (int rc = plan_heatmap(c, &p, err); rc < 0) return rc;
  const Rect& a = p.g.plot;
  const Rect& in = p.inner;
  const Rect& bar = p.g.colour_bar;
  std::string o;
  open_svg(&o, c.width, c.height, c.title);

  o += "<defs><linearGradient id=\"mtier-heat\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (double f : heat_ramp_stops())
    o += "<stop offset=\"" + num(f) + "\" stop-color=\"" + hex(heat_colour(f)) + "\"/>\n";
  o += "</linearGradient></defs>\n";

  // Cells: a rect per run of equal colour along each row of spans. crispEdges
  // keeps neighbours from showing anti-aliased seams.
  o += "<g shape-rendering=\"crispEdges\">\n";
  std::vector<Rgb> colours(p.xs.size());
  for (const CellSpan& y : p.ys) {
    for (size_t i = 0; i < p.xs.size(); ++i) colours[i] = block_colour(c, p, p.xs[i], y);
    const std::string ys = "\" y=\"" + std::to_string(in.y + in.h - y.px1) + "\" height=\"" +
                           std::to_string(y.px1 - y.px0);
    for (size_t i = 0; i < p.xs.size();) {
      size_t j = i + 1;
      while (j < p.xs.size() && colours[j] == colours[i]) ++j;
      o += "<rect x=\"" + std::to_string(in.x + p.xs[i].px0) + ys + "\" width=\"" +
           std::to_string(p.xs[j - 1].px1 - p.xs[i].px0) + "\" fill=\"" + hex(colours[i]) +
           "\"/>\n";
      i = j;
    }
  }
  o += "</g>\n";

  // Separators (black dashes on white) and the axes, as draw() in heatmap_chart.cc.
  std::string seps, ticks;
  for (int row : p.separators) {
    if (p.separator_lines) seps += segment(in.x, row, in.x + in.w - 1, row);
    ticks += segment(a.x - kTickLen, row, a.x - 1, row);
  }
  path(&o, seps, kWhite);
  path(&o, seps, kBlack, " stroke-dasharray=\"4 4\"");
  stroke_rect(&o, a, kAxis);
  for (const Tick& t : p.y_ticks) {
    const int row = p.y_row(t.v);
    ticks += segment(a.x - kTickLen, row, a.x - 1, row);
    text(&o, a.x - kTickLen - kTickGap, row - 3, t.label, 1, Align::kRight);
  }
  for (const BandLabel& l : p.band_labels)
    text(&o, a.x - kTickLen - kTickGap, l.row - 3, l.label, 1, Align::kRight);
  const int label_top = a.y + a.h + kTickLen + kTickGap;
  for (size_t i = 0; i < p.x_ticks.size(); ++i) {
    const int col = p.x_col(p.x_ticks[i].v);
    ticks += segment(col, a.y + a.h, col, a.y + a.h + kTickLen - 1);
    if (i % p.x_label_every == 0) text(&o, col, label_top, p.x_ticks[i].label, 1, Align::kCentre);
  }

  // The colour bar.
  o += "<rect x=\"" + std::to_string(bar.x) + "\" y=\"" + std::to_string(bar.y) + "\" width=\"" +
       std::to_string(bar.w) + "\" height=\"" + std::to_string(bar.h) +
       "\" fill=\"url(#mtier-heat)\"/>\n";
  stroke_rect(&o, Rect{bar.x - 1, bar.y - 1, bar.w + 2, bar.h + 2}, kAxis);
  const int tick_x = bar.x + bar.w + 1;
  for (const Tick& t : p.bar_ticks) {
    const int row = p.bar_row(t.v);
    ticks += segment(tick_x, row, tick_x + kTickLen - 1, row);
    text(&o, tick_x + kTickLen + kTickGap, row - 3, t.label);
  }
  path(&o, ticks, kAxis);

  text(&o, static_cast<int>(c.width) / 2, kPad, c.title, kTitleScale, Align::kCentre);
  text(&o, a.x + a.w / 2, static_cast<int>(c.height) - kPad - Canvas::text_height(), c.x_label, 1,
       Align::kCentre);
  text_vertical(&o, kPad, a.y + a.h / 2, c.y_label);
  text_vertical(&o, p.colour_label_x, bar.y + bar.h / 2, c.colour_label);
  o += "</svg>\n";
  *svg = std::move(o);
  return 0;
}

int render_heatmap_svg(const HeatmapChart& c, const std::string& path, std::string* err) {
  std::string svg;
  if (int rc = heatmap_svg(c, &svg, err); rc < 0) return rc;
  return write_file_replacing(path, svg, err);
}

int line_chart_svg(const LineChart& c, std::string* svg, std::string* err) {
  LinePlan p;
  if (int rc = plan_line_chart(c, &p, err); rc < 0) return rc;
  const ChartGeometry& g = p.g;
  const Rect& a = g.plot;
  const Rect inner{a.x + 1, a.y + 1, a.w - 2, a.h - 2};
  std::string o;
  open_svg(&o, c.width, c.height, c.title);
  o += "<defs><clipPath id=\"mtier-plot\"><rect x=\"" + std::to_string(inner.x) + "\" y=\"" +
       std::to_string(inner.y) + "\" width=\"" + std::to_string(inner.w) + "\" height=\"" +
       std::to_string(inner.h) + "\"/></clipPath></defs>\n";

  // Grid: minor lines, then major ones over them (every n-th x tick's only).
  for (int pass = 0; pass < 2; ++pass) {
    const bool major = pass == 1;
    std::string d;
    for (const Tick& t : p.y_ticks)
      if (t.major == major) {
        const int row = round_px(g.py(t.v));
        if (row > a.y && row < a.y + a.h - 1)
          d += segment(inner.x, row, inner.x + inner.w - 1, row);
      }
    for (size_t i = 0; i < p.x_ticks.size(); i += p.x_label_every)
      if (p.x_ticks[i].major == major) {
        const int col = round_px(g.px(p.x_ticks[i].v));
        if (col > a.x && col < a.x + a.w - 1)
          d += segment(col, inner.y, col, inner.y + inner.h - 1);
      }
    path(&o, d, major ? kGrid : kGridMinor);
  }
  stroke_rect(&o, a, kAxis);

  std::string ticks;
  for (const Tick& t : p.y_ticks) {
    const int row = round_px(g.py(t.v)), len = t.major ? kTickLen : kMinorTickLen;
    ticks += segment(a.x - len, row, a.x - 1, row);
    if (!t.label.empty()) text(&o, a.x - kTickLen - kTickGap, row - 3, t.label, 1, Align::kRight);
  }
  const int label_top = a.y + a.h + kTickLen + kTickGap;
  for (size_t i = 0; i < p.x_ticks.size(); ++i) {
    const int col = round_px(g.px(p.x_ticks[i].v));
    ticks += segment(col, a.y + a.h, col, a.y + a.h + kTickLen - 1);
    if (i % p.x_label_every == 0) text(&o, col, label_top, p.x_ticks[i].label, 1, Align::kCentre);
  }
  path(&o, ticks, kAxis);

  // Series: every line, then every marker, clipped to the plot's inside.
  o += "<g clip-path=\"url(#mtier-plot)\">\n";
  for (size_t i = 0; i < p.points.size(); ++i) {
    if (p.points[i].empty()) continue;
    o += "<polyline points=\"";
    for (size_t k = 0; k < p.points[i].size(); ++k) {
      if (k) o += ' ';
      o += num(g.px(p.points[i][k].first) + 0.5) + "," + num(g.py(p.points[i][k].second) + 0.5);
    }
    o += "\" fill=\"none\" stroke=\"" + hex(series_colour(i)) + "\" stroke-width=\"" +
         std::to_string(kLineWidth) + "\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n";
  }
  for (size_t i = 0; i < p.points.size(); ++i)
    for (const auto& [x, y] : p.points[i])
      marker(&o, i, round_px(g.px(x)), round_px(g.py(y)), series_colour(i));
  o += "</g>\n";

  if (g.legend.w > 0) {
    const Rect& l = g.legend;
    o += "<rect x=\"" + num(l.x + 0.5) + "\" y=\"" + num(l.y + 0.5) + "\" width=\"" +
         std::to_string(l.w - 1) + "\" height=\"" + std::to_string(l.h - 1) +
         "\" fill=\"#ffffff\" stroke=\"" + hex(kLegendBorder) + "\"/>\n";
    int row = 0;
    for (size_t i = 0; i < c.series.size(); ++i) {
      if (c.series[i].name.empty()) continue;
      const int cy = l.y + 12 + row++ * kLegendRow, sx = l.x + 8;
      o += "<path d=\"M" + std::to_string(sx) + " " + std::to_string(cy + 1) + "H" +
           std::to_string(sx + kLegendSwatch) + "\" stroke=\"" + hex(series_colour(i)) +
           "\" stroke-width=\"" + std::to_string(kLineWidth) + "\"/>\n";
      marker(&o, i, sx + kLegendSwatch / 2, cy, series_colour(i));
      text(&o, sx + kLegendSwatch + 6, cy - 3, c.series[i].name);
    }
  }

  text(&o, static_cast<int>(c.width) / 2, kPad, c.title, kTitleScale, Align::kCentre);
  text(&o, a.x + a.w / 2, static_cast<int>(c.height) - kPad - Canvas::text_height(), c.x_label, 1,
       Align::kCentre);
  text_vertical(&o, kPad, a.y + a.h / 2, c.y_label);
  o += "</svg>\n";
  *svg = std::move(o);
  return 0;
}

int render_line_chart_svg(const LineChart& c, const std::string& path, std::string* err) {
  std::string svg;
  if (int rc = line_chart_svg(c, &svg, err); rc < 0) return rc;
  return write_file_replacing(path, svg, err);
}

}  // namespace mtier::plot
