// SPDX-License-Identifier: Apache-2.0
// The fault handler driven without a kernel: batches of userfaultfd messages
// into handle_batch(), the userfaultfd calls answered by a fake (EEXIST,
// EAGAIN, errors), the store in memory (reads that fail). Every branch of
// the fault path: zero fill, fetch, a wake after the fetch, duplicates in a
// batch, a fault on a page in flight or poisoned, a failed store read, the
// EAGAIN retry bound, the budget wait with no lock held. And the thread's
// loop: a wait or read that fails is logged and retried, never left.
#include "uffd/fault_handler.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "fake_kernel.h"
#include "log/log.h"
#include "page/residency.h"
#include "uffd/loop_errors.h"

namespace mtier {
namespace {

using testutil::FakeEngine;
using testutil::fault_msg;
using testutil::UffdCall;

constexpr uint64_t kWrite = UFFD_PAGEFAULT_FLAG_WRITE;
constexpr uint64_t kMinor = UFFD_PAGEFAULT_FLAG_MINOR;
constexpr uint64_t kWp = UFFD_PAGEFAULT_FLAG_WP;

class FaultHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(e_.table, nullptr);
    handler_ = std::make_unique<FaultHandler>(*e_.core);
    ASSERT_EQ(handler_->prepare(), 0);
  }
  // A new handler that fetches `n` store-held neighbours with each fetch.
  void restart_with_read_around(unsigned n) {
    handler_.reset();
    e_.core->opts.prefetch_pages = n;
    handler_ = std::make_unique<FaultHandler>(*e_.core);
    ASSERT_EQ(handler_->prepare(), 0);
  }
  void fault(uint64_t page, uint64_t flags = 0) {
    struct uffd_msg m = fault_msg(e_.addr(page), flags);
    handler_->handle_batch(&m, 1);
  }
  // Index of the first call of `kind` on page `page`, or -1.
  long call_index(UffdCall::Kind kind, uint64_t page) const {
    auto a = reinterpret_cast<uintptr_t>(e_.addr(page));
    for (size_t i = 0; i < e_.uffd->calls.size(); i++)
      if (e_.uffd->calls[i].kind == kind && e_.uffd->calls[i].addr == a) return static_cast<long>(i);
    return -1;
  }

  FakeEngine e_{32, 16};
  std::unique_ptr<FaultHandler> handler_;
};

TEST_F(FaultHandlerTest, AFirstTouchPlacesAZeroPageCleanAndWakes) {
  memset(e_.store->slot_data(0), 0x5a, kPageSize);  // not read: the page was never written
  fault(3);
  EXPECT_EQ(e_.state(3), PageState::kClean);
  EXPECT_TRUE(e_.page_is(3, 0));
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_EQ(e_.table->counters.zero_fills.load(), 1u);
  EXPECT_EQ(e_.store->reads, 0u);
  // Copied write-protected, the copy itself waking the faulter: one ioctl.
  long copy = call_index(UffdCall::kCopy, 3);
  ASSERT_GE(copy, 0);
  EXPECT_TRUE(e_.uffd->calls[copy].flag);
  EXPECT_TRUE(e_.uffd->calls[copy].wakes);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake), 0u);
}

// The copy wakes the faulting thread, so the page is counted before it:
// what that thread reads next (its table's stats, the budget) includes it.
TEST_F(FaultHandlerTest, APageIsCountedBeforeTheCopyWakesItsFaulter) {
  int64_t resident_at_copy = -1;
  uint64_t fills_at_copy = 0, table_resident_at_copy = 0;
  e_.uffd->on_copy = [&](void*) {
    resident_at_copy = e_.core->residency.resident();
    fills_at_copy = e_.table->counters.zero_fills.load();
    table_resident_at_copy = static_cast<uint64_t>(e_.table->counters.resident_pages.load());
  };
  fault(2);
  EXPECT_EQ(resident_at_copy, 1);
  EXPECT_EQ(fills_at_copy, 1u);
  EXPECT_EQ(table_resident_at_copy, 1u);
  // A copy that fails takes its counts back: the page is not resident.
  e_.uffd->on_copy = nullptr;
  e_.uffd->copy_results.push_back(-ENOMEM);
  fault(8);
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_EQ(e_.core->residency.claimed(), 0);
  EXPECT_EQ(e_.table->counters.zero_fills.load(), 1u);
  EXPECT_EQ(e_.table->counters.resident_pages.load(), 1);
  EXPECT_EQ(e_.state(8), PageState::kFailed);
}

