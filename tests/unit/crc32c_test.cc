// SPDX-License-Identifier: Apache-2.0
// crc32c (util/crc32c.h), the checksum an evicted page carries: known
// vectors (RFC 3720 B.4), and the CPU's instruction path, with its three
// interleaved streams, equal to the portable table at every length and
// alignment around a page, and when extended piece by piece.
#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace mtier {
namespace {

std::vector<unsigned char> bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c_portable("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  unsigned char zeros[32] = {}, ones[32], up[32], down[32];
  for (int i = 0; i < 32; i++) {
    ones[i] = 0xff;
    up[i] = static_cast<unsigned char>(i);
    down[i] = static_cast<unsigned char>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros, 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones, 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(up, 32), 0x46DD794Eu);
  EXPECT_EQ(crc32c(down, 32), 0x113FDB5Cu);
}

TEST(Crc32c, TheInstructionPathEqualsThePortableOneAtEveryLengthAndAlignment) {
  if (!crc32c_hardware()) GTEST_SKIP() << "no SSE4.2 here: only the portable path runs";
  auto v = bytes(3 * 4096 + 64, 1);
  for (size_t off = 0; off < 8; off++)
    for (size_t n : {0, 1, 7, 8, 9, 4079, 4080, 4081, 4095, 4096, 4097, 8192, 12288}) {
      SCOPED_TRACE(testing::Message() << "offset " << off << " length " << n);
      EXPECT_EQ(crc32c(v.data() + off, n), crc32c_portable(v.data() + off, n));
    }
}

TEST(Crc32c, ExtendingAResultEqualsTheWhole) {
  auto v = bytes(4096, 2);
  uint32_t whole = crc32c(v.data(), v.size());
  for (size_t cut : {1, 100, 1360, 2048, 4095}) {
    EXPECT_EQ(crc32c(v.data() + cut, v.size() - cut, crc32c(v.data(), cut)), whole) << cut;
    EXPECT_EQ(crc32c_portable(v.data() + cut, v.size() - cut, crc32c_portable(v.data(), cut)),
              whole)
        << cut;
  }
}

TEST(Crc32c, OneFlippedBitAnywhereInAPageChangesIt) {
  auto v = bytes(4096, 3);
  uint32_t sum = crc32c(v.data(), v.size());
  for (size_t bit = 0; bit < 4096 * 8; bit += 97) {
    v[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    EXPECT_NE(crc32c(v.data(), v.size()), sum) << bit;
    v[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
  std::vector<unsigned char> zeros(4096, 0);
  EXPECT_NE(crc32c(zeros.data(), zeros.size()), sum) << "a page read back as zeros";
}

}  // namespace
}  // namespace mtier
