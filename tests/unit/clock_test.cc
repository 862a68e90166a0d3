// SPDX-License-Identifier: Apache-2.0
// The CLOCK hand over a table's page words, without an engine around it:
// referenced pages get their second chance (bit cleared, PTE zapped),
// unreferenced ones are cold, and with the daemon's hints a page it keeps is
// passed over untouched: neither cold nor zapped (a zap would only cost the
// page a MINOR fault; at a 100% budget that made a replay 0.65x as fast).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "heat/clock.h"
#include "fake_kernel.h"
#include "page/core.h"
#include "page/page_state.h"

namespace mtier {
namespace {

class ClockTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kPages = 16;

  void SetUp() override {
    int err = 0;
    auto region = Region::create(64ull << 20, &err);
    ASSERT_TRUE(region) << err;
    Options o;
    o.dram_bytes = kPages * 4096;
    core_ = std::make_unique<Core>(o, std::move(region));
    t_ = core_->tables.add("t", kPages * 4096, &err);
    ASSERT_NE(t_, nullptr) << err;
    hints_.assign(core_->region->bytes() / 4096, 0);
    core_->hints = hints_.data();
    // Every page resident and clean; the even ones referenced.
    for (uint64_t p = 0; p < kPages; p++) {
      PageWordAtomic& w = t_->words[p];
      transition(w, PageEvent::kClaim, t_->id, p);
      transition(w, PageEvent::kPlacedClean, t_->id, p);
      if (p % 2 == 0) mark_access(w);
    }
  }

  bool referenced(uint64_t p) const { return PageWord::referenced(t_->words[p].load()); }
  void keep(uint64_t p) { hints_[t_->first_page + p] = ClockHand::kKeepHint; }
  std::vector<uint64_t> pages_of(const std::vector<PageRef>& refs) const {
    std::vector<uint64_t> out;
    for (const PageRef& r : refs) out.push_back(r.page);
    return out;
  }

  std::vector<uint8_t> hints_;
  std::unique_ptr<Core> core_;
  Table* t_ = nullptr;
};

TEST_F(ClockTest, ReferencedPagesGetASecondChanceAndTheOthersAreCold) {
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages), kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{1, 3, 5, 7, 9, 11, 13, 15}));
  for (uint64_t p = 0; p < kPages; p++) EXPECT_FALSE(referenced(p)) << p;
  EXPECT_EQ(core_->counters.sampled_pages.load(), kPages / 2);  // the even ones zapped
}

// Ahead of a walk that goes on, marked pages (referenced, or with heat)
// are passed over untouched, unmarked ones are still cold; once the walk
// has faulted no more for kWalkLiveMs, its front spares nothing.
TEST_F(ClockTest, MarkedPagesAheadOfALiveWalkArePassedOverUntilItStops) {
  mark_access(t_->words[9]);  // heat, and no referenced bit:
  ASSERT_TRUE(test_and_clear_referenced(t_->words[9]));
  t_->walked(8);
  ClockHand hand(*core_, {});
  hand.set_spare_walks(true);
  std::vector<PageRef> cold;
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages), kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{1, 3, 5, 7, 11, 13, 15}));
  for (uint64_t p = 8; p < kPages; p += 2) EXPECT_TRUE(referenced(p)) << p;
  // The walk stopped: the same sweep takes what it spared (and 0-6, whose
  // second chance the first sweep spent).
  t_->walk_ms.store(Table::walk_clock_ms() - Table::kWalkLiveMs - 1);
  cold.clear();
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages), kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 15}));
  EXPECT_FALSE(referenced(8));
  // Off (the evictor's second rotation): nothing is spared.
  t_->walked(0);
  hand.set_spare_walks(false);
  cold.clear();
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages), kPages);
  EXPECT_EQ(cold.size(), kPages);
}