TEST_F(FaultHandlerTest, AWriteFirstTouchIsPlacedDirtyAndWritable) {
  fault(4, kWrite);
  EXPECT_EQ(e_.state(4), PageState::kDirty);
  long copy = call_index(UffdCall::kCopy, 4);
  ASSERT_GE(copy, 0);
  EXPECT_FALSE(e_.uffd->calls[copy].flag);
}

TEST_F(FaultHandlerTest, AStoreHeldPageIsFetchedThenTheFaulterWoken) {
  e_.put_in_store(5, 7, 0x42);
  fault(5);
  EXPECT_EQ(e_.state(5), PageState::kClean);
  EXPECT_TRUE(e_.page_is(5, 0x42));
  EXPECT_EQ(PageWord::slot(e_.word(5)), 7u);  // the store copy stays valid for a clean page
  EXPECT_EQ(e_.store->reads, 1u);
  EXPECT_EQ(e_.table->counters.fetches.load(), 1u);
  long copy = call_index(UffdCall::kCopy, 5);
  ASSERT_GE(copy, 0);
  EXPECT_TRUE(e_.uffd->calls[copy].wakes) << "the copy wakes the faulter";
}

TEST_F(FaultHandlerTest, DuplicateAddressesInABatchArePlacedOnce) {
  e_.put_in_store(6, 1, 0x11);
  struct uffd_msg m[3] = {fault_msg(e_.addr(6)), fault_msg(e_.addr(6) + 100),
                          fault_msg(e_.addr(6), kWrite)};
  handler_->handle_batch(m, 3);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(6)), 1u);
  EXPECT_EQ(e_.store->reads, 1u);
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_EQ(e_.state(6), PageState::kClean);
  EXPECT_TRUE(e_.page_is(6, 0x11));
}

TEST_F(FaultHandlerTest, AFaultOnAPageInFlightWaitsForItsPlacement) {
  // A page FETCHING (claimed by a batch in flight) is not claimed again:
  // the copy that places it wakes this faulter too.
  transition(e_.table->words[8], PageEvent::kClaim, e_.table->id, 8);
  fault(8);
  EXPECT_EQ(e_.state(8), PageState::kFetching);
  EXPECT_EQ(e_.uffd->calls.size(), 0u);
  EXPECT_EQ(e_.store->reads, 0u);
}

TEST_F(FaultHandlerTest, AFailedStoreReadPoisonsThePageAndNamesTheReason) {
  e_.put_in_store(9, 2, 0x33);
  e_.store->fail_read.insert(2);
  fault(9);
  EXPECT_EQ(e_.state(9), PageState::kFailed);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(9)), 1u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(9)), 0u);
  EXPECT_EQ(e_.table->counters.errors.load(), 1u);
  EXPECT_EQ(e_.core->counters.store_errors.load(), 1u);
  EXPECT_EQ(e_.core->residency.resident(), 0);
  // A poisoned page answers every later access with SIGBUS, never data.
  fault(9);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(9)), 2u);
  EXPECT_EQ(e_.store->reads, 1u);
}

TEST_F(FaultHandlerTest, APageThatComesBackDifferentFailsItsAccessNeverPlacingIt) {
  // The read succeeds but one bit changed in the store behind mtier's back:
  // the checksum recorded at write-back catches it, as a failed read.
  e_.put_in_store(9, 2, 0x33);
  e_.store->slot_data(2)[1234] ^= 0x04;
  fault(9);
  EXPECT_EQ(e_.state(9), PageState::kFailed);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(9)), 1u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(9)), 0u) << "wrong data placed";
  EXPECT_EQ(e_.core->counters.store_errors.load(), 1u);
  EXPECT_EQ(e_.table->counters.errors.load(), 1u);
  EXPECT_EQ(e_.core->residency.resident(), 0);
  EXPECT_EQ(e_.core->residency.claimed(), 0);
}

TEST_F(FaultHandlerTest, AByteAddressableStoreIsVerifiedBeforeTheCopyFromItsMapping) {
  e_.store->byte_addressable = true;  // as the PMem store: no read, a copy from the slot
  e_.put_in_store(5, 7, 0x42);
  e_.put_in_store(9, 2, 0x33);
  e_.store->slot_data(2)[4095] ^= 0x01;
  fault(5);
  EXPECT_EQ(e_.state(5), PageState::kClean);
  EXPECT_TRUE(e_.page_is(5, 0x42));
  fault(9);
  EXPECT_EQ(e_.state(9), PageState::kFailed);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(9)), 0u) << "wrong data placed";
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(9)), 1u);
  EXPECT_EQ(e_.store->reads, 0u);
}

