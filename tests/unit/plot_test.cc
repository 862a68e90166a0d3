// Unit tests for src/plot: PNG files written and read back (structure,
// CRCs, every row filter, damaged files refused), the font's glyph boxes,
// lines, and line charts whose pixels sit where their geometry says.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "plot/canvas.h"
#include "plot/font.h"
#include "plot/line_chart.h"
#include "plot/png.h"
#include "temp_dir.h"

namespace mtier::plot {
namespace {

// A scratch directory (temp_dir.h), named for this test.
class TempDir : public testutil::TempDir {
 public:
  TempDir() : testutil::TempDir("mtier-plot-test") {}
};

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void spit(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// An image where nearly every pixel differs from its neighbours, so every
// filter has work to do.
Image pattern(unsigned w, unsigned h) {
  Image img(w, h);
  uint32_t s = 12345;
  for (unsigned y = 0; y < h; ++y)
    for (unsigned x = 0; x < w; ++x) {
      s = s * 1103515245u + 12345u;
      img.set(x, y,
              Rgb{static_cast<uint8_t>(x * 7 + y), static_cast<uint8_t>(s >> 16),
                  static_cast<uint8_t>(y * 3)});
    }
  return img;
}

bool dark(Rgb c) { return c.r + c.g + c.b < 3 * 100; }

// --- PNG ---------------------------------------------------------------------

TEST(Png, RoundTripKeepsEveryPixel) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const Image img = pattern(37, 23);
  std::string err;
  ASSERT_EQ(write_png(dir.file("a.png"), img, &err), 0) << err;
  EXPECT_FALSE(exists(dir.file("a.png.tmp")));
  Image back;
  ASSERT_EQ(read_png(dir.file("a.png"), &back, &err), 0) << err;
  EXPECT_EQ(back.width, 37u);
  EXPECT_EQ(back.height, 23u);
  EXPECT_EQ(back.rgb, img.rgb);
  EXPECT_EQ(back.at(5, 9), img.at(5, 9));
}

TEST(Png, ChunksAndCrcsAreValid) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string err;
  ASSERT_EQ(write_png(dir.file("a.png"), pattern(300, 2), &err), 0) << err;
  const std::vector<uint8_t> f = slurp(dir.file("a.png"));
  ASSERT_GE(f.size(), 8u + 25 + 12 + 12);
  const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_TRUE(std::equal(sig, sig + 8, f.begin()));

  // Walk the chunks: every CRC holds, IHDR first, IEND last.
  std::vector<std::string> names;
  for (size_t pos = 8; pos < f.size();) {
    ASSERT_LE(pos + 12, f.size());
    const uint32_t len = be32(&f[pos]);
    ASSERT_LE(pos + 12 + len, f.size());
    names.emplace_back(reinterpret_cast<const char*>(&f[pos + 4]), 4);
    EXPECT_EQ(crc32(0, &f[pos + 4], 4 + len), be32(&f[pos + 8 + len])) << names.back();
    if (names.size() == 1) {
      ASSERT_EQ(names[0], "IHDR");
      ASSERT_EQ(len, 13u);
      EXPECT_EQ(be32(&f[pos + 8]), 300u);  // width
      EXPECT_EQ(be32(&f[pos + 12]), 2u);   // height
      EXPECT_EQ(f[pos + 16], 8);           // bit depth
      EXPECT_EQ(f[pos + 17], 2);           // colour type RGB
      EXPECT_EQ(f[pos + 18], 0);           // deflate
      EXPECT_EQ(f[pos + 19], 0);           // filter method
      EXPECT_EQ(f[pos + 20], 0);           // no interlace
    }
    pos += 12 + len;
    if (pos == f.size()) {
      EXPECT_EQ(len, 0u);
    }
  }
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[1], "IDAT");
  EXPECT_EQ(names.back(), "IEND");
  EXPECT_EQ(be32(&f[f.size() - 4]), 0xAE426082u);  // the fixed CRC of an empty IEND
}

