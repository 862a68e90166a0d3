// Unit tests for src/plot/heatmap_chart: the heat ramp's luminance, the
// geometry's refusals, PNG heat maps read back pixel by pixel (hot and cold
// cells where HeatmapGeometry says, cells tiling the plot with no gap, the
// colour bar, the title and axis labels found as the font draws them, band
// separators and labels), and SVG heat maps and line charts parsed back.
#include "plot/heatmap_chart.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "plot/canvas.h"
#include "plot/line_chart.h"
#include "plot/png.h"
#include "temp_dir.h"

namespace mtier::plot {
namespace {

// A scratch directory (temp_dir.h), named for this test.
class TempDir : public testutil::TempDir {
 public:
  TempDir() : testutil::TempDir("mtier-heatmap-test") {}
};

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Rec. 709 luma of the encoded values: what "brighter" means here.
double luminance(Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

bool dark(Rgb c) { return c.r + c.g + c.b < 3 * 100; }

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

Rgb parse_hex(const std::string& s) {
  unsigned r = 0, g = 0, b = 0;
  EXPECT_EQ(std::sscanf(s.c_str(), "#%2x%2x%2x", &r, &g, &b), 3) << s;
  return Rgb{static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// Whether the ink of s, drawn by Canvas alone on a blank image (turned for a
// y-axis label), appears in img inside `region` exactly: every inked pixel
// dark and every blank pixel of its box light, so a dark area is no match.
// *at gets the top-left corner of the match's ink box.
bool find_text(const Image& img, const Rect& region, const std::string& s, int scale, bool vertical,
               Rect* at = nullptr) {
  const int tw = Canvas::text_width(s, scale), th = Canvas::text_height(scale);
  Image t(static_cast<unsigned>(vertical ? th : tw) + 2,
          static_cast<unsigned>(vertical ? tw : th) + 2);
  Canvas cv(&t);
  if (vertical)
    cv.text_vertical(1, tw, s, kBlack, scale, Align::kLeft);
  else
    cv.text(1, 1, s, kBlack, scale);
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
  for (unsigned y = 0; y < t.height; ++y)
    for (unsigned x = 0; x < t.width; ++x)
      if (t.at(x, y) == kBlack) {
        x0 = std::min(x0, static_cast<int>(x)), x1 = std::max(x1, static_cast<int>(x));
        y0 = std::min(y0, static_cast<int>(y)), y1 = std::max(y1, static_cast<int>(y));
      }
  if (x1 < 0) return false;
  const int w = x1 - x0 + 1, h = y1 - y0 + 1;
  for (int oy = region.y; oy + h <= region.y + region.h; ++oy)
    for (int ox = region.x; ox + w <= region.x + region.w; ++ox) {
      bool match = true;
      for (int y = 0; match && y < h; ++y)
        for (int x = 0; match && x < w; ++x) {
          const bool ink =
              t.at(static_cast<unsigned>(x0 + x), static_cast<unsigned>(y0 + y)) == kBlack;
          match = ink == dark(img.at(static_cast<unsigned>(ox + x), static_cast<unsigned>(oy + y)));
        }
      if (match) {
        if (at) *at = Rect{ox, oy, w, h};
        return true;
      }
    }
  return false;
}

// rows x cols, the top-right quarter (rows >= rows/2, cols >= cols/2) hot
// (100), the rest cold (1).
HeatmapChart hot_quarter(unsigned rows = 8, unsigned cols = 12) {
  HeatmapChart c;
  c.title = "Heat over time";
  c.x_label = "time (s)";
  c.y_label = "offset in table (MiB)";
  c.colour_label = "heat (samples)";
  c.rows = rows;
  c.cols = cols;
  c.x_lo = 0, c.x_hi = 60;
  c.y_lo = 0, c.y_hi = 512;
  c.width = 640, c.height = 400;
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned k = 0; k < cols; ++k)
      c.values.push_back(r >= rows / 2 && k >= cols / 2 ? 100 : 1);
  return c;
}

// --- The ramp ------------------------------------------------------------------

TEST(HeatColour, LuminanceRisesMonotonicallyFromBlackToWhite) {
  EXPECT_EQ(heat_colour(0), kBlack);
  EXPECT_EQ(heat_colour(1), kWhite);
  double last = -1;
  for (int i = 0; i <= 20000; ++i) {
    const double y = luminance(heat_colour(i / 20000.0));
    ASSERT_GE(y, last) << "at " << i / 20000.0;
    last = y;
  }
  // Hotter is visibly brighter across the ramp, not just no darker.
  for (int i = 1; i <= 10; ++i)
    EXPECT_GT(luminance(heat_colour(i / 10.0)), luminance(heat_colour((i - 1) / 10.0)) + 5) << i;
  // Out of range and NaN are clamped.
  EXPECT_EQ(heat_colour(-3), heat_colour(0));
  EXPECT_EQ(heat_colour(7), heat_colour(1));
  EXPECT_EQ(heat_colour(NAN), heat_colour(0));
}

// --- Geometry errors -------------------------------------------------------------

TEST(HeatmapGeometry, RefusesBadChartsAndWritesNoFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  HeatmapGeometry g;
  std::string err;
  auto refused = [&](const HeatmapChart& c, const std::string& why) {
    err.clear();
    EXPECT_EQ(heatmap_geometry(c, &g, &err), -EINVAL) << why;
    EXPECT_NE(err.find(why), std::string::npos) << "got: " << err;
    Image img(3, 3);
    const Image before = img;
    EXPECT_EQ(render_heatmap(c, &img, &err), -EINVAL);
    EXPECT_EQ(img.rgb, before.rgb);  // left as it was
    std::string svg = "untouched";
    EXPECT_EQ(heatmap_svg(c, &svg, &err), -EINVAL);
    EXPECT_EQ(svg, "untouched");
    EXPECT_EQ(render_heatmap_png(c, dir.file("x.png"), &err), -EINVAL);
    EXPECT_EQ(render_heatmap_svg(c, dir.file("x.svg"), &err), -EINVAL);
    EXPECT_FALSE(exists(dir.file("x.png")));
    EXPECT_FALSE(exists(dir.file("x.png.tmp")));
    EXPECT_FALSE(exists(dir.file("x.svg")));
    EXPECT_FALSE(exists(dir.file("x.svg.tmp")));
  };

  ASSERT_EQ(heatmap_geometry(hot_quarter(), &g, &err), 0) << err;

  HeatmapChart c = hot_quarter();
  c.rows = 0;
  c.values.clear();
  refused(c, "no cells");
  c = hot_quarter();
  c.values.pop_back();
  refused(c, "95 values for 8 x 12 cells");
  c = hot_quarter();
  c.x_hi = c.x_lo;
  refused(c, "x range");
  c = hot_quarter();
  c.x_lo = NAN;
  refused(c, "x range");
  c = hot_quarter();
  c.y_lo = 600;
  refused(c, "y range");
  c = hot_quarter();
  c.bands = {{0, 4, "a"}, {4, 5, "b"}};  // 9 rows of 8
  refused(c, "beyond the 8 rows");
  c.bands = {{0, 0, "a"}};
  refused(c, "is empty");
  c.bands = {{4, 4, "b"}, {0, 5, "a"}};
  refused(c, "overlap");
  c = hot_quarter();
  c.width = 100;
  refused(c, "outside 120..16384");
  c = hot_quarter();
  c.height = 16385;
  refused(c, "outside 120..16384");
  c = hot_quarter();
  c.bands = {{0, 8, std::string(120, 'W')}};  // a label wider than the chart
  refused(c, "too small for its labels");

  // A good chart into a directory that does not exist: the write fails, no file.
  EXPECT_EQ(render_heatmap_png(hot_quarter(), dir.file("none/x.png"), &err), -ENOENT);
  EXPECT_EQ(render_heatmap_svg(hot_quarter(), dir.file("none/x.svg"), &err), -ENOENT);
  EXPECT_FALSE(exists(dir.file("none")));
}

// --- PNG -------------------------------------------------------------------------

TEST(HeatmapPng, HotQuarterIsBrighterAndCellsTileThePlot) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const HeatmapChart c = hot_quarter();
  std::string err;
  ASSERT_EQ(render_heatmap_png(c, dir.file("h.png"), &err), 0) << err;
  EXPECT_FALSE(exists(dir.file("h.png.tmp")));
  Image img;
  ASSERT_EQ(read_png(dir.file("h.png"), &img, &err), 0) << err;
  ASSERT_EQ(img.width, 640u);
  ASSERT_EQ(img.height, 400u);
  Image direct;
  ASSERT_EQ(render_heatmap(c, &direct, &err), 0) << err;
  EXPECT_EQ(direct.rgb, img.rgb);

  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;
  EXPECT_EQ(g.v_max, 100);
  ASSERT_GT(g.plot.w, 300);
  ASSERT_GT(g.plot.h, 200);

  const Rgb hot = heat_colour(1), cold = heat_colour(0.01);
  auto at = [&](int x, int y) {
    return img.at(static_cast<unsigned>(x), static_cast<unsigned>(y));
  };
  const Rgb hot_px = at(g.cell_x(c, 9), g.cell_y(c, 6));
  const Rgb cold_px = at(g.cell_x(c, 2), g.cell_y(c, 1));
  EXPECT_GT(luminance(hot_px), luminance(cold_px) + 100);
  EXPECT_EQ(hot_px, hot);
  EXPECT_EQ(cold_px, cold);

  // Every cell's centre has its colour; row 0 is at the bottom, column 0 at the left.
  for (unsigned r = 0; r < c.rows; ++r)
    for (unsigned k = 0; k < c.cols; ++k) {
      const int x = g.cell_x(c, k), y = g.cell_y(c, r);
      ASSERT_TRUE(g.plot.contains(x, y)) << r << "," << k;
      EXPECT_EQ(at(x, y), c.values[r * c.cols + k] > 50 ? hot : cold) << r << "," << k;
      if (k > 0) {
        EXPECT_GT(x, g.cell_x(c, k - 1));
      }
      if (r > 0) {
        EXPECT_LT(y, g.cell_y(c, r - 1));
      }
    }
  EXPECT_EQ(g.cell_x(c, c.cols), -1);
  EXPECT_EQ(g.cell_y(c, c.rows), -1);

  // Inside the frame every pixel is a cell's: no gap, no seam. Along each
  // pixel row the colour changes at most once (cold to hot) and along each
  // column at most once (hot to cold, going down): one hot rectangle.
  const Rect in{g.plot.x + 1, g.plot.y + 1, g.plot.w - 2, g.plot.h - 2};
  int hot_rows = 0;
  for (int y = in.y; y < in.y + in.h; ++y) {
    int changes = 0;
    for (int x = in.x; x < in.x + in.w; ++x) {
      const Rgb p = at(x, y);
      ASSERT_TRUE(p == hot || p == cold) << x << "," << y;
      if (x > in.x && !(p == at(x - 1, y))) {
        ++changes;
        EXPECT_EQ(p, hot) << x << "," << y;
      }
    }
    EXPECT_LE(changes, 1);
    hot_rows += at(in.x + in.w - 1, y) == hot;
  }
  // The hot half of the rows is half the plot's height, give or take a pixel.
  EXPECT_NEAR(hot_rows, in.h / 2.0, 1);
  // The frame around the cells is drawn.
  EXPECT_TRUE(dark(at(g.plot.x, g.plot.y + g.plot.h / 2)));
  EXPECT_TRUE(dark(at(g.plot.x + g.plot.w / 2, g.plot.y + g.plot.h - 1)));

  // The colour bar: right of the plot, the ramp from cold at the bottom to
  // the hottest colour at the top.
  const Rect& b = g.colour_bar;
  ASSERT_GT(b.h, 100);
  EXPECT_GE(b.x, g.plot.x + g.plot.w);
  const Rgb top = at(b.x + b.w / 2, b.y), bottom = at(b.x + b.w / 2, b.y + b.h - 1);
  EXPECT_GT(luminance(top), luminance(bottom) + 200);
  EXPECT_EQ(top, heat_colour(1));
  EXPECT_EQ(bottom, heat_colour(0));
  for (int y = b.y + 1; y < b.y + b.h; ++y)
    EXPECT_LE(luminance(at(b.x + b.w / 2, y)), luminance(at(b.x + b.w / 2, y - 1))) << y;
}

TEST(HeatmapPng, TitleAndAxisLabelsAreDrawnInTheFont) {
  const HeatmapChart c = hot_quarter();
  std::string err;
  Image img;
  ASSERT_EQ(render_heatmap(c, &img, &err), 0) << err;
  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;
  const int w = static_cast<int>(img.width), h = static_cast<int>(img.height);

  // The title above the plot, centred on the image; the x label below it,
  // centred on the plot; the y label left of it reading upwards; the colour
  // label right of the colour bar, reading upwards.
  Rect at;
  ASSERT_TRUE(find_text(img, Rect{0, 0, w, g.plot.y}, c.title, 2, false, &at));
  EXPECT_NEAR(at.x + at.w / 2.0, w / 2.0, 2);
  const int below = g.plot.y + g.plot.h;
  ASSERT_TRUE(find_text(img, Rect{0, below, w, h - below}, c.x_label, 1, false, &at));
  EXPECT_NEAR(at.x + at.w / 2.0, g.plot.x + g.plot.w / 2.0, 2);
  ASSERT_TRUE(find_text(img, Rect{0, 0, g.plot.x, h}, c.y_label, 1, true, &at));
  EXPECT_NEAR(at.y + at.h / 2.0, g.plot.y + g.plot.h / 2.0, 2);
  const int right = g.colour_bar.x + g.colour_bar.w;
  ASSERT_TRUE(find_text(img, Rect{right, 0, w - right, h}, c.colour_label, 1, true));

  // Tick labels: the x axis spans exactly 0..60 and the y axis 0..512, so the
  // ends and a nice value between are named; the colour bar names 0 and 100.
  ASSERT_TRUE(find_text(img, Rect{0, below, w, h - below}, "60", 1, false, &at));
  EXPECT_NEAR(at.x + at.w / 2.0, g.plot.x + g.plot.w - 1.5, 2);
  EXPECT_TRUE(find_text(img, Rect{0, below, w, h - below}, "30", 1, false));
  EXPECT_TRUE(find_text(img, Rect{0, 0, g.plot.x, h}, "500", 1, false));
  EXPECT_FALSE(find_text(img, Rect{0, 0, g.plot.x, h}, "600", 1, false));  // beyond y_hi
  ASSERT_TRUE(find_text(img, Rect{right, 0, w - right, h}, "100", 1, false, &at));
  EXPECT_NEAR(at.y + 3, g.colour_bar.y, 2);  // at the top of the bar
  EXPECT_TRUE(find_text(img, Rect{right, 0, w - right, h}, "0", 1, false));

  // A label not drawn is not found: the search is not fooled by dark areas.
  EXPECT_FALSE(find_text(img, Rect{0, 0, w, h}, "offset in table (KiB)", 1, true));
  EXPECT_FALSE(find_text(img, Rect{0, 0, w, h}, "Heat over space", 2, false));
}

HeatmapChart banded() {
  HeatmapChart c = hot_quarter(30, 40);
  c.title = "Tables";
  c.y_label.clear();
  c.bands = {{20, 10, "delta"}, {0, 10, "alpha"}, {10, 10, "beta & <gamma>"}};
  for (double& v : c.values) v = 5;
  c.values[0] = 10;  // every other cell mid-ramp: neither black nor white
  return c;
}

// Whether image row y holds a separator across the cells: only black and
// white pixels, both present.
bool separator_row(const Image& img, const HeatmapGeometry& g, int y) {
  int black = 0, white = 0;
  for (int x = g.plot.x + 1; x < g.plot.x + g.plot.w - 1; ++x) {
    const Rgb p = img.at(static_cast<unsigned>(x), static_cast<unsigned>(y));
    if (p == kBlack)
      ++black;
    else if (p == kWhite)
      ++white;
    else
      return false;
  }
  return black > 10 && white > 10;
}

TEST(HeatmapPng, BandsAreNamedAndSeparated) {
  const HeatmapChart c = banded();
  std::string err;
  Image img;
  ASSERT_EQ(render_heatmap(c, &img, &err), 0) << err;
  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;

  // A separator between rows 9 and 10 and between 19 and 20, nowhere else.
  std::vector<int> seps;
  for (int y = g.plot.y + 1; y < g.plot.y + g.plot.h - 1; ++y)
    if (separator_row(img, g, y)) seps.push_back(y);
  ASSERT_EQ(seps.size(), 2u);
  EXPECT_GT(seps[1], g.cell_y(c, 10));
  EXPECT_LT(seps[1], g.cell_y(c, 9));
  EXPECT_GT(seps[0], g.cell_y(c, 20));
  EXPECT_LT(seps[0], g.cell_y(c, 19));
  // The cells either side keep their colour at their centres.
  EXPECT_EQ(img.at(static_cast<unsigned>(g.cell_x(c, 5)), static_cast<unsigned>(g.cell_y(c, 10))),
            heat_colour(0.5));

  // Each band's label left of the plot, at the band's middle; no numbers on
  // the y axis.
  const int h = static_cast<int>(img.height);
  const Rect left{0, 0, g.plot.x, h};
  for (const HeatmapBand& b : c.bands) {
    Rect at;
    ASSERT_TRUE(find_text(img, left, b.label, 1, false, &at)) << b.label;
    const double middle = (g.cell_y(c, b.first_row) + g.cell_y(c, b.first_row + b.rows - 1)) / 2.0;
    EXPECT_NEAR(at.y + 3, middle, 4) << b.label;  // the capitals' middle
    EXPECT_LE(at.x + at.w, g.plot.x - 1);
  }
  EXPECT_FALSE(find_text(img, left, "0", 1, false));
}

TEST(HeatmapPng, ThinBandsKeepTheirCellsAndMarkBoundariesOutsideTheFrame) {
  // 100 bands of one row each, about 3 pixels tall: lines across the cells
  // would hide a third of them, so only tick marks outside the frame remain.
  HeatmapChart c = banded();
  c.rows = 100;
  c.values.assign(100 * c.cols, 5);
  c.values[0] = 10;
  c.bands.clear();
  for (unsigned i = 0; i < 100; ++i) c.bands.push_back({i, 1, "t" + std::to_string(i)});
  std::string err;
  Image img;
  ASSERT_EQ(render_heatmap(c, &img, &err), 0) << err;
  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;
  ASSERT_LT(g.plot.h, 6 * 100);
  for (int y = g.plot.y + 1; y < g.plot.y + g.plot.h - 1; ++y)
    for (int x = g.plot.x + 1; x < g.plot.x + g.plot.w - 1; ++x) {
      const Rgb p = img.at(static_cast<unsigned>(x), static_cast<unsigned>(y));
      ASSERT_TRUE(p == heat_colour(0.5) || p == heat_colour(1)) << x << "," << y;
    }
  int ticks = 0;
  for (int y = g.plot.y; y < g.plot.y + g.plot.h; ++y)
    ticks += dark(img.at(static_cast<unsigned>(g.plot.x - 2), static_cast<unsigned>(y)));
  EXPECT_EQ(ticks, 99);
}

TEST(HeatmapPng, MoreColumnsThanPixelsShowTheHottestOfThoseSharingAPixel) {
  HeatmapChart c = hot_quarter(3, 5000);
  for (double& v : c.values) v = 1;
  c.values[1 * 5000 + 2501] = 100;  // one hot column in the middle row
  c.values[2 * 5000 + 0] = NAN;     // no data at the top left...
  c.values[2 * 5000 + 1] = -1;      // ...in every column sharing that pixel
  std::string err;
  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;
  ASSERT_LT(g.plot.w, 5000);
  Image img;
  ASSERT_EQ(render_heatmap(c, &img, &err), 0) << err;
  auto at = [&](unsigned col, unsigned row) {
    return img.at(static_cast<unsigned>(g.cell_x(c, col)), static_cast<unsigned>(g.cell_y(c, row)));
  };
  EXPECT_EQ(at(2501, 1), heat_colour(1));
  EXPECT_EQ(at(2500, 1), heat_colour(1));  // shares column 2501's pixel (10+ columns a pixel)
  EXPECT_EQ(at(2000, 1), heat_colour(0.01));
  EXPECT_EQ(at(2501, 0), heat_colour(0.01));
  // The leftmost pixel of the top row shares columns 0, 1 and more with data:
  // it shows their maximum. A pixel whose every column lacks data is grey.
  EXPECT_EQ(at(0, 2), heat_colour(0.01));
  HeatmapChart nodata = c;
  for (unsigned k = 0; k < 40; ++k) nodata.values[2 * 5000 + k] = -1;
  ASSERT_EQ(render_heatmap(nodata, &img, &err), 0) << err;
  const Rgb grey =
      img.at(static_cast<unsigned>(g.cell_x(c, 0)), static_cast<unsigned>(g.cell_y(c, 2)));
  EXPECT_EQ(grey.r, grey.g);
  EXPECT_EQ(grey.g, grey.b);
  EXPECT_GT(grey.r, 200);
  EXPECT_LT(grey.r, 255);
}

TEST(HeatmapPng, LogColourScalesByLogOfOnePlusValue) {
  HeatmapChart c = hot_quarter(1, 4);
  c.values = {0, 9, 99, 999};
  c.log_colour = true;
  std::string err;
  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;
  EXPECT_EQ(g.v_max, 999);
  Image img;
  ASSERT_EQ(render_heatmap(c, &img, &err), 0) << err;
  for (unsigned k = 0; k < 4; ++k)
    EXPECT_EQ(img.at(static_cast<unsigned>(g.cell_x(c, k)), static_cast<unsigned>(g.cell_y(c, 0))),
              heat_colour(k / 3.0))
        << k;  // log10(1 + v) / log10(1000) = k / 3
}

// --- SVG -------------------------------------------------------------------------

struct SvgRect {
  double x, y, w, h;
  std::string fill;
};

std::string attr(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t p = tag.find(key);
  if (p == std::string::npos) return "";
  const size_t s = p + key.size();
  return tag.substr(s, tag.find('"', s) - s);
}

std::vector<SvgRect> rects(const std::string& svg) {
  std::vector<SvgRect> out;
  for (size_t p = svg.find("<rect "); p != std::string::npos; p = svg.find("<rect ", p + 1)) {
    const std::string tag = svg.substr(p, svg.find('>', p) - p);
    if (attr(tag, "x").empty()) continue;
    out.push_back(SvgRect{std::stod(attr(tag, "x")), std::stod(attr(tag, "y")),
                          std::stod(attr(tag, "width")), std::stod(attr(tag, "height")),
                          attr(tag, "fill")});
  }
  return out;
}

// Well formed enough: every <text> closed, no raw '<' or '&' inside text, every
// '&' an entity, one <svg> element closed at the end.
void expect_well_formed(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<svg "), 1u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "<text "), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "<title>"), 1u);
  EXPECT_EQ(count(svg, "</title>"), 1u);
  for (size_t p = svg.find('&'); p != std::string::npos; p = svg.find('&', p + 1)) {
    const std::string e = svg.substr(p, 6);
    EXPECT_TRUE(e.rfind("&amp;", 0) == 0 || e.rfind("&lt;", 0) == 0 || e.rfind("&gt;", 0) == 0 ||
                e.rfind("&quot;", 0) == 0 || e.rfind("&apos;", 0) == 0)
        << e;
  }
  // Between a tag's end and the next '<' there is only text: no '>' left raw.
  int depth = 0;
  for (char ch : svg) {
    if (ch == '<') ++depth;
    if (ch == '>') --depth;
    ASSERT_GE(depth, 0);
    ASSERT_LE(depth, 1);
  }
}

TEST(HeatmapSvg, HasTitleLabelsAndHotterFillsWhereTheCellsAre) {
  HeatmapChart c = hot_quarter();
  c.title = "Heat: reads & writes <all>";
  std::string svg, err;
  ASSERT_EQ(heatmap_svg(c, &svg, &err), 0) << err;
  expect_well_formed(svg);
  EXPECT_NE(svg.find("<svg "), std::string::npos);
  EXPECT_NE(svg.find("width=\"640\" height=\"400\""), std::string::npos);
  EXPECT_NE(svg.find("<title>Heat: reads &amp; writes &lt;all&gt;</title>"), std::string::npos);
  EXPECT_EQ(count(svg, ">Heat: reads &amp; writes &lt;all&gt;</text>"), 1u);
  EXPECT_EQ(svg.find("reads & writes"), std::string::npos);
  EXPECT_EQ(count(svg, ">time (s)</text>"), 1u);
  EXPECT_EQ(count(svg, ">offset in table (MiB)</text>"), 1u);
  EXPECT_EQ(count(svg, ">heat (samples)</text>"), 1u);
  EXPECT_NE(svg.find(">100</text>"), std::string::npos);  // the colour bar's top
  EXPECT_NE(svg.find("linearGradient"), std::string::npos);

  // The rect under each cell's centre has the cell's colour, hot brighter.
  HeatmapGeometry g;
  ASSERT_EQ(heatmap_geometry(c, &g, &err), 0) << err;
  const std::vector<SvgRect> all = rects(svg);
  auto fill_at = [&](unsigned col, unsigned row) {
    const double x = g.cell_x(c, col) + 0.5, y = g.cell_y(c, row) + 0.5;
    std::string fill;
    for (const SvgRect& r : all)
      if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h && r.fill[0] == '#') fill = r.fill;
    return fill;  // the last drawn wins
  };
  const std::string hot = fill_at(9, 6), cold = fill_at(2, 1);
  EXPECT_EQ(hot, hex(heat_colour(1)));
  EXPECT_EQ(cold, hex(heat_colour(0.01)));
  EXPECT_GT(luminance(parse_hex(hot)), luminance(parse_hex(cold)) + 100);

  // Runs of equal colour are merged: one rect per cold row, two per hot row.
  size_t cells = 0;
  for (const SvgRect& r : all) cells += r.fill == hot || r.fill == cold;
  EXPECT_EQ(cells, 4u + 2 * 4u);
  // And they tile the plot's inside: their areas add up to it.
  double area = 0;
  for (const SvgRect& r : all)
    if (r.fill == hot || r.fill == cold) area += r.w * r.h;
  EXPECT_EQ(area, static_cast<double>(g.plot.w - 2) * (g.plot.h - 2));
}

TEST(HeatmapSvg, BandLabelsEscapedAndFileWrittenByRename) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const HeatmapChart c = banded();
  std::string svg, err;
  ASSERT_EQ(heatmap_svg(c, &svg, &err), 0) << err;
  expect_well_formed(svg);
  EXPECT_EQ(count(svg, ">alpha</text>"), 1u);
  EXPECT_EQ(count(svg, ">beta &amp; &lt;gamma&gt;</text>"), 1u);
  EXPECT_EQ(count(svg, ">delta</text>"), 1u);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 1u);  // the separators' dashes

