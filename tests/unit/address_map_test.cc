// SPDX-License-Identifier: Apache-2.0
// Address attribution: lookups at the edges of ranges, per-pid separation,
// replace/remove, refused range sets, and the unattributed count.
#include "perf/address_map.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace mtier {
namespace {

constexpr uint64_t kPage = 4096;

TEST(AddressMap, LookupsAtRangeEdges) {
  AddressMap m;
  // Two ranges with a one-page hole between them, given out of order.
  ASSERT_EQ(m.replace(100, {{0x20000, 4, 7}, {0x10000, 8, 5}}), 0);
  EXPECT_EQ(m.ranges(100), 2u);
  struct Case {
    uint64_t addr;
    bool hit;
    uint64_t owner, page;
  };
  const Case cases[] = {
      {0x10000 - 1, false, 0, 0},             // just below the first
      {0x10000, true, 5, 0},                  // its first byte
      {0x10000 + kPage - 1, true, 5, 0},      // end of its first page
      {0x10000 + kPage, true, 5, 1},          // second page
      {0x10000 + 8 * kPage - 1, true, 5, 7},  // its last byte
      {0x10000 + 8 * kPage, false, 0, 0},     // the hole
      {0x20000 - 1, false, 0, 0},
      {0x20000, true, 7, 0},
      {0x20000 + 4 * kPage - 1, true, 7, 3},
      {0x20000 + 4 * kPage, false, 0, 0},  // past the last
      {0, false, 0, 0},
      {~uint64_t{0}, false, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.addr);
    auto hit = m.lookup(100, c.addr);
    ASSERT_EQ(hit.has_value(), c.hit);
    if (c.hit) {
      EXPECT_EQ(hit->owner, c.owner);
      EXPECT_EQ(hit->page, c.page);
    }
  }
  EXPECT_EQ(m.attributed(), 6u);
  EXPECT_EQ(m.unattributed(), 6u);
}

TEST(AddressMap, PidsAreSeparate) {
  AddressMap m;
  ASSERT_EQ(m.replace(1, {{0x10000, 1, 11}}), 0);
  ASSERT_EQ(m.replace(2, {{0x10000, 1, 22}}), 0);
  EXPECT_EQ(m.lookup(1, 0x10000)->owner, 11u);
  EXPECT_EQ(m.lookup(2, 0x10000)->owner, 22u);
  EXPECT_FALSE(m.lookup(3, 0x10000).has_value());  // unknown pid
  EXPECT_EQ(m.unattributed(), 1u);
  EXPECT_EQ(m.pids(), 2u);
}

TEST(AddressMap, ReplaceAndRemove) {
  AddressMap m;
  ASSERT_EQ(m.replace(1, {{0x10000, 1, 1}}), 0);
  ASSERT_EQ(m.replace(1, {{0x40000, 2, 2}}), 0);  // replaces, not adds
  EXPECT_FALSE(m.lookup(1, 0x10000).has_value());
  EXPECT_EQ(m.lookup(1, 0x41000)->owner, 2u);
  m.remove(1);
  EXPECT_FALSE(m.lookup(1, 0x41000).has_value());
  EXPECT_EQ(m.pids(), 0u);
  ASSERT_EQ(m.replace(1, {{0x10000, 1, 1}}), 0);
  ASSERT_EQ(m.replace(1, {}), 0);  // empty: gone
  EXPECT_EQ(m.pids(), 0u);
}

TEST(AddressMap, RefusesBadRangesAndKeepsTheOldOnes) {
  AddressMap m;
  ASSERT_EQ(m.replace(1, {{0x10000, 4, 1}}), 0);
  EXPECT_EQ(m.replace(1, {{0x10000, 0, 1}}), -EINVAL);                   // empty
  EXPECT_EQ(m.replace(1, {{0x10001, 1, 1}}), -EINVAL);                   // unaligned
  EXPECT_EQ(m.replace(1, {{0x10000, 4, 1}, {0x13000, 1, 2}}), -EINVAL);  // overlap
  EXPECT_EQ(m.replace(1, {{~uint64_t{0} - 0xfff, 2, 1}}), -EINVAL);      // wraps
  EXPECT_EQ(m.lookup(1, 0x13fff)->owner, 1u);
  // Touching ranges are fine, and so is one that ends at 2^64.
  EXPECT_EQ(m.replace(1, {{0x10000, 4, 1}, {0x14000, 1, 2}, {~uint64_t{0} - 0xfff, 1, 3}}), 0);
  EXPECT_EQ(m.lookup(1, 0x14000)->owner, 2u);
  EXPECT_EQ(m.lookup(1, ~uint64_t{0})->owner, 3u);
}

TEST(AddressMap, ManyRangesStillFindTheRightOne) {
  AddressMap m;
  std::vector<AddressRange> v;
  for (uint64_t i = 0; i < 10000; i++) v.push_back({0x100000000 + i * 16 * kPage, 8, i});
  ASSERT_EQ(m.replace(9, v), 0);
  for (uint64_t i = 0; i < 10000; i += 37) {
    uint64_t base = 0x100000000 + i * 16 * kPage;
    auto hit = m.lookup(9, base + 5 * kPage + 17);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->owner, i);
    EXPECT_EQ(hit->page, 5u);
    EXPECT_FALSE(m.lookup(9, base + 8 * kPage).has_value());
  }
}

TEST(AddressMap, OtherPageSizes) {
  AddressMap m(2 << 20);  // 2 MiB pages
  ASSERT_EQ(m.replace(1, {{0x40000000, 2, 4}}), 0);
  EXPECT_EQ(m.lookup(1, 0x40000000 + (3 << 20))->page, 1u);
  EXPECT_EQ(m.replace(1, {{0x40001000, 1, 4}}), -EINVAL);
}

}  // namespace
}  // namespace mtier
