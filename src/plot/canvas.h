// An RGB8 image and a Canvas that draws into it: pixels, rectangles, lines of
// any slope and width (solid or dashed), and text in the built-in font, left,
// centre or right aligned, horizontal or turned 90 degrees for a y-axis label.
// Everything drawn is clipped to the image (and to a clip rectangle when one
// is set), so callers may pass coordinates outside it.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace mtier::plot {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};

// Row-major, top row first, 3 bytes (r, g, b) a pixel: the layout PNG wants.
struct Image {
  unsigned width = 0, height = 0;
  std::vector<uint8_t> rgb;

  Image() = default;
  Image(unsigned w, unsigned h, Rgb fill = kWhite);
  // (x, y) must be inside the image.
  Rgb at(unsigned x, unsigned y) const;
  void set(unsigned x, unsigned y, Rgb c);
};

enum class Align { kLeft, kCentre, kRight };

// Integer pixel rectangle: columns [x, x + w), rows [y, y + h).
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool contains(int px, int py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

class Canvas {
 public:
  explicit Canvas(Image* img);  // img must outlive the canvas

  // Limits all drawing to `r` (intersected with the image) until reset_clip().
  void set_clip(const Rect& r);
  void reset_clip();

  void set_pixel(int x, int y, Rgb c);
  void fill_rect(int x, int y, int w, int h, Rgb c);
  // A 1-pixel outline just inside the rectangle.
  void stroke_rect(int x, int y, int w, int h, Rgb c);
  // A filled disc of radius r (pixels) centred on (cx, cy).
  void fill_circle(int cx, int cy, int r, Rgb c);

  // A line from (x0, y0) to (x1, y1), both ends included. Endpoints are rounded
  // to pixel centres; width > 1 draws a round brush that many pixels across.
  void line(double x0, double y0, double x1, double y1, Rgb c, int width = 1);
  // The same line drawn `dash` pixels on, `gap` pixels off (counted along the
  // major axis), starting with a dash.
  void dashed_line(double x0, double y0, double x1, double y1, Rgb c, int dash, int gap,
                   int width = 1);

  // Text whose top edge is row y; x is its left edge, centre or right edge as
  // `align` says. Each font pixel is a scale x scale square (scale >= 1).
  void text(int x, int y, std::string_view s, Rgb c, int scale = 1, Align align = Align::kLeft);
  // Text turned 90 degrees anticlockwise (read bottom to top, tops of the
  // letters towards the left): its left edge is column x, and y is where it
  // starts (kLeft: its bottom end), its middle (kCentre) or its top end (kRight).
  void text_vertical(int x, int y, std::string_view s, Rgb c, int scale = 1,
                     Align align = Align::kCentre);

  // The extent of text drawn at `scale`: the width of its inked cells (no
  // trailing gap) and the full glyph height, descenders included.
  static int text_width(std::string_view s, int scale = 1);
  static int text_height(int scale = 1);

  const Image& image() const { return *img_; }

 private:
  // Draws a round brush `width` pixels across centred on (x, y).
  void stamp(int x, int y, Rgb c, int width);
  // Walks the line pixel by pixel, calling stamp where `on(step)` says so.
  template <typename On>
  void walk(double x0, double y0, double x1, double y1, Rgb c, int width, On on);

  Image* img_;
  Rect clip_;
};

}  // namespace mtier::plot