  ASSERT_EQ(render_heatmap_svg(c, dir.file("b.svg"), &err), 0) << err;
  EXPECT_FALSE(exists(dir.file("b.svg.tmp")));
  EXPECT_EQ(slurp(dir.file("b.svg")), svg);

  // Bytes XML cannot carry become '?'; valid UTF-8 passes.
  HeatmapChart odd = c;
  odd.title = std::string("bad\x01\xff byte, \xc2\xb5s ok");
  ASSERT_EQ(heatmap_svg(odd, &svg, &err), 0) << err;
  EXPECT_NE(svg.find("<title>bad?? byte, \xc2\xb5s ok</title>"), std::string::npos);
}

LineChart two_series() {
  LineChart c;
  c.title = "Throughput & latency";
  c.x_label = "budget (%)";
  c.y_label = "MB/s";
  c.series.push_back(Series{"fast <dram>", {{10, 100}, {50, 300}, {100, 900}}});
  c.series.push_back(Series{"slow", {{10, 20}, {50, 40}, {100, 60}}});
  return c;
}

TEST(LineChartSvg, HasSeriesLegendAxesAndOnePolylinePerSeries) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const LineChart c = two_series();
  std::string svg, err;
  ASSERT_EQ(line_chart_svg(c, &svg, &err), 0) << err;
  expect_well_formed(svg);
  EXPECT_NE(svg.find("<title>Throughput &amp; latency</title>"), std::string::npos);
  EXPECT_EQ(count(svg, ">fast &lt;dram&gt;</text>"), 1u);  // the legend
  EXPECT_EQ(count(svg, ">slow</text>"), 1u);
  EXPECT_EQ(count(svg, ">budget (%)</text>"), 1u);
  EXPECT_EQ(count(svg, ">MB/s</text>"), 1u);
  EXPECT_NE(svg.find(">900</text>"), std::string::npos);  // a y tick label

  // One polyline per series, in its colour, through its points where the
  // geometry puts them (pixel centres: + 0.5).
  ASSERT_EQ(count(svg, "<polyline "), 2u);
  ChartGeometry g;
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  size_t p = 0;
  for (size_t s = 0; s < 2; ++s) {
    p = svg.find("<polyline ", p + 1);
    const std::string tag = svg.substr(p, svg.find('>', p) - p);
    EXPECT_EQ(attr(tag, "stroke"), hex(series_colour(s)));
    double x = 0, y = 0;
    ASSERT_EQ(std::sscanf(attr(tag, "points").c_str(), "%lf,%lf", &x, &y), 2);
    EXPECT_NEAR(x, g.px(c.series[s].points[0].first) + 0.5, 0.01);
    EXPECT_NEAR(y, g.py(c.series[s].points[0].second) + 0.5, 0.01);
  }

  ASSERT_EQ(render_line_chart_svg(c, dir.file("l.svg"), &err), 0) << err;
  EXPECT_EQ(slurp(dir.file("l.svg")), svg);
  EXPECT_FALSE(exists(dir.file("l.svg.tmp")));
  LineChart empty;
  EXPECT_EQ(render_line_chart_svg(empty, dir.file("e.svg"), &err), -EINVAL);
  EXPECT_NE(err.find("no series"), std::string::npos);
  EXPECT_FALSE(exists(dir.file("e.svg")));
  EXPECT_FALSE(exists(dir.file("e.svg.tmp")));
}

}  // namespace
}  // namespace mtier::plot