// A PNG of img whose rows use filter (row % 5): None, Sub, Up, Average,
// Paeth, encoded here independently of png.cc, with an ancillary chunk the
// reader must skip.
std::vector<uint8_t> encode_all_filters(const Image& img) {
  auto put32 = [](std::vector<uint8_t>* v, uint32_t x) {
    for (int s = 24; s >= 0; s -= 8) v->push_back(static_cast<uint8_t>(x >> s));
  };
  auto chunk = [&](std::vector<uint8_t>* out, const char* type, const std::vector<uint8_t>& d) {
    put32(out, static_cast<uint32_t>(d.size()));
    std::vector<uint8_t> td(type, type + 4);
    td.insert(td.end(), d.begin(), d.end());
    out->insert(out->end(), td.begin(), td.end());
    put32(out, static_cast<uint32_t>(crc32(0, td.data(), static_cast<uInt>(td.size()))));
  };
  const size_t stride = img.width * 3;
  std::vector<uint8_t> raw;
  for (unsigned y = 0; y < img.height; ++y) {
    const uint8_t* row = &img.rgb[y * stride];
    const uint8_t* up = y ? row - stride : nullptr;
    const int type = static_cast<int>(y % 5);
    raw.push_back(static_cast<uint8_t>(type));
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= 3 ? row[i - 3] : 0, b = up ? up[i] : 0;
      const int c = (up && i >= 3) ? up[i - 3] : 0;
      int pred = 0;
      if (type == 1) pred = a;
      if (type == 2) pred = b;
      if (type == 3) pred = (a + b) / 2;
      if (type == 4) {
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
      }
      raw.push_back(static_cast<uint8_t>(row[i] - pred));
    }
  }
  uLongf zlen = compressBound(raw.size());
  std::vector<uint8_t> z(zlen);
  EXPECT_EQ(compress2(z.data(), &zlen, raw.data(), raw.size(), 6), Z_OK);
  z.resize(zlen);
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> ihdr;
  put32(&ihdr, img.width);
  put32(&ihdr, img.height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  chunk(&out, "IHDR", ihdr);
  chunk(&out, "tEXt", {'C', 'o', 'm', 'm', 'e', 'n', 't', 0, 'h', 'i'});
  // Two IDATs: the reader must join them.
  const size_t half = z.size() / 2;
  chunk(&out, "IDAT", std::vector<uint8_t>(z.begin(), z.begin() + static_cast<long>(half)));
  chunk(&out, "IDAT", std::vector<uint8_t>(z.begin() + static_cast<long>(half), z.end()));
  chunk(&out, "IEND", {});
  return out;
}

TEST(Png, ReadsEveryRowFilter) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const Image img = pattern(19, 11);
  spit(dir.file("f.png"), encode_all_filters(img));
  Image back;
  std::string err;
  ASSERT_EQ(read_png(dir.file("f.png"), &back, &err), 0) << err;
  EXPECT_EQ(back.width, img.width);
  EXPECT_EQ(back.height, img.height);
  EXPECT_EQ(back.rgb, img.rgb);
}

TEST(Png, RefusesWhatIsNotAWholeValidPng) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string err;
  Image img;
  img.width = 3;  // must stay untouched by failed reads

  EXPECT_EQ(read_png(dir.file("missing.png"), &img, &err), -ENOENT);

  spit(dir.file("text.png"), {'h', 'e', 'l', 'l', 'o', ',', ' ', 'w', 'o', 'r', 'l', 'd'});
  EXPECT_EQ(read_png(dir.file("text.png"), &img, &err), -EINVAL);
  EXPECT_NE(err.find("signature"), std::string::npos) << err;

  spit(dir.file("empty.png"), {});
  EXPECT_EQ(read_png(dir.file("empty.png"), &img, &err), -EINVAL);

  ASSERT_EQ(write_png(dir.file("good.png"), pattern(40, 30), &err), 0) << err;
  const std::vector<uint8_t> good = slurp(dir.file("good.png"));

  // Cut anywhere: in a chunk header, inside IDAT, before IEND.
  for (size_t cut : {size_t{8}, size_t{20}, good.size() / 2, good.size() - 12, good.size() - 1}) {
    spit(dir.file("cut.png"),
         std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(cut)));
    err.clear();
    EXPECT_EQ(read_png(dir.file("cut.png"), &img, &err), -EINVAL) << "cut at " << cut;
    EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  }

  // One flipped bit in the IHDR width, then in the image data: the CRC catches it.
  for (size_t at : {size_t{18}, good.size() / 2}) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x10;
    spit(dir.file("bad.png"), bad);
    err.clear();
    EXPECT_EQ(read_png(dir.file("bad.png"), &img, &err), -EINVAL) << "flipped at " << at;
    EXPECT_NE(err.find("CRC"), std::string::npos) << err;
  }
  EXPECT_EQ(img.width, 3u);
  EXPECT_TRUE(img.rgb.empty());
}

