// SPDX-License-Identifier: Apache-2.0
// An unbalanced 4-round Feistel network over the smallest power of two
// >= n, with cycle walking: re-encrypting until the value falls below n keeps
// a bijection of [0, 2^bits) a bijection of [0, n) (the cycle through i
// returns to i, so it meets a value < n). The domain is < 2n, so the walk
// takes under 2 passes on average.
#include "permutation.h"

#include <algorithm>
#include <bit>

namespace mtier::bench {

uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Permutation::Permutation(uint64_t n, uint64_t seed) : n_(std::max<uint64_t>(n, 1)) {
  // At least 2 bits so that both halves of a round are non-empty.
  bits_ = std::max(2u, static_cast<unsigned>(std::bit_width(n_ - 1)));
  uint64_t k = seed;
  for (auto& key : keys_) key = k = mix64(k);
}

// Each round maps (L: wl bits, R: wr bits) to (R, L ^ F(R)): a bijection
// whatever F is; the widths swap, so an odd-width domain works too.
uint64_t Permutation::encrypt(uint64_t x) const {
  unsigned wl = bits_ / 2, wr = bits_ - wl;
  for (uint64_t key : keys_) {
    uint64_t l = x >> wr, r = x & ((1ull << wr) - 1);
    uint64_t f = mix64(r ^ key);
    x = (r << wl) | ((l ^ f) & ((1ull << wl) - 1));
    std::swap(wl, wr);
  }
  return x;
}

uint64_t Permutation::operator()(uint64_t i) const {
  if (n_ == 1) return 0;
  uint64_t x = encrypt(i);
  while (x >= n_) x = encrypt(x);
  return x;
}

}  // namespace mtier::bench
