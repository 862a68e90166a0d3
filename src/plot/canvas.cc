// Rasterising: lines are Bresenham walks over the segment after it has been
// clipped (Liang-Barsky) to the clip rectangle widened by the brush, so a
// line that runs far outside the image costs no more than its visible part.
#include "plot/canvas.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "plot/font.h"

namespace mtier::plot {

Image::Image(unsigned w, unsigned h, Rgb fill) : width(w), height(h) {
  rgb.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = fill.r;
    rgb[i + 1] = fill.g;
    rgb[i + 2] = fill.b;
  }
}

Rgb Image::at(unsigned x, unsigned y) const {
  const uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  return Rgb{p[0], p[1], p[2]};
}

void Image::set(unsigned x, unsigned y, Rgb c) {
  uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

Canvas::Canvas(Image* img) : img_(img) { reset_clip(); }

void Canvas::reset_clip() {
  clip_ = Rect{0, 0, static_cast<int>(img_->width), static_cast<int>(img_->height)};
}

void Canvas::set_clip(const Rect& r) {
  int x0 = std::max(r.x, 0), y0 = std::max(r.y, 0);
  int x1 = std::min(r.x + r.w, static_cast<int>(img_->width));
  int y1 = std::min(r.y + r.h, static_cast<int>(img_->height));
  clip_ = Rect{x0, y0, std::max(x1 - x0, 0), std::max(y1 - y0, 0)};
}

void Canvas::set_pixel(int x, int y, Rgb c) {
  if (clip_.contains(x, y)) img_->set(static_cast<unsigned>(x), static_cast<unsigned>(y), c);
}

void Canvas::fill_rect(int x, int y, int w, int h, Rgb c) {
  // Clamp in 64 bits: x + w may overflow int for careless callers.
  long long x0 = std::max<long long>(x, clip_.x), y0 = std::max<long long>(y, clip_.y);
  long long x1 = std::min<long long>(static_cast<long long>(x) + w, clip_.x + clip_.w);
  long long y1 = std::min<long long>(static_cast<long long>(y) + h, clip_.y + clip_.h);
  for (long long py = y0; py < y1; ++py)
    for (long long px = x0; px < x1; ++px)
      img_->set(static_cast<unsigned>(px), static_cast<unsigned>(py), c);
}

void Canvas::stroke_rect(int x, int y, int w, int h, Rgb c) {
  if (w <= 0 || h <= 0) return;
  fill_rect(x, y, w, 1, c);
  fill_rect(x, y + h - 1, w, 1, c);
  fill_rect(x, y, 1, h, c);
  fill_rect(x + w - 1, y, 1, h, c);
}

void Canvas::fill_circle(int cx, int cy, int r, Rgb c) {
  // r * r + r rather than r * r: rounder small discs (no lone pixel at the
  // four extremes).
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx)
      if (dx * dx + dy * dy <= r * r + r) set_pixel(cx + dx, cy + dy, c);
}

void Canvas::stamp(int x, int y, Rgb c, int width) {
  if (width <= 1) {
    set_pixel(x, y, c);
    return;
  }
  // Pixels whose centre lies within width / 2 of the brush centre, which sits
  // on a pixel centre for odd widths and between four pixels for even ones.
  const double centre = (width % 2 == 0) ? 0.5 : 0.0;
  const double r2 = (width / 2.0) * (width / 2.0);
  for (int dy = -(width - 1) / 2; dy <= width / 2; ++dy)
    for (int dx = -(width - 1) / 2; dx <= width / 2; ++dx) {
      double ex = dx - centre, ey = dy - centre;
      if (ex * ex + ey * ey <= r2) set_pixel(x + dx, y + dy, c);
    }
}

namespace {

// Liang-Barsky: shrinks [t0, t1] of the segment p + t * d to the part inside
// [lo, hi] on one axis; false when nothing is left.
bool clip_axis(double p, double d, double lo, double hi, double* t0, double* t1) {
  if (d == 0) return p >= lo && p <= hi;
  double a = (lo - p) / d, b = (hi - p) / d;
  if (a > b) std::swap(a, b);
  *t0 = std::max(*t0, a);
  *t1 = std::min(*t1, b);
  return *t0 <= *t1;
}

}  // namespace

