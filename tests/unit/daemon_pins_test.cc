// mtierd's pins (daemon/pins.h) and page-move classification
// (daemon/page_moves.h).
#include <gtest/gtest.h>

#include <cerrno>

#include "page/page_state.h"
#include "page_moves.h"
#include "pins.h"

namespace mtier::daemon {
namespace {

const PinTier kD = PinTier::kDram, kS = PinTier::kStore, kM = PinTier::kSlow;

TEST(Pins, SetSplitReplaceUnpin) {
  std::vector<Pin> pins;
  ASSERT_EQ(set_pin(&pins, 1, 0, 100, &kD), 0);
  ASSERT_EQ(set_pin(&pins, 2, 10, 5, &kS), 0);
  // A store pin in the middle of the DRAM one splits it in two.
  ASSERT_EQ(set_pin(&pins, 1, 40, 20, &kS), 0);
  std::vector<Pin> want = {{1, 0, 40, kD}, {1, 40, 20, kS}, {1, 60, 40, kD}, {2, 10, 5, kS}};
  EXPECT_EQ(pins, want);
  // Unpinning across two pins trims both; other tables are untouched.
  ASSERT_EQ(set_pin(&pins, 1, 30, 20, nullptr), 0);
  want = {{1, 0, 30, kD}, {1, 50, 10, kS}, {1, 60, 40, kD}, {2, 10, 5, kS}};
  EXPECT_EQ(pins, want);
  // A pin covering others replaces them.
  ASSERT_EQ(set_pin(&pins, 1, 0, 100, &kM), 0);
  want = {{1, 0, 100, kM}, {2, 10, 5, kS}};
  EXPECT_EQ(pins, want);
  drop_pins_except(&pins, {2});
  want = {{2, 10, 5, kS}};
  EXPECT_EQ(pins, want);
  EXPECT_STREQ(pin_tier_name(kD), "dram");
  EXPECT_STREQ(pin_tier_name(kM), "slow");
  EXPECT_STREQ(pin_tier_name(kS), "store");
}

TEST(Pins, PolicyMovesAgainstPins) {
  std::vector<Pin> pins;
  ASSERT_EQ(set_pin(&pins, 1, 10, 10, &kS), 0);
  ASSERT_EQ(set_pin(&pins, 1, 30, 10, &kD), 0);
  EXPECT_TRUE(against_pins(pins, 1, 15, 1, true));    // a fetch into a store pin
  EXPECT_TRUE(against_pins(pins, 1, 0, 11, true));    // overlapping its first page
  EXPECT_FALSE(against_pins(pins, 1, 0, 10, true));   // just before it
  EXPECT_FALSE(against_pins(pins, 1, 15, 1, false));  // an eviction agrees with it
  EXPECT_TRUE(against_pins(pins, 1, 39, 5, false));   // an eviction of a DRAM pin
  EXPECT_FALSE(against_pins(pins, 1, 39, 5, true));
  EXPECT_FALSE(against_pins(pins, 2, 15, 1, true));   // another table
}

TEST(Pins, AtMostMaxPinsAndNothingChangesWhenRefused) {
  std::vector<Pin> pins;
  for (size_t i = 0; i < kMaxPins; i++) ASSERT_EQ(set_pin(&pins, 1, 2 * i, 1, &kD), 0);
  std::vector<Pin> before = pins;
  EXPECT_EQ(set_pin(&pins, 1, 1u << 30, 1, &kD), -ENOSPC);
  EXPECT_EQ(pins, before);
  // Replacing one in place does not grow the list.
  EXPECT_EQ(set_pin(&pins, 1, 0, 1, &kS), 0);
  EXPECT_EQ(pins.size(), kMaxPins);
  EXPECT_EQ(pins[0].tier, kS);
}

TEST(PageMoves, EveryPairOfPlaces) {
  using policy::Place;
  const Place all[] = {Place::kDram, Place::kSlow, Place::kStore, Place::kUntouched};
  int counted = 0;
  for (Place a : all)
    for (Place b : all) {
      unsigned m = page_move(a, b);
      if (m == kPageMoveKinds) continue;
      counted++;
      EXPECT_NE(a, b);
      EXPECT_NE(page_move_name(m), nullptr);
    }
  EXPECT_EQ(counted, static_cast<int>(kPageMoveKinds));  // each kind from exactly one pair
  EXPECT_EQ(page_move(Place::kStore, Place::kDram), kStoreToDram);
  EXPECT_EQ(page_move(Place::kDram, Place::kStore), kDramToStore);
  EXPECT_EQ(page_move(Place::kUntouched, Place::kDram), kNewToDram);
  EXPECT_EQ(page_move(Place::kDram, Place::kUntouched), kPageMoveKinds);  // dropped: not a move
  EXPECT_STREQ(page_move_name(kNewToDram), "new>dram");
  EXPECT_STREQ(page_move_name(kSlowToStore), "slow>store");
  EXPECT_EQ(page_move_name(kPageMoveKinds), nullptr);
}

}  // namespace
}  // namespace mtier::daemon
