// SPDX-License-Identifier: Apache-2.0
// The evictor driven without its thread or a kernel: its passes and orders
// called directly, the userfaultfd calls answered by a fake, the store in
// memory. Clean pages dropped without a write, dirty ones written back and
// read again intact, a write racing the write-back kept, and each failure
// (write-protect refused, a failed write, a full store) leaving the page in
// DRAM, dirty, with its data.
#include "evict/evictor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "fake_kernel.h"
#include "log/log.h"
#include "uffd/fault_handler.h"
#include "util/crc32c.h"

namespace mtier {
namespace {

using testutil::FakeEngine;
using testutil::has_pte;
using testutil::fault_msg;
using testutil::UffdCall;


class EvictorTest : public ::testing::Test {
 protected:
  explicit EvictorTest(uint64_t slots = 256) : e_(32, 16, slots) {}
  void SetUp() override {
    ASSERT_NE(e_.table, nullptr);
    evictor_ = std::make_unique<Evictor>(*e_.core);
    ASSERT_EQ(evictor_->prepare(), 0);
  }
  int evict_all() { return evictor_->evict_range(e_.table->id, 0, UINT64_MAX, false); }
  // At the store's next write batch, a thread writes `page` as the trainer
  // would: its write-protect fault goes to `handler`, then `fill` lands.
  void write_during_write_back(FaultHandler& handler, uint64_t page, char fill) {
    e_.store->before_write = [this, &handler, page, fill] {
      std::thread writer([&] {
        struct uffd_msg m =
            fault_msg(e_.addr(page), UFFD_PAGEFAULT_FLAG_WRITE | UFFD_PAGEFAULT_FLAG_WP);
        handler.handle_batch(&m, 1);
        memset(e_.alias(page), fill, kPageSize);
      });
      writer.join();
    };
  }
  long in_memfd(uint64_t first, uint64_t n) const {
    return e_.core->region->resident_pages(e_.core->region_offset(e_.table, first), n * kPageSize);
  }

  FakeEngine e_;
  std::unique_ptr<Evictor> evictor_;
};

TEST_F(EvictorTest, CleanPagesAreDroppedWithoutAWrite) {
  e_.make_resident(0, 0, false);  // a zero page: nothing to keep
  e_.put_in_store(1, 3, 0x31);
  e_.make_resident(1, 0x31, false);  // fetched and not written: its slot holds it
  ASSERT_EQ(evict_all(), 0);
  EXPECT_EQ(e_.state(0), PageState::kAbsent);
  EXPECT_FALSE(PageWord::has_slot(e_.word(0)));
  EXPECT_EQ(e_.state(1), PageState::kAbsent);
  EXPECT_EQ(PageWord::slot(e_.word(1)), 3u);
  EXPECT_EQ(e_.store->writes, 0u);
  EXPECT_EQ(e_.core->residency.resident(), 0);
  EXPECT_EQ(in_memfd(0, 2), 0);  // punched
  EXPECT_EQ(e_.uffd->count(UffdCall::kWriteProtect), 0u);
}

TEST_F(EvictorTest, DirtyPagesAreWrittenBackAndComeBackIntact) {
  for (uint64_t p = 4; p < 8; p++) e_.make_resident(p, static_cast<char>(0x40 + p), true);
  ASSERT_EQ(evict_all(), 0);
  // Write-protected (one call for the run) before they were copied.
  ASSERT_EQ(e_.uffd->count(UffdCall::kWriteProtect), 1u);
  EXPECT_TRUE(e_.uffd->calls[0].flag);
  EXPECT_EQ(e_.uffd->calls[0].len, 4 * kPageSize);
  EXPECT_EQ(e_.store->writes, 4u);
  EXPECT_EQ(in_memfd(4, 4), 0);
  EXPECT_EQ(e_.core->residency.resident(), 0);
  EXPECT_EQ(e_.table->counters.writebacks.load(), 4u);
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  for (uint64_t p = 4; p < 8; p++) {
    ASSERT_EQ(e_.state(p), PageState::kAbsent);
    ASSERT_TRUE(PageWord::has_slot(e_.word(p)));
    // The checksum the page carries is that of the bytes in its slot.
    EXPECT_EQ(e_.table->sums[p], crc32c(e_.store->slot_data(PageWord::slot(e_.word(p))), kPageSize));
    struct uffd_msg m = fault_msg(e_.addr(p));
    handler.handle_batch(&m, 1);
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x40 + p))) << p;
  }
}

