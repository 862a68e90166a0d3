// SPDX-License-Identifier: Apache-2.0
// Unit tests of `mtier report` (src/record/report.h) on a recording built
// in code: two tables over six snapshots ten seconds apart, a hot top slice
// in table emb_a, a snapshot whose heat map the daemon halved, page moves
// growing and then a daemon restart that sends the counters back to zero.
// The recording is written to a file with RecordingWriter and read back
// with read_recording, as `mtier record` and `mtier report` do. Every
// report's text, JSON and CSV is compared exactly with output worked out by
// hand (the arithmetic is in the comments); then the choices of
// --pid and --table, the errors, and the charts' structs.
#include "record/report.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "record/recording.h"
#include "record/snapshot.h"

namespace mtier::record {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kT0 = 1'700'000'000'000;  // unix ms of the first snapshot

TableSnap table(uint32_t id, const char* name, uint64_t mib, std::vector<float> heat_map) {
  TableSnap t;
  t.id = id;
  t.name = name;
  t.bytes = mib * kMiB;
  t.pages = t.bytes / 4096;
  double sum = 0;
  for (float v : heat_map) sum += v;
  t.heat = sum;
  t.place = std::string(heat_map.size(), kPlaceDram);
  t.heat_map = std::move(heat_map);
  return t;
}

void places(TableSnap* t, uint64_t dram, uint64_t slow, uint64_t store) {
  t->dram_pages = dram;
  t->slow_pages = slow;
  t->store_pages = store;
  t->untouched_pages = t->pages - dram - slow - store;
}

// Pages 4 KiB, so 256 pages are 1 MiB.
//
// emb_a (id 0, 4 MiB = 1024 pages, 4 slices of 1 MiB):
//   snap  heat_map        heat  active  dram/slow/store pages  moves (cumulative)
//   0     0 0 1 8            9   1 MiB  256/0/0                new>dram 256
//   1     0 1 0 16          17   1 MiB  512/0/0                new>dram 512
//   2     1 0 0 24          25   2 MiB  512/256/0              new>dram 768, dram>slow 256
//   3     0 32 (2 slices)   32   2 MiB  512/256/256            new>dram 1024, dram>slow 256,
//                                                              dram>store 256
//   4     0 0 2 40          42   3 MiB  256/256/512            restart: dram>store 256
//   5     0 0 0 20          20   1 MiB  512/256/256            dram>store 256, store>dram 256
// emb_b (id 1, 2 MiB = 512 pages, 4 slices of 0.5 MiB): heat 1 1 1 1 (4) at
//   every snapshot, active 1 MiB at snapshots 0, 2, 4 (else 0), all 512
//   pages in DRAM, new>dram 512 at snapshots 0-3 and 0 after the restart.
// r written to a recording file and read back (the file removed).
Recording through_file(const Recording& r) {
  char dir[] = "/tmp/report_test.XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/r.rec", why;
  {
    RecordingWriter w;
    EXPECT_EQ(w.open(path, false, r.sessions.at(0), &why), 0) << why;
    for (const Snapshot& s : r.snapshots) EXPECT_EQ(w.write(s, &why), 0) << why;
  }
  Recording back;
  EXPECT_EQ(read_recording(path, &back, &why), 0) << why;
  EXPECT_FALSE(back.truncated);
  unlink(path.c_str());
  rmdir(dir);
  return back;
}

Recording in_memory_sample();
Recording sample() { return through_file(in_memory_sample()); }

Recording in_memory_sample() {
  Recording r;
  r.sessions.push_back(SessionInfo{});
  const std::vector<std::vector<float>> maps = {{0, 0, 1, 8}, {0, 1, 0, 16}, {1, 0, 0, 24},
                                                {0, 32},      {0, 0, 2, 40}, {0, 0, 0, 20}};
  const uint64_t active_a[] = {1, 1, 2, 2, 3, 1};
  const uint64_t place_a[][3] = {{256, 0, 0},     {512, 0, 0},     {512, 256, 0},
                                 {512, 256, 256}, {256, 256, 512}, {512, 256, 256}};
  for (int i = 0; i < 6; i++) {
    Snapshot s;
    s.unix_ms = kT0 + 10'000 * static_cast<uint64_t>(i);
    ProcessSnap p;
    p.pid = 100;
    p.name = "trainer";
    TableSnap a = table(0, "emb_a", 4, maps[i]);
    a.active_bytes = active_a[i] * kMiB;
    places(&a, place_a[i][0], place_a[i][1], place_a[i][2]);
    const uint64_t new_dram[] = {256, 512, 768, 1024, 0, 0};
    a.moves[kNewToDram] = new_dram[i];
    a.moves[kDramToSlow] = i == 2 || i == 3 ? 256 : 0;
    a.moves[kDramToStore] = i >= 3 ? 256 : 0;
    a.moves[kStoreToDram] = i == 5 ? 256 : 0;
    TableSnap b = table(1, "emb_b", 2, {1, 1, 1, 1});
    b.active_bytes = i % 2 == 0 ? kMiB : 0;
    places(&b, 512, 0, 0);
    b.moves[kNewToDram] = i < 4 ? 512 : 0;
    p.tables = {a, b};
    s.procs.push_back(p);
    r.snapshots.push_back(s);
  }
  return r;
}

// sample() and a second process, pid 200 "server", with one table also
// named emb_a (1 MiB, one slice of heat 4, active 1 MiB) at snapshots 2-5.
Recording two_processes() {
  Recording r = in_memory_sample();
  for (int i = 2; i < 6; i++) {
    ProcessSnap p;
    p.pid = 200;
    p.name = "server";
    TableSnap t = table(0, "emb_a", 1, {4});
    t.active_bytes = kMiB;
    places(&t, 256, 0, 0);
    p.tables.push_back(t);
    r.snapshots[i].procs.push_back(p);
  }
  return through_file(r);
}

struct Output {
  int rc = 0;
  std::string out, why;
};

using ReportFn = int (*)(const Recording&, const ReportOptions&, Format, std::string*,
                         std::string*);

Output run(ReportFn fn, const Recording& r, Format f, ReportOptions o = {}) {
  Output x;
  x.rc = fn(r, o, f, &x.out, &x.why);
  return x;
}

ReportOptions table_opt(const char* t) {
  ReportOptions o;
  o.table = t;
  return o;
}

// ------------------------------------------------------------- heatmap

TEST(ReportHeatmap, TextStacksEveryTableOnOneScale) {
  // One column per snapshot. Snapshot 3's two slices [0, 32] become four:
  // [0, 0, 16, 16]. emb_a's slices are 1 MiB, so heat per MiB is the heat;
  // the hottest cell is 40 (slice 3, snapshot 4). Levels 1 + 9 * v / 40:
  // 8 -> 2 ':', 16 -> 4 '=', 24 -> 6 '*', 40 -> '@', 20 -> 5 '+', 1 and
  // 2 -> 1 '.'. emb_b: 1 per 0.5 MiB = 2 per MiB -> '.'.
  Output x = run(report_heatmap, sample(), Format::kText);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "emb_a (pid 100, id 0): 4.0 MiB in 4 slices, 0.0 s to 50.0 s\n"
            "MiB\n"
            "3.0 |:=*=@+|\n"
            "2.0 |.  =. |\n"
            "1.0 | .    |\n"
            "0.0 |  .   |\n"
            "    +------+\n"
            "     0    50 s\n"
            "\n"
            "emb_b (pid 100, id 1): 2.0 MiB in 4 slices, 0.0 s to 50.0 s\n"
            "MiB\n"
            "1.5 |......|\n"
            "1.0 |......|\n"
            "0.5 |......|\n"
            "0.0 |......|\n"
            "    +------+\n"
            "     0    50 s\n"
            "\n"
            "heat (samples per MiB): 0 [ .:-=+*#%@] 40\n");
}

