// SPDX-License-Identifier: Apache-2.0
// Unit tests for tools/heat_view (the frames of `mtier heat`) on synthetic
// snapshots: frames stay inside cols x rows with and without colour, plain
// frames carry no escapes, hot parts get hotter glyphs, place marks say
// where tables live, the ranges view labels offsets that follow zoom and
// pan, and the keys move the view within its limits. Also the shared ramp
// of tools/heatmap_text that the frames draw with.
#include "heat_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "heatmap_text.h"
#include "record/snapshot.h"

namespace mtier::tools {
namespace {

using record::ProcessSnap;
using record::Snapshot;
using record::TableSnap;

constexpr uint64_t kMiB = 1 << 20;

// A table of `mib` MiB in `slices` slices, every slice at `place` with
// heat `heat`, its page counts matching the place.
TableSnap make_table(uint32_t id, const std::string& name, uint64_t mib, unsigned slices,
                     char place, float heat) {
  TableSnap t;
  t.id = id;
  t.name = name;
  t.bytes = mib * kMiB;
  t.pages = t.bytes / 4096;
  t.heat_map.assign(slices, heat);
  t.place.assign(slices, place);
  if (place == record::kPlaceDram) t.dram_pages = t.pages;
  if (place == record::kPlaceSlow) t.slow_pages = t.pages;
  if (place == record::kPlaceStore) t.store_pages = t.pages;
  if (place == record::kPlaceUntouched) t.untouched_pages = t.pages;
  return t;
}

// pid 4242 "trainer": "hot" (64 MiB in DRAM, slice 40 of 64 far hotter),
// "cold" (64 MiB in the store, little heat), "idle" (untouched, no heat)
// and "split" (slices alternating DRAM and store).
Snapshot make_snapshot() {
  Snapshot s;
  s.unix_ms = 1700000000123;
  ProcessSnap p;
  p.pid = 4242;
  p.name = "trainer";
  TableSnap hot = make_table(1, "hot", 64, 64, record::kPlaceDram, 10);
  hot.heat_map[40] = 5000;
  TableSnap cold = make_table(2, "cold", 64, 64, record::kPlaceStore, 1);
  TableSnap idle = make_table(3, "idle", 64, 64, record::kPlaceUntouched, 0);
  TableSnap split = make_table(4, "split", 64, 64, record::kPlaceDram, 5);
  for (size_t i = 1; i < split.place.size(); i += 2) split.place[i] = record::kPlaceStore;
  split.dram_pages = split.store_pages = split.pages / 2;
  p.tables = {hot, cold, idle, split};
  s.procs.push_back(p);
  return s;
}

std::vector<std::string> lines_of(const std::string& frame) {
  std::vector<std::string> out;
  std::stringstream in(frame);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The text with its escapes taken out; each must be an SGR sequence.
std::string visible(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '\033') {
      out += s[i];
      continue;
    }
    EXPECT_LT(i + 1, s.size());
    EXPECT_EQ(s[i + 1], '[') << "not a CSI sequence";
    size_t j = i + 2;
    while (j < s.size() && (isdigit(static_cast<unsigned char>(s[j])) || s[j] == ';')) j++;
    EXPECT_LT(j, s.size());
    if (j < s.size()) {
      EXPECT_EQ(s[j], 'm') << "not an SGR sequence";
    }
    i = j;
  }
  return out;
}

void expect_fits(const std::string& frame, unsigned cols, unsigned rows) {
  std::vector<std::string> lines = lines_of(frame);
  EXPECT_LE(lines.size(), rows) << frame;
  for (const std::string& l : lines) {
    EXPECT_LE(visible(l).size(), cols) << "'" << l << "'";
    // Whatever a line turns on, it turns off again.
    if (l.find('\033') != std::string::npos) {
      size_t reset = l.rfind("\033[0m");
      ASSERT_NE(reset, std::string::npos) << l;
      EXPECT_EQ(l.find('\033', reset + 1), std::string::npos) << l;
    }
  }
}

// The line that starts (after the selection mark) with `name`, and the one
// under it; empty when absent.
std::pair<std::string, std::string> table_rows(const std::string& frame, const std::string& name) {
  std::vector<std::string> lines = lines_of(frame);
  for (size_t i = 0; i + 1 < lines.size(); i++)
    if (lines[i].size() > name.size() && lines[i].compare(1, name.size(), name) == 0 &&
        lines[i][1 + name.size()] == ' ')
      return {lines[i], lines[i + 1]};
  return {};
}

// The hottest ramp level among the bar's characters [from, to).
int hottest(const std::string& line, size_t from, size_t to) {
  int best = -1;
  for (size_t i = from; i < to && i < line.size(); i++) {
    const char* at = strchr(kHeatRamp, line[i]);
    if (line[i] && at) best = std::max(best, static_cast<int>(at - kHeatRamp));
  }
  return best;
}

// Where the bars start and end in the tables view at `cols`: the column
// after the name field, and the width that the place row under "hot" shows.
size_t bar_start(const std::string& place_row) { return place_row.find_first_not_of(' '); }

TEST(HeatView, PlainFrameHasNoEscapeAndFits) {
  Snapshot s = make_snapshot();
  for (HeatMode mode : {HeatMode::kTables, HeatMode::kRanges}) {
    HeatView v;
    v.mode = mode;
    for (unsigned cols : {40u, 80u, 132u, 200u}) {
      for (unsigned rows : {6u, 12u, 24u, 50u}) {
        std::string f = render_frame(s, v, cols, rows, false);
        EXPECT_EQ(f.find('\033'), std::string::npos) << f;
        expect_fits(f, cols, rows);
        EXPECT_FALSE(f.empty());
      }
    }
  }
}

TEST(HeatView, ColorFrameHasEscapesAndTheSameVisibleText) {
  Snapshot s = make_snapshot();
  for (HeatMode mode : {HeatMode::kTables, HeatMode::kRanges}) {
    HeatView v;
    v.mode = mode;
    for (unsigned cols : {30u, 80u, 160u}) {
      std::string plain = render_frame(s, v, cols, 24, false);
      std::string color = render_frame(s, v, cols, 24, true);
      EXPECT_NE(color.find("\033[48;5;"), std::string::npos);
      expect_fits(color, cols, 24);
      EXPECT_EQ(visible(color), plain);
    }
  }
}

TEST(HeatView, HeaderHasPidNameViewAndKeys) {
  Snapshot s = make_snapshot();
  HeatView v;
  std::string header = lines_of(render_frame(s, v, 200, 24, false))[0];
  EXPECT_NE(header.find("pid 4242 (trainer)"), std::string::npos) << header;
  EXPECT_NE(header.find("tables"), std::string::npos) << header;
  EXPECT_NE(header.find("q quit  +/- zoom  </> pan  n/p table  t tables/ranges"), std::string::npos)
      << header;
  v.mode = HeatMode::kRanges;
  v.table_id = 2;
  header = lines_of(render_frame(s, v, 200, 24, false))[0];
  EXPECT_NE(header.find("ranges of cold"), std::string::npos) << header;
  // Narrow: a shorter help rather than none.
  header = lines_of(render_frame(s, v, 80, 24, false))[0];
  EXPECT_NE(header.find("q "), std::string::npos) << header;
}

TEST(HeatView, LegendAndPlaceKey) {
  Snapshot s = make_snapshot();
  std::string f = render_frame(s, HeatView{}, 100, 24, false);
  EXPECT_NE(f.find(std::string("0 ") + kHeatRamp + " "), std::string::npos) << f;
  EXPECT_NE(f.find("heat = sampled accesses, halved every cooling period"), std::string::npos);
  EXPECT_NE(f.find("D DRAM"), std::string::npos);
  EXPECT_NE(f.find("s store"), std::string::npos);
  EXPECT_NE(f.find("m slow tier"), std::string::npos);
}

TEST(HeatView, HotTableAndSliceGetHotterGlyphs) {
  Snapshot s = make_snapshot();
  std::string f = render_frame(s, HeatView{}, 100, 24, false);
  auto [hot, hot_places] = table_rows(f, "hot");
  auto [cold, cold_places] = table_rows(f, "cold");
  auto [idle, idle_places] = table_rows(f, "idle");
  ASSERT_FALSE(hot.empty()) << f;
  ASSERT_FALSE(cold.empty()) << f;
  ASSERT_FALSE(idle.empty()) << f;
  size_t start = bar_start(hot_places), end = hot_places.size();
  ASSERT_LT(start, end);
  // The hottest cell of all is in "hot", at 40/64 of its bar.
  EXPECT_EQ(hottest(hot, start, end), kHeatSteps - 1) << hot;
  size_t at = hot.find(kHeatRamp[kHeatSteps - 1], start);
  ASSERT_NE(at, std::string::npos);
  double where = double(at - start) / double(end - start);
  EXPECT_NEAR(where, 40.0 / 64, 2.0 / double(end - start) + 1.0 / 64) << hot;
  // Its other cells and the cold table are cooler; untouched shows nothing.
  EXPECT_LT(hottest(hot, start, at), kHeatSteps - 1) << hot;
  EXPECT_LT(hottest(cold, start, end), kHeatSteps - 1) << cold;
  EXPECT_GE(hottest(cold, start, end), 1) << cold;  // some heat is never blank
  EXPECT_EQ(hottest(idle, start, end), 0) << idle;

  // Colour: the hottest cell on the hottest colour.
  std::string c = render_frame(s, HeatView{}, 100, 24, true);
  EXPECT_NE(c.find("\033[48;5;" + std::to_string(heat_color(kHeatSteps - 1)) + "m"),
            std::string::npos);
}

TEST(HeatView, PlaceMarksSayWhereTablesLive) {
  Snapshot s = make_snapshot();
  std::string f = render_frame(s, HeatView{}, 80, 24, false);
  auto [hot, hot_places] = table_rows(f, "hot");
  auto [cold, cold_places] = table_rows(f, "cold");
  auto [idle, idle_places] = table_rows(f, "idle");
  auto [split, split_places] = table_rows(f, "split");
  size_t start = bar_start(hot_places), width = hot_places.size() - start;
  ASSERT_GT(width, 4u);
  EXPECT_EQ(hot_places.substr(start), std::string(width, 'D')) << f;
  EXPECT_EQ(cold_places.substr(start), std::string(width, 's')) << f;
  EXPECT_EQ(idle_places.find_first_not_of(' '), std::string::npos) << f;
  // Fewer cells than slices: each cell covers a DRAM and a store slice.
  ASSERT_LT(width, 64u);
  EXPECT_EQ(split_places.substr(start), std::string(width, '~')) << f;
  // And the MiB per place beside the bars.
  EXPECT_NE(hot.find("D  64.0"), std::string::npos) << hot;
  EXPECT_NE(cold.find("s  64.0"), std::string::npos) << cold;
  EXPECT_NE(split.find("D  32.0"), std::string::npos) << split;
  EXPECT_NE(split.find("s  32.0"), std::string::npos) << split;
}

TEST(HeatView, UnprintableNamesAreReplaced) {
  Snapshot s = make_snapshot();
  s.procs[0].name = "ev\033[2Jil\xc3\xa9";
  s.procs[0].tables[0].name = "t\tab";
  std::string f = render_frame(s, HeatView{}, 100, 24, false);
  EXPECT_EQ(f.find('\033'), std::string::npos);
  EXPECT_EQ(f.find('\t'), std::string::npos);
  EXPECT_NE(f.find("ev?[2Jil??"), std::string::npos) << f;
  expect_fits(f, 100, 24);
}

// The ranges view's body rows: label and bar, with the place row under it.
std::vector<std::string> range_labels(const std::string& frame) {
  std::vector<std::string> labels;
  for (const std::string& l : lines_of(frame)) {
    size_t dash = l.find('-');
    if (l.size() > 16 && dash != std::string::npos && dash > 0 && dash < 15 &&
        isdigit(static_cast<unsigned char>(l[dash - 1])))
      labels.push_back(l.substr(0, 15));
  }
  return labels;
}

TEST(HeatView, RangesViewLabelsOffsetsThatFollowZoomAndPan) {
  Snapshot s = make_snapshot();
  HeatView v;
  v.mode = HeatMode::kRanges;
  v.table_id = 1;  // "hot": 64 MiB in 64 slices
  // 8 rows of ranges fit 4 + 2 * 8 rows: 8 MiB each, slice edges.
  std::vector<std::string> labels = range_labels(render_frame(s, v, 100, 20, false));
  ASSERT_EQ(labels.size(), 8u);
  EXPECT_EQ(labels.front(), "      0-8.00   ");
  EXPECT_EQ(labels[1], "   8.00-16.0   ");
  EXPECT_EQ(labels.back(), "   56.0-64.0   ");

  ASSERT_TRUE(apply_key('+', s, &v));  // the first half
  labels = range_labels(render_frame(s, v, 100, 20, false));
  ASSERT_EQ(labels.size(), 8u);
  EXPECT_EQ(labels.front(), "      0-4.00   ");
  EXPECT_EQ(labels.back(), "   28.0-32.0   ");
  std::string header = lines_of(render_frame(s, v, 200, 20, false))[0];
  EXPECT_NE(header.find("zoom 2x: 0-50%"), std::string::npos) << header;

  ASSERT_TRUE(apply_key('>', s, &v));  // a screen on: the second half
  labels = range_labels(render_frame(s, v, 100, 20, false));
  ASSERT_EQ(labels.size(), 8u);
  EXPECT_EQ(labels.front(), "   32.0-36.0   ");
  EXPECT_EQ(labels.back(), "   60.0-64.0   ");

  // The hot slice (40: 40-41 MiB) is in the row of 40-44 MiB, not elsewhere.
  std::string f = render_frame(s, v, 100, 20, false);
  for (const std::string& l : lines_of(f)) {
    if (l.rfind("   40.0-44.0", 0) == 0) {
      EXPECT_NE(l.find(kHeatRamp[kHeatSteps - 1]), std::string::npos) << l;
    } else if (range_labels(l + "\n").size() == 1) {
      EXPECT_EQ(l.find(kHeatRamp[kHeatSteps - 1]), std::string::npos) << l;
    }
  }

  // Zoomed past the rows: one row a slice, never a row of a part of one.
  v.zoom = 16;
  v.pan = 10;  // slices 40..43
  labels = range_labels(render_frame(s, v, 100, 20, false));
  ASSERT_EQ(labels.size(), 4u);
  EXPECT_EQ(labels.front(), "   40.0-41.0   ");
}

TEST(HeatView, ZoomAndPanAlsoNarrowTheTablesView) {
  Snapshot s = make_snapshot();
  HeatView v;
  v.zoom = 2;
  v.pan = 1;  // the second half: the hot slice at 16/32 of it, the hottest cell
  std::string f = render_frame(s, v, 100, 24, false);
  auto [hot, places] = table_rows(f, "hot");
  size_t start = bar_start(places), end = places.size();
  size_t at = hot.find(kHeatRamp[kHeatSteps - 1], start);
  ASSERT_NE(at, std::string::npos) << hot;
  EXPECT_NEAR(double(at - start) / double(end - start), 8.0 / 32, 2.0 / double(end - start));
  EXPECT_LT(hottest(hot, start, at), kHeatSteps - 1) << hot;
  std::string header = lines_of(render_frame(s, v, 200, 24, false))[0];
  EXPECT_NE(header.find("zoom 2x: 50-100%"), std::string::npos) << header;

  // The first half has no hot slice: the scale is the hottest cell shown,
  // the even heat of "hot", every one of its cells alike.
  v.pan = 0;
  f = render_frame(s, v, 100, 24, false);
  hot = table_rows(f, "hot").first;
  std::string bar = hot.substr(start, end - start);
  EXPECT_EQ(bar, std::string(bar.size(), kHeatRamp[kHeatSteps - 1])) << hot;
}

TEST(HeatView, KeysQuitMoveAndToggle) {
  Snapshot s = make_snapshot();
  HeatView v;
  for (int quit : {int{'q'}, 3, 27}) EXPECT_FALSE(apply_key(quit, s, &v)) << quit;
  EXPECT_TRUE(apply_key('x', s, &v));

  // n and p walk the tables and wrap.
  EXPECT_EQ(v.table_id, 0u);  // not an id of this process: the first table
  ASSERT_TRUE(apply_key('n', s, &v));
  EXPECT_EQ(v.table_id, 2u);
  ASSERT_TRUE(apply_key('n', s, &v));
  ASSERT_TRUE(apply_key('n', s, &v));
  EXPECT_EQ(v.table_id, 4u);
  ASSERT_TRUE(apply_key('n', s, &v));
  EXPECT_EQ(v.table_id, 1u);
  ASSERT_TRUE(apply_key('p', s, &v));
  EXPECT_EQ(v.table_id, 4u);
  ASSERT_TRUE(apply_key(kKeyUp, s, &v));
  EXPECT_EQ(v.table_id, 3u);
  ASSERT_TRUE(apply_key(kKeyDown, s, &v));
  EXPECT_EQ(v.table_id, 4u);

  // t toggles.
  EXPECT_EQ(v.mode, HeatMode::kTables);
  ASSERT_TRUE(apply_key('t', s, &v));
  EXPECT_EQ(v.mode, HeatMode::kRanges);
  ASSERT_TRUE(apply_key('t', s, &v));
  EXPECT_EQ(v.mode, HeatMode::kTables);
}

TEST(HeatView, ZoomAndPanStayWithinLimits) {
  Snapshot s = make_snapshot();
  HeatView v;  // table "hot": 64 slices
  ASSERT_TRUE(apply_key('-', s, &v));
  EXPECT_EQ(v.zoom, 1u);
  ASSERT_TRUE(apply_key('<', s, &v));
  ASSERT_TRUE(apply_key('>', s, &v));
  EXPECT_EQ(v.pan, 0u);  // one screen at zoom 1: nowhere to pan
  for (int i = 0; i < 20; i++) ASSERT_TRUE(apply_key('+', s, &v));
  EXPECT_EQ(v.zoom, 64u);  // no further than a slice
  EXPECT_EQ(v.pan, 0u);
  for (int i = 0; i < 100; i++) ASSERT_TRUE(apply_key('>', s, &v));
  EXPECT_EQ(v.pan, 63u);
  ASSERT_TRUE(apply_key(kKeyLeft, s, &v));
  EXPECT_EQ(v.pan, 62u);
  ASSERT_TRUE(apply_key('-', s, &v));  // keeps the part in view
  EXPECT_EQ(v.zoom, 32u);
  EXPECT_EQ(v.pan, 31u);
  ASSERT_TRUE(apply_key('+', s, &v));
  EXPECT_EQ(v.zoom, 64u);
  EXPECT_EQ(v.pan, 62u);
  for (int i = 0; i < 20; i++) ASSERT_TRUE(apply_key('-', s, &v));
  EXPECT_EQ(v.zoom, 1u);
  EXPECT_EQ(v.pan, 0u);

  // A table of many slices stops at kMaxHeatZoom.
  s.procs[0].tables[0].heat_map.assign(3 * kMaxHeatZoom, 1);
  s.procs[0].tables[0].place.assign(3 * kMaxHeatZoom, 'D');
  for (int i = 0; i < 40; i++) ASSERT_TRUE(apply_key('+', s, &v));
  EXPECT_EQ(v.zoom, kMaxHeatZoom);

  // Whatever the view says, a frame clamps it.
  v.zoom = 1000;  // read as 512
  v.pan = 99999;
  std::string f = render_frame(s, v, 80, 24, false);
  EXPECT_NE(f.find("zoom 512x"), std::string::npos) << f;
  expect_fits(f, 80, 24);
}

TEST(HeatView, TabWalksProcesses) {
  Snapshot s = make_snapshot();
  ProcessSnap other = s.procs[0];
  other.pid = 77;
  other.name = "other";
  s.procs.push_back(other);
  HeatView v;
  EXPECT_EQ(shown_process(s, v)->pid, 4242);
  ASSERT_TRUE(apply_key('\t', s, &v));
  EXPECT_EQ(v.pid, 77);
  EXPECT_NE(render_frame(s, v, 200, 24, false).find("pid 77 (other)"), std::string::npos);
  ASSERT_TRUE(apply_key('\t', s, &v));
  EXPECT_EQ(v.pid, 4242);
}

TEST(HeatView, TinyTerminalsStayInBounds) {
  Snapshot s = make_snapshot();
  s.procs[0].tables[1].name = "a_table_with_a_very_long_name_indeed";
  for (HeatMode mode : {HeatMode::kTables, HeatMode::kRanges}) {
    for (unsigned zoom : {1u, 8u}) {
      HeatView v;
      v.mode = mode;
      v.zoom = zoom;
      v.table_id = 2;
      for (unsigned cols = 0; cols <= 30; cols++) {
        for (unsigned rows = 0; rows <= 9; rows++) {
          for (bool color : {false, true}) {
            std::string f = render_frame(s, v, cols, rows, color);
            if (cols == 0 || rows == 0) {
              EXPECT_EQ(f, "");
            }
            expect_fits(f, cols, rows);
          }
        }
      }
    }
  }
  // 20 x 5 still shows a table with its places.
  std::string f = render_frame(s, HeatView{}, 20, 5, false);
  std::vector<std::string> lines = lines_of(f);
  ASSERT_GE(lines.size(), 3u) << f;
  EXPECT_NE(f.find("DDD"), std::string::npos) << f;
}

TEST(HeatView, NothingToShow) {
  Snapshot empty;
  std::string f = render_frame(empty, HeatView{}, 80, 24, false);
  EXPECT_NE(f.find("no registered process"), std::string::npos) << f;
  expect_fits(f, 80, 24);
  HeatView v;
  EXPECT_TRUE(apply_key('n', empty, &v));
  EXPECT_TRUE(apply_key('+', empty, &v));
  EXPECT_EQ(v.zoom, 1u);
  EXPECT_TRUE(apply_key('\t', empty, &v));

  Snapshot bare = make_snapshot();
  bare.procs[0].tables.clear();
  f = render_frame(bare, HeatView{}, 80, 24, true);
  EXPECT_NE(f.find("has no tables yet"), std::string::npos) << f;
  expect_fits(f, 80, 24);

  // A table without slices (or with fewer place chars) draws as untouched.
  Snapshot odd = make_snapshot();
  odd.procs[0].tables[0].heat_map.clear();
  odd.procs[0].tables[1].place.resize(3);
  for (HeatMode mode : {HeatMode::kTables, HeatMode::kRanges}) {
    HeatView w;
    w.mode = mode;
    w.table_id = 1;
    expect_fits(render_frame(odd, w, 80, 24, false), 80, 24);
    w.table_id = 2;
    expect_fits(render_frame(odd, w, 80, 24, false), 80, 24);
  }
}

TEST(HeatView, ManyTablesScrollToTheSelectedOne) {
  Snapshot s = make_snapshot();
  auto& tables = s.procs[0].tables;
  for (uint32_t id = 10; id < 40; id++)
    tables.push_back(make_table(id, "t" + std::to_string(id), 8, 16, 'D', 1));
  HeatView v;
  v.table_id = 35;
  std::string f = render_frame(s, v, 80, 12, false);
  expect_fits(f, 80, 12);
  EXPECT_NE(f.find(">t35 "), std::string::npos) << f;
  EXPECT_EQ(f.find(" hot "), std::string::npos) << f;
}

TEST(HeatView, FindTableAndNaturalRows) {
  Snapshot s = make_snapshot();
  uint32_t id = 0;
  EXPECT_TRUE(find_table(s.procs[0], "cold", &id));
  EXPECT_EQ(id, 2u);
  EXPECT_TRUE(find_table(s.procs[0], "4", &id));
  EXPECT_EQ(id, 4u);
  EXPECT_FALSE(find_table(s.procs[0], "nope", &id));
  EXPECT_FALSE(find_table(s.procs[0], "99", &id));
  EXPECT_FALSE(find_table(s.procs[0], "99999999999999999999", &id));
  EXPECT_FALSE(find_table(s.procs[0], "", &id));

  HeatView v;
  unsigned rows = natural_rows(s, v);
  EXPECT_EQ(rows, 4u + 2 * 4);
  std::string f = render_frame(s, v, 80, rows, false);
  for (const char* name : {"hot", "cold", "idle", "split"})
    EXPECT_FALSE(table_rows(f, name).first.empty()) << name << "\n" << f;
  v.mode = HeatMode::kRanges;
  EXPECT_EQ(natural_rows(s, v), 4u + 2 * 16);
  EXPECT_EQ(range_labels(render_frame(s, v, 80, natural_rows(s, v), false)).size(), 16u);
  EXPECT_EQ(natural_rows(Snapshot{}, v), 2u);
}

// heatmap_text's own rows still draw as before with the shared ramp.
TEST(HeatmapText, SharedRampKeepsTheOldRows) {
  EXPECT_EQ(heat_level(0, 1), 0);
  EXPECT_EQ(heat_level(1, 0), 0);
  EXPECT_EQ(heat_level(-5, 1), 0);
  EXPECT_EQ(heat_level(0.001, 1), 1);
  EXPECT_EQ(heat_level(1, 1), kHeatSteps - 1);
  EXPECT_EQ(heat_level(100, 1), kHeatSteps - 1);
  EXPECT_EQ(heat_glyph(kHeatSteps - 1, false), "@");
  EXPECT_EQ(heat_glyph(0, true), "\033[48;5;17m \033[0m");

  std::vector<mtier_extent> ex(3);
  ex[0] = {0, 4096, 4096, 0, 4096, 0};     // hottest, in DRAM
  ex[1] = {4096, 4096, 0, 4096, 0, 0};     // cold, stored
  ex[2] = {8192, 4096, 2048, 4096, 1, 0};  // barely warm, split
  EXPECT_EQ(heat_row(ex, 1.0, false), "@ .");
  EXPECT_EQ(residency_row(ex), "Ds~");
  EXPECT_NE(heat_legend(1.0, false).find(kHeatRamp), std::string::npos);
}

}  // namespace
}  // namespace mtier::tools
