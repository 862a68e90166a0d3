// SPDX-License-Identifier: Apache-2.0
// Rejection-inversion after Hoermann & Derflinger (1996), as in Apache
// Commons' Zipf sampler. The integral helpers stay accurate near exponent 1,
// where (1 - s) log x vanishes.
#include "zipf.h"

#include <algorithm>
#include <cmath>

namespace mtier::bench {
namespace {

double helper1(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x / 2; }
double helper2(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x / 2; }

}  // namespace

ZipfSampler::ZipfSampler(uint64_t n, double exponent)
    : n_(std::max<uint64_t>(n, 1)), e_(exponent > 0 ? exponent : 0) {
  hx1_ = hint(1.5) - 1.0;
  hn_ = hint(n_ + 0.5);
  s_ = 2.0 - hint_inv(hint(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const { return std::exp(-e_ * std::log(x)); }

double ZipfSampler::hint(double x) const {
  double lx = std::log(x);
  return helper2((1.0 - e_) * lx) * lx;
}

double ZipfSampler::hint_inv(double x) const {
  double t = std::max(-1.0, x * (1.0 - e_));
  return std::exp(helper1(t) * x);
}

bool ZipfSampler::attempt(double u, uint64_t* rank) const {
  if (e_ == 0) {  // uniform: exact, and no rejection loop at all
    *rank = std::min(static_cast<uint64_t>(u * double(n_)), n_ - 1);
    return true;
  }
  double v = hn_ + u * (hx1_ - hn_);
  double x = hint_inv(v);
  double k = std::clamp(std::floor(x + 0.5), 1.0, double(n_));
  if (k - x <= s_ || v >= hint(k + 0.5) - h(k)) {
    *rank = static_cast<uint64_t>(k) - 1;
    return true;
  }
  return false;
}

uint64_t ZipfSampler::operator()(std::mt19937_64& rng) const {
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  uint64_t k;
  while (!attempt(dist(rng), &k)) {
  }
  return k;
}

uint64_t ZipfSampler::sample(std::mt19937_64& rng) const {
  uint64_t k;
  while (!attempt(u01(rng), &k)) {
  }
  return k;
}

}  // namespace mtier::bench