TEST(ReportHeatmap, TextMergesSnapshotsPerColumn) {
  // Three columns of two snapshots, by mean: [0, .5, .5, 12], [.5, 0, 8, 20],
  // [0, 0, 1, 30]. Max 30: 12 -> 4 '=', 20 -> 7 '#', 8 -> 3 '-', .5, 1 -> '.'.
  ReportOptions o = table_opt("emb_a");
  o.time_cols = 3;
  Output x = run(report_heatmap, sample(), Format::kText, o);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "emb_a (pid 100, id 0): 4.0 MiB in 4 slices, 0.0 s to 50.0 s\n"
            "MiB\n"
            "3.0 |=#@|\n"
            "2.0 |.-.|\n"
            "1.0 |.  |\n"
            "0.0 | . |\n"
            "    +---+\n"
            "     0 40 s\n"
            "\n"
            "heat (samples per MiB): 0 [ .:-=+*#%@] 30; a column is the mean of up to 2 "
            "snapshots\n");
}

TEST(ReportHeatmap, TextColour) {
  ReportOptions o = table_opt("emb_a");
  Output plain = run(report_heatmap, sample(), Format::kText, o);
  EXPECT_EQ(plain.out.find('\033'), std::string::npos);
  o.color = true;
  Output x = run(report_heatmap, sample(), Format::kText, o);
  ASSERT_EQ(x.rc, 0) << x.why;
  // The hottest cell on red (196), a cold one on dark blue (17), each reset.
  EXPECT_NE(x.out.find("\033[48;5;196m@\033[0m"), std::string::npos);
  EXPECT_NE(x.out.find("\033[48;5;17m \033[0m"), std::string::npos);
  EXPECT_NE(x.out.find("[\033[48;5;17m \033[0m\033[48;5;19m.\033[0m"), std::string::npos);
}