TEST_F(ClockTest, PagesTheDaemonKeepsArePassedOverUntouched) {
  for (uint64_t p : {0, 1, 2, 3}) keep(p);
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages, -1, true), kPages);
  // Kept: neither cold (1, 3) nor zapped (0, 2 keep their referenced bit).
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{5, 7, 9, 11, 13, 15}));
  EXPECT_TRUE(referenced(0));
  EXPECT_TRUE(referenced(2));
  for (uint64_t p = 4; p < kPages; p++) EXPECT_FALSE(referenced(p)) << p;
  EXPECT_EQ(core_->counters.sampled_pages.load(), 6u);  // 4, 6, ..., 14
  // Without hints (a daemon gone, or the second rotation) they are pages
  // like the others: 0 and 2 spend their second chance, 1 and 3 are cold.
  cold.clear();
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages, -1, false), kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(core_->counters.sampled_pages.load(), 8u);
}

TEST_F(ClockTest, TheSamplerZapsKeptPagesToo) {
  // The sampler's hand (no cold list) is how the heat of kept pages is seen:
  // hints do not stop it.
  for (uint64_t p = 0; p < kPages; p++) keep(p);
  ClockHand sampler(*core_, {.decay_heat = true});
  EXPECT_EQ(sampler.sweep(kPages, nullptr, 0, -1, true), kPages);
  for (uint64_t p = 0; p < kPages; p++) EXPECT_FALSE(referenced(p)) << p;
  EXPECT_EQ(core_->counters.sampled_pages.load(), kPages / 2);
}

TEST_F(ClockTest, ATableTheLookaheadNamesGetsItsSecondChanceWithoutZaps) {
  // Its accesses are seen through the names: a zap would only cost the next
  // access a MINOR fault.
  t_->named_ahead.store(true);
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages), kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{1, 3, 5, 7, 9, 11, 13, 15}));
  for (uint64_t p = 0; p < kPages; p++) EXPECT_FALSE(referenced(p)) << p;
  EXPECT_EQ(core_->counters.sampled_pages.load(), 0u) << "nothing zapped";
}

}  // namespace
}  // namespace mtier

namespace mtier {
namespace {

TEST_F(ClockTest, ByFrequencyAPageSurvivesARotationPerHalvingOfItsHeat) {
  // Page 1: accessed 4 times, not referenced since: heat 4 -> 2 -> 1 -> 0,
  // cold on the fourth rotation. Page 3: no heat, cold on the first.
  for (int i = 0; i < 4; i++) mark_access(t_->words[1]);
  test_and_clear_referenced(t_->words[1]);
  ClockHand hand(*core_, {.by_frequency = true});
  for (int rotation = 1; rotation <= 4; rotation++) {
    std::vector<PageRef> cold;
    hand.sweep(kPages, &cold, kPages);
    std::vector<uint64_t> pages = pages_of(cold);
    bool one = std::find(pages.begin(), pages.end(), 1u) != pages.end();
    bool three = std::find(pages.begin(), pages.end(), 3u) != pages.end();
    EXPECT_EQ(one, rotation == 4) << "rotation " << rotation;
    EXPECT_TRUE(three) << "rotation " << rotation;
  }
}

TEST_F(ClockTest, PinnedPagesAreNeverColdNorZapped) {
  for (uint64_t p = 0; p < kPages; p++) pin(t_->words[p], 1);
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages);
  EXPECT_TRUE(cold.empty());
  EXPECT_TRUE(referenced(0)) << "a pinned page's bit is left alone (no zap)";
  for (uint64_t p = 0; p < kPages; p++) unpin(t_->words[p], 1);
  hand.sweep(kPages, &cold, kPages);
  EXPECT_EQ(cold.size(), kPages / 2);
}

}  // namespace
}  // namespace mtier

