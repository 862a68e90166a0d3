// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/plot/heatmap_chart: the heat ramp's luminance, the
// geometry's refusals (no file left), PNG heat maps read back through cairo
// pixel by pixel (hot and cold cells where HeatmapGeometry says in the colours
// of the colour scale, cells tiling the plot with no gap, the colour bar, ink
// where the title and labels go, band separators and labels), and SVG and PDF
// heat maps as whole documents.
#include "plot/heatmap_chart.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "chart_image.h"
#include "temp_dir.h"

namespace mtier::plot {
namespace {

// A scratch directory (temp_dir.h), named for this test.
class TempDir : public testutil::TempDir {
 public:
  TempDir() : testutil::TempDir("mtier-heatmap-test") {}
};

using testing::dark;
using testing::ink;
using testing::luminance;
using testing::Png;

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

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
    for (const char* name : {"x.png", "x.svg", "x.pdf"}) {
      EXPECT_EQ(write_heatmap(c, dir.file(name), &err), -EINVAL) << name;
      EXPECT_FALSE(exists(dir.file(name)));
      EXPECT_FALSE(exists(dir.file(std::string(name) + ".tmp")));
    }
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

  // A good chart to an unknown format: refused, naming the three.
  EXPECT_EQ(write_heatmap(hot_quarter(), dir.file("x.gif"), &err), -EINVAL);
  EXPECT_NE(err.find(".png, .svg or .pdf"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir.file("x.gif")));
  EXPECT_FALSE(exists(dir.file("x.gif.tmp")));
  // A good chart into a directory that does not exist: the write fails, no file.
  EXPECT_EQ(write_heatmap(hot_quarter(), dir.file("none/x.png"), &err), -ENOENT);
  EXPECT_EQ(write_heatmap(hot_quarter(), dir.file("none/x.svg"), &err), -ENOENT);
  EXPECT_EQ(write_heatmap(hot_quarter(), dir.file("none/x.pdf"), &err), -ENOENT);
  EXPECT_FALSE(exists(dir.file("none")));
}

// --- PNG -------------------------------------------------------------------------

// c written as PNG into dir, read back.
struct Drawn {
  TempDir dir;
  std::unique_ptr<Png> img;
  HeatmapGeometry g;
};
void draw_png(const HeatmapChart& c, Drawn* d) {
  ASSERT_TRUE(d->dir.ok());
  std::string err;
  ASSERT_EQ(write_heatmap(c, d->dir.file("h.png"), &err), 0) << err;
  EXPECT_FALSE(exists(d->dir.file("h.png.tmp")));
  d->img = std::make_unique<Png>(d->dir.file("h.png"));
  ASSERT_TRUE(d->img->ok());
  ASSERT_EQ(d->img->width(), static_cast<int>(c.width));
  ASSERT_EQ(d->img->height(), static_cast<int>(c.height));
  ASSERT_EQ(heatmap_geometry(c, &d->g, &err), 0) << err;
}

TEST(HeatmapPng, HotQuarterIsBrighterAndCellsTileThePlot) {
  const HeatmapChart c = hot_quarter();
  Drawn d;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &d));
  const Png& img = *d.img;
  const HeatmapGeometry& g = d.g;
  EXPECT_EQ(g.v_max, 100);
  ASSERT_GT(g.plot.w, 300);
  ASSERT_GT(g.plot.h, 200);
  EXPECT_EQ(img.at(0, 0), kWhite);
  EXPECT_EQ(img.at(img.width() - 1, img.height() - 1), kWhite);

  const Rgb hot = heat_colour(1), cold = heat_colour(0.01);
  auto at = [&](int x, int y) { return img.at(x, y); };
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
  // the hottest colour at the top, following heat_colour all the way.
  const Rect& b = g.colour_bar;
  ASSERT_GT(b.h, 100);
  EXPECT_GE(b.x, g.plot.x + g.plot.w);
  const int mid = b.x + b.w / 2;
  const Rgb top = at(mid, b.y), bottom = at(mid, b.y + b.h - 1);
  EXPECT_GT(luminance(top), luminance(bottom) + 200);
  EXPECT_EQ(top, heat_colour(1));
  EXPECT_EQ(bottom, heat_colour(0));
  for (int y = b.y + 1; y < b.y + b.h; ++y) {
    EXPECT_LE(luminance(at(mid, y)), luminance(at(mid, y - 1)) + 0.5) << y;
    const double f = static_cast<double>(b.y + b.h - 1 - y) / (b.h - 1);
    EXPECT_TRUE(testing::close(at(mid, y), heat_colour(f), 3)) << y;
  }
}