TEST(ReportHeatmap, TextCapsRowsAndLabelsSnapshotsWithoutTheTable) {
  // 64 slices show as 32 rows; process 200's table appears at 20 s.
  Recording r = two_processes();
  std::vector<float> wide(64, 1.0f);
  wide[63] = 9;
  r.snapshots[0].procs[0].tables[1].heat_map = wide;
  ReportOptions o = table_opt("emb_b");
  Output x = run(report_heatmap, r, Format::kText, o);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_NE(x.out.find("2.0 MiB in 64 slices (32 rows), 0.0 s to 50.0 s\n"), std::string::npos)
      << x.out;
  EXPECT_NE(x.out.find("\n1.9 |"), std::string::npos) << x.out;  // 31/32 of 2 MiB
  EXPECT_EQ(std::count(x.out.begin(), x.out.end(), '\n'), 32 + 6);

  o.pid = 200;
  o.table = "";
  x = run(report_heatmap, r, Format::kText, o);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "emb_a (pid 200, id 0): 1.0 MiB in 1 slice, 20.0 s to 50.0 s\n"
            "MiB\n"
            "0.0 |  @@@@|\n"
            "    +------+\n"
            "     0    50 s\n"
            "\n"
            "heat (samples per MiB): 0 [ .:-=+*#%@] 4\n");
}

TEST(ReportHeatmap, Json) {
  Output x = run(report_heatmap, sample(), Format::kJson);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "{\"report\":\"heatmap\",\"time_seconds\":[0,10,20,30,40,50],\"tables\":["
            "{\"pid\":100,\"id\":0,\"name\":\"emb_a\",\"bytes\":4194304,\"slices\":4,\"heat\":"
            "[[0,0,1,8],[0,1,0,16],[1,0,0,24],[0,0,16,16],[0,0,2,40],[0,0,0,20]]},"
            "{\"pid\":100,\"id\":1,\"name\":\"emb_b\",\"bytes\":2097152,\"slices\":4,\"heat\":"
            "[[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]}]}\n");

  // A snapshot without the table reads as no heat.
  ReportOptions o;
  o.pid = 200;
  x = run(report_heatmap, two_processes(), Format::kJson, o);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "{\"report\":\"heatmap\",\"time_seconds\":[0,10,20,30,40,50],\"tables\":["
            "{\"pid\":200,\"id\":0,\"name\":\"emb_a\",\"bytes\":1048576,\"slices\":1,\"heat\":"
            "[[0],[0],[4],[4],[4],[4]]}]}\n");
}

TEST(ReportHeatmap, CsvByTableId) {
  Output x = run(report_heatmap, sample(), Format::kCsv, table_opt("0"));
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "time_seconds,pid,table,slice,offset_bytes,heat\n"
            "0.000,100,emb_a,0,0,0\n"
            "0.000,100,emb_a,1,1048576,0\n"
            "0.000,100,emb_a,2,2097152,1\n"
            "0.000,100,emb_a,3,3145728,8\n"
            "10.000,100,emb_a,0,0,0\n"
            "10.000,100,emb_a,1,1048576,1\n"
            "10.000,100,emb_a,2,2097152,0\n"
            "10.000,100,emb_a,3,3145728,16\n"
            "20.000,100,emb_a,0,0,1\n"
            "20.000,100,emb_a,1,1048576,0\n"
            "20.000,100,emb_a,2,2097152,0\n"
            "20.000,100,emb_a,3,3145728,24\n"
            "30.000,100,emb_a,0,0,0\n"
            "30.000,100,emb_a,1,1048576,0\n"
            "30.000,100,emb_a,2,2097152,16\n"
            "30.000,100,emb_a,3,3145728,16\n"
            "40.000,100,emb_a,0,0,0\n"
            "40.000,100,emb_a,1,1048576,0\n"
            "40.000,100,emb_a,2,2097152,2\n"
            "40.000,100,emb_a,3,3145728,40\n"
            "50.000,100,emb_a,0,0,0\n"
            "50.000,100,emb_a,1,1048576,0\n"
            "50.000,100,emb_a,2,2097152,0\n"
            "50.000,100,emb_a,3,3145728,20\n");
}