TEST(Png, FailedWriteLeavesNothing) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string err;
  EXPECT_EQ(write_png(dir.file("no/such/dir.png"), pattern(4, 4), &err), -ENOENT);
  EXPECT_FALSE(err.empty());

  Image wrong(4, 4);
  wrong.rgb.pop_back();
  EXPECT_EQ(write_png(dir.file("w.png"), wrong, &err), -EINVAL);
  EXPECT_EQ(write_png(dir.file("w.png"), Image(), &err), -EINVAL);
  EXPECT_FALSE(exists(dir.file("w.png")));
  EXPECT_FALSE(exists(dir.file("w.png.tmp")));
}

// --- Font and canvas -----------------------------------------------------------

// The bounding box of pixels differing from white; false when there are none.
bool ink_box(const Image& img, unsigned* x0, unsigned* y0, unsigned* x1, unsigned* y1) {
  bool any = false;
  for (unsigned y = 0; y < img.height; ++y)
    for (unsigned x = 0; x < img.width; ++x)
      if (!(img.at(x, y) == kWhite)) {
        if (!any) *x0 = *x1 = x, *y0 = *y1 = y;
        *x0 = std::min(*x0, x), *x1 = std::max(*x1, x);
        *y0 = std::min(*y0, y), *y1 = std::max(*y1, y);
        any = true;
      }
  return any;
}

TEST(Font, GlyphAStaysInItsBox) {
  Image img(40, 30);
  Canvas cv(&img);
  cv.text(10, 10, "A", kBlack);
  unsigned x0, y0, x1, y1;
  ASSERT_TRUE(ink_box(img, &x0, &y0, &x1, &y1));
  // Capitals fill the 5x7 box above the baseline, touching all four sides.
  EXPECT_EQ(x0, 10u);
  EXPECT_EQ(x1, 14u);
  EXPECT_EQ(y0, 10u);
  EXPECT_EQ(y1, 16u);
  EXPECT_TRUE(dark(img.at(10, 16)));   // a leg
  EXPECT_TRUE(dark(img.at(12, 13)));   // the bar
  EXPECT_FALSE(dark(img.at(12, 15)));  // between the legs

  Image big(40, 40);
  Canvas cb(&big);
  cb.text(3, 4, "A", kBlack, 3);
  ASSERT_TRUE(ink_box(big, &x0, &y0, &x1, &y1));
  EXPECT_EQ(x0, 3u);
  EXPECT_EQ(x1, 3u + 15 - 1);
  EXPECT_EQ(y0, 4u);
  EXPECT_EQ(y1, 4u + 21 - 1);
}

TEST(Font, EveryPrintableCharacterHasAGlyphAndOthersShowQuestionMark) {
  for (int c = 33; c < 127; ++c) {
    bool any = false;
    for (int r = 0; r < font::kGlyphHeight; ++r) any |= font::glyph(static_cast<char>(c))[r] != 0;
    EXPECT_TRUE(any) << "character " << c;
  }
  for (int r = 0; r < font::kGlyphHeight; ++r) EXPECT_EQ(font::glyph(' ')[r], 0);
  EXPECT_EQ(font::glyph('\n'), font::glyph('?'));
  EXPECT_EQ(font::glyph(static_cast<char>(200)), font::glyph('?'));
  EXPECT_TRUE(font::pixel('g', 1, 8));  // descender
  EXPECT_FALSE(font::pixel('A', 5, 0));
}

TEST(Canvas, TextAlignmentAndWidth) {
  EXPECT_EQ(Canvas::text_width(""), 0);
  EXPECT_EQ(Canvas::text_width("AB"), 11);
  EXPECT_EQ(Canvas::text_width("AB", 2), 22);
  EXPECT_EQ(Canvas::text_height(2), 18);

  unsigned x0, y0, x1, y1;
  Image r(60, 20);
  Canvas(&r).text(50, 2, "HH", kBlack, 1, Align::kRight);
  ASSERT_TRUE(ink_box(r, &x0, &y0, &x1, &y1));
  EXPECT_EQ(x1, 50u);
  EXPECT_EQ(x0, 40u);

  Image c(60, 20);
  Canvas(&c).text(30, 2, "HHH", kBlack, 1, Align::kCentre);  // 17 wide
  ASSERT_TRUE(ink_box(c, &x0, &y0, &x1, &y1));
  EXPECT_EQ(x0, 22u);
  EXPECT_EQ(x1, 38u);
}