TEST_F(EvictorTest, AWriteRacingTheWriteBackIsKept) {
  e_.make_resident(8, 0x08, true);
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  // While the page is being written, the trainer writes it: the WP fault
  // cancels the eviction and the new bytes land in the page.
  write_during_write_back(handler, 8, 0x77);
  ASSERT_EQ(evict_all(), 0);
  EXPECT_EQ(e_.state(8), PageState::kDirty);
  EXPECT_EQ(e_.table->counters.evict_cancels.load(), 1u);
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_EQ(in_memfd(8, 1), 1);  // not punched
  EXPECT_TRUE(e_.page_is(8, 0x77));
}

// A table being freed (Engine::free_table marks it before it waits for the
// pass) gets no more of its pages written back: the chunk in flight ends,
// the rest go back to DIRTY without an error, and their slots stay with
// their words for the free to release. A table already marked is not
// evicted at all.
TEST_F(EvictorTest, AFreeDuringWriteBackCancelsTheRestOfTheTablesWrites) {
  for (uint64_t p = 0; p < 16; p++) e_.make_resident(p, static_cast<char>(0x10 + p), true);
  uint64_t first_writes = 0;
  e_.store->before_write = [&] {
    if (!e_.table->freeing.load()) {
      e_.table->freeing = true;  // as free_table does, while the first chunk is written
      first_writes = e_.core->opts.queue_depth;
    }
  };
  ASSERT_EQ(evict_all(), 0);
  EXPECT_EQ(e_.store->writes, first_writes) << "pages of a table being freed were written";
  EXPECT_EQ(e_.table->counters.errors.load(), 0u);
  EXPECT_EQ(e_.core->counters.store_errors.load(), 0u);
  uint64_t written = 0, dirty = 0;
  for (uint64_t p = 0; p < 16; p++) {
    PageState st = e_.state(p);
    written += st == PageState::kAbsent;
    dirty += st == PageState::kDirty;
    EXPECT_TRUE(PageWord::has_slot(e_.word(p))) << p << ": its slot is for the free to release";
  }
  EXPECT_EQ(written, first_writes);
  EXPECT_EQ(dirty, 16 - first_writes);
  EXPECT_EQ(e_.core->residency.resident(), static_cast<int64_t>(16 - first_writes));
  // Marked already: nothing is evicted, nothing written.
  e_.store->before_write = nullptr;
  uint64_t writes = e_.store->writes;
  ASSERT_EQ(evict_all(), 0);
  EXPECT_EQ(e_.store->writes, writes);
  EXPECT_EQ(e_.core->residency.resident(), static_cast<int64_t>(16 - first_writes));
}

TEST_F(EvictorTest, ARefusedWriteProtectLeavesThePageDirtyInDram) {
  e_.make_resident(9, 0x09, true);
  e_.uffd->writeprotect_results = {-EIO};
  (void)evict_all();
  EXPECT_EQ(e_.state(9), PageState::kDirty);
  EXPECT_EQ(e_.store->writes, 0u);
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_TRUE(e_.page_is(9, 0x09));
}

TEST_F(EvictorTest, AFailedWriteBackKeepsThePageAndCountsTheError) {
  e_.make_resident(10, 0x0a, true);
  e_.store->fail_write.insert(0);  // the first slot the page gets
  EXPECT_EQ(evict_all(), -EIO);
  EXPECT_EQ(e_.state(10), PageState::kDirty);
  EXPECT_EQ(e_.core->counters.store_errors.load(), 1u);
  EXPECT_EQ(e_.table->counters.errors.load(), 1u);
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_TRUE(e_.page_is(10, 0x0a));
  // Given back writable: the write-protect is lifted again.
  ASSERT_EQ(e_.uffd->count(UffdCall::kWriteProtect), 2u);
  EXPECT_FALSE(e_.uffd->calls.back().flag);
}