TEST(ReportHeatmap, CsvQuotesNames) {
  Recording r = sample();
  for (Snapshot& s : r.snapshots) s.procs[0].tables[1].name = "a,\"b\"";
  Output x = run(report_heatmap, r, Format::kCsv, table_opt("1"));
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_NE(x.out.find("\n0.000,100,\"a,\"\"b\"\"\",0,0,1\n"), std::string::npos) << x.out;
}

// ----------------------------------------------------------------- wss

TEST(ReportWss, AllFormats) {
  // wss (MiB) = emb_a + emb_b = 1+1, 1+0, 2+1, 2+0, 3+1, 1+0 = 2 1 3 2 4 1.
  // Sorted 1 1 2 2 3 4; nearest rank ceil(p * 6 / 100): p0 -> 1st = 1,
  // p25 -> 2nd = 1, p50 -> 3rd = 2, p75 -> 5th = 3, p90, p99, p100 -> 6th = 4.
  const Recording r = sample();
  Output x = run(report_wss, r, Format::kText);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "time_s  wss_MiB\n"
            "   0.0      2.0\n"
            "  10.0      1.0\n"
            "  20.0      3.0\n"
            "  30.0      2.0\n"
            "  40.0      4.0\n"
            "  50.0      1.0\n"
            "wss percentiles (MiB): p0 1.0 p25 1.0 p50 2.0 p75 3.0 p90 4.0 p99 4.0 p100 4.0\n");
  x = run(report_wss, r, Format::kJson);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "{\"report\":\"wss\",\"time_seconds\":[0,10,20,30,40,50],"
            "\"wss_bytes\":[2097152,1048576,3145728,2097152,4194304,1048576],"
            "\"percentiles\":{\"p0\":1048576,\"p25\":1048576,\"p50\":2097152,\"p75\":3145728,"
            "\"p90\":4194304,\"p99\":4194304,\"p100\":4194304}}\n");
  x = run(report_wss, r, Format::kCsv);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "time_seconds,wss_bytes\n"
            "0.000,2097152\n"
            "10.000,1048576\n"
            "20.000,3145728\n"
            "30.000,2097152\n"
            "40.000,4194304\n"
            "50.000,1048576\n");
  // Only emb_b: 1 0 1 0 1 0 MiB.
  x = run(report_wss, r, Format::kCsv, table_opt("emb_b"));
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "time_seconds,wss_bytes\n0.000,1048576\n10.000,0\n20.000,1048576\n30.000,0\n"
            "40.000,1048576\n50.000,0\n");
}

TEST(ReportWss, LongRecordingsShowFortyEvenlySpacedLines) {
  Recording r;
  for (uint64_t i = 0; i < 100; i++) {
    Snapshot s;
    s.unix_ms = kT0 + 1000 * i;
    ProcessSnap p;
    p.pid = 7;
    TableSnap t = table(0, "t", 100, {1});
    t.active_bytes = (i + 1) * kMiB;  // 1..100 MiB
    p.tables.push_back(t);
    s.procs.push_back(p);
    r.snapshots.push_back(s);
  }
  Output x = run(report_wss, r, Format::kText);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(std::count(x.out.begin(), x.out.end(), '\n'), 1 + 40 + 2);
  EXPECT_EQ(x.out.find("time_s  wss_MiB\n   0.0      1.0\n   2.0      3.0\n"), 0u) << x.out;
  EXPECT_NE(x.out.find("\n  99.0    100.0\n(40 of 100 snapshots shown)\n"), std::string::npos);
  // Nearest rank of 1..100: p25 = 25, p99 = 99.
  EXPECT_NE(x.out.find("p0 1.0 p25 25.0 p50 50.0 p75 75.0 p90 90.0 p99 99.0 p100 100.0\n"),
            std::string::npos);
}

// -------------------------------------------------------------- tables

