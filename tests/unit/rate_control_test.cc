// SPDX-License-Identifier: Apache-2.0
// The sampling rate controls with synthetic rates: the period controller
// converges, clamps, aligns, holds still inside its band and reacts to
// throttling; the sample cap admits its budget and counts the rest dropped.
#include "heat/rate_control.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace mtier {
namespace {

// A workload making `events_per_s` countable events: at period P the
// samples in an interval of `secs` are events * secs / P.
uint64_t samples_at(double events_per_s, uint64_t period, double secs) {
  return static_cast<uint64_t>(events_per_s * secs / static_cast<double>(period));
}

TEST(PeriodController, ConvergesFromFarBelowAndFarAbove) {
  PeriodControlConfig c;
  c.target_rate = 1000;
  c.min_period = 100;
  c.max_period = 100'000'000;
  const double events = 5e8;  // wants period 500000
  for (uint64_t start : {uint64_t{100}, uint64_t{50'000'000}}) {
    SCOPED_TRACE(start);
    PeriodController pc(c, start);
    int steps = 0;
    for (; steps < 20; steps++) {
      uint64_t before = pc.period();
      pc.update(samples_at(events, before, 1.0), 1.0);
      if (pc.period() == before) break;
    }
    EXPECT_LT(steps, 10);
    double rate = events / static_cast<double>(pc.period());
    EXPECT_GT(rate, c.target_rate / 1.25);
    EXPECT_LT(rate, c.target_rate * 1.25);
  }
}

TEST(PeriodController, StepsAreBounded) {
  PeriodControlConfig c;
  c.target_rate = 100;
  c.max_step = 4;
  PeriodController up(c, 1000);
  // 1000x too many samples: only x4 this interval.
  EXPECT_EQ(up.update(100'000, 1.0), 4000u);
  // None at all (idle): only /4.
  PeriodController down(c, 1000);
  EXPECT_EQ(down.update(0, 1.0), 250u);
}

TEST(PeriodController, HoldsStillInsideTheBand) {
  PeriodControlConfig c;
  c.target_rate = 1000;
  c.deadband = 0.25;
  PeriodController pc(c, 5000);
  // Noise of +-20% around the target: no change at all.
  const double noise[] = {1.2, 0.85, 1.1, 0.81, 1.19, 0.9, 1.0, 1.24};
  for (double f : noise) EXPECT_EQ(pc.update(static_cast<uint64_t>(1000 * f), 1.0), 5000u);
  EXPECT_EQ(pc.changes(), 0u);
  // Outside it: moves toward the target (half way: smoothing 0.5)...
  uint64_t p = pc.update(2000, 1.0);
  EXPECT_GT(p, 5000u * 5 / 4);
  EXPECT_LT(p, 10000u);
  EXPECT_EQ(pc.changes(), 1u);
  // ...and arrives while the workload stays there.
  for (int i = 0; i < 10; i++) pc.update(samples_at(1e7, pc.period(), 1.0), 1.0);
  EXPECT_NEAR(static_cast<double>(pc.period()), 10000, 10000 * 0.25);
}

TEST(PeriodController, WithoutSmoothingAimsAtTheTargetAtOnce) {
  PeriodControlConfig c;
  c.target_rate = 1000;
  c.smoothing = 1;
  PeriodController pc(c, 5000);
  EXPECT_EQ(pc.update(2000, 1.0), 10000u);
}

TEST(PeriodController, DoesNotOscillateUnderAlternatingNoise) {
  // A noisy workload (samples alternating 15% over and 13% under the mean,
  // a 32% swing, more than the band): the period does not flip-flop.
  PeriodControlConfig c;
  c.target_rate = 1000;
  PeriodController pc(c, 1000);
  const double events = 2e7;  // ideal period 20000
  for (int i = 0; i < 10; i++) pc.update(samples_at(events, pc.period(), 1.0), 1.0);
  uint64_t settled = pc.changes();
  for (int i = 0; i < 100; i++) {
    double f = (i % 2) ? 1.15 : 0.87;
    pc.update(samples_at(events * f, pc.period(), 1.0), 1.0);
  }
  // (A last step toward the middle of the band is fine; one per interval
  // would be 100.)
  EXPECT_LE(pc.changes() - settled, 2u);
  EXPECT_NEAR(static_cast<double>(pc.period()), 20000, 20000 * 0.25);
}

TEST(PeriodController, ClampsToTheBounds) {
  PeriodControlConfig c;
  c.target_rate = 1000;
  c.min_period = 1000;
  c.max_period = 8000;
  PeriodController pc(c, 1);
  EXPECT_EQ(pc.period(), 1000u);                   // the initial one is clamped too
  for (int i = 0; i < 10; i++) pc.update(0, 1.0);  // idle: wants shorter
  EXPECT_EQ(pc.period(), 1000u);
  for (int i = 0; i < 10; i++) pc.update(1'000'000, 1.0);  // flooded: longer
  EXPECT_EQ(pc.period(), 8000u);
}

TEST(PeriodController, AlignsLikeIbs) {
  PeriodControlConfig c;
  c.target_rate = 1000;
  c.min_period = 0x1000;
  c.max_period = 0xffff0;
  c.align = 16;
  PeriodController pc(c, 0x10007);
  EXPECT_EQ(pc.period() % 16, 0u);
  for (int i = 0; i < 20; i++) {
    pc.update(samples_at(3.3e7 + i * 1e5, pc.period(), 0.5), 0.5);
    EXPECT_EQ(pc.period() % 16, 0u);
    EXPECT_GE(pc.period(), c.min_period);
    EXPECT_LE(pc.period(), c.max_period);
  }
}

TEST(PeriodController, ThrottlingLengthensThePeriod) {
  PeriodControlConfig c;
  c.target_rate = 1000;
  PeriodController pc(c, 10000);
  // The kernel throttled: the count looks on target but is not.
  EXPECT_EQ(pc.update(1000, 1.0, /*throttles=*/3), 20000u);
}

TEST(PeriodController, ZeroLengthIntervalChangesNothing) {
  PeriodController pc(PeriodControlConfig{}, 5000);
  EXPECT_EQ(pc.update(1'000'000, 0.0), 5000u);
  EXPECT_EQ(pc.update(1'000'000, -1.0), 5000u);
  EXPECT_EQ(pc.changes(), 0u);
}

constexpr uint64_t kSec = 1'000'000'000;

TEST(SampleCap, AdmitsTheBudgetAndDropsTheRest) {
  SampleCap cap(1000, 100);  // 1000/s, bursts of 100
  // A burst of 500 at t=0: the bucket (100) goes, 400 dropped.
  EXPECT_EQ(cap.admit(500, 0), 100u);
  EXPECT_EQ(cap.dropped(), 400u);
  // 50 ms later: 50 tokens.
  EXPECT_EQ(cap.admit(500, kSec / 20), 50u);
  // A long idle spell refills only up to the burst.
  EXPECT_EQ(cap.admit(10'000, 10 * kSec), 100u);
  EXPECT_EQ(cap.admitted(), 250u);
  EXPECT_EQ(cap.dropped(), 400u + 450u + 9900u);
}

TEST(SampleCap, SteadyFloodIsHeldToTheRate) {
  // Page faults at 50000/s for 10 s, drained every 10 ms, capped at 2000/s.
  SampleCap cap(2000);
  uint64_t admitted = 0;
  for (uint64_t t = 0; t <= 10 * kSec; t += kSec / 100) admitted += cap.admit(500, t);
  // 10 s of 2000/s plus the initial bucket (200).
  EXPECT_NEAR(static_cast<double>(admitted), 20000 + 200, 50);
  EXPECT_EQ(cap.admitted() + cap.dropped(), 1001u * 500u);
}

TEST(SampleCap, UnderTheCapNothingIsDropped) {
  SampleCap cap(1000);
  for (uint64_t t = 0; t < 5 * kSec; t += kSec / 10) EXPECT_EQ(cap.admit(50, t), 50u);
  EXPECT_EQ(cap.dropped(), 0u);
  EXPECT_TRUE(cap.admit_one(5 * kSec));
}

TEST(SampleCap, ClockGoingBackwardsAddsNothing) {
  SampleCap cap(1000, 10);
  EXPECT_EQ(cap.admit(10, 5 * kSec), 10u);
  EXPECT_EQ(cap.admit(10, 4 * kSec), 0u);
  EXPECT_EQ(cap.admit(10, 5 * kSec + kSec / 100), 10u);
}

}  // namespace
}  // namespace mtier
