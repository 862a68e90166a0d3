// SPDX-License-Identifier: Apache-2.0
// The Lookahead and its window driven without threads or a kernel
// (fake_kernel.h): store pages read in batches at the queue depth and placed
// intact, resident pages pinned as hits, pins honoured by the evictor and
// released by advance, a window larger than its limit, a fault and a write
// on a page whose read is in flight, and a store error during a read ahead.
#include "lookahead/lookahead.h"

#include <gtest/gtest.h>

#include <thread>

#include "evict/evictor.h"
#include "fake_kernel.h"
#include "uffd/fault_handler.h"

namespace mtier {
namespace {

using testutil::FakeEngine;
using testutil::fault_msg;
using testutil::UffdCall;

class LookaheadTest : public ::testing::Test {
 protected:
  // 64 pages, a budget of 32 (pin limit 24), a queue depth of 4.
  LookaheadTest() : e_(64, 32) {}
  void SetUp() override {
    ASSERT_NE(e_.table, nullptr);
    lookahead_ = std::make_unique<Lookahead>(*e_.core);
  }
  std::vector<LookaheadKey> keys(uint64_t first, uint64_t n) const {
    std::vector<LookaheadKey> k;
    for (uint64_t p = first; p < first + n; p++) k.push_back({e_.table->id, p});
    return k;
  }
  long serve(uint64_t first, uint64_t n, uint64_t batch) {
    return lookahead_->serve(keys(first, n), batch);
  }
  bool pinned(uint64_t p) const { return PageWord::pinned(e_.word(p)); }
  // The lookahead's channels come from start(); the tests serve without
  // the thread, so they open them the same way.
  void open() { ASSERT_EQ(lookahead_->start(), 0); lookahead_->stop(); }
  // Page p's access fetches it itself, the store fails it: SIGBUS (poison)
  // for that access and the page FAILED.
  void access_gets_sigbus(uint64_t p) {
    FaultHandler handler(*e_.core);
    ASSERT_EQ(handler.prepare(), 0);
    struct uffd_msg m = fault_msg(e_.addr(p));
    handler.handle_batch(&m, 1);
    EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(p)), 1u);
    EXPECT_EQ(e_.state(p), PageState::kFailed);
  }

  FakeEngine e_;
  std::unique_ptr<Lookahead> lookahead_;
};

TEST_F(LookaheadTest, StorePagesAreReadAtTheQueueDepthAndPlacedIntact) {
  open();
  for (uint64_t p = 0; p < 10; p++) e_.put_in_store(p, p + 100, static_cast<char>(0x10 + p));
  EXPECT_EQ(serve(0, 10, 1), 10);
  EXPECT_EQ(e_.core->counters.prefetch_late.load(), 0u) << "nobody waited";
  EXPECT_TRUE(e_.table->named_ahead.load()) << "the CLOCK stops zapping a table named ahead";
  for (uint64_t p = 0; p < 10; p++) {
    EXPECT_EQ(e_.state(p), PageState::kClean) << p;
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x10 + p))) << p;
    EXPECT_TRUE(pinned(p)) << p;
  }
  EXPECT_EQ(e_.store->reads, 10u);
  EXPECT_EQ(e_.store->widest_read, 4u) << "reads go to the store queue_depth at a time";
  EXPECT_EQ(e_.store->read_calls, 3u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy), 10u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake), 0u) << "nobody waited: no wake";
  EXPECT_EQ(e_.core->residency.resident(), 10);
  EXPECT_EQ(e_.table->counters.prefetches.load(), 10u);
  EXPECT_EQ(e_.core->counters.prefetch_reads.load(), 10u);
  EXPECT_EQ(e_.core->counters.pinned_pages.load(), 10);
  // Placed write-protected (clean).
  for (const auto& c : e_.uffd->calls) {
    if (c.kind == UffdCall::kCopy) {
      EXPECT_TRUE(c.flag);
    }
  }
}

TEST_F(LookaheadTest, PagesNamedForWritingArePlacedDirtyAndWritable) {
  open();
  e_.put_in_store(3, 30, 0x33);
  EXPECT_EQ(lookahead_->serve(keys(3, 1), 1, true), 1);
  EXPECT_EQ(e_.state(3), PageState::kDirty);
  EXPECT_TRUE(e_.page_is(3, 0x33));
  ASSERT_EQ(e_.uffd->count(UffdCall::kCopy), 1u);
  EXPECT_FALSE(e_.uffd->calls[0].flag) << "placed write-protected";
}