namespace mtier {
namespace {

// Whether the trainer's view of page p has a page-table entry.
bool mapped(const Table* t, uint64_t p) { return testutil::has_pte(t->page_addr(p)); }

TEST_F(ClockTest, OneZapSpansTheUnreferencedPagesBetweenReferencedOnes) {
  // Every page mapped in the trainer's view, as after its first access.
  for (uint64_t p = 0; p < kPages; p++) *t_->page_addr(p) = 1;
  for (uint64_t p = 0; p < kPages; p++) ASSERT_TRUE(mapped(t_, p)) << p;
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages);
  // The referenced (even) pages and the cold ones between them in one
  // madvise: a scattered working set costs one TLB shootdown a sweep.
  EXPECT_EQ(hand.zap_calls(), 1u);
  EXPECT_EQ(core_->counters.sampled_pages.load(), kPages / 2) << "counts referenced pages only";
  for (uint64_t p = 0; p < kPages - 1; p++) EXPECT_FALSE(mapped(t_, p)) << p;
}

TEST_F(ClockTest, AZapNeverSpansAPinnedOrKeptPage) {
  for (uint64_t p = 0; p < kPages; p++) *t_->page_addr(p) = 1;
  pin(t_->words[5], 1);
  keep(9);
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages, -1, true);
  EXPECT_TRUE(mapped(t_, 5)) << "pinned: the batch that named it is about to read it";
  EXPECT_TRUE(mapped(t_, 9)) << "kept by the daemon: no MINOR fault for it";
  EXPECT_FALSE(mapped(t_, 4));
  EXPECT_FALSE(mapped(t_, 6));
  EXPECT_FALSE(mapped(t_, 10));
  EXPECT_EQ(hand.zap_calls(), 3u);  // 0-4, 6-8, 10-14
  unpin(t_->words[5], 1);
}

TEST_F(ClockTest, ATableNamedAheadKeepsEveryPageMapped) {
  for (uint64_t p = 0; p < kPages; p++) *t_->page_addr(p) = 1;
  t_->named_ahead.store(true);
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages);
  EXPECT_EQ(hand.zap_calls(), 0u);
  for (uint64_t p = 0; p < kPages; p++) EXPECT_TRUE(mapped(t_, p)) << p;
}

}  // namespace
}  // namespace mtier

namespace mtier {
namespace {

TEST_F(ClockTest, AHotPageIsZappedEveryOtherRotation) {
  // Page 0 accessed again since placed (heat 2): the evictor's hand leaves
  // it mapped and referenced once, its heat halved; the next rotation
  // spends its second chance as any page's.
  mark_access(t_->words[0]);
  ASSERT_GE(PageWord::heat(t_->words[0].load()), ClockHand::kHotHeat);
  *t_->page_addr(0) = 1;
  ClockHand hand(*core_, {});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages);
  EXPECT_TRUE(referenced(0));
  EXPECT_TRUE(mapped(t_, 0));
  EXPECT_EQ(PageWord::heat(t_->words[0].load()), 1u);
  EXPECT_FALSE(referenced(2)) << "heat 1: zapped as before";
  cold.clear();
  hand.sweep(kPages, &cold, kPages);
  EXPECT_FALSE(referenced(0));
  EXPECT_FALSE(mapped(t_, 0));
  EXPECT_EQ(std::count_if(cold.begin(), cold.end(), [](const PageRef& r) { return r.page == 0; }),
            0) << "its second chance spent this rotation, cold only on the next";
}

// The evictor's first hand (scan_resistant): only a walk's pages the walk
// is past (walked, with neither heat nor referenced bit) are cold; every
// other page keeps its referenced bit, its heat and its mapping - a walk's
// window ahead of it, and the program's own pages whose bits the CLOCK
// cleared, too - so that a scan's pages go out without spending any page
// the program used on its own.
TEST_F(ClockTest, TheScanHandTakesTheWalkedPagesAndTouchesNoOther) {
  // Odd pages but 13: as a walk leaves them behind (walked, heat 0,
  // unreferenced); page 1 still ahead of it (referenced, heat 0); page 13
  // the program's, its bit and heat spent. Even pages: marked, and page
  // 2's bit already spent (unreferenced, heat 1).
  for (uint64_t p = 1; p < kPages; p += 2)
    if (p != 13) t_->words[p].fetch_or(PageWord::kWalked);
  t_->words[1].fetch_or(PageWord::kReferenced);
  ASSERT_TRUE(test_and_clear_referenced(t_->words[2]));
  for (uint64_t p = 0; p < kPages; p++) *t_->page_addr(p) = 1;
  ClockHand hand(*core_, {.scan_only = true});
  std::vector<PageRef> cold;
  EXPECT_EQ(hand.sweep(kPages, &cold, kPages), kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{3, 5, 7, 9, 11, 15}));
  EXPECT_TRUE(referenced(1)) << "ahead of the walk: untouched";
  EXPECT_TRUE(mapped(t_, 13)) << "the program's page, not the walk's: untouched";
  for (uint64_t p = 4; p < kPages; p += 2) {
    EXPECT_TRUE(referenced(p)) << p;
    EXPECT_TRUE(mapped(t_, p)) << p;
  }
  EXPECT_EQ(PageWord::heat(t_->words[2].load()), 1u) << "no decay";
  EXPECT_EQ(hand.zap_calls(), 0u);
  EXPECT_EQ(core_->counters.sampled_pages.load(), 0u);
}