TEST(HeatmapPng, TitleAndAxisLabelsAreDrawnWhereTheyBelong) {
  HeatmapChart c = hot_quarter();
  Drawn d;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &d));
  const Png& img = *d.img;
  const HeatmapGeometry& g = d.g;
  const int w = img.width(), h = img.height();

  // The title above the plot, centred on the image; the x label at the
  // bottom, centred on the plot; the y label at the left edge, reading
  // upwards (taller than wide), centred on the plot; the colour label at the
  // right edge, likewise beside the colour bar.
  // (The tick labels at the plot's top edge reach a few rows above it.)
  const testing::Ink title = ink(img, Rect{0, 0, w, g.plot.y - 6});
  EXPECT_GT(title.pixels, 50);
  EXPECT_NEAR(title.box.x + title.box.w / 2.0, w / 2.0, 4);
  const testing::Ink x_label = ink(img, Rect{0, h - 26, w, 26});
  EXPECT_GT(x_label.pixels, 10);
  EXPECT_NEAR(x_label.box.x + x_label.box.w / 2.0, g.plot.x + g.plot.w / 2.0, 4);
  const testing::Ink y_label = ink(img, Rect{0, 0, 26, h});
  EXPECT_GT(y_label.pixels, 10);
  EXPECT_GT(y_label.box.h, 2 * y_label.box.w);
  EXPECT_NEAR(y_label.box.y + y_label.box.h / 2.0, g.plot.y + g.plot.h / 2.0, 4);
  const testing::Ink colour_label = ink(img, Rect{w - 26, 0, 26, h});
  EXPECT_GT(colour_label.pixels, 10);
  EXPECT_GT(colour_label.box.h, 2 * colour_label.box.w);
  EXPECT_NEAR(colour_label.box.y + colour_label.box.h / 2.0,
              g.colour_bar.y + g.colour_bar.h / 2.0, 4);

  // Tick labels: under the x axis's right end (60), left of the y axis,
  // right of the colour bar at its top (100) and its bottom (0).
  const int below = g.plot.y + g.plot.h + 4;
  EXPECT_GT(ink(img, Rect{g.plot.x + g.plot.w - 15, below, 30, 16}).pixels, 5);
  EXPECT_GT(ink(img, Rect{30, g.plot.y, g.plot.x - 36, g.plot.h}).pixels, 20);
  const int bar_right = g.colour_bar.x + g.colour_bar.w + 2;
  const testing::Ink scale = ink(img, Rect{bar_right, 0, w - 26 - bar_right, h});
  EXPECT_NEAR(scale.box.y, g.colour_bar.y - 4, 4);
  EXPECT_NEAR(scale.box.y + scale.box.h, g.colour_bar.y + g.colour_bar.h + 4, 4);

  // Without the texts, those places are blank: the ink above was theirs.
  c.title.clear();
  c.x_label.clear();
  c.y_label.clear();
  c.colour_label.clear();
  Drawn bare;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &bare));
  EXPECT_EQ(ink(*bare.img, Rect{0, 0, w, bare.g.plot.y - 6}).pixels, 0);
  EXPECT_EQ(ink(*bare.img, Rect{0, h - 12, w, 12}).pixels, 0);
  EXPECT_EQ(ink(*bare.img, Rect{0, 0, 12, h}).pixels, 0);
  EXPECT_EQ(ink(*bare.img, Rect{w - 12, 0, 12, h}).pixels, 0);
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

// The image rows that hold a separator across the cells: only black and
// white pixels, both present.
std::vector<int> separator_rows(const Png& img, const HeatmapGeometry& g) {
  std::vector<int> rows;
  for (int y = g.plot.y + 1; y < g.plot.y + g.plot.h - 1; ++y) {
    int black = 0, white = 0, other = 0;
    for (int x = g.plot.x + 1; x < g.plot.x + g.plot.w - 1; ++x) {
      const Rgb p = img.at(x, y);
      black += p == kBlack, white += p == kWhite, other += !(p == kBlack || p == kWhite);
    }
    if (!other && black > 10 && white > 10) rows.push_back(y);
  }
  return rows;
}

TEST(HeatmapPng, BandsAreNamedAndSeparated) {
  const HeatmapChart c = banded();
  Drawn d;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &d));
  const HeatmapGeometry& g = d.g;

  // A separator between rows 9 and 10 and between 19 and 20, nowhere else.
  const std::vector<int> seps = separator_rows(*d.img, g);
  ASSERT_EQ(seps.size(), 2u);
  EXPECT_GT(seps[1], g.cell_y(c, 10));
  EXPECT_LT(seps[1], g.cell_y(c, 9));
  EXPECT_GT(seps[0], g.cell_y(c, 20));
  EXPECT_LT(seps[0], g.cell_y(c, 19));
  // The cells either side keep their colour at their centres.
  EXPECT_EQ(d.img->at(g.cell_x(c, 5), g.cell_y(c, 10)), heat_colour(0.5));

  // Each band's label left of the plot, centred on the band's middle, and
  // nothing else there (no numbers on the y axis).
  int labelled = 0;
  for (const HeatmapBand& b : c.bands) {
    const int top = g.cell_y(c, b.first_row + b.rows - 1), bottom = g.cell_y(c, b.first_row);
    const testing::Ink l = ink(*d.img, Rect{0, top, g.plot.x - 6, bottom - top + 1});
    EXPECT_GT(l.pixels, 10) << b.label;
    EXPECT_NEAR(l.box.y + l.box.h / 2.0, (top + bottom) / 2.0, 4) << b.label;
    labelled += l.pixels;
  }
  EXPECT_EQ(ink(*d.img, Rect{0, g.plot.y, g.plot.x - 6, g.plot.h}).pixels, labelled);
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
  Drawn d;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &d));
  const Png& img = *d.img;
  const HeatmapGeometry& g = d.g;
  ASSERT_LT(g.plot.h, 6 * 100);
  for (int y = g.plot.y + 1; y < g.plot.y + g.plot.h - 1; ++y)
    for (int x = g.plot.x + 1; x < g.plot.x + g.plot.w - 1; ++x) {
      const Rgb p = img.at(x, y);
      ASSERT_TRUE(p == heat_colour(0.5) || p == heat_colour(1)) << x << "," << y;
    }
  int ticks = 0;
  for (int y = g.plot.y; y < g.plot.y + g.plot.h; ++y) ticks += dark(img.at(g.plot.x - 2, y));
  EXPECT_EQ(ticks, 99);
}