TEST_F(LookaheadTest, ResidentPagesAreHitsAndNeverWrittenOnesZeroFilled) {
  open();
  e_.make_resident(0, 0x5a, true);
  EXPECT_EQ(serve(0, 3, 1), 0);  // page 0 resident, 1-2 never written: no read
  EXPECT_EQ(e_.core->counters.prefetch_hits.load(), 1u);
  EXPECT_TRUE(e_.page_is(0, 0x5a));
  EXPECT_EQ(e_.state(0), PageState::kDirty);
  EXPECT_EQ(e_.state(1), PageState::kClean);
  EXPECT_TRUE(e_.page_is(1, 0));
  EXPECT_EQ(e_.store->reads, 0u);
  for (uint64_t p = 0; p < 3; p++) EXPECT_TRUE(pinned(p)) << p;
}

TEST_F(LookaheadTest, PinnedPagesAreNoVictims) {
  open();
  for (uint64_t p = 0; p < 32; p++) e_.make_resident(p, static_cast<char>(p), false);
  ASSERT_EQ(serve(0, 16, 1), 0);  // pins the first half
  Evictor evictor(*e_.core);
  ASSERT_EQ(evictor.prepare(), 0);
  e_.core->residency.add(0);
  evictor.evict_pass();  // twice over the budget's low watermark: a real pass
  uint64_t evicted = 0;
  for (uint64_t p = 0; p < 32; p++) {
    if (p < 16) {
      EXPECT_EQ(e_.state(p), PageState::kClean) << "pinned page " << p << " evicted";
    }
    evicted += e_.state(p) == PageState::kAbsent;
  }
  EXPECT_GT(evicted, 0u) << "the pass evicted nothing: the test proves nothing";
  // A daemon's order leaves the window resident, for either tier.
  for (bool dram_only : {true, false}) {
    ASSERT_EQ(evictor.evict_range(e_.table->id, 0, UINT64_MAX, dram_only), 0);
    for (uint64_t p = 0; p < 16; p++)
      EXPECT_EQ(e_.state(p), PageState::kClean) << "pinned page " << p << " evicted by an order";
  }
  // The program's own table eviction (mtier_table_evict) takes pinned pages.
  ASSERT_EQ(evictor.evict_range(e_.table->id, 0, UINT64_MAX, false, true), 0);
  EXPECT_EQ(e_.state(0), PageState::kAbsent);
}

TEST_F(LookaheadTest, AdvanceReleasesThePinsOfEarlierBatchesOnly) {
  open();
  ASSERT_EQ(serve(0, 8, 1), 0);
  ASSERT_EQ(serve(4, 8, 2), 0);  // pages 4-7 named by both
  EXPECT_EQ(e_.core->counters.pinned_pages.load(), 12);
  lookahead_->window().advance(2);
  for (uint64_t p = 0; p < 12; p++) EXPECT_EQ(pinned(p), p >= 4) << p;
  EXPECT_EQ(e_.core->counters.pinned_pages.load(), 8);
  lookahead_->window().advance(3);
  for (uint64_t p = 0; p < 12; p++) EXPECT_FALSE(pinned(p)) << p;
  EXPECT_EQ(e_.core->counters.pinned_pages.load(), 0);
}

TEST_F(LookaheadTest, AWindowLargerThanItsLimitIsDemandFaultedBeyondIt) {
  open();
  for (uint64_t p = 0; p < 40; p++) e_.put_in_store(p, p, static_cast<char>(p));
  // 40 pages named, the pin limit is 24 (75% of 32): 24 pinned, 16 not
  // (overflows); read while there is room below the high watermark (30
  // pages: 6 of them unpinned), the last 10 left for demand faults; no
  // wait for room that cannot come.
  EXPECT_EQ(serve(0, 40, 1), 30);
  EXPECT_EQ(e_.core->counters.pinned_pages.load(), 24);
  EXPECT_EQ(e_.core->counters.window_overflows.load(), 16u);
  EXPECT_LE(e_.core->residency.resident(), 32);
  for (uint64_t p = 24; p < 30; p++) EXPECT_FALSE(PageWord::pinned(e_.word(p))) << p;
  for (uint64_t p = 30; p < 40; p++) EXPECT_EQ(e_.state(p), PageState::kAbsent) << p;
  // Those are served by faults as usual.
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  struct uffd_msg m = fault_msg(e_.addr(30));
  handler.handle_batch(&m, 1);
  EXPECT_TRUE(e_.page_is(30, 30));
}