TEST(ReportTables, AllFormats) {
  // emb_a: heat 9 17 25 32 42 20: mean 145/6 = 24.17, peak 42; share
  // 145 / (145 + 6 * 4) = 85.80%. DRAM MiB 1 2 2 2 1 2: mean 1.67, peak 2;
  // slow 0 0 1 1 1 1: 0.67, 1; store 0 0 0 1 2 1: 0.67, 2. Moves between
  // snapshots (the restart at 4 sends new>dram and dram>slow back: no move;
  // dram>store stays 256: no move): new>dram 3 x 256, dram>slow 256,
  // dram>store 256, store>dram 256. In: new>dram + store>dram = 1024;
  // out: dram>slow + dram>store = 512.
  // emb_b: heat 4, share 24/169 = 14.20%, 2 MiB in DRAM, no moves.
  const Recording r = sample();
  Output x = run(report_tables, r, Format::kText);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "pid  id  name   size_MiB  heat_mean  heat_peak  heat_%  dram_mean  dram_peak  "
            "slow_mean  slow_peak  store_mean  store_peak  pages_in  pages_out\n"
            "100   0  emb_a       4.0       24.2       42.0    85.8        1.7        2.0  "
            "      0.7        1.0         0.7         2.0      1024        512\n"
            "100   1  emb_b       2.0        4.0        4.0    14.2        2.0        2.0  "
            "      0.0        0.0         0.0         0.0         0          0\n"
            "dram, slow, store: MiB held, mean and peak over the snapshots; heat_%: share of all "
            "tables' heat\n"
            "pages_in: new or store to dram or slow, and slow>dram; pages_out: dram>slow, "
            "dram>store, slow>store\n");
  x = run(report_tables, r, Format::kJson);
  ASSERT_EQ(x.rc, 0) << x.why;
  // 10 MiB / 6 = 1747626.67 bytes, 4 MiB / 6 = 699050.67.
  EXPECT_EQ(x.out,
            "{\"report\":\"tables\",\"tables\":["
            "{\"pid\":100,\"id\":0,\"name\":\"emb_a\",\"bytes\":4194304,\"heat_mean\":24.1667,"
            "\"heat_peak\":42,\"heat_share_percent\":85.7988,\"dram_bytes_mean\":1747627,"
            "\"dram_bytes_peak\":2097152,\"slow_bytes_mean\":699051,\"slow_bytes_peak\":1048576,"
            "\"store_bytes_mean\":699051,\"store_bytes_peak\":2097152,\"pages_in\":1024,"
            "\"pages_out\":512},"
            "{\"pid\":100,\"id\":1,\"name\":\"emb_b\",\"bytes\":2097152,\"heat_mean\":4,"
            "\"heat_peak\":4,\"heat_share_percent\":14.2012,\"dram_bytes_mean\":2097152,"
            "\"dram_bytes_peak\":2097152,\"slow_bytes_mean\":0,\"slow_bytes_peak\":0,"
            "\"store_bytes_mean\":0,\"store_bytes_peak\":0,\"pages_in\":0,\"pages_out\":0}]}\n");
  x = run(report_tables, r, Format::kCsv);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "pid,id,name,bytes,heat_mean,heat_peak,heat_share_percent,dram_bytes_mean,"
            "dram_bytes_peak,slow_bytes_mean,slow_bytes_peak,store_bytes_mean,store_bytes_peak,"
            "pages_in,pages_out\n"
            "100,0,emb_a,4194304,24.1667,42,85.7988,1747627,2097152,699051,1048576,699051,"
            "2097152,1024,512\n"
            "100,1,emb_b,2097152,4,4,14.2012,2097152,2097152,0,0,0,0,0,0\n");
  // One table: its share is still of all the process's heat.
  x = run(report_tables, r, Format::kCsv, table_opt("emb_b"));
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_NE(x.out.find("\n100,1,emb_b,2097152,4,4,14.2012,"), std::string::npos) << x.out;
  EXPECT_EQ(x.out.find("emb_a"), std::string::npos);
}

// ---------------------------------------------------------- migrations