// The store's filesystem full (a small tmpfs): the write fails with ENOSPC,
// which is named in the log once and counted as a store error every time;
// the pages stay in DRAM, intact.
TEST_F(EvictorTest, AFullFilesystemIsNamedOnceAndCounted) {
  e_.make_resident(10, 0x0a, true);
  e_.make_resident(12, 0x0c, true);
  e_.store->write_error = -ENOSPC;
  e_.store->fail_write = {0, 1};
  log::capture_errors(true);
  EXPECT_EQ(evict_all(), -ENOSPC);
  std::string first = log::captured_error();
  log::capture_errors(true);  // clears what was kept
  (void)evict_all();
  std::string second = log::captured_error();
  log::capture_errors(false);
  EXPECT_NE(first.find("ENOSPC"), std::string::npos) << first;
  EXPECT_NE(first.find("filesystem is full"), std::string::npos) << first;
  EXPECT_EQ(second, "") << "ENOSPC named a second time";
  EXPECT_GE(e_.core->counters.store_errors.load(), 2u);
  EXPECT_GE(e_.table->counters.errors.load(), 2u);
  EXPECT_EQ(e_.core->counters.store_full.load(), 0u) << "the slots were there: not a full store";
  EXPECT_EQ(e_.state(10), PageState::kDirty);
  EXPECT_TRUE(e_.page_is(10, 0x0a));
  EXPECT_TRUE(e_.page_is(12, 0x0c));
}

TEST_F(EvictorTest, AnEvictionPassStopsAtTheLowWatermark) {
  for (uint64_t p = 0; p < 16; p++) e_.make_resident(p, 0, false);
  EXPECT_GT(evictor_->evict_pass(), 0u);
  EXPECT_LE(e_.core->residency.resident(), static_cast<int64_t>(e_.core->residency.low_pages()));
  EXPECT_EQ(in_memfd(0, 16), e_.core->residency.resident());
}

TEST_F(EvictorTest, AReferencedPageGetsASecondChanceInAPass) {
  for (uint64_t p = 0; p < 16; p++) {
    e_.make_resident(p, 0, false);
    if (p < 8) mark_access(e_.table->words[p]);
  }
  (void)evictor_->evict_pass();
  for (uint64_t p = 0; p < 8; p++) EXPECT_EQ(e_.state(p), PageState::kClean) << p;
}

// Every resident page hot (referenced, heat spent on many faults) and the
// budget full: a pass still frees pages (the CLOCK's last rotation takes
// any page it may, hot or not), or a fault waiting for room would go over
// the budget ("eviction cannot make room"). Before, a hot page kept its
// bit at each rotation with its heat halved, and a pass gave up after
// four: a forked pool's workers reading an inherited array overran the
// budget so.
TEST_F(EvictorTest, APassFreesPagesWhenEveryResidentPageIsHot) {
  for (uint64_t p = 0; p < 16; p++) {
    e_.make_resident(p, 0, false);
    for (int k = 0; k < 255; k++) mark_access(e_.table->words[p]);
  }
  EXPECT_GT(evictor_->evict_pass(), 0u);
  EXPECT_FALSE(e_.core->residency.stuck());
}

// Where victims are unmapped (CONTINUE_MODE_WP), one zap covers two
// victims and the absent pages between them; a resident page between two
// victims (here pinned, so not one itself) keeps its page-table entry and
// splits the zap. Each zap of dirty shared pages is a TLB shootdown.
TEST_F(EvictorTest, OneUnmapCoversVictimsAcrossAbsentPagesOnly) {
  e_.core->continue_wp = true;
  for (uint64_t p : {0, 2, 3, 5}) {
    e_.make_resident(p, static_cast<char>(0x50 + p), true);
    ASSERT_EQ(*static_cast<volatile char*>(e_.addr(p)), static_cast<char>(0x50 + p));
  }
  ASSERT_TRUE(pin(e_.table->words[3], 1));
  ASSERT_TRUE(has_pte(e_.addr(3)));
  ASSERT_EQ(evictor_->evict_range(e_.table->id, 0, 6, true), 0);
  EXPECT_EQ(evictor_->unmap_calls(), 2u);  // pages 0-2, then page 5
  EXPECT_EQ(e_.store->writes, 3u);
  EXPECT_EQ(e_.uffd->count(UffdCall::kWriteProtect), 0u);
  EXPECT_EQ(e_.state(3), PageState::kDirty);
  EXPECT_TRUE(has_pte(e_.addr(3)));
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  for (uint64_t p : {0, 2, 5}) {
    ASSERT_EQ(e_.state(p), PageState::kAbsent) << p;
    struct uffd_msg m = fault_msg(e_.addr(p));
    handler.handle_batch(&m, 1);
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x50 + p))) << p;
  }
}