TEST_F(FaultHandlerTest, AFollowerThatComesBackDifferentStaysInTheStore) {
  ASSERT_NO_FATAL_FAILURE(restart_with_read_around(2));
  e_.put_in_store(10, 3, 0x10);
  e_.put_in_store(11, 4, 0x11);
  memset(e_.store->slot_data(4), 0, kPageSize);  // truncated and extended: zeros
  fault(10);
  EXPECT_EQ(e_.state(10), PageState::kClean);
  EXPECT_EQ(e_.state(11), PageState::kAbsent);  // nobody waited on it: unclaimed
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(11)), 0u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  // Its own access then fails it.
  fault(11);
  EXPECT_EQ(e_.state(11), PageState::kFailed);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(11)), 1u);
}

TEST_F(FaultHandlerTest, ReadAroundOnlyTakesFreeRoom) {
  ASSERT_NO_FATAL_FAILURE(restart_with_read_around(8));
  for (uint64_t p = 0; p < 13; p++) e_.make_resident(p, 0, false);
  for (uint64_t p = 20; p < 30; p++) e_.put_in_store(p, p, static_cast<char>(p));
  fault(20);
  // Budget 16, 13 resident: the fetch and 2 of its 8 followers.
  EXPECT_EQ(e_.core->residency.resident(), 16);
  for (uint64_t p = 20; p < 23; p++) EXPECT_TRUE(e_.page_is(p, static_cast<char>(p))) << p;
  EXPECT_EQ(e_.state(23), PageState::kAbsent);
}

TEST_F(FaultHandlerTest, AFailedReadAroundLeavesThePageInTheStore) {
  ASSERT_NO_FATAL_FAILURE(restart_with_read_around(2));
  e_.put_in_store(10, 3, 0x10);
  e_.put_in_store(11, 4, 0x11);
  e_.put_in_store(12, 5, 0x12);
  e_.store->fail_read.insert(4);
  fault(10);
  EXPECT_EQ(e_.state(10), PageState::kClean);
  EXPECT_EQ(e_.state(11), PageState::kAbsent);  // nobody waited on it: unclaimed
  EXPECT_EQ(PageWord::slot(e_.word(11)), 4u);
  EXPECT_EQ(e_.state(12), PageState::kClean);
  EXPECT_TRUE(e_.page_is(12, 0x12));
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  EXPECT_EQ(e_.table->counters.prefetches.load(), 1u);
}

TEST_F(FaultHandlerTest, EagainOnACopyIsRetriedAndThenThePageGoesBackForTheThreadToFaultAgain) {
  e_.put_in_store(12, 6, 0x66);
  for (int i = 0; i <= FaultHandler::kCopyRetries; i++) e_.uffd->copy_results.push_back(-EAGAIN);
  fault(12);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(12)),
            static_cast<size_t>(FaultHandler::kCopyRetries + 1));
  EXPECT_EQ(e_.state(12), PageState::kAbsent);  // back where it was: its slot kept
  EXPECT_EQ(PageWord::slot(e_.word(12)), 6u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake, e_.addr(12)), 1u);  // the thread faults again
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  EXPECT_EQ(e_.core->residency.resident(), 0);
  // Its next fault is served.
  fault(12);
  EXPECT_EQ(e_.state(12), PageState::kClean);
  EXPECT_TRUE(e_.page_is(12, 0x66));
}

TEST_F(FaultHandlerTest, ABriefEagainOnACopyIsOnlyRetried) {
  e_.uffd->copy_results = {-EAGAIN, -EAGAIN};
  fault(13);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(13)), 3u);
  EXPECT_EQ(e_.state(13), PageState::kClean);
}

TEST_F(FaultHandlerTest, ACopyThatFailsOtherwisePoisonsThePage) {
  e_.uffd->copy_results = {-ENOMEM};
  fault(14);
  EXPECT_EQ(e_.state(14), PageState::kFailed);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(14)), 1u);
}

TEST_F(FaultHandlerTest, EexistOnAContinueOnlyWakes) {
  e_.make_resident(15, 0x15, false);
  e_.uffd->continue_results = {-EEXIST};
  fault(15, kMinor);
  EXPECT_EQ(e_.uffd->count(UffdCall::kContinue, e_.addr(15)), 1u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake, e_.addr(15)), 1u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  EXPECT_EQ(e_.table->counters.minor_faults.load(), 1u);
  EXPECT_TRUE(PageWord::referenced(e_.word(15)));
}