TEST_F(LookaheadTest, ALaterBatchsPagesPastTheWindowAreNotReadAhead) {
  // After an advance to batch 1, batch 2 names 40 pages: 24 fit the pin
  // limit and are read; the 16 past it are not (they would push out the
  // current batch's unpinned pages). Named again in batch 2, its own
  // batch, the rest is read while there is room.
  open();
  for (uint64_t p = 0; p < 40; p++) e_.put_in_store(p, p, static_cast<char>(p));
  lookahead_->window().advance(1);
  EXPECT_EQ(serve(0, 40, 2), 24);
  EXPECT_EQ(e_.core->counters.window_overflows.load(), 16u);
  for (uint64_t p = 24; p < 40; p++) EXPECT_EQ(e_.state(p), PageState::kAbsent) << p;
  EXPECT_EQ(e_.core->counters.prefetch_pages.load(), 40u);
  lookahead_->window().advance(2);
  EXPECT_EQ(serve(0, 40, 2), 6);  // up to the high watermark (30 pages)
  for (uint64_t p = 0; p < 30; p++) EXPECT_TRUE(e_.page_is(p, static_cast<char>(p))) << p;
}

TEST_F(LookaheadTest, AFullWindowNeverWaitsForRoomThatCannotCome) {
  // DRAM full: 24 pages pinned (the limit), 8 more resident. A read ahead of
  // 10 store pages for the next batch can pin none and has no room: it
  // returns at once (no evictor runs here: a wait would never end) and the
  // pages stay in the store, to be demand-faulted.
  open();
  for (uint64_t p = 0; p < 32; p++) e_.make_resident(p, static_cast<char>(p), false);
  ASSERT_EQ(serve(0, 24, 1), 0);
  for (uint64_t p = 40; p < 50; p++) e_.put_in_store(p, p, static_cast<char>(p));
  EXPECT_EQ(serve(40, 10, 2), 0);
  EXPECT_EQ(e_.core->counters.window_overflows.load(), 10u);
  for (uint64_t p = 40; p < 50; p++) EXPECT_EQ(e_.state(p), PageState::kAbsent) << p;
  EXPECT_EQ(e_.core->residency.claimed(), 0);
  // With pins to spare but no room and nobody evicting, the wait is
  // bounded (kRoomWaitMs) and nothing is placed over the high watermark.
  lookahead_->window().advance(2);
  EXPECT_EQ(serve(40, 10, 2), 0);
  EXPECT_LE(e_.core->residency.resident(), 32);
}

TEST_F(LookaheadTest, AFaultOnAPageInFlightWaitsForThatRead) {
  open();
  e_.put_in_store(5, 9, 0x55);
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  // While the lookahead's read is in flight, the program reads the page, then
  // writes it: both faults find it FETCHING and neither reads or copies.
  e_.store->before_read = [&] {
    EXPECT_EQ(e_.state(5), PageState::kFetching);
    struct uffd_msg m[2] = {fault_msg(e_.addr(5)), fault_msg(e_.addr(5), UFFD_PAGEFAULT_FLAG_WRITE)};
    // On a thread of its own, as the handler runs: this one holds the
    // lookahead's locks (checked builds assert who waits under what).
    std::thread([&] { handler.handle_batch(m, 2); }).join();
    EXPECT_EQ(e_.uffd->count(UffdCall::kCopy), 0u);
    EXPECT_EQ(e_.uffd->count(UffdCall::kWake), 0u) << "woken before the data is there";
  };
  EXPECT_EQ(serve(5, 1, 1), 1);
  e_.store->before_read = nullptr;
  EXPECT_EQ(e_.store->reads, 1u) << "one read for the lookahead and both faults";
  EXPECT_TRUE(e_.page_is(5, 0x55));
  ASSERT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(5)), 1u);
  for (const UffdCall& c : e_.uffd->calls)
    if (c.kind == UffdCall::kCopy) {
      EXPECT_TRUE(c.wakes) << "the copy wakes both faults";
    }
  EXPECT_EQ(e_.core->counters.prefetch_late.load(), 1u) << "the access came first";
  // The write, retried after the wake, meets a clean write-protected page.
  EXPECT_EQ(e_.state(5), PageState::kClean);
  struct uffd_msg wp = fault_msg(e_.addr(5), UFFD_PAGEFAULT_FLAG_WRITE | UFFD_PAGEFAULT_FLAG_WP);
  handler.handle_batch(&wp, 1);
  EXPECT_EQ(e_.state(5), PageState::kDirty);
}

