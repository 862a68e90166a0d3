// SPDX-License-Identifier: Apache-2.0
// The page state machine: every edge of the table, the illegal ones abort,
// and the page-word encoding.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "page/page_state.h"

namespace mtier {
namespace {

using S = PageState;
using E = PageEvent;

// The edges of the page model (docs/architecture.md); everything else must be
// refused.
const std::set<std::tuple<S, E, S>> kEdges = {
    {S::kAbsent, E::kClaim, S::kFetching},          {S::kAbsent, E::kDiscard, S::kAbsent},
    {S::kFetching, E::kPlacedClean, S::kClean},     {S::kFetching, E::kPlacedDirty, S::kDirty},
    {S::kFetching, E::kFetchFailed, S::kFailed},    {S::kFetching, E::kUnclaim, S::kAbsent},
    {S::kClean, E::kWrite, S::kDirty},              {S::kClean, E::kEvictCommit, S::kAbsent},
    {S::kClean, E::kDiscard, S::kAbsent},           {S::kDirty, E::kEvictBegin, S::kEvicting},
    {S::kDirty, E::kDiscard, S::kAbsent},           {S::kEvicting, E::kWrite, S::kDirty},
    {S::kEvicting, E::kWritebackFailed, S::kDirty}, {S::kEvicting, E::kEvictCommit, S::kAbsent},
    {S::kEvicting, E::kDiscard, S::kAbsent},        {S::kFailed, E::kDiscard, S::kAbsent},
};

TEST(PageState, TableMatchesTheDesign) {
  int edges = 0;
  for (int s = 0; s < kPageStateCount; s++) {
    for (int e = 0; e < kPageEventCount; e++) {
      int next = next_page_state(S(s), E(e));
      if (next < 0) continue;
      edges++;
      EXPECT_TRUE(kEdges.count({S(s), E(e), S(next)}))
          << page_state_name(S(s)) << " --" << page_event_name(E(e)) << "--> "
          << page_state_name(S(next));
    }
  }
  EXPECT_EQ(edges, static_cast<int>(kEdges.size()));
}

TEST(PageState, EveryEdgeMovesTheWordAndKeepsOtherBits) {
  for (auto& [from, ev, to] : kEdges) {
    PageWordAtomic w(static_cast<uint64_t>(from));
    set_slot(w, 3, 123456789);
    mark_access(w);
    uint64_t got = transition(w, ev, 1, 2);
    EXPECT_EQ(PageWord::state(got), to);
    if (ev == E::kDiscard) {  // a discarded page is forgotten: the whole word cleared
      EXPECT_EQ(got, static_cast<uint64_t>(S::kAbsent));
      continue;
    }
    EXPECT_EQ(PageWord::slot(got), 123456789u);
    EXPECT_EQ(PageWord::store(got), 3u);
    EXPECT_TRUE(PageWord::referenced(got));
    // A page that leaves memory is on no memory tier any more.
    PageWordAtomic s(static_cast<uint64_t>(from) | PageWord::kSlowTier);
    EXPECT_EQ(PageWord::slow(transition(s, ev, 1, 2)), to != S::kAbsent);
  }
}

TEST(PageStateDeathTest, IllegalEdgesAbortNamingThePage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int s = 0; s < kPageStateCount; s++) {
    for (int e = 0; e < kPageEventCount; e++) {
      if (next_page_state(S(s), E(e)) >= 0) continue;
      PageWordAtomic w(static_cast<uint64_t>(s));
      EXPECT_DEATH(transition(w, E(e), 7, 42), "table 7 page 42: no edge");
    }
  }
}

TEST(PageWord, SlotHeatAndReferencedBits) {
  constexpr uint64_t kMaxSlot = PageWord::kMaxSlots - 1;
  PageWordAtomic w(0);
  EXPECT_FALSE(PageWord::has_slot(w));
  set_slot(w, 7, kMaxSlot);
  EXPECT_TRUE(PageWord::has_slot(w));
  EXPECT_EQ(PageWord::store(w), 7u);
  EXPECT_EQ(PageWord::slot(w), kMaxSlot);
  for (int i = 0; i < 300; i++) mark_access(w);
  EXPECT_EQ(PageWord::heat(w), 255u);  // saturates
  EXPECT_EQ(PageWord::slot(w), kMaxSlot);
  decay_heat(w);
  EXPECT_EQ(PageWord::heat(w), 127u);
  EXPECT_TRUE(test_and_clear_referenced(w));
  EXPECT_FALSE(test_and_clear_referenced(w));
  set_slow(w, true);
  EXPECT_TRUE(PageWord::slow(w));
  EXPECT_EQ(PageWord::slot(w), kMaxSlot);
  set_slow(w, false);
  EXPECT_FALSE(PageWord::slow(w));
  clear_slot(w);
  EXPECT_FALSE(PageWord::has_slot(w));
  EXPECT_EQ(PageWord::heat(w), 127u);
}

// A walk's page (kWalked) stays the walk's through a slot's change and
// until the program uses it (mark_access) or it leaves DRAM for good.
TEST(PageWord, TheWalkedBitGoesWithAnAccessOrTheLeavingPage) {
  constexpr uint64_t kMaxSlot = PageWord::kMaxSlots - 1;
  PageWordAtomic w(0);
  transition(w, PageEvent::kClaim, 1, 0);
  transition(w, PageEvent::kPlacedClean, 1, 0);
  w.fetch_or(PageWord::kWalked);
  set_slot(w, 7, kMaxSlot);
  EXPECT_TRUE(PageWord::walked(w));
  EXPECT_EQ(PageWord::slot(w), kMaxSlot);
  clear_slot(w);
  EXPECT_TRUE(PageWord::walked(w));
  mark_access(w);
  EXPECT_FALSE(PageWord::walked(w));
  EXPECT_EQ(PageWord::heat(w), 1u);
  w.fetch_or(PageWord::kWalked);
  transition(w, PageEvent::kEvictCommit, 1, 0);  // a clean page dropped
  EXPECT_EQ(PageWord::state(w), PageState::kAbsent);
  EXPECT_FALSE(PageWord::walked(w));
}

}  // namespace
}  // namespace mtier
