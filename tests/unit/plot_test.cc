// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/plot's line charts: written as PNG and read back through
// cairo (size, background, each series' colour at its points and along its
// lines, the legend, ink where the title and axis labels go and none where
// there is no text), their geometry (log and reversed axes, given ticks), the
// refusals (nothing to draw, an unknown extension, a failed write: no file
// left), and the SVG and PDF outputs as whole documents.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <string>

#include "chart_image.h"
#include "plot/line_chart.h"
#include "temp_dir.h"

namespace mtier::plot {
namespace {

using testing::ink;
using testing::near;
using testing::Png;

// A scratch directory (temp_dir.h), named for this test.
class TempDir : public testutil::TempDir {
 public:
  TempDir() : testutil::TempDir("mtier-plot-test") {}
};

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

LineChart two_series() {
  LineChart c;
  c.title = "Throughput vs budget";
  c.x_label = "budget";
  c.y_label = "MB/s";
  c.series.push_back(Series{"fast", {{10, 100}, {50, 300}, {100, 900}}});
  c.series.push_back(Series{"slow", {{10, 20}, {50, 40}, {100, 60}}});
  return c;
}

TEST(LineChart, DrawsSeriesTitleAndLegendWhereTheGeometrySays) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LineChart c = two_series();
  c.width = 640;
  c.height = 400;
  std::string err;
  ASSERT_EQ(write_line_chart(c, dir.file("chart.png"), &err), 0) << err;
  EXPECT_FALSE(exists(dir.file("chart.png.tmp")));
  Png img(dir.file("chart.png"));
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img.width(), 640);
  EXPECT_EQ(img.height(), 400);

  ChartGeometry g;
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  ASSERT_GT(g.plot.w, 300);
  ASSERT_GT(g.plot.h, 200);
  EXPECT_LE(g.x_lo, 10);
  EXPECT_GE(g.x_hi, 100);
  EXPECT_LE(g.y_lo, 20);
  EXPECT_GE(g.y_hi, 900);
  EXPECT_LT(g.px(10), g.px(100));
  EXPECT_GT(g.py(20), g.py(900));  // y grows upwards

  // A white background: the corners, and the plot area away from the data.
  EXPECT_EQ(img.at(0, 0), kWhite);
  EXPECT_EQ(img.at(639, 399), kWhite);
  EXPECT_EQ(img.at(g.plot.x + g.plot.w / 2 + 7, g.plot.y + g.plot.h / 2 + 7), kWhite);

  // Each series' points carry its colour (the markers), inside the plot area.
  for (size_t s = 0; s < 2; ++s)
    for (const auto& [x, y] : c.series[s].points) {
      EXPECT_TRUE(g.plot.contains(static_cast<int>(g.px(x)), static_cast<int>(g.py(y))));
      EXPECT_TRUE(near(img, g.px(x) + 0.5, g.py(y) + 0.5, series_colour(s), 1)) << s << " at " << x
                                                                                 << "," << y;
    }
  // Halfway along each series' segments is its line, in its colour; the
  // other series' colour is not there.
  for (size_t s = 0; s < 2; ++s) {
    const auto& p = c.series[s].points;
    for (size_t k = 1; k < p.size(); ++k) {
      const double x = (g.px(p[k - 1].first) + g.px(p[k].first)) / 2 + 0.5;
      const double y = (g.py(p[k - 1].second) + g.py(p[k].second)) / 2 + 0.5;
      EXPECT_TRUE(near(img, x, y, series_colour(s), 1, 24)) << s << " segment " << k;
      EXPECT_FALSE(near(img, x, y, series_colour(1 - s), 2, 24)) << s << " segment " << k;
    }
  }
  EXPECT_NE(series_colour(0), series_colour(1));

  // The title above the plot area has ink, centred on the image.
  const testing::Ink title = ink(img, Rect{0, 0, img.width(), g.plot.y});
  EXPECT_GT(title.pixels, 50);
  EXPECT_NEAR(title.box.x + title.box.w / 2.0, 320, 4);

  // The legend lies within the plot area and shows both colours.
  ASSERT_GT(g.legend.w, 0);
  EXPECT_GE(g.legend.x, g.plot.x);
  EXPECT_LE(g.legend.x + g.legend.w, g.plot.x + g.plot.w);
  EXPECT_TRUE(testing::has_colour(img, g.legend, series_colour(0)));
  EXPECT_TRUE(testing::has_colour(img, g.legend, series_colour(1)));
  EXPECT_GT(ink(img, g.legend).pixels, 20);  // the names