TEST(Canvas, VerticalTextReadsUpwards) {
  Image img(30, 40);
  Canvas(&img).text_vertical(5, 30, "L", kBlack, 1, Align::kLeft);
  unsigned x0, y0, x1, y1;
  ASSERT_TRUE(ink_box(img, &x0, &y0, &x1, &y1));
  // L's 5x7 box turned: 7 columns from x = 5, 5 rows ending at row 30.
  EXPECT_EQ(x0, 5u);
  EXPECT_EQ(x1, 11u);
  EXPECT_EQ(y0, 26u);
  EXPECT_EQ(y1, 30u);
  // L's stem (its left column) is now the bottom row; its foot (bottom row) the right column.
  for (unsigned x = 5; x <= 11; ++x) EXPECT_TRUE(dark(img.at(x, 30))) << x;
  for (unsigned y = 26; y <= 30; ++y) EXPECT_TRUE(dark(img.at(11, y))) << y;
  EXPECT_FALSE(dark(img.at(5, 26)));
}

TEST(Canvas, DiagonalLineSetsTheDiagonal) {
  Image img(12, 12);
  Canvas(&img).line(0, 0, 9, 9, kBlack);
  int n = 0;
  for (unsigned y = 0; y < 12; ++y)
    for (unsigned x = 0; x < 12; ++x) n += dark(img.at(x, y));
  EXPECT_EQ(n, 10);
  for (unsigned i = 0; i < 10; ++i) EXPECT_TRUE(dark(img.at(i, i))) << i;
}

TEST(Canvas, LinesAreClippedAndHaveWidth) {
  Image img(20, 10);
  Canvas cv(&img);
  cv.line(-1000, 5, 1000, 5, kBlack);  // far outside on both ends
  cv.line(3, -1e9, 3, 1e9, Rgb{255, 0, 0});
  for (unsigned x = 0; x < 20; ++x) EXPECT_TRUE(x == 3 || dark(img.at(x, 5))) << x;
  for (unsigned y = 0; y < 10; ++y) EXPECT_EQ(img.at(3, y), (Rgb{255, 0, 0})) << y;
  EXPECT_EQ(img.at(0, 4), kWhite);
  cv.line(NAN, 0, 5, 5, kBlack);  // ignored

  Image w(20, 10);
  Canvas(&w).line(2, 5, 17, 5, kBlack, 3);
  for (unsigned y = 0; y < 10; ++y) EXPECT_EQ(dark(w.at(10, y)), y >= 4 && y <= 6) << y;

  Image d(20, 3);
  Canvas(&d).dashed_line(0, 1, 19, 1, kBlack, 3, 2);
  for (unsigned x = 0; x < 20; ++x) EXPECT_EQ(dark(d.at(x, 1)), x % 5 < 3) << x;

  Image c(20, 20);
  Canvas cc(&c);
  cc.set_clip(Rect{5, 5, 10, 10});
  cc.fill_rect(0, 0, 20, 20, kBlack);
  unsigned x0, y0, x1, y1;
  ASSERT_TRUE(ink_box(c, &x0, &y0, &x1, &y1));
  EXPECT_EQ(x0, 5u);
  EXPECT_EQ(y0, 5u);
  EXPECT_EQ(x1, 14u);
  EXPECT_EQ(y1, 14u);
}

// --- Line charts ---------------------------------------------------------------

LineChart two_series() {
  LineChart c;
  c.title = "Throughput vs budget";
  c.x_label = "budget";
  c.y_label = "MB/s";
  c.series.push_back(Series{"fast", {{10, 100}, {50, 300}, {100, 900}}});
  c.series.push_back(Series{"slow", {{10, 20}, {50, 40}, {100, 60}}});
  return c;
}

// Whether a pixel within `r` of (x, y) has colour c.
bool near(const Image& img, double x, double y, Rgb c, int r = 2) {
  const long cx = std::lround(x), cy = std::lround(y);
  for (long dy = -r; dy <= r; ++dy)
    for (long dx = -r; dx <= r; ++dx) {
      const long px = cx + dx, py = cy + dy;
      if (px >= 0 && py >= 0 && px < img.width && py < img.height &&
          img.at(static_cast<unsigned>(px), static_cast<unsigned>(py)) == c)
        return true;
    }
  return false;
}

bool has_colour(const Image& img, const Rect& r, Rgb c) {
  for (int y = r.y; y < r.y + r.h; ++y)
    for (int x = r.x; x < r.x + r.w; ++x)
      if (img.at(static_cast<unsigned>(x), static_cast<unsigned>(y)) == c) return true;
  return false;
}