TEST_F(FaultHandlerTest, EagainOnAContinueWakesTheThreadToFaultAgain) {
  e_.make_resident(16, 0x16, false);
  e_.uffd->continue_results = {-EAGAIN};
  fault(16, kMinor);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake, e_.addr(16)), 1u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  EXPECT_EQ(e_.core->counters.store_errors.load(), 0u);
}

TEST_F(FaultHandlerTest, AContinueThatFailsOtherwiseGetsSigbus) {
  e_.make_resident(17, 0x17, false);
  e_.uffd->continue_results = {-EINVAL};
  fault(17, kMinor);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, e_.addr(17)), 1u);
}

TEST_F(FaultHandlerTest, AFirstWriteToACleanPageMakesItDirtyAndUnprotectsIt) {
  e_.make_resident(18, 0x18, false);
  fault(18, kWrite | kWp);
  EXPECT_EQ(e_.state(18), PageState::kDirty);
  EXPECT_EQ(e_.table->counters.wp_faults.load(), 1u);
  long wp = call_index(UffdCall::kWriteProtect, 18);
  ASSERT_GE(wp, 0);
  EXPECT_FALSE(e_.uffd->calls[wp].flag);
}

TEST_F(FaultHandlerTest, AWriteRacingAnEvictionCancelsIt) {
  e_.make_resident(19, 0x19, true);
  transition(e_.table->words[19], PageEvent::kEvictBegin, e_.table->id, 19);
  fault(19, kWrite | kWp);
  EXPECT_EQ(e_.state(19), PageState::kDirty);
  EXPECT_EQ(e_.table->counters.evict_cancels.load(), 1u);
}

TEST_F(FaultHandlerTest, AFaultOutsideAnyTableGetsSigbus) {
  char* wild = e_.core->region->base() + (e_.table->first_page + e_.table->pages + 8) * kPageSize;
  struct uffd_msg m = fault_msg(wild);
  handler_->handle_batch(&m, 1);
  EXPECT_EQ(e_.core->counters.wild_faults.load(), 1u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison, wild), 1u);
}

TEST_F(FaultHandlerTest, ZeroFillAheadStopsAtTheLowWatermark) {
  handler_.reset();
  e_.core->opts.zero_ahead_pages = 15;
  handler_ = std::make_unique<FaultHandler>(*e_.core);
  ASSERT_EQ(handler_->prepare(), 0);
  fault(0, kWrite);
  // Budget 16 pages, low watermark 85%: 13 pages in all, the touch included.
  int64_t low = static_cast<int64_t>(e_.core->residency.low_pages());
  EXPECT_EQ(e_.core->residency.resident(), low);
  for (int64_t p = 0; p < low; p++) EXPECT_EQ(e_.state(p), PageState::kDirty) << p;
  EXPECT_EQ(e_.state(low), PageState::kAbsent);
}

// A first touch and the never-written pages brought with it go in one copy
// of the run (place_zero_run), not one copy a page.
TEST_F(FaultHandlerTest, AFirstTouchAndItsZeroFillAheadArePlacedInOneCopy) {
  handler_.reset();
  e_.core->opts.zero_ahead_pages = 7;
  handler_ = std::make_unique<FaultHandler>(*e_.core);
  ASSERT_EQ(handler_->prepare(), 0);
  fault(4, kWrite);
  ASSERT_EQ(e_.uffd->count(UffdCall::kCopy), 1u);
  long i = call_index(UffdCall::kCopy, 4);
  ASSERT_GE(i, 0);
  EXPECT_EQ(e_.uffd->calls[i].len, 8 * kPageSize);
  EXPECT_TRUE(e_.uffd->calls[i].wakes);
  EXPECT_FALSE(e_.uffd->calls[i].flag);  // a write: mapped writable
  for (uint64_t p = 4; p < 12; p++) {
    EXPECT_EQ(e_.state(p), PageState::kDirty) << p;
    EXPECT_TRUE(e_.page_is(p, 0)) << p;
  }
  EXPECT_EQ(e_.core->residency.resident(), 8);
  EXPECT_EQ(e_.table->counters.zero_fills.load(), 8u);
  EXPECT_EQ(e_.table->counters.resident_pages.load(), 8);
}