  // The y-axis label, at the left edge, has ink, centred on the plot area;
  // the x label under the tick labels likewise.
  const testing::Ink y_label = ink(img, Rect{0, 0, 28, img.height()});
  EXPECT_GT(y_label.pixels, 10);
  EXPECT_NEAR(y_label.box.y + y_label.box.h / 2.0, g.plot.y + g.plot.h / 2.0, 4);
  EXPECT_GT(y_label.box.h, y_label.box.w);  // turned: taller than wide
  const testing::Ink x_label = ink(img, Rect{0, img.height() - 28, img.width(), 28});
  EXPECT_GT(x_label.pixels, 10);
  EXPECT_NEAR(x_label.box.x + x_label.box.w / 2.0, g.plot.x + g.plot.w / 2.0, 4);

  // Without a title and axis labels, those places stay blank.
  c.title.clear();
  c.x_label.clear();
  c.y_label.clear();
  ASSERT_EQ(write_line_chart(c, dir.file("bare.png"), &err), 0) << err;
  Png bare(dir.file("bare.png"));
  ASSERT_TRUE(bare.ok());
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  EXPECT_EQ(ink(bare, Rect{0, 0, bare.width(), g.plot.y - 1}).pixels, 0);
  EXPECT_EQ(ink(bare, Rect{0, 0, 12, bare.height()}).pixels, 0);
}

TEST(LineChart, LogAxisPutsDecadesEvenlyApart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LineChart c = two_series();
  c.log_y = true;
  c.series[1].points.push_back({70, 0});   // skipped on a log axis
  c.series[1].points.push_back({80, -5});  // skipped too
  ChartGeometry g;
  std::string err;
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  EXPECT_TRUE(g.log_y);
  EXPECT_LE(g.y_lo, 20);
  EXPECT_GE(g.y_hi, 900);
  const double decade = g.py(10) - g.py(100);
  EXPECT_GT(decade, 20);
  EXPECT_NEAR(g.py(100) - g.py(1000), decade, 1e-6);
  EXPECT_NEAR(g.py(20) - g.py(200), decade, 1e-6);
  EXPECT_TRUE(std::isnan(g.py(0)));

  ASSERT_EQ(write_line_chart(c, dir.file("log.png"), &err), 0) << err;
  Png img(dir.file("log.png"));
  ASSERT_TRUE(img.ok());
  EXPECT_TRUE(near(img, g.px(50) + 0.5, g.py(300) + 0.5, series_colour(0), 1));
  EXPECT_TRUE(near(img, g.px(50) + 0.5, g.py(40) + 0.5, series_colour(1), 1));
}

TEST(LineChart, ReversedXAndGivenTicks) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LineChart c = two_series();
  c.x_reversed = true;
  c.x_ticks = {10, 25, 50, 75, 100};
  c.x_tick_labels = {"10%", "25%", "50%", "75%", "100%"};
  ChartGeometry g;
  std::string err;
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  EXPECT_GT(g.px(10), g.px(100));  // 100% on the left
  EXPECT_EQ(g.x_lo, 10);
  EXPECT_EQ(g.x_hi, 100);
  EXPECT_NEAR(g.px(100), g.plot.x + g.inset, 1e-9);
  EXPECT_NEAR(g.px(10), g.plot.x + g.plot.w - 1 - g.inset, 1e-9);
  ASSERT_EQ(write_line_chart(c, dir.file("rev.png"), &err), 0) << err;
  Png img(dir.file("rev.png"));
  ASSERT_TRUE(img.ok());
  EXPECT_TRUE(near(img, g.px(100) + 0.5, g.py(900) + 0.5, series_colour(0), 1));
  // Tick labels under the axis, under the ticks.
  const int below = g.plot.y + g.plot.h + 4;
  EXPECT_GT(ink(img, Rect{static_cast<int>(g.px(100)) - 15, below, 30, 20}).pixels, 5);
  EXPECT_GT(ink(img, Rect{static_cast<int>(g.px(10)) - 15, below, 30, 20}).pixels, 5);
}