template <typename On>
void Canvas::walk(double x0, double y0, double x1, double y1, Rgb c, int width, On on) {
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
  if (width < 1) width = 1;
  const double pad = width + 1.0;
  double t0 = 0, t1 = 1, dx = x1 - x0, dy = y1 - y0;
  if (!clip_axis(x0, dx, clip_.x - pad, clip_.x + clip_.w + pad, &t0, &t1) ||
      !clip_axis(y0, dy, clip_.y - pad, clip_.y + clip_.h + pad, &t0, &t1))
    return;
  // The part cut off the start still counts for the dash pattern.
  const long skipped = std::lround(t0 * std::max(std::fabs(dx), std::fabs(dy)));
  long ax = std::lround(x0 + t0 * dx), ay = std::lround(y0 + t0 * dy);
  const long bx = std::lround(x0 + t1 * dx), by = std::lround(y0 + t1 * dy);
  const long sx = ax < bx ? 1 : -1, sy = ay < by ? 1 : -1;
  const long ddx = std::labs(bx - ax), ddy = -std::labs(by - ay);
  long err = ddx + ddy;
  for (long step = skipped;; ++step) {
    if (on(step)) stamp(static_cast<int>(ax), static_cast<int>(ay), c, width);
    if (ax == bx && ay == by) break;
    long e2 = 2 * err;
    if (e2 >= ddy) {
      err += ddy;
      ax += sx;
    }
    if (e2 <= ddx) {
      err += ddx;
      ay += sy;
    }
  }
}

void Canvas::line(double x0, double y0, double x1, double y1, Rgb c, int width) {
  walk(x0, y0, x1, y1, c, width, [](long) { return true; });
}

void Canvas::dashed_line(double x0, double y0, double x1, double y1, Rgb c, int dash, int gap,
                         int width) {
  if (dash < 1) dash = 1;
  if (gap < 0) gap = 0;
  const long period = dash + gap;
  walk(x0, y0, x1, y1, c, width, [&](long step) { return step % period < dash; });
}

int Canvas::text_width(std::string_view s, int scale) {
  if (s.empty()) return 0;
  return (static_cast<int>(s.size()) * font::kAdvance - 1) * std::max(scale, 1);
}

int Canvas::text_height(int scale) { return font::kGlyphHeight * std::max(scale, 1); }

void Canvas::text(int x, int y, std::string_view s, Rgb c, int scale, Align align) {
  scale = std::max(scale, 1);
  const int w = text_width(s, scale);
  if (align == Align::kCentre) x -= w / 2;
  if (align == Align::kRight) x -= w - 1;
  for (size_t i = 0; i < s.size(); ++i) {
    const int ox = x + static_cast<int>(i) * font::kAdvance * scale;
    for (int row = 0; row < font::kGlyphHeight; ++row)
      for (int col = 0; col < font::kGlyphWidth; ++col)
        if (font::pixel(s[i], col, row))
          fill_rect(ox + col * scale, y + row * scale, scale, scale, c);
  }
}

void Canvas::text_vertical(int x, int y, std::string_view s, Rgb c, int scale, Align align) {
  scale = std::max(scale, 1);
  const int w = text_width(s, scale);
  // `start` is the row of the text's first column (its bottom end); a text
  // column u lands on row start - u, a text row v on column x + v.
  int start = y;
  if (align == Align::kCentre) start = y + (w - 1) / 2;
  if (align == Align::kRight) start = y + w - 1;
  for (size_t i = 0; i < s.size(); ++i) {
    const int ou = static_cast<int>(i) * font::kAdvance * scale;
    for (int row = 0; row < font::kGlyphHeight; ++row)
      for (int col = 0; col < font::kGlyphWidth; ++col)
        if (font::pixel(s[i], col, row)) {
          const int u = ou + col * scale;
          fill_rect(x + row * scale, start - u - scale + 1, scale, scale, c);
        }
  }
}

}  // namespace mtier::plot
