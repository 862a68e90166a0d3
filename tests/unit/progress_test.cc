// SPDX-License-Identifier: Apache-2.0
// util/progress: the live line's text (done/total, the ETA) and when it is
// drawn, erased and left out, on a fake clock and a captured "terminal".
#include "util/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace mtier::progress {
namespace {

struct Fake {
  double t = 100;  // any start: only differences count
  std::string out;
  Io io(bool terminal, unsigned columns = 0) {
    Io io;
    io.now = [this] { return t; };
    io.write = [this](std::string_view s) { out += s; };
    io.terminal = terminal;
    io.columns = columns;
    return io;
  }
};

TEST(ProgressFormat, Durations) {
  EXPECT_EQ(format_duration(-3), "0s");
  EXPECT_EQ(format_duration(0.9), "0s");
  EXPECT_EQ(format_duration(59.9), "59s");
  EXPECT_EQ(format_duration(60), "1m00s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3599), "59m59s");
  EXPECT_EQ(format_duration(3600 * 2 + 4 * 60 + 59), "2h04m");
}

TEST(ProgressFormat, DoneTotalAndEta) {
  // 10 of 40 in 30 s: 30 more in 90 s.
  EXPECT_EQ(format_line("suite: runs", 10, 40, "runs", 30),
            "suite: runs 10/40 runs (25%), 30s elapsed, about 1m30s left");
  EXPECT_EQ(format_line("oracle", 1, 3, "", 2), "oracle 1/3 (33%), 2s elapsed, about 4s left");
  // Nothing done yet, or too soon: no figure.
  EXPECT_EQ(format_line("x", 0, 5, "", 10), "x 0/5 (0%), 10s elapsed, estimating the time left");
  EXPECT_EQ(format_line("x", 3, 5, "", 0.5), "x 3/5 (60%), 0s elapsed, estimating the time left");
  // Finished: no time left to give; more than total is shown as total.
  EXPECT_EQ(format_line("x", 5, 5, "", 7), "x 5/5 (100%), 7s elapsed");
  EXPECT_EQ(format_line("x", 9, 5, "", 7), "x 5/5 (100%), 7s elapsed");
  // No total: the label and the time.
  EXPECT_EQ(format_line("x", 3, 0, "runs", 7), "x, 7s elapsed");
}

TEST(Progress, DrawsOnATerminal) {
  Fake f;
  {
    Progress p(f.io(true), false);
    EXPECT_TRUE(p.live());
    p.start("runs", 4, "");
    EXPECT_EQ(f.out, "\r\033[Kruns 0/4 (0%), 0s elapsed, estimating the time left");
    f.out.clear();
    f.t += 10;
    p.update(1);
    EXPECT_EQ(f.out, "\r\033[Kruns 1/4 (25%), 10s elapsed, about 30s left");
    f.out.clear();
  }
  // The destructor erases the line it left.
  EXPECT_EQ(f.out, "\r\033[K");
}

TEST(Progress, RedrawsAtMostEveryQuarterSecondButAlwaysAtTheEnd) {
  Fake f;
  Progress p(f.io(true), false);
  p.start("x", 100, "");
  f.out.clear();
  f.t += Progress::kRedrawSeconds / 2;
  p.update(1);
  EXPECT_EQ(f.out, "");  // too soon
  f.t += Progress::kRedrawSeconds;
  p.update(2);
  EXPECT_NE(f.out.find("x 2/100"), std::string::npos) << f.out;
  f.out.clear();
  p.update(100);  // no time passed, but done
  EXPECT_NE(f.out.find("x 100/100 (100%)"), std::string::npos) << f.out;
  f.out.clear();
  // A total that shrank (runs that will not happen) counts as the end too.
  p.update(50, 50);
  EXPECT_NE(f.out.find("x 50/50"), std::string::npos) << f.out;
}

TEST(Progress, LogLinesGoAboveTheLiveLine) {
  Fake f;
  Progress p(f.io(true), false);
  p.line("before any phase");
  EXPECT_EQ(f.out, "before any phase\n");
  f.out.clear();
  p.start("x", 2, "");
  f.out.clear();
  f.t += 2;
  p.line("run 1 done\n");
  EXPECT_EQ(f.out, "\r\033[Krun 1 done\n\r\033[Kx 0/2 (0%), 2s elapsed, estimating the time left");
  f.out.clear();
  p.clear();
  EXPECT_EQ(f.out, "\r\033[K");
  f.out.clear();
  p.clear();  // nothing left to erase
  p.line("after");
  EXPECT_EQ(f.out, "after\n");  // no live line after clear()
}

TEST(Progress, RelabelKeepsTheClock) {
  Fake f;
  Progress p(f.io(true), false);
  p.start("record: 0 snapshots", 30, "s");
  f.t += 12;
  p.relabel("record: 12 snapshots");
  f.out.clear();
  p.update(12);
  EXPECT_EQ(f.out, "\r\033[Krecord: 12 snapshots 12/30 s (40%), 12s elapsed, about 18s left");
}

TEST(Progress, NotATerminalOnlyLogLines) {
  Fake f;
  {
    Progress p(f.io(false), false);
    EXPECT_FALSE(p.live());
    p.start("x", 3, "");
    f.t += 5;
    p.update(1);
    p.line("a line");
    p.update(3);
  }
  EXPECT_EQ(f.out, "a line\n");
}

TEST(Progress, QuietNothingAtAll) {
  Fake f;
  {
    Progress p(f.io(true), true);
    EXPECT_FALSE(p.live());
    p.start("x", 3, "");
    p.update(3);
    p.line("a line");
  }
  EXPECT_EQ(f.out, "");
}

TEST(Progress, CutToTheTerminalWidth) {
  Fake f;
  Progress p(f.io(true, 12), false);
  p.start("a long label", 10, "items");
  EXPECT_EQ(f.out, "\r\033[Ka long labe");  // 11 columns of 12
}

}  // namespace
}  // namespace mtier::progress