TEST(LineChart, RefusesChartsWithNothingToDrawAndWritesNoFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string err;
  LineChart empty;
  empty.title = "nothing";
  EXPECT_EQ(write_line_chart(empty, dir.file("e.png"), &err), -EINVAL);
  EXPECT_NE(err.find("no series"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir.file("e.png")));
  EXPECT_FALSE(exists(dir.file("e.png.tmp")));

  LineChart nan;
  nan.series.push_back(Series{"nan", {{NAN, 1}, {1, INFINITY}}});
  err.clear();
  EXPECT_EQ(write_line_chart(nan, dir.file("n.svg"), &err), -EINVAL);
  EXPECT_NE(err.find("no finite points"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir.file("n.svg")));

  LineChart neg;
  neg.log_y = true;
  neg.series.push_back(Series{"neg", {{1, -1}, {2, 0}}});
  EXPECT_EQ(write_line_chart(neg, dir.file("l.pdf"), &err), -EINVAL);
  EXPECT_FALSE(exists(dir.file("l.pdf")));

  LineChart labels = two_series();
  labels.x_ticks = {10, 100};
  labels.x_tick_labels = {"10%"};
  EXPECT_EQ(write_line_chart(labels, dir.file("t.png"), &err), -EINVAL);

  LineChart tiny = two_series();
  tiny.width = 10;
  EXPECT_EQ(write_line_chart(tiny, dir.file("s.png"), &err), -EINVAL);
  EXPECT_FALSE(exists(dir.file("s.png")));

  // A good chart: an unknown extension is refused, naming the three formats.
  for (const char* name : {"c.jpg", "c", "c.png.gz"}) {
    err.clear();
    EXPECT_EQ(write_line_chart(two_series(), dir.file(name), &err), -EINVAL) << name;
    EXPECT_NE(err.find(".png, .svg or .pdf"), std::string::npos) << err;
    EXPECT_FALSE(exists(dir.file(name)));
    EXPECT_FALSE(exists(dir.file(std::string(name) + ".tmp")));
  }
  ChartFormat f;
  EXPECT_EQ(chart_format("x.PDF", &f, &err), 0);
  EXPECT_EQ(f, ChartFormat::kPdf);
  // A directory that does not exist: the write fails with its errno, no file.
  for (const char* name : {"none/c.png", "none/c.svg", "none/c.pdf"}) {
    EXPECT_EQ(write_line_chart(two_series(), dir.file(name), &err), -ENOENT) << name;
    EXPECT_NE(err.find(dir.file(name)), std::string::npos) << err;
  }
  EXPECT_FALSE(exists(dir.file("none")));
}

TEST(LineChart, OnePointAndNamelessSeriesStillRender) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LineChart c;
  c.series.push_back(Series{"", {{5, 5}}});
  ChartGeometry g;
  std::string err;
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  EXPECT_LT(g.x_lo, 5);
  EXPECT_GT(g.x_hi, 5);
  EXPECT_LT(g.y_lo, 5);
  EXPECT_GT(g.y_hi, 5);
  EXPECT_EQ(g.legend.w, 0);
  ASSERT_EQ(write_line_chart(c, dir.file("one.png"), &err), 0) << err;
  Png img(dir.file("one.png"));
  ASSERT_TRUE(img.ok());
  EXPECT_TRUE(near(img, g.px(5) + 0.5, g.py(5) + 0.5, series_colour(0), 1));
}

TEST(LineChart, SvgAndPdfAreWholeDocumentsOfTheSameChart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LineChart c = two_series();
  // Text cairo would refuse (not UTF-8, control bytes) and markup characters.
  c.title = std::string("Throughput & <latency> \x01\xff \xc2\xb5s");
  c.series[0].name = "fast <dram> & \"more\"";
  std::string err;
  ASSERT_EQ(write_line_chart(c, dir.file("l.svg"), &err), 0) << err;
  ASSERT_EQ(write_line_chart(c, dir.file("l.pdf"), &err), 0) << err;
  EXPECT_FALSE(exists(dir.file("l.svg.tmp")));
  EXPECT_FALSE(exists(dir.file("l.pdf.tmp")));
  testing::expect_svg(dir.file("l.svg"));
  testing::expect_pdf(dir.file("l.pdf"));
  const std::string svg = testing::slurp(dir.file("l.svg"));
  EXPECT_NE(svg.find("width=\"900"), std::string::npos);
  EXPECT_NE(svg.find("height=\"560"), std::string::npos);
  // The same chart as PNG, despite the odd bytes, has its title.
  ASSERT_EQ(write_line_chart(c, dir.file("l.png"), &err), 0) << err;
  Png img(dir.file("l.png"));
  ASSERT_TRUE(img.ok());
  ChartGeometry g;
  ASSERT_EQ(chart_geometry(c, &g, &err), 0) << err;
  EXPECT_GT(ink(img, Rect{0, 0, img.width(), g.plot.y}).pixels, 50);
}

}  // namespace
}  // namespace mtier::plot