TEST(ReportMigrations, AllFormats) {
  // Per interval (end time: pages): 10: new>dram 256; 20: new>dram 256,
  // dram>slow 256; 30: new>dram 256, dram>store 256; 40 (restart): none;
  // 50: store>dram 256. 256 pages = 1 MiB; over 50 s and 10 s intervals:
  // new>dram 3 MiB, mean 0.06 MiB/s, peak 0.1; the others 1 MiB, 0.02, 0.1;
  // all: 6 MiB, 0.12, peak 2 MiB in one interval = 0.2.
  const Recording r = sample();
  Output x = run(report_migrations, r, Format::kText);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "from_to     pages  MiB  mean_MiB/s  peak_MiB/s\n"
            "new>dram      768  3.0       0.060       0.100\n"
            "new>slow        0  0.0       0.000       0.000\n"
            "store>dram    256  1.0       0.020       0.100\n"
            "store>slow      0  0.0       0.000       0.000\n"
            "slow>dram       0  0.0       0.000       0.000\n"
            "dram>slow     256  1.0       0.020       0.100\n"
            "dram>store    256  1.0       0.020       0.100\n"
            "slow>store      0  0.0       0.000       0.000\n"
            "total        1536  6.0       0.120       0.200\n");
  x = run(report_migrations, r, Format::kJson);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "{\"report\":\"migrations\",\"pairs\":["
            "{\"from_to\":\"new>dram\",\"pages\":768,\"bytes\":3145728,"
            "\"mean_bytes_per_second\":62915,\"peak_bytes_per_second\":104858},"
            "{\"from_to\":\"new>slow\",\"pages\":0,\"bytes\":0,\"mean_bytes_per_second\":0,"
            "\"peak_bytes_per_second\":0},"
            "{\"from_to\":\"store>dram\",\"pages\":256,\"bytes\":1048576,"
            "\"mean_bytes_per_second\":20972,\"peak_bytes_per_second\":104858},"
            "{\"from_to\":\"store>slow\",\"pages\":0,\"bytes\":0,\"mean_bytes_per_second\":0,"
            "\"peak_bytes_per_second\":0},"
            "{\"from_to\":\"slow>dram\",\"pages\":0,\"bytes\":0,\"mean_bytes_per_second\":0,"
            "\"peak_bytes_per_second\":0},"
            "{\"from_to\":\"dram>slow\",\"pages\":256,\"bytes\":1048576,"
            "\"mean_bytes_per_second\":20972,\"peak_bytes_per_second\":104858},"
            "{\"from_to\":\"dram>store\",\"pages\":256,\"bytes\":1048576,"
            "\"mean_bytes_per_second\":20972,\"peak_bytes_per_second\":104858},"
            "{\"from_to\":\"slow>store\",\"pages\":0,\"bytes\":0,\"mean_bytes_per_second\":0,"
            "\"peak_bytes_per_second\":0}],"
            "\"total\":{\"pages\":1536,\"bytes\":6291456,\"mean_bytes_per_second\":125829,"
            "\"peak_bytes_per_second\":209715},"
            "\"series\":{\"time_seconds\":[10,20,30,40,50],\"pages\":{"
            "\"new>dram\":[256,256,256,0,0],\"new>slow\":[0,0,0,0,0],"
            "\"store>dram\":[0,0,0,0,256],\"store>slow\":[0,0,0,0,0],"
            "\"slow>dram\":[0,0,0,0,0],\"dram>slow\":[0,256,0,0,0],"
            "\"dram>store\":[0,0,256,0,0],\"slow>store\":[0,0,0,0,0]}}}\n");
  x = run(report_migrations, r, Format::kCsv);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "time_seconds,from_to,pages\n"
            "10.000,new>dram,256\n10.000,new>slow,0\n10.000,store>dram,0\n10.000,store>slow,0\n"
            "10.000,slow>dram,0\n10.000,dram>slow,0\n10.000,dram>store,0\n10.000,slow>store,0\n"
            "20.000,new>dram,256\n20.000,new>slow,0\n20.000,store>dram,0\n20.000,store>slow,0\n"
            "20.000,slow>dram,0\n20.000,dram>slow,256\n20.000,dram>store,0\n20.000,slow>store,0\n"
            "30.000,new>dram,256\n30.000,new>slow,0\n30.000,store>dram,0\n30.000,store>slow,0\n"
            "30.000,slow>dram,0\n30.000,dram>slow,0\n30.000,dram>store,256\n30.000,slow>store,0\n"
            "40.000,new>dram,0\n40.000,new>slow,0\n40.000,store>dram,0\n40.000,store>slow,0\n"
            "40.000,slow>dram,0\n40.000,dram>slow,0\n40.000,dram>store,0\n40.000,slow>store,0\n"
            "50.000,new>dram,0\n50.000,new>slow,0\n50.000,store>dram,256\n50.000,store>slow,0\n"
            "50.000,slow>dram,0\n50.000,dram>slow,0\n50.000,dram>store,0\n50.000,slow>store,0\n");
}

// ------------------------------------------------- choices and errors

TEST(ReportSelect, Errors) {
  Output x = run(report_tables, sample(), Format::kText, table_opt("nosuch"));
  EXPECT_EQ(x.rc, -ENOENT);
  EXPECT_EQ(x.why, "no table 'nosuch' in the recording (tables: emb_a, emb_b)");
  x = run(report_tables, sample(), Format::kText, table_opt("7"));  // no such id either
  EXPECT_EQ(x.rc, -ENOENT);

  ReportOptions o;
  o.pid = 300;
  x = run(report_wss, two_processes(), Format::kJson, o);
  EXPECT_EQ(x.rc, -ENOENT);
  EXPECT_EQ(x.why, "no process 300 in the recording (processes: 100, 200)");
  // A table of another process is not one of this process's.
  o.pid = 200;
  o.table = "emb_b";
  x = run(report_wss, two_processes(), Format::kJson, o);
  EXPECT_EQ(x.rc, -ENOENT);
  EXPECT_EQ(x.why, "no table 'emb_b' in the recording (tables: emb_a)");

  Recording empty;
  empty.sessions.push_back(SessionInfo{});
  for (ReportFn fn : {report_heatmap, report_wss, report_tables, report_migrations}) {
    x = run(fn, empty, Format::kText);
    EXPECT_EQ(x.rc, -EINVAL);
    EXPECT_EQ(x.why, "the recording holds no snapshots");
  }
  plot::LineChart lc;
  plot::HeatmapChart hc;
  std::string why;
  EXPECT_EQ(wss_chart(empty, {}, &lc, &why), -EINVAL);
  EXPECT_EQ(tables_chart(empty, {}, &lc, &why), -EINVAL);
  EXPECT_EQ(migrations_chart(empty, {}, &lc, &why), -EINVAL);
  EXPECT_EQ(heatmap_chart(empty, {}, &hc, &why), -EINVAL);
  EXPECT_EQ(heatmap_chart(sample(), table_opt("nosuch"), &hc, &why), -ENOENT);
}

