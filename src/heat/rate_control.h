// SPDX-License-Identifier: Apache-2.0
// Keeps the cost of perf sampling bounded. Two controls, both pure (the
// caller passes the counts and the time):
//   PeriodController  PEBS / IBS: picks the next sample period so that the
//                     samples arriving per second approach a target.
//   SampleCap         page-faults, whose period stays 1 (every fault is a
//                     sample): a token bucket on the samples processed per
//                     second; the rest are counted as dropped. Also a
//                     backstop behind a PeriodController.
#pragma once
#include <cstdint>

namespace mtier {

struct PeriodControlConfig {
  double target_rate = 1000;  // samples per second wanted
  uint64_t min_period = 1;
  uint64_t max_period = uint64_t{1} << 40;
  uint64_t align = 1;  // periods are multiples of this (IBS: 16)
  // Hysteresis: the period stays while the (smoothed) rate it gives is
  // within target / (1 + deadband) .. target * (1 + deadband). Outside, it
  // moves to aim at the target itself, the middle of the band.
  double deadband = 0.25;
  // The controller estimates the workload's event rate (samples * period /
  // seconds, which does not depend on the period) and smooths it with this
  // weight for the newest interval (1: no smoothing). Aiming at one noisy
  // interval would overshoot by its noise, and the next interval's opposite
  // noise would pull it back: an oscillation the band alone cannot stop.
  double smoothing = 0.5;
  // At most this factor up or down per update: one odd interval (a burst, an
  // idle spell) cannot throw the period to a bound.
  double max_step = 4;
};

class PeriodController {
 public:
  // `initial_period` is clamped and aligned like every later one.
  PeriodController(const PeriodControlConfig& config, uint64_t initial_period);

  // The interval that just ended: `samples` arrived in `seconds` at the
  // current period, and the kernel throttled the event `throttles` times
  // (PERF_RECORD_THROTTLE: the interrupt rate passed
  // perf_event_max_sample_rate, so `samples` undercounts; the period at
  // least doubles). Returns the period for the next interval; an interval of
  // no length changes nothing. The rate scales as 1/period, so the period
  // aimed at is (smoothed event rate) / target.
  uint64_t update(uint64_t samples, double seconds, uint64_t throttles = 0);

  uint64_t period() const { return period_; }
  // The rate observed in the last update, samples/s.
  double rate() const { return rate_; }
  // Updates that changed the period.
  uint64_t changes() const { return changes_; }

 private:
  uint64_t fit(double period) const;

  PeriodControlConfig config_;
  uint64_t period_;
  double rate_ = 0;
  double events_ = -1;  // smoothed event rate, events/s; < 0 before the first
  uint64_t changes_ = 0;
};

class SampleCap {
 public:
  // At most `per_second` samples processed per second on average, and
  // `burst` at once (after an idle spell); burst 0 means one tenth of a
  // second's worth (at least 1). The bucket starts full.
  SampleCap(double per_second, double burst = 0);

  // `n` samples arrived at `now_ns` (a monotonic clock): returns how many
  // of them may be processed; the others count as dropped. A caller that
  // gets k < n should process every (n/k)-th, not the first k, so that the
  // kept samples stay spread over the batch.
  uint64_t admit(uint64_t n, uint64_t now_ns);
  bool admit_one(uint64_t now_ns) { return admit(1, now_ns) == 1; }

  uint64_t admitted() const { return admitted_; }
  uint64_t dropped() const { return dropped_; }
  double per_second() const { return per_second_; }

 private:
  double per_second_;
  double burst_;
  double tokens_;
  uint64_t last_ns_ = 0;
  bool started_ = false;
  uint64_t admitted_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace mtier
