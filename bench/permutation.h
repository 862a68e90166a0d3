// SPDX-License-Identifier: Apache-2.0
// A seeded pseudo-random permutation of [0, n), evaluated per index in O(1)
// memory: popular Zipf ranks mapped through it land scattered over a table's
// pages, as hashed ids do in real models.
#pragma once
#include <cstdint>

namespace mtier::bench {

class Permutation {
 public:
  // n in [1, 2^62] (0 is taken as 1); each seed gives another permutation.
  Permutation(uint64_t n, uint64_t seed);

  // The image of i; i < n, and distinct i give distinct images.
  uint64_t operator()(uint64_t i) const;

  uint64_t size() const { return n_; }

 private:
  uint64_t encrypt(uint64_t x) const;  // one Feistel pass over [0, 2^bits)
  uint64_t n_;
  unsigned bits_;   // the domain walked is [0, 2^bits_), 2^bits_ < 2n
  uint64_t keys_[4];
};

// SplitMix64's finaliser: a well-mixed 64-bit hash, for seeds and streams.
uint64_t mix64(uint64_t x);

}  // namespace mtier::bench