// A run's copy that fails (part of the way: the pages it placed answer
// EEXIST) is placed page by page, none lost, none poisoned.
TEST_F(FaultHandlerTest, ARunCopyThatFailsIsPlacedPageByPage) {
  handler_.reset();
  e_.core->opts.zero_ahead_pages = 3;
  handler_ = std::make_unique<FaultHandler>(*e_.core);
  ASSERT_EQ(handler_->prepare(), 0);
  e_.uffd->copy_results = {-EAGAIN, -EEXIST, 0, 0, 0};  // the run, then pages 0..3
  fault(0);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy), 5u);
  for (uint64_t p = 0; p < 4; p++) EXPECT_EQ(e_.state(p), PageState::kClean) << p;
  EXPECT_EQ(e_.uffd->count(UffdCall::kWake, e_.addr(0)), 1u);  // the page the run placed
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  EXPECT_EQ(e_.core->residency.resident(), 4);
  EXPECT_EQ(e_.table->counters.zero_fills.load(), 4u);
}

// A walk's pages read back from a store into consecutive staging pages are
// placed in one copy per run (within a chunk of reads at the store's depth,
// the fault's own page apart from the pages brought with it), verified and
// mapped as the walk's faults are: write-protected for a read, whatever
// the table's write intent.
TEST_F(FaultHandlerTest, AWalksFetchedPagesArePlacedInRuns) {
  handler_.reset();
  e_.core->opts.stream_pages = 8;
  e_.core->opts.predict_writes = true;
  for (int i = 0; i < 64; i++) e_.table->write_intent.written();  // the steps wrote what they read
  handler_ = std::make_unique<FaultHandler>(*e_.core);
  ASSERT_EQ(handler_->prepare(), 0);
  for (uint64_t p = 0; p < 16; p++) e_.put_in_store(p, 100 + p, static_cast<char>(0x40 + p));
  // 0 starts a walk, 1 continues it, 2 brings 3-6 (window 4), 7 brings 8-15.
  for (uint64_t p : {0, 1, 2, 7}) fault(p);
  for (uint64_t p = 0; p < 16; p++) {
    EXPECT_EQ(e_.state(p), PageState::kClean) << p;
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x40 + p))) << p;
  }
  size_t copies = e_.uffd->count(UffdCall::kCopy), runs = 0;
  for (const auto& c : e_.uffd->calls) {
    if (c.kind != UffdCall::kCopy) continue;
    EXPECT_TRUE(c.flag) << "a page the walk read was mapped writable";
    runs += c.len > kPageSize;
  }
  // Chunks of 4 reads: {2} {3 4 5} {6}; {7} {8 9 10} {11 12 13 14} {15}.
  EXPECT_EQ(copies, 9u);
  EXPECT_EQ(runs, 3u);
  long i = call_index(UffdCall::kCopy, 11);
  ASSERT_GE(i, 0);
  EXPECT_EQ(e_.uffd->calls[i].len, 4 * kPageSize);
  EXPECT_EQ(e_.core->residency.resident(), 16);
  EXPECT_EQ(e_.table->counters.resident_pages.load(), 16);
  EXPECT_EQ(e_.table->counters.fetches.load() + e_.table->counters.prefetches.load(), 16u);
  EXPECT_EQ(e_.table->counters.prefetches.load(), 12u);  // all but the 4 faults' pages
}

// A page of a run that comes back different stays out of the run: the
// pages before it are placed together, it stays in the store (nobody
// waits on it), the pages after it are placed.
TEST_F(FaultHandlerTest, AWalkPageThatComesBackDifferentBreaksItsRun) {
  handler_.reset();
  e_.core->opts.stream_pages = 8;
  handler_ = std::make_unique<FaultHandler>(*e_.core);
  ASSERT_EQ(handler_->prepare(), 0);
  for (uint64_t p = 0; p < 16; p++) e_.put_in_store(p, 100 + p, static_cast<char>(0x40 + p));
  memset(e_.store->slot_data(112), 0, kPageSize);  // page 12's copy
  for (uint64_t p : {0, 1, 2, 7}) fault(p);
  EXPECT_EQ(e_.state(12), PageState::kAbsent);
  EXPECT_EQ(e_.uffd->count(UffdCall::kPoison), 0u);
  for (uint64_t p = 0; p < 16; p++) {
    if (p == 12) continue;
    EXPECT_EQ(e_.state(p), PageState::kClean) << p;
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x40 + p))) << p;
  }
  long i = call_index(UffdCall::kCopy, 11);
  ASSERT_GE(i, 0);
  EXPECT_EQ(e_.uffd->calls[i].len, 1 * kPageSize);  // {11} then page 12 left out, {13 14}
  i = call_index(UffdCall::kCopy, 13);
  ASSERT_GE(i, 0);
  EXPECT_EQ(e_.uffd->calls[i].len, 2 * kPageSize);
}