TEST(HeatmapPng, MoreColumnsThanPixelsShowTheHottestOfThoseSharingAPixel) {
  HeatmapChart c = hot_quarter(3, 5000);
  for (double& v : c.values) v = 1;
  c.values[1 * 5000 + 2501] = 100;  // one hot column in the middle row
  c.values[2 * 5000 + 0] = NAN;     // no data at the top left...
  c.values[2 * 5000 + 1] = -1;      // ...in every column sharing that pixel
  Drawn d;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &d));
  const HeatmapGeometry& g = d.g;
  ASSERT_LT(g.plot.w, 5000);
  auto at = [&](const Png& img, unsigned col, unsigned row) {
    return img.at(g.cell_x(c, col), g.cell_y(c, row));
  };
  EXPECT_EQ(at(*d.img, 2501, 1), heat_colour(1));
  // Column 2500 shares column 2501's pixel (10+ columns a pixel).
  EXPECT_EQ(at(*d.img, 2500, 1), heat_colour(1));
  EXPECT_EQ(at(*d.img, 2000, 1), heat_colour(0.01));
  EXPECT_EQ(at(*d.img, 2501, 0), heat_colour(0.01));
  // The leftmost pixel of the top row shares columns 0, 1 and more with data:
  // it shows their maximum. A pixel whose every column lacks data is grey.
  EXPECT_EQ(at(*d.img, 0, 2), heat_colour(0.01));
  HeatmapChart nodata = c;
  for (unsigned k = 0; k < 40; ++k) nodata.values[2 * 5000 + k] = -1;
  Drawn d2;
  ASSERT_NO_FATAL_FAILURE(draw_png(nodata, &d2));
  const Rgb grey = at(*d2.img, 0, 2);
  EXPECT_EQ(grey.r, grey.g);
  EXPECT_EQ(grey.g, grey.b);
  EXPECT_GT(grey.r, 200);
  EXPECT_LT(grey.r, 255);
}

TEST(HeatmapPng, LogColourScalesByLogOfOnePlusValue) {
  HeatmapChart c = hot_quarter(1, 4);
  c.values = {0, 9, 99, 999};
  c.log_colour = true;
  Drawn d;
  ASSERT_NO_FATAL_FAILURE(draw_png(c, &d));
  EXPECT_EQ(d.g.v_max, 999);
  for (unsigned k = 0; k < 4; ++k)
    EXPECT_EQ(d.img->at(d.g.cell_x(c, k), d.g.cell_y(c, 0)), heat_colour(k / 3.0))
        << k;  // log10(1 + v) / log10(1000) = k / 3
}

// --- SVG and PDF -----------------------------------------------------------------

TEST(HeatmapSvgPdf, WholeDocumentsOfTheSameChart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  HeatmapChart c = banded();
  // Text cairo would refuse (not UTF-8, control bytes) and markup characters.
  c.title = std::string("Heat: reads & <writes> \x01\xff \xc2\xb5s");
  std::string err;
  for (const char* name : {"h.svg", "h.pdf", "h.SVG"}) {
    ASSERT_EQ(write_heatmap(c, dir.file(name), &err), 0) << name << ": " << err;
    EXPECT_FALSE(exists(dir.file(std::string(name) + ".tmp")));
  }
  testing::expect_svg(dir.file("h.svg"));
  testing::expect_svg(dir.file("h.SVG"));
  testing::expect_pdf(dir.file("h.pdf"));
  const std::string svg = testing::slurp(dir.file("h.svg"));
  EXPECT_NE(svg.find("width=\"640"), std::string::npos);
  EXPECT_NE(svg.find("height=\"400"), std::string::npos);
  EXPECT_NE(svg.find("linearGradient"), std::string::npos);  // the colour bar
}

}  // namespace
}  // namespace mtier::plot
