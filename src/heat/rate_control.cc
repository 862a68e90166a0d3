// SPDX-License-Identifier: Apache-2.0
#include "heat/rate_control.h"

#include <algorithm>
#include <cmath>

namespace mtier {

PeriodController::PeriodController(const PeriodControlConfig& config, uint64_t initial_period)
    : config_(config), period_(0) {
  if (config_.align == 0) config_.align = 1;
  if (config_.min_period == 0) config_.min_period = 1;
  if (config_.max_period < config_.min_period) config_.max_period = config_.min_period;
  if (!(config_.max_step > 1)) config_.max_step = 2;
  if (!(config_.deadband >= 0)) config_.deadband = 0;
  if (!(config_.smoothing > 0 && config_.smoothing <= 1)) config_.smoothing = 1;
  period_ = fit(static_cast<double>(initial_period));
}

uint64_t PeriodController::fit(double period) const {
  const double lo = static_cast<double>(config_.min_period);
  // (Capped at 2^62 so that llround below stays defined.)
  const double hi = static_cast<double>(std::min(config_.max_period, uint64_t{1} << 62));
  period = std::clamp(period, lo, hi);
  uint64_t p = static_cast<uint64_t>(std::llround(period));
  const uint64_t a = config_.align;
  p = (p + a / 2) / a * a;  // nearest multiple
  // Keep an aligned value inside the bounds (they need not be aligned).
  while (p < config_.min_period) p += a;
  while (p > config_.max_period && p >= a) p -= a;
  return p == 0 ? a : p;
}

uint64_t PeriodController::update(uint64_t samples, double seconds, uint64_t throttles) {
  if (!(seconds > 0)) return period_;
  rate_ = static_cast<double>(samples) / seconds;
  const double events = rate_ * static_cast<double>(period_);
  events_ = events_ < 0 ? events : events_ + config_.smoothing * (events - events_);
  const double target = config_.target_rate > 0 ? config_.target_rate : 1;
  // > 1: too many samples, lengthen the period.
  double ratio = events_ / target / static_cast<double>(period_);
  if (throttles > 0) ratio = std::max(ratio, 2.0);
  const double band = 1 + config_.deadband;
  if (ratio <= band && ratio >= 1 / band) return period_;
  ratio = std::clamp(ratio, 1 / config_.max_step, config_.max_step);
  uint64_t next = fit(static_cast<double>(period_) * ratio);
  if (next != period_) {
    period_ = next;
    changes_++;
  }
  return period_;
}

SampleCap::SampleCap(double per_second, double burst)
    : per_second_(per_second > 0 ? per_second : 0),
      burst_(burst > 0 ? burst : std::max(1.0, per_second_ / 10)),
      tokens_(burst_) {}

uint64_t SampleCap::admit(uint64_t n, uint64_t now_ns) {
  if (started_ && now_ns > last_ns_) {
    tokens_ =
        std::min(burst_, tokens_ + static_cast<double>(now_ns - last_ns_) * 1e-9 * per_second_);
  }
  if (!started_ || now_ns > last_ns_) last_ns_ = now_ns;
  started_ = true;
  uint64_t whole = static_cast<uint64_t>(tokens_);
  uint64_t take = std::min(n, whole);
  tokens_ -= static_cast<double>(take);
  admitted_ += take;
  dropped_ += n - take;
  return take;
}

}  // namespace mtier