// A walked page with heat kept from before its last eviction (a hot row
// the trainer used, evicted, then read back by a save's walk) is the
// walk's like any other: walked means nothing used it since it came back
// (mark_access clears the bit). Before, its old heat made it look hot, and
// a 1 GiB save at 25% kept 18,000 such pages while the CLOCK evicted the
// hot rows to make room.
TEST_F(ClockTest, TheScanHandTakesAWalkedPageWhoseHeatIsFromBefore) {
  for (uint64_t p = 0; p < kPages; p++) t_->words[p].fetch_and(~PageWord::kReferenced);
  t_->words[4].fetch_or(PageWord::kWalked);  // heat 1 (SetUp), walked since
  t_->words[5].fetch_or(PageWord::kWalked);  // heat 0
  ClockHand hand(*core_, {.scan_only = true});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{4, 5}));
}

// A live walk's own pages behind its front go newest first (MRU), in
// runs that the next call continues below, and only those: not the
// window ahead of the front, not the program's pages between them, not
// a pinned page. The sweep that skips live walks takes none of them.
// Why: torch.save reads each tensor twice (CRC-32, then the write); the
// pages the walk read first are the next pass's first.
TEST_F(ClockTest, AWalksOwnPagesBehindItsFrontGoNewestFirst) {
  for (uint64_t p = 0; p < kPages; p++) {
    t_->words[p].fetch_and(~PageWord::kReferenced);
    if (p != 6) t_->words[p].fetch_or(PageWord::kWalked);  // 6: the program's
  }
  t_->words[8].fetch_or(PageWord::kReferenced);  // read by the walk, bit not yet cleared
  t_->words[3].fetch_or(PageWord::kPinned);
  t_->walked(12);  // the front: 12 and on are the window ahead
  ClockHand hand(*core_, {.scan_only = true});
  std::vector<PageRef> cold;
  hand.sweep(kPages, &cold, kPages);
  EXPECT_TRUE(cold.empty()) << "the live walk's table is take_behind_walks'";
  EXPECT_EQ(hand.take_behind_walks(&cold, 4, false), 4u);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{8, 9, 10, 11})) << "the newest four";
  cold.clear();
  EXPECT_EQ(hand.take_behind_walks(&cold, 4, false), 4u);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{2, 4, 5, 7})) << "then below them";
  // The walk goes on: the pages it passed since come before the older ones.
  t_->walked(14);
  cold.clear();
  EXPECT_EQ(hand.take_behind_walks(&cold, 3, false), 3u);
  EXPECT_EQ(pages_of(cold), (std::vector<uint64_t>{1, 12, 13}));
  // Ended (no fault within Table::kWalkLiveMs): none, the sweep's again.
  t_->walk_ms.store(0);
  cold.clear();
  EXPECT_EQ(hand.take_behind_walks(&cold, kPages, false), 0u);
  hand.sweep(kPages, &cold, kPages);
  EXPECT_FALSE(cold.empty());
}

}  // namespace
}  // namespace mtier
