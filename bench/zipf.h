// SPDX-License-Identifier: Apache-2.0
// Zipf-distributed ranks without a table of n entries: rank k in [0, n) with
// probability proportional to 1/(k+1)^s, sampled in O(1) by rejection-inversion.
#pragma once
#include <cstdint>
#include <random>

namespace mtier::bench {

class ZipfSampler {
 public:
  // n >= 1 ranks (0 is taken as 1); exponent s >= 0, 0 meaning uniform
  // (a negative exponent is taken as 0).
  ZipfSampler(uint64_t n, double exponent);

  // One rejection-inversion attempt for u uniform in [0, 1): true, with the
  // rank in *rank, when accepted (most attempts are; exponent 0 always is).
  bool attempt(double u, uint64_t* rank) const;

  // Draws u with std::uniform_real_distribution: bench/sample_trainer's
  // stream, kept so that `mtier demo` computes what it always has.
  uint64_t operator()(std::mt19937_64& rng) const;

  // Draws u from rng()'s top 53 bits: the same ranks with every standard
  // library, which generated traces need to be reproducible.
  uint64_t sample(std::mt19937_64& rng) const;

  uint64_t size() const { return n_; }
  double exponent() const { return e_; }

 private:
  double h(double x) const;
  double hint(double x) const;
  double hint_inv(double x) const;
  uint64_t n_;
  double e_, hx1_ = 0, hn_ = 0, s_ = 0;
};

// A uniform double in [0, 1) from the top 53 bits of one rng() draw.
inline double u01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

}  // namespace mtier::bench