TEST_F(FaultHandlerTest, WithNoRoomAndAStuckEvictorABatchGoesOverBudgetRatherThanHang) {
  for (uint64_t p = 0; p < 16; p++) e_.make_resident(p, 1, false);
  e_.core->residency.set_stuck(true);
  fault(20);
  EXPECT_EQ(e_.state(20), PageState::kClean);
  EXPECT_EQ(e_.core->residency.resident(), 17);
  EXPECT_EQ(e_.core->residency.overruns(), 1u);
}

// The LOCKING contract: a batch waits for DRAM room before it takes the
// table registry, so a table can be created (exclusive lock) while a fault
// waits for the evictor - which itself needs the registry.
TEST_F(FaultHandlerTest, ABatchWaitingForRoomHoldsNoLock) {
  for (uint64_t p = 0; p < 16; p++) e_.make_resident(p, 1, false);
  auto waiting = std::async(std::launch::async, [&] { fault(21); });
  while (e_.core->residency.waiters() == 0) std::this_thread::yield();  // it waits
  auto create = std::async(std::launch::async, [&] {
    std::unique_lock lk(e_.core->tables.mutex());
    int err = 0;
    return e_.core->tables.add("while-waiting", kPageSize, &err) != nullptr;
  });
  ASSERT_EQ(create.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the registry was held while waiting for room";
  EXPECT_TRUE(create.get());
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  // The evictor's part: room made, progress said.
  e_.core->residency.sub(1);
  e_.core->residency.notify_progress();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(e_.state(21), PageState::kClean);
  EXPECT_EQ(e_.core->residency.resident(), 16);
}

// The fault handler's pages brought with a fault and the lookahead's claim
// concurrently: two threads taking room page by page never take more than
// there is between them (a check and a claim apart could each take the last
// page: the torture test once saw 3073 pages resident of a 3072 budget).
TEST(ResidencyClaims, TwoThreadsNeverClaimPastTheLimit) {
  for (int round = 0; round < 50; round++) {
    Residency r(1024 * kPageSize, 95, 85);
    r.add(24);
    std::atomic<bool> go{false};
    std::atomic<int64_t> taken{0};
    auto claimer = [&] {
      while (!go.load()) {
      }
      while (r.try_claim(1000)) taken++;
    };
    std::thread a(claimer), b(claimer);
    go = true;
    a.join();
    b.join();
    ASSERT_EQ(taken.load(), 976) << "round " << round;
    ASSERT_EQ(r.resident() + r.claimed(), 1000);
    EXPECT_FALSE(r.try_claim(1000));
    EXPECT_TRUE(r.try_claim(1001));
  }
}

// The fault handler's demand pages against the lookahead's claims: the
// room a batch waited for is taken in the same step (reserve_room), so a
// claimant racing it finds none left, and what the batch did not use goes
// back. (Waiting, then claiming, let the lookahead take the room between
// the two: the torture test again saw 3073 pages of a 3072 budget.)
TEST(ResidencyClaims, RoomReservedForABatchIsNotTakenByAnotherClaimant) {
  for (int round = 0; round < 50; round++) {
    Residency r(64 * kPageSize, 95, 85);
    r.add(48);
    std::atomic<bool> go{false};
    std::atomic<int64_t> taken{0};
    std::atomic<int> reserved{-1};
    std::thread batch([&] {
      while (!go.load()) {
      }
      reserved = r.reserve_room(4);
    });
    std::thread other([&] {
      while (!go.load()) {
      }
      while (r.try_claim(r.budget_pages())) taken++;
    });
    go = true;
    other.join();
    // The other claimant stopped at the first refusal: the batch got its 4
    // first (12 left to take), or it took all 16 and the batch waits - for
    // an evictor that is not there, so say it is stuck to let it go.
    if (taken.load() == 16) r.set_stuck(true);
    batch.join();
    ASSERT_EQ(r.resident() + r.claimed(), 64) << "round " << round;
    EXPECT_EQ(taken.load(), reserved.load() == 1 ? 12 : 16) << "round " << round;
  }
  // Unused reserved room goes back.
  Residency r(64 * kPageSize, 95, 85);
  ASSERT_TRUE(r.reserve_room(8));
  EXPECT_EQ(r.claimed(), 8);
  r.unclaimed(8);
  EXPECT_EQ(r.claimed(), 0);
  EXPECT_TRUE(r.try_claim(r.budget_pages(), 64));
  EXPECT_FALSE(r.try_claim(r.budget_pages()));
}

// A budget from the daemon: at most the process's own, unless a larger
// ceiling is given (a job's rank holding more than its own part of the
// job's budget); 0 restores the own; watermarks follow by percentage.
TEST(ResidencyBudgets, AnAssignedBudgetIsCappedByTheOwnUnlessACeilingIsGiven) {
  Residency r(1000 * kPageSize, 90, 80);
  r.set_budget_pages(500);
  EXPECT_EQ(r.budget_pages(), 500u);
  EXPECT_EQ(r.high_pages(), 450u);
  r.set_budget_pages(3000);
  EXPECT_EQ(r.budget_pages(), 1000u);
  r.set_budget_pages(3000, 2000);
  EXPECT_EQ(r.budget_pages(), 2000u);
  EXPECT_EQ(r.high_pages(), 1800u);
  EXPECT_EQ(r.low_pages(), 1600u);
  r.set_budget_pages(1500, UINT64_MAX);
  EXPECT_EQ(r.budget_pages(), 1500u);
  r.set_budget_pages(0, UINT64_MAX);
  EXPECT_EQ(r.budget_pages(), 1000u);
  EXPECT_EQ(r.own_budget_pages(), 1000u);
}

TEST(FaultHandlerLockOrder, WaitingForRoomUnderTheRegistryIsCaughtInCheckedBuilds) {
  if constexpr (!build::kCheckLockOrder) GTEST_SKIP() << "built without lock checks";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FakeEngine e(4, 4);
  EXPECT_DEATH(
      {
        std::shared_lock lk(e.core->tables.mutex());
        (void)e.core->residency.wait_for_room(1);
      },
      "lock order: waiting for DRAM room while holding the table registry lock");
  EXPECT_DEATH(
      {
        std::lock_guard page(e.core->lock_of(e.table, 0));
        std::shared_lock lk(e.core->tables.mutex());
      },
      "lock order: taking the table registry lock while holding a page stripe lock");
}

}  // namespace
}  // namespace mtier

