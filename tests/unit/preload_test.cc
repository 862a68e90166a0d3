// SPDX-License-Identifier: Apache-2.0
// The preload interposer's pure parts: which allocations it selects and how
// it names them, and its record of partly unmapped tables. (The interposer's
// behaviour in a real process is tested by tests/preload/*.test.)
#include <gtest/gtest.h>

#include "managed_map.h"
#include "selection.h"

namespace mtier::lib {
namespace {

Options opts(uint64_t min, const char* names, const char* include, const char* exclude) {
  Options o;
  o.min_bytes = min;
  o.names = names;
  o.include_sizes = include;
  o.exclude_sizes = exclude;
  return o;
}

TEST(Selection, SizeRulesExcludeWins) {
  Selection s(opts(1 << 20, "", "512K-600K", "3M-5M"));
  EXPECT_EQ(s.smallest(), 512u << 10);
  EXPECT_FALSE(s.by_size(0));
  EXPECT_FALSE(s.by_size(4096));
  EXPECT_TRUE(s.by_size(520 << 10));
  EXPECT_FALSE(s.by_size(700 << 10));
  EXPECT_TRUE(s.by_size(2 << 20));
  EXPECT_FALSE(s.by_size(4 << 20));
  EXPECT_TRUE(s.by_size(8 << 20));
}

TEST(Selection, NamesInOrderDashSkips) {
  Selection s(opts(1 << 20, "emb_a,-,emb_b", "", ""));
  std::string name;
  EXPECT_FALSE(s.take(4096, &name));  // not a candidate: does not use a name
  EXPECT_TRUE(s.take(2 << 20, &name));
  EXPECT_EQ(name, "emb_a");
  EXPECT_FALSE(s.take(2 << 20, &name));
  EXPECT_TRUE(s.take(2 << 20, &name));
  EXPECT_EQ(name, "emb_b");
  EXPECT_TRUE(s.take(2 << 20, &name));
  EXPECT_EQ(name, "");  // the engine's default name
}

TEST(Selection, InactiveSelectsNothing) {
  Selection s;
  std::string name;
  EXPECT_EQ(s.smallest(), UINT64_MAX);
  EXPECT_FALSE(s.take(1ull << 40, &name));
}

TEST(ManagedMap, FindsContainingRecordAndOverlaps) {
  static char region[64 * 4096];
  ManagedMap map;
  Managed a;
  a.base = region;
  a.capacity = 4 * 4096;
  a.ptr = region;
  a.id = 1;
  Managed b = a;
  b.base = region + 8 * 4096;
  b.ptr = b.base;
  b.id = 2;
  ASSERT_NE(map.insert(a), nullptr);
  ASSERT_NE(map.insert(b), nullptr);
  EXPECT_EQ(map.find(region + 100)->id, 1);
  EXPECT_EQ(map.find(region + 4 * 4096), nullptr);  // the gap
  EXPECT_EQ(map.find(region + 9 * 4096)->id, 2);
  EXPECT_EQ(map.find(region + 12 * 4096), nullptr);
  EXPECT_EQ(map.first_overlapping(region + 3 * 4096, region + 9 * 4096)->id, 1);
  EXPECT_EQ(map.first_overlapping(region + 4 * 4096, region + 9 * 4096)->id, 2);
  EXPECT_EQ(map.first_overlapping(region + 4 * 4096, region + 8 * 4096), nullptr);
  EXPECT_EQ(map.first_overlapping(region + 12 * 4096, region + 64 * 4096), nullptr);
  map.erase(map.find(region));
  EXPECT_EQ(map.find(region + 100), nullptr);
  EXPECT_EQ(map.size(), 1u);
}

TEST(ManagedMap, UnmappedIntervalsMergeAndShrink) {
  Managed m;
  m.capacity = 16 * 4096;
  ASSERT_TRUE(m.add_unmapped(2, 4));
  ASSERT_TRUE(m.add_unmapped(3, 6));
  ASSERT_TRUE(m.add_unmapped(10, 12));
  EXPECT_EQ(m.unmapped_pages(), 6u);
  ASSERT_TRUE(m.add_unmapped(6, 10));
  ASSERT_EQ(m.unmapped.size(), 1u);
  EXPECT_EQ(m.unmapped_pages(), 10u);
  ASSERT_TRUE(m.remove_unmapped(4, 8));
  EXPECT_EQ(m.unmapped_pages(), 6u);
  ASSERT_EQ(m.unmapped.size(), 2u);
  EXPECT_EQ(m.unmapped[0], std::make_pair(uint64_t{2}, uint64_t{4}));
  EXPECT_EQ(m.unmapped[1], std::make_pair(uint64_t{8}, uint64_t{12}));
}

}  // namespace
}  // namespace mtier::lib