// A CLOCK pass whose victims (the even pages, cold) lie between hot
// resident pages (the odd ones, referenced and mapped), all dirty: a zap
// each, unless a walk is reading tables in (Core::walk_miss_ms: a
// checkpoint's save), when one zap covers the victims and the hot pages
// between them. A covered page keeps its state and data and loses only its
// page-table entry. Returns the pass's unmap calls; *freed its pages freed.
class BridgingTest : public EvictorTest {
 protected:
  uint64_t pass_over_interleaved_hot_pages(bool walk_live, uint64_t* freed) {
    e_.core->continue_wp = true;
    for (uint64_t p = 0; p < 16; p++) {
      e_.make_resident(p, static_cast<char>(0x20 + p), true);
      EXPECT_EQ(*static_cast<volatile char*>(e_.addr(p)), static_cast<char>(0x20 + p));
      if (p % 2) for (int k = 0; k < 8; k++) mark_access(e_.table->words[p]);
    }
    if (walk_live) e_.core->walk_miss_ms = Table::walk_clock_ms();
    *freed = evictor_->evict_pass();
    return evictor_->unmap_calls();
  }
};

TEST_F(BridgingTest, VictimsBetweenHotPagesAreUnmappedOneByOneWhileTraining) {
  uint64_t freed = 0;
  uint64_t calls = pass_over_interleaved_hot_pages(false, &freed);
  ASSERT_GE(freed, 2u);
  EXPECT_EQ(calls, freed);  // a hot page splits every stretch
  for (uint64_t p = 1; p < 16; p += 2) {
    EXPECT_EQ(e_.state(p), PageState::kDirty) << p;
    EXPECT_TRUE(has_pte(e_.addr(p))) << p;
  }
}

TEST_F(BridgingTest, OneUnmapCoversHotPagesBetweenVictimsWhileAWalkReadsIn) {
  uint64_t freed = 0;
  uint64_t calls = pass_over_interleaved_hot_pages(true, &freed);
  ASSERT_GE(freed, 2u);
  EXPECT_EQ(calls, 1u);
  uint64_t last = 0;  // the last victim: the hot pages before it were covered
  for (uint64_t p = 0; p < 16; p += 2)
    if (e_.state(p) == PageState::kAbsent) last = p;
  for (uint64_t p = 1; p < 16; p += 2) {
    EXPECT_EQ(e_.state(p), PageState::kDirty) << p;
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x20 + p))) << p;
    EXPECT_EQ(has_pte(e_.addr(p)), p > last) << p;
  }
  for (uint64_t p = 0; p <= last; p += 2) EXPECT_EQ(e_.state(p), PageState::kAbsent) << p;
  EXPECT_EQ(e_.store->writes, freed);  // the victims were dirty: written back
}

// Clean victims of a table named ahead (the CLOCK leaves its pages mapped)
// are unmapped before their punch in the same stretches: the punch then has
// no entry to clear.
TEST_F(EvictorTest, CleanVictimsOfATableNamedAheadAreUnmappedInStretches) {
  e_.core->continue_wp = true;
  e_.table->named_ahead = true;
  for (uint64_t p : {0, 2, 3, 5}) {
    e_.make_resident(p, 0, false);
    ASSERT_EQ(*static_cast<volatile char*>(e_.addr(p)), 0);
  }
  ASSERT_TRUE(pin(e_.table->words[3], 1));
  ASSERT_EQ(evictor_->evict_range(e_.table->id, 0, 6, true), 0);
  EXPECT_EQ(evictor_->unmap_calls(), 2u);  // pages 0-2, then page 5
  for (uint64_t p : {0, 2, 5}) EXPECT_EQ(e_.state(p), PageState::kAbsent) << p;
  EXPECT_EQ(e_.store->writes, 0u);
  EXPECT_TRUE(has_pte(e_.addr(3)));
  EXPECT_EQ(in_memfd(0, 3), 0);
  EXPECT_EQ(in_memfd(3, 1), 1);
}

// Dirty victims of a table named ahead lose their entries in the same
// stretches as the clean ones beside them: one zap for pages 0-2 (clean,
// dirty, clean), then the seal of page 1, which finds no entry left (no
// shootdown). Before, the clean ones' zaps stopped at the dirty page: three
// calls, each clearing entries. The dirty page's data comes back.
TEST_F(EvictorTest, DirtyVictimsOfATableNamedAheadAreUnmappedWithTheCleanOnes) {
  e_.core->continue_wp = true;
  e_.table->named_ahead = true;
  for (uint64_t p : {0, 1, 2}) {
    const char v = p == 1 ? 0x31 : 0;
    e_.make_resident(p, v, p == 1);
    ASSERT_EQ(*static_cast<volatile char*>(e_.addr(p)), v);
  }
  ASSERT_EQ(evictor_->evict_range(e_.table->id, 0, 3, true), 0);
  EXPECT_EQ(evictor_->unmap_calls(), 2u);  // pages 0-2, then the seal of page 1
  for (uint64_t p : {0, 1, 2}) {
    EXPECT_EQ(e_.state(p), PageState::kAbsent) << p;
    EXPECT_FALSE(has_pte(e_.addr(p))) << p;
  }
  EXPECT_EQ(e_.store->writes, 1u);
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  struct uffd_msg m = fault_msg(e_.addr(1));
  handler.handle_batch(&m, 1);
  EXPECT_TRUE(e_.page_is(1, 0x31));
}

