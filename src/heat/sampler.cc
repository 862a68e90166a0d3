// SPDX-License-Identifier: Apache-2.0
#include "heat/sampler.h"

#include <mutex>
#include <shared_mutex>

namespace mtier {

void Sampler::tick() {
  auto now = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  credit_ += secs * static_cast<double>(core_.opts.scan_rate);
  // Credit beyond one second's worth is dropped: a stalled thread does not
  // come back and zap in a burst.
  if (credit_ > static_cast<double>(core_.opts.scan_rate)) credit_ = core_.opts.scan_rate;
  if (credit_ < 1) return;
  std::shared_lock tables(core_.tables.mutex());
  credit_ -= static_cast<double>(hand_.sweep(static_cast<uint64_t>(credit_), nullptr, 0));
  if (credit_ < 0) credit_ = 0;
}

}  // namespace mtier