TEST(ReportSelect, TableByNameOrId) {
  const Recording r = sample();
  Output by_name = run(report_tables, r, Format::kCsv, table_opt("emb_b"));
  Output by_id = run(report_tables, r, Format::kCsv, table_opt("1"));
  ASSERT_EQ(by_name.rc, 0);
  ASSERT_EQ(by_id.rc, 0);
  EXPECT_EQ(by_name.out, by_id.out);
  EXPECT_NE(by_id.out.find("\n100,1,emb_b,"), std::string::npos);

  // A name that reads as a number is taken as the name first.
  Recording n = sample();
  for (Snapshot& s : n.snapshots) s.procs[0].tables[0].name = "1";
  Output x = run(report_tables, n, Format::kCsv, table_opt("1"));
  ASSERT_EQ(x.rc, 0);
  EXPECT_NE(x.out.find("\n100,0,1,"), std::string::npos) << x.out;
  EXPECT_EQ(x.out.find("emb_b"), std::string::npos) << x.out;
}

TEST(ReportSelect, ProcessesAndSharedNames) {
  const Recording r = two_processes();
  ReportOptions o;
  o.pid = 200;
  // Process 200's table is absent before 20 s: its wss is 0 there.
  Output x = run(report_wss, r, Format::kCsv, o);
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_EQ(x.out,
            "time_seconds,wss_bytes\n0.000,0\n10.000,0\n20.000,1048576\n30.000,1048576\n"
            "40.000,1048576\n50.000,1048576\n");
  // By name without --pid: both tables called emb_a.
  x = run(report_tables, r, Format::kCsv, table_opt("emb_a"));
  ASSERT_EQ(x.rc, 0) << x.why;
  EXPECT_NE(x.out.find("\n100,0,emb_a,"), std::string::npos);
  EXPECT_NE(x.out.find("\n200,0,emb_a,"), std::string::npos);
  EXPECT_EQ(x.out.find("emb_b"), std::string::npos);
}

// -------------------------------------------------------------- charts

TEST(ReportCharts, HeatmapOneTable) {
  plot::HeatmapChart c;
  std::string why;
  ASSERT_EQ(heatmap_chart(sample(), table_opt("emb_a"), &c, &why), 0) << why;
  EXPECT_EQ(c.title, "mtier heat map: emb_a");
  EXPECT_EQ(c.x_label, "time (s)");
  EXPECT_EQ(c.y_label, "offset in table (MiB)");
  EXPECT_EQ(c.colour_label, "heat (samples)");
  EXPECT_TRUE(c.bands.empty());
  ASSERT_EQ(c.rows, 4u);
  ASSERT_EQ(c.cols, 6u);
  ASSERT_EQ(c.values.size(), 24u);
  EXPECT_DOUBLE_EQ(c.x_lo, 0);
  EXPECT_DOUBLE_EQ(c.x_hi, 60);  // one interval past the last snapshot
  EXPECT_DOUBLE_EQ(c.y_lo, 0);
  EXPECT_DOUBLE_EQ(c.y_hi, 4);
  // Row 0 is the lowest offset: the hot cell is row 3 (top slice) at 40 s.
  const double hot = c.values[3 * 6 + 4];
  EXPECT_DOUBLE_EQ(hot, 40);
  for (size_t i = 0; i < c.values.size(); i++) {
    if (i != 3 * 6 + 4) {
      EXPECT_LT(c.values[i], hot) << i;
    }
  }
  EXPECT_DOUBLE_EQ(c.values[0 * 6 + 0], 0);
}