// cluster_writes: dirty pages whose slots lie apart are written as one run
// of consecutive slots (one transfer in the file store), their old slots
// freed; each comes back intact from its new slot.
TEST_F(EvictorTest, ClusteredWritesMoveScatteredPagesToOneRun) {
  e_.core->opts.cluster_writes = true;
  const uint64_t old_slot[] = {200, 150, 90, 230, 40, 120};
  for (uint64_t p = 0; p < 6; p++) {
    e_.put_in_store(p, old_slot[p], 0);
    e_.make_resident(p, static_cast<char>(0x60 + p), true);  // fetched, then written
  }
  ASSERT_EQ(evict_all(), 0);
  ASSERT_EQ(e_.store->written_slots.size(), 6u);
  uint64_t first = PageWord::slot(e_.word(0));
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  for (uint64_t p = 0; p < 6; p++) {
    ASSERT_EQ(e_.state(p), PageState::kAbsent);
    EXPECT_EQ(PageWord::slot(e_.word(p)), first + p);
    EXPECT_EQ(e_.store->written_slots[p], first + p);
    EXPECT_FALSE(e_.store->used(old_slot[p])) << "old slot of page " << p << " not freed";
    EXPECT_EQ(e_.table->sums[p], crc32c(e_.store->slot_data(first + p), kPageSize));
    struct uffd_msg m = fault_msg(e_.addr(p));
    handler.handle_batch(&m, 1);
    EXPECT_TRUE(e_.page_is(p, static_cast<char>(0x60 + p))) << p;
  }
  EXPECT_EQ(e_.store->used_slots(), 6u);
}

// Pages whose slots already follow each other (a table written front to
// back) keep them: that layout is one transfer as it is, and a front-to-back
// read merges it. Without cluster_writes every page keeps its slot.
TEST_F(EvictorTest, ClusteredWritesKeepSlotsThatAlreadyFollowEachOther) {
  e_.core->opts.cluster_writes = true;
  const uint64_t old_slot[] = {100, 101, 102, 103, 104, 50, 20};
  for (uint64_t p = 0; p < 7; p++) {
    e_.put_in_store(p, old_slot[p], 0);
    e_.make_resident(p, static_cast<char>(p + 1), true);
  }
  ASSERT_EQ(evict_all(), 0);
  for (uint64_t p = 0; p < 5; p++) EXPECT_EQ(PageWord::slot(e_.word(p)), old_slot[p]) << p;
  EXPECT_EQ(PageWord::slot(e_.word(5)), 0u);  // MemStore's lowest free run
  EXPECT_EQ(PageWord::slot(e_.word(6)), 1u);
  EXPECT_FALSE(e_.store->used(50));
  EXPECT_FALSE(e_.store->used(20));
  EXPECT_EQ(e_.store->used_slots(), 7u);
}

// A write racing a moved page's write-back: the eviction is cancelled, the
// page stays DIRTY in DRAM with the new bytes and its new slot, and the
// store holds one slot a page (the old one freed, none leaked).
TEST_F(EvictorTest, AWriteRacingAClusteredWriteBackIsKept) {
  e_.core->opts.cluster_writes = true;
  e_.put_in_store(8, 200, 0);
  e_.make_resident(8, 0x08, true);
  e_.put_in_store(10, 100, 0);
  e_.make_resident(10, 0x0a, true);
  FaultHandler handler(*e_.core);
  ASSERT_EQ(handler.prepare(), 0);
  write_during_write_back(handler, 8, 0x77);
  ASSERT_EQ(evict_all(), 0);
  EXPECT_EQ(e_.state(8), PageState::kDirty);
  EXPECT_TRUE(e_.page_is(8, 0x77));
  EXPECT_EQ(e_.state(10), PageState::kAbsent);
  uint64_t s8 = PageWord::slot(e_.word(8)), s10 = PageWord::slot(e_.word(10));
  EXPECT_NE(s8, s10);
  EXPECT_FALSE(e_.store->used(200));
  EXPECT_FALSE(e_.store->used(100));
  EXPECT_EQ(e_.store->used_slots(), 2u);
  EXPECT_TRUE(e_.store->used(s8) && e_.store->used(s10));
}

