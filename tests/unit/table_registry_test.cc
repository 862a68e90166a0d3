// SPDX-License-Identifier: Apache-2.0
// The table registry's cost per table: creating n tables must stay
// near-linear (12,000 small tables under MTIER_MIN_BYTES=4096). Counted,
// not timed: how often the address-ordered list is reallocated.
#include "page/table_registry.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "sys/page_size.h"

namespace mtier {
namespace {

// Never dereferenced: the registry only computes addresses from it.
char* const kBase = reinterpret_cast<char*>(uintptr_t{1} << 44);

TEST(TableRegistryTest, AddingNTablesReallocatesTheOrderedListLogNTimes) {
  constexpr int kTables = 12000;
  TableRegistry reg(kBase, kTables + 16);
  size_t reallocations = 0, capacity = reg.ordered().capacity();
  for (int i = 0; i < kTables; i++) {
    int err = 0;
    ASSERT_NE(reg.add("", kPageSize, &err), nullptr) << i << ": " << err;
    if (reg.ordered().capacity() != capacity) reallocations++;
    capacity = reg.ordered().capacity();
  }
  EXPECT_EQ(reg.ordered().size(), static_cast<size_t>(kTables));
  EXPECT_LE(reallocations, 20u) << "the list is copied once per table: quadratic";
}

TEST(TableRegistryTest, TablesStayInAddressOrderAndAreFoundAfterRemovals) {
  TableRegistry reg(kBase, 64);
  Table* t[8];
  for (auto& x : t) {
    int err = 0;
    x = reg.add("", 2 * kPageSize, &err);
    ASSERT_NE(x, nullptr);
  }
  reg.remove(t[3]);
  int err = 0;
  Table* again = reg.add("", kPageSize, &err);
  ASSERT_NE(again, nullptr);
  for (size_t i = 1; i < reg.ordered().size(); i++)
    EXPECT_LT(reg.ordered()[i - 1]->first_page, reg.ordered()[i]->first_page);
  EXPECT_EQ(reg.find(again->base), again);
  EXPECT_EQ(reg.find(t[5]->base + kPageSize), t[5]);
  EXPECT_EQ(reg.by_id(again->id), again);
}

}  // namespace
}  // namespace mtier