TEST(LineChart, DrawsSeriesTitleAndLegendWhereTheGeometrySays) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LineChart c = two_series();
  c.width = 640;
  c.height = 400;
  std::string err;
  ASSERT_EQ(render_png(c, dir.file("chart.png"), &err), 0) << err;
  Image img;
  ASSERT_EQ(read_png(dir.file("chart.png"), &img, &err), 0) << err;
  EXPECT_EQ(img.width, 640u);
  EXPECT_EQ(img.height, 400u);

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

  // Each series' points carry its colour, and sit inside the plot area.
  for (size_t s = 0; s < 2; ++s)
    for (const auto& [x, y] : c.series[s].points) {
      EXPECT_TRUE(g.plot.contains(static_cast<int>(g.px(x)), static_cast<int>(g.py(y))));
      EXPECT_TRUE(near(img, g.px(x), g.py(y), series_colour(s))) << s << " at " << x << "," << y;
    }
  // Halfway along the first segment of series 0 is its line.
  EXPECT_TRUE(near(img, (g.px(10) + g.px(50)) / 2, (g.py(100) + g.py(300)) / 2, series_colour(0)));
  EXPECT_NE(series_colour(0), series_colour(1));

  // The title above the plot area has ink, dark ink.
  int ink = 0;
  for (unsigned y = 0; y < static_cast<unsigned>(g.plot.y); ++y)
    for (unsigned x = 0; x < img.width; ++x) ink += dark(img.at(x, y));
  EXPECT_GT(ink, 50);

  // The legend lies within the plot area and shows both colours.
  ASSERT_GT(g.legend.w, 0);
  EXPECT_GE(g.legend.x, g.plot.x);
  EXPECT_LE(g.legend.x + g.legend.w, g.plot.x + g.plot.w);
  EXPECT_TRUE(has_colour(img, g.legend, series_colour(0)));
  EXPECT_TRUE(has_colour(img, g.legend, series_colour(1)));

  // The y-axis label, left of the plot area, has ink too.
  ink = 0;
  for (unsigned y = 0; y < img.height; ++y)
    for (unsigned x = 0; x < 25; ++x) ink += dark(img.at(x, y));
  EXPECT_GT(ink, 10);

  // render() gives the same pixels as the file.
  Image direct;
  ASSERT_EQ(render(c, &direct, &err), 0) << err;
  EXPECT_EQ(direct.rgb, img.rgb);
}

TEST(LineChart, LogAxisPutsDecadesEvenlyApart) {
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

  Image img;
  ASSERT_EQ(render(c, &img, &err), 0) << err;
  EXPECT_TRUE(near(img, g.px(50), g.py(300), series_colour(0)));
}

TEST(LineChart, ReversedXAndGivenTicks) {
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
  Image img;
  ASSERT_EQ(render(c, &img, &err), 0) << err;
  EXPECT_TRUE(near(img, g.px(100), g.py(900), series_colour(0)));
}

TEST(LineChart, RefusesChartsWithNothingToDrawAndWritesNoFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string err;
  LineChart empty;
  empty.title = "nothing";
  EXPECT_EQ(render_png(empty, dir.file("e.png"), &err), -EINVAL);
  EXPECT_NE(err.find("no series"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir.file("e.png")));
  EXPECT_FALSE(exists(dir.file("e.png.tmp")));

  LineChart nan;
  nan.series.push_back(Series{"nan", {{NAN, 1}, {1, INFINITY}}});
  err.clear();
  EXPECT_EQ(render_png(nan, dir.file("n.png"), &err), -EINVAL);
  EXPECT_NE(err.find("no finite points"), std::string::npos) << err;
  EXPECT_FALSE(exists(dir.file("n.png")));

  LineChart neg;
  neg.log_y = true;
  neg.series.push_back(Series{"neg", {{1, -1}, {2, 0}}});
  EXPECT_EQ(render_png(neg, dir.file("l.png"), &err), -EINVAL);

  LineChart labels = two_series();
  labels.x_ticks = {10, 100};
  labels.x_tick_labels = {"10%"};
  EXPECT_EQ(render_png(labels, dir.file("t.png"), &err), -EINVAL);

  LineChart tiny = two_series();
  tiny.width = 10;
  EXPECT_EQ(render_png(tiny, dir.file("s.png"), &err), -EINVAL);
  EXPECT_FALSE(exists(dir.file("s.png")));
}

TEST(LineChart, OnePointAndNamelessSeriesStillRender) {
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
  Image img;
  ASSERT_EQ(render(c, &img, &err), 0) << err;
  EXPECT_TRUE(near(img, g.px(5), g.py(5), series_colour(0)));
}

}  // namespace
}  // namespace mtier::plot