// A free during a clustered write-back: the pages not written keep the
// slot they were moved to, so the free (which releases each page's slot)
// leaves the store empty - no slot leaked, none released twice.
TEST_F(EvictorTest, AFreeDuringAClusteredWriteBackLeaksNoSlot) {
  e_.core->opts.cluster_writes = true;
  for (uint64_t p = 0; p < 16; p++) {
    e_.put_in_store(p, 240 - 3 * p, 0);  // scattered
    e_.make_resident(p, static_cast<char>(0x10 + p), true);
  }
  e_.store->before_write = [&] { e_.table->freeing = true; };
  ASSERT_EQ(evict_all(), 0);
  std::set<uint64_t> slots;
  for (uint64_t p = 0; p < 16; p++) {
    ASSERT_TRUE(PageWord::has_slot(e_.word(p))) << p;
    slots.insert(PageWord::slot(e_.word(p)));
  }
  EXPECT_EQ(slots.size(), 16u);
  EXPECT_EQ(e_.store->used_slots(), 16u);
  for (uint64_t s : slots) e_.store->free_slot(s);  // what the free does, a page at a time
  EXPECT_EQ(e_.store->used_slots(), 0u);
}

TEST_F(EvictorTest, WithoutClusteredWritesADirtyPageKeepsItsSlot) {
  ASSERT_FALSE(e_.core->opts.cluster_writes);  // the default
  e_.put_in_store(3, 200, 0);
  e_.make_resident(3, 0x33, true);
  e_.make_resident(4, 0x34, true);  // never stored: a fresh slot
  ASSERT_EQ(evict_all(), 0);
  EXPECT_EQ(PageWord::slot(e_.word(3)), 200u);
  EXPECT_EQ(e_.store->used_slots(), 2u);
  EXPECT_TRUE(e_.store->used(200));
}

class FullStoreTest : public EvictorTest {
 protected:
  FullStoreTest() : EvictorTest(0) {}
};

TEST_F(FullStoreTest, AFullStoreRefusesDirtyPagesAndSaysSo) {
  e_.make_resident(11, 0x0b, true);
  EXPECT_EQ(evict_all(), -ENOSPC);
  EXPECT_EQ(e_.state(11), PageState::kDirty);
  EXPECT_GE(e_.core->counters.store_full.load(), 1u);
  EXPECT_EQ(e_.core->residency.resident(), 1);
  EXPECT_TRUE(e_.page_is(11, 0x0b));
  // Refused before it was sealed: never protected (nor unmapped), so
  // nothing to undo - no userfaultfd call at all.
  EXPECT_EQ(e_.uffd->count(UffdCall::kWriteProtect), 0u);
}

TEST_F(FullStoreTest, AFullStoreRefusesDirtyPagesWithClusteredWritesToo) {
  e_.core->opts.cluster_writes = true;
  e_.make_resident(12, 0x0c, true);
  EXPECT_EQ(evict_all(), -ENOSPC);
  EXPECT_EQ(e_.state(12), PageState::kDirty);
  EXPECT_FALSE(PageWord::has_slot(e_.word(12)));
  EXPECT_GE(e_.core->counters.store_full.load(), 1u);
  EXPECT_TRUE(e_.page_is(12, 0x0c));
}

// The evictor's thread against a store that stays full: its passes free
// nothing, and the pause between them doubles up to a second. Counted by
// the refusals (store_full: one per dirty victim a pass tried), at most
// three per page per pass (a pass sweeps until it has visited every page
// twice): in 1.5 s, 10 ms pauses made 14112 (147 passes); doubling ones
// (10, 20, ..., 640 ms, then 1 s) allow at most 9 passes.
TEST_F(FullStoreTest, AFullStoreIsRetriedLessAndLessOften) {
  for (uint64_t p = 0; p < 32; p++) e_.make_resident(p, static_cast<char>(p), true);
  ASSERT_TRUE(e_.core->residency.over_high());
  ASSERT_EQ(evictor_->start(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  evictor_->stop();
  uint64_t refusals = e_.core->counters.store_full.load();
  EXPECT_GE(refusals, 1u);
  EXPECT_LE(refusals, 9u * 3 * 32);
  for (uint64_t p = 0; p < 32; p++) EXPECT_TRUE(e_.page_is(p, static_cast<char>(p))) << p;
}

}  // namespace
}  // namespace mtier
