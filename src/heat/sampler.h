// SPDX-License-Identifier: Apache-2.0
// The access sampler: zaps the PTEs of a rotating sample of resident pages,
// at most `scan_rate` pages per second, so that the MINOR faults that follow
// mark the pages that are really in use (referenced bit, heat). Runs on the
// evictor's thread between eviction passes.
#pragma once
#include <chrono>

#include "heat/clock.h"

namespace mtier {

class Sampler {
 public:
  explicit Sampler(Core& core) : core_(core), hand_(core, {.decay_heat = true}) {}
  // Samples the pages due since the last tick (rate-limited). Takes the
  // table registry's shared lock.
  void tick();

 private:
  Core& core_;
  ClockHand hand_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double credit_ = 0;
};

}  // namespace mtier