TEST(ReportCharts, HeatmapBandsPerTable) {
  plot::HeatmapChart c;
  std::string why;
  ASSERT_EQ(heatmap_chart(sample(), {}, &c, &why), 0) << why;
  EXPECT_EQ(c.title, "mtier heat map: all tables");
  EXPECT_EQ(c.y_label, "table");
  EXPECT_FALSE(c.colour_label.empty());
  ASSERT_EQ(c.rows, 8u);
  ASSERT_EQ(c.cols, 6u);
  ASSERT_EQ(c.bands.size(), 2u);
  // The first table on top, as in the text.
  EXPECT_EQ(c.bands[0].first_row, 0u);
  EXPECT_EQ(c.bands[0].rows, 4u);
  EXPECT_EQ(c.bands[0].label, "emb_b");
  EXPECT_EQ(c.bands[1].first_row, 4u);
  EXPECT_EQ(c.bands[1].label, "emb_a");
  // Per MiB: emb_a's hot cell 40, emb_b's cells 1 per 0.5 MiB = 2.
  EXPECT_DOUBLE_EQ(c.values[7 * 6 + 4], 40);
  EXPECT_DOUBLE_EQ(c.values[0 * 6 + 0], 2);
  EXPECT_LT(c.values[4 * 6 + 4], c.values[7 * 6 + 4]);

  // Several processes: bands named with their pids; a snapshot without the
  // table is "no data".
  ASSERT_EQ(heatmap_chart(two_processes(), table_opt("emb_a"), &c, &why), 0) << why;
  ASSERT_EQ(c.bands.size(), 2u);
  EXPECT_EQ(c.bands[0].label, "emb_a (pid 200)");
  EXPECT_EQ(c.bands[1].label, "emb_a (pid 100)");
  ASSERT_EQ(c.rows, 8u);  // 4 rows each: the longest heat map
  EXPECT_LT(c.values[0 * 6 + 0], 0);
  EXPECT_LT(c.values[0 * 6 + 1], 0);
  EXPECT_DOUBLE_EQ(c.values[0 * 6 + 2], 4);  // heat 4 over 1 MiB: 1 per row of 0.25 MiB
}

TEST(ReportCharts, LineCharts) {
  plot::LineChart c;
  std::string why;
  ASSERT_EQ(wss_chart(sample(), {}, &c, &why), 0) << why;
  EXPECT_EQ(c.title, "mtier working set: all tables");
  EXPECT_EQ(c.x_label, "time (s)");
  EXPECT_EQ(c.y_label, "working set (MiB)");
  ASSERT_EQ(c.series.size(), 1u);
  EXPECT_EQ(c.series[0].name, "trainer (pid 100)");
  ASSERT_EQ(c.series[0].points.size(), 6u);
  EXPECT_DOUBLE_EQ(c.series[0].points[4].first, 40);
  EXPECT_DOUBLE_EQ(c.series[0].points[4].second, 4);

  ASSERT_EQ(wss_chart(two_processes(), {}, &c, &why), 0) << why;
  ASSERT_EQ(c.series.size(), 3u);
  EXPECT_EQ(c.series[1].name, "server (pid 200)");
  EXPECT_EQ(c.series[1].points.size(), 4u);
  EXPECT_EQ(c.series[2].name, "total");
  EXPECT_DOUBLE_EQ(c.series[2].points[4].second, 5);

  ASSERT_EQ(tables_chart(sample(), {}, &c, &why), 0) << why;
  EXPECT_EQ(c.title, "mtier table heat: all tables");
  EXPECT_EQ(c.y_label, "heat (samples)");
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_EQ(c.series[0].name, "emb_a");
  EXPECT_DOUBLE_EQ(c.series[0].points[4].second, 42);
  EXPECT_EQ(c.series[1].name, "emb_b");

  // Only the pairs that moved pages, in Move order; MiB/s per interval.
  ASSERT_EQ(migrations_chart(sample(), {}, &c, &why), 0) << why;
  EXPECT_EQ(c.title, "mtier page moves: all tables");
  EXPECT_EQ(c.x_label, "time (s)");
  EXPECT_EQ(c.y_label, "moved (MiB/s)");
  ASSERT_EQ(c.series.size(), 4u);
  EXPECT_EQ(c.series[0].name, "new>dram");
  EXPECT_EQ(c.series[1].name, "store>dram");
  EXPECT_EQ(c.series[2].name, "dram>slow");
  EXPECT_EQ(c.series[3].name, "dram>store");
  ASSERT_EQ(c.series[0].points.size(), 5u);
  EXPECT_DOUBLE_EQ(c.series[0].points[0].first, 10);
  EXPECT_DOUBLE_EQ(c.series[0].points[0].second, 0.1);
  EXPECT_DOUBLE_EQ(c.series[0].points[4].second, 0);

  // emb_b alone moved nothing after its first snapshot: a flat line says so.
  ASSERT_EQ(migrations_chart(sample(), table_opt("emb_b"), &c, &why), 0) << why;
  ASSERT_EQ(c.series.size(), 1u);
  EXPECT_EQ(c.series[0].name, "no page moves");
}

}  // namespace
}  // namespace mtier::record