TEST_F(LookaheadTest, AStoreErrorLeavesThePageInTheStoreAndFailsOnlyItsAccess) {
  open();
  e_.put_in_store(1, 11, 0x11);
  e_.put_in_store(2, 12, 0x22);
  e_.store->fail_read.insert(12);
  EXPECT_EQ(serve(1, 2, 1), 1);
  EXPECT_TRUE(e_.page_is(1, 0x11));
  EXPECT_EQ(e_.state(2), PageState::kAbsent);
  EXPECT_EQ(PageWord::slot(e_.word(2)), 12u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake, e_.addr(2)), 1u) << "a thread waiting on it refaults";
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u) << "nobody touched it: no SIGBUS";
  EXPECT_EQ(e_.table->counters.errors.load(), 1u);
  // The access then fetches it itself; the store still fails: SIGBUS for it.
  access_gets_sigbus(2);
}

TEST_F(LookaheadTest, APageThatComesBackDifferentIsNotPlacedAndLeftInTheStore) {
  open();
  e_.put_in_store(1, 11, 0x11);
  e_.put_in_store(2, 12, 0x22);
  e_.store->slot_data(12)[0] = 0x23;  // changed behind mtier's back
  EXPECT_EQ(serve(1, 2, 1), 1);
  EXPECT_TRUE(e_.page_is(1, 0x11));
  EXPECT_EQ(e_.state(2), PageState::kAbsent);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(2)), 0u) << "wrong data placed";
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u) << "nobody touched it: no SIGBUS";
  EXPECT_EQ(e_.core->counters.store_errors.load(), 1u);
  EXPECT_EQ(e_.core->residency.claimed(), 0);
  access_gets_sigbus(2);
}

TEST_F(LookaheadTest, AByteAddressableStoreIsVerifiedBeforeTheCopyFromItsMapping) {
  open();
  e_.store->byte_addressable = true;  // as the PMem store
  e_.put_in_store(1, 11, 0x11);
  e_.put_in_store(2, 12, 0x22);
  e_.store->slot_data(12)[2048] = 0;
  EXPECT_EQ(serve(1, 2, 1), 1);
  EXPECT_TRUE(e_.page_is(1, 0x11));
  EXPECT_EQ(e_.state(2), PageState::kAbsent);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(2)), 0u) << "wrong data placed";
  EXPECT_EQ(e_.store->reads, 0u);
  EXPECT_EQ(e_.core->counters.store_errors.load(), 1u);
}

TEST_F(LookaheadTest, PagesOfAFreedTableAreSkippedAndItsPinsForgotten) {
  open();
  ASSERT_EQ(serve(0, 4, 1), 0);
  std::vector<LookaheadKey> gone = {{e_.table->id + 7, 0}, {e_.table->id, 1000}};
  EXPECT_EQ(lookahead_->serve(gone, 2), 0);  // no such table, past the table's end
  lookahead_->window().advance(5);
  EXPECT_EQ(e_.core->counters.pinned_pages.load(), 0);
}

TEST(PinBits, ALaterBatchKeepsItsPinAndDiscardClearsIt) {
  PageWordAtomic w(0);
  EXPECT_TRUE(pin(w, 300));  // batch 300: 44 modulo 256
  EXPECT_EQ(PageWord::pin_batch(w.load()), 44);
  EXPECT_FALSE(pin(w, 299)) << "an earlier batch does not take over";
  EXPECT_EQ(PageWord::pin_batch(w.load()), 44);
  EXPECT_FALSE(pin(w, 301));  // moved to the later batch, pinned already
  EXPECT_FALSE(unpin(w, 300)) << "the later batch holds it";
  EXPECT_TRUE(PageWord::pinned(w.load()));
  EXPECT_TRUE(unpin(w, 301));
  EXPECT_FALSE(PageWord::pinned(w.load()));
  // The pin lives beside the state: claims and placements keep it, and a
  // slot set or cleared does not touch it; a discard clears it.
  EXPECT_TRUE(pin(w, 7));
  set_slot(w, 2, PageWord::kMaxSlots - 1);  // the largest slot
  EXPECT_EQ(PageWord::slot(w.load()), PageWord::kMaxSlots - 1);
  EXPECT_TRUE(PageWord::pinned(w.load()));
  transition(w, PageEvent::kClaim, 1, 0);
  transition(w, PageEvent::kPlacedClean, 1, 0);
  EXPECT_TRUE(PageWord::pinned(w.load()));
  EXPECT_EQ(PageWord::pin_batch(w.load()), 7);
  transition(w, PageEvent::kDiscard, 1, 0);
  EXPECT_FALSE(PageWord::pinned(w.load()));
}

}  // namespace
}  // namespace mtier