namespace mtier {
namespace {

// Points the log at a pipe for the test's life; text() reads what came.
class LogCapture {
 public:
  LogCapture() {
    EXPECT_EQ(pipe2(fds_, O_NONBLOCK | O_CLOEXEC), 0);
    log::set_fd(fds_[1]);
    log::reset_rate_cap_for_testing();
  }
  ~LogCapture() {
    log::set_fd(2);
    close(fds_[0]);
    close(fds_[1]);
  }
  const std::string& text() {
    char buf[4096];
    for (ssize_t n; (n = read(fds_[0], buf, sizeof buf)) > 0;) text_.append(buf, static_cast<size_t>(n));
    return text_;
  }
  size_t count(const std::string& s) {
    size_t n = 0;
    for (size_t at = text().find(s); at != std::string::npos; at = text_.find(s, at + 1)) n++;
    return n;
  }

 private:
  int fds_[2] = {-1, -1};
  std::string text_;
};

// Waits up to 10 s for `done`.
template <class F>
bool eventually(F done) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

using FaultLoopTest = FaultHandlerTest;

TEST_F(FaultLoopTest, AReadThatFailsThenWorksIsLoggedOnceAndTheNextFaultIsServed) {
  LogCapture log;
  e_.uffd->read_results = {-ENOMEM, -EIO, -ENOMEM};
  e_.uffd->batches.push_back({fault_msg(e_.addr(5))});
  ASSERT_EQ(handler_->start(), 0);
  ASSERT_TRUE(eventually([&] { return e_.state(5) == PageState::kClean; }))
      << "the fault after the failed reads was not served";
  handler_->stop();
  EXPECT_EQ(e_.uffd->reads.load(), 4u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kCopy, e_.addr(5)), 1u);
  EXPECT_EQ(log.count("fault handler: read from userfaultfd: Cannot allocate memory; retrying"), 1u)
      << log.text();
  EXPECT_EQ(log.count("fault handler: "), 2u) << log.text();  // the error, then the recovery
  EXPECT_EQ(log.count("recovered after 3 consecutive failures"), 1u) << log.text();
}

TEST_F(FaultLoopTest, APollThatFailsThenWorksIsLoggedAndTheNextFaultIsServed) {
  LogCapture log;
  e_.uffd->wait_results = {-ENOMEM, -ENOMEM};
  e_.uffd->batches.push_back({fault_msg(e_.addr(7), kWrite)});
  ASSERT_EQ(handler_->start(), 0);
  ASSERT_TRUE(eventually([&] { return e_.state(7) == PageState::kDirty; }));
  handler_->stop();
  EXPECT_EQ(log.count("fault handler: poll: Cannot allocate memory; retrying"), 1u) << log.text();
  EXPECT_EQ(log.count("recovered after 2 consecutive failures"), 1u) << log.text();
}

// A stuck budget fails every batch: the warning is said once (then at
// most every 10 s), each overrun counted. Before, a line a batch: 61 lines
// on a forked pool's stderr.
TEST_F(FaultLoopTest, AStuckBudgetIsSaidOnceForManyBatches) {
  LogCapture log;
  for (uint64_t p = 0; p < 16; p++) e_.make_resident(p, 1, false);
  e_.core->residency.set_stuck(true);
  for (uint64_t p = 20; p < 24; p++) fault(p);
  EXPECT_EQ(e_.core->residency.overruns(), 4u);
  EXPECT_EQ(log.count("DRAM budget exceeded: eviction cannot make room"), 1u) << log.text();
  EXPECT_EQ(log.count("(1 so far)"), 1u) << log.text();
}

TEST_F(FaultLoopTest, AnInterruptedPollIsRetriedWithoutALine) {
  LogCapture log;
  e_.uffd->wait_results = {-EINTR, -EINTR};
  e_.uffd->batches.push_back({fault_msg(e_.addr(2))});
  ASSERT_EQ(handler_->start(), 0);
  ASSERT_TRUE(eventually([&] { return e_.state(2) == PageState::kClean; }));
  handler_->stop();
  EXPECT_EQ(log.text(), "");
}

// The loop leaves only when told to: an error that never clears keeps it
// retrying (backed off), and stop() still ends it.
TEST_F(FaultLoopTest, AReadThatKeepsFailingIsRetriedUntilStop) {
  LogCapture log;
  e_.uffd->read_results.assign(100000, -EBADF);
  ASSERT_EQ(handler_->start(), 0);
  ASSERT_TRUE(eventually([&] { return e_.uffd->reads.load() >= 5; }));
  auto stopped = std::async(std::launch::async, [&] { handler_->stop(); });
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_LT(e_.uffd->reads.load(), 1000u) << "retried without backing off";
  EXPECT_EQ(log.count("Bad file descriptor; retrying"), 1u) << log.text();
}

constexpr uint64_t kMs = 1'000'000;

TEST(LoopErrorsTest, BacksOffDoublingUpToTheCap) {
  LogCapture log;
  LoopErrors e;
  EXPECT_EQ(e.failed("poll", -ENOMEM, 0), LoopErrors::kFirstBackoffNs);
  EXPECT_EQ(e.failed("poll", -ENOMEM, 1 * kMs), 2 * LoopErrors::kFirstBackoffNs);
  uint64_t b = 0;
  for (int i = 0; i < 20; i++) b = e.failed("poll", -ENOMEM, 10 * kMs);
  EXPECT_EQ(b, LoopErrors::kMaxBackoffNs);
  EXPECT_EQ(e.consecutive(), 22u);
  EXPECT_EQ(log.count("mtier: error: "), 1u) << log.text();  // only the first failure, under 1 s
}

TEST(LoopErrorsTest, ARunOverOneSecondIsLoggedOnceMoreWithItsCount) {
  LogCapture log;
  LoopErrors e;
  uint64_t t = 5'000 * kMs;
  for (int i = 0; i < 12; i++) (void)e.failed("read from userfaultfd", -EIO, t + i * 100 * kMs);
  EXPECT_EQ(log.count("mtier: error: "), 2u) << log.text();
  EXPECT_EQ(log.count("11 consecutive failures over 1000 ms"), 1u) << log.text();
  e.succeeded(t + 1200 * kMs);
  EXPECT_EQ(log.count("recovered after 12 consecutive failures over 1200 ms"), 1u) << log.text();
  EXPECT_EQ(e.consecutive(), 0u);
  // A new run is logged afresh, its first failure first.
  (void)e.failed("poll", -EIO, t + 2000 * kMs);
  EXPECT_EQ(log.count("fault handler: poll: Input/output error; retrying"), 1u) << log.text();
}

TEST(LoopErrorsTest, ASuccessWithNoRunLogsNothing) {
  LogCapture log;
  LoopErrors e;
  e.succeeded(1);
  EXPECT_EQ(log.text(), "");
}

}  // namespace
}  // namespace mtier
