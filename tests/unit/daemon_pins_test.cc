// SPDX-License-Identifier: Apache-2.0
// mtierd's pins (daemon/pins.h), page-move classification
// (daemon/page_moves.h) and the tick's bounded scan of the page words
// (daemon/page_scan.h).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "page/page_state.h"
#include "page_moves.h"
#include "page_scan.h"
#include "pins.h"
#include "sys/vm.h"
#include "word_runs.h"

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

// Page words of `pages` pages, all 0 (untouched), in a private anonymous
// mapping: reading them maps the zero page, so a 2^26-page table costs no
// memory until a word is written.
class Words {
 public:
  explicit Words(uint64_t pages) : bytes_(pages * 8) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    words_ = p == MAP_FAILED ? nullptr : static_cast<std::atomic<uint64_t>*>(p);
  }
  ~Words() {
    if (words_) munmap(words_, bytes_);
  }
  std::atomic<uint64_t>* get() const { return words_; }

 private:
  size_t bytes_;
  std::atomic<uint64_t>* words_ = nullptr;
};

constexpr uint64_t kDramWord = static_cast<uint64_t>(PageState::kClean);
constexpr uint64_t kSlowWord = kDramWord | PageWord::kSlowTier;
constexpr uint64_t kStoreWord = static_cast<uint64_t>(PageState::kAbsent) | PageWord::kHasSlot;

size_t at(policy::Place p) { return static_cast<size_t>(p); }

// A tick over a 2^26-page table (and a small one of another process) reads
// at most the budget of page words: the small table whole at every tick,
// the large one a window from where the last tick stopped; one pass
// (ceil(pages / what the small one leaves) ticks) reads every page of the
// large one exactly once, and the tracks' places and counts are then those
// of every word.
TEST(PageScan, ATickReadsAtMostTheBudgetAndAPassReadsEveryPage) {
  constexpr uint64_t kBig = uint64_t{1} << 26, kSmall = 1000, kBudget = uint64_t{1} << 20;
  Words big(kBig), small(kSmall);
  ASSERT_NE(big.get(), nullptr);
  ASSERT_NE(small.get(), nullptr);
  big.get()[0].store(kDramWord);
  big.get()[kBig / 2].store(kStoreWord);
  big.get()[kBig - 1].store(kSlowWord);
  small.get()[7].store(kDramWord);
  TableTrack tb, ts;
  ensure_track(&tb, kBig);
  ensure_track(&ts, kSmall);
  // Process 1's big table, process 2's small one.
  std::vector<ScanTable> tables = {{big.get(), kBig, &tb, 1}, {small.get(), kSmall, &ts, 2}};
  PageScan scan(kBudget);
  std::vector<ScanWindow> w;
  uint64_t read = 0;  // pages of the big table read
  const uint64_t ticks = (kBig + (kBudget - kSmall) - 1) / (kBudget - kSmall);
  for (uint64_t tick = 0; tick < ticks; tick++) {
    uint64_t n = scan.scan(tables, &w);
    ASSERT_LE(n, kBudget);
    ASSERT_EQ(n, scan.last_pages());
    ASSERT_EQ(w[1].lo, 0u);  // the small table: whole, every tick
    ASSERT_EQ(w[1].hi, kSmall);
    ASSERT_EQ(w[0].lo, read) << "tick " << tick;  // contiguous
    read = w[0].hi;
    ASSERT_EQ(n, kSmall + (w[0].hi - w[0].lo));
    EXPECT_EQ(tb.primed, tick + 1 == ticks) << tick;
  }
  EXPECT_EQ(read, kBig);
  EXPECT_EQ(scan.cursor(), 0u);  // the next pass starts over
  EXPECT_TRUE(tb.primed);
  EXPECT_TRUE(ts.primed);
  EXPECT_EQ(tb.count[at(policy::Place::kDram)], 1u);
  EXPECT_EQ(tb.count[at(policy::Place::kSlow)], 1u);
  EXPECT_EQ(tb.count[at(policy::Place::kStore)], 1u);
  EXPECT_EQ(tb.count[at(policy::Place::kUntouched)], kBig - 3);
  EXPECT_EQ(tb.place[kBig - 1], policy::Place::kSlow);
  EXPECT_EQ(ts.count[at(policy::Place::kDram)], 1u);
  for (uint64_t m : tb.moves) EXPECT_EQ(m, 0u);  // the first look counts no moves

  // Moves are counted when the window that holds them is read: within the
  // next pass, not necessarily the next tick.
  big.get()[kBig - 1].store(kDramWord);
  scan.scan(tables, &w);
  EXPECT_EQ(w[0].lo, 0u);
  EXPECT_EQ(w[0].hi, kBudget - kSmall);
  EXPECT_EQ(tb.moves[kSlowToDram], 0u);
  for (uint64_t tick = 1; tick < ticks; tick++) scan.scan(tables, &w);
  EXPECT_EQ(tb.moves[kSlowToDram], 1u);
  EXPECT_EQ(tb.count[at(policy::Place::kDram)], 2u);
  EXPECT_EQ(tb.count[at(policy::Place::kSlow)], 0u);
}

// Several large processes share what the small ones leave of the budget.
TEST(PageScan, LargeProcessesShareWhatTheSmallOnesLeave) {
  constexpr uint64_t kBudget = 1 << 16;
  Words a(1 << 20), b(3 << 15), c(1000), d(200);
  TableTrack ta, tb, tc, td;
  ensure_track(&ta, 1 << 20);
  ensure_track(&tb, 3 << 15);
  ensure_track(&tc, 1000);
  ensure_track(&td, 200);
  // Process 1: a; process 2: b; process 3: c and d (1200 pages).
  std::vector<ScanTable> tables = {{a.get(), 1 << 20, &ta, 1},
                                   {b.get(), 3 << 15, &tb, 2},
                                   {c.get(), 1000, &tc, 3},
                                   {d.get(), 200, &td, 3}};
  PageScan scan(kBudget);
  std::vector<ScanWindow> w;
  uint64_t read_a = 0, read_b = 0, ticks = 0;
  while (!(ta.primed && tb.primed)) {
    ASSERT_LT(++ticks, 100u);
    uint64_t n = scan.scan(tables, &w);
    EXPECT_LE(n, kBudget);
    if (!tb.primed) {
      EXPECT_EQ(n, kBudget);  // all of it, but at the end of a pass
    }
    EXPECT_EQ(w[2].hi - w[2].lo, 1000u);
    EXPECT_EQ(w[3].hi - w[3].lo, 200u);
    read_a += w[0].hi - w[0].lo;
    read_b += w[1].hi - w[1].lo;
  }
  EXPECT_EQ(read_a, uint64_t{1} << 20);
  EXPECT_EQ(read_b, uint64_t{3} << 15);
  EXPECT_EQ(ticks, ((1u << 20) + (3u << 15) + kBudget - 1200 - 1) / (kBudget - 1200));
}

// Tables that fit in the budget are read whole at every tick, as before the
// budget existed: every move is seen at the next tick.
TEST(PageScan, TablesThatFitAreReadWholeEveryTick) {
  Words a(3000), b(5000);
  ASSERT_NE(a.get(), nullptr);
  ASSERT_NE(b.get(), nullptr);
  TableTrack ta, tb;
  ensure_track(&ta, 3000);
  ensure_track(&tb, 5000);
  std::vector<ScanTable> tables = {{a.get(), 3000, &ta}, {b.get(), 5000, &tb}};
  PageScan scan(8000);
  std::vector<ScanWindow> w;
  for (int tick = 0; tick < 3; tick++) {
    EXPECT_EQ(scan.scan(tables, &w), 8000u);
    EXPECT_EQ(w[0].lo, 0u);
    EXPECT_EQ(w[0].hi, 3000u);
    EXPECT_EQ(w[1].lo, 0u);
    EXPECT_EQ(w[1].hi, 5000u);
    EXPECT_TRUE(ta.primed);
    b.get()[tick].store(kDramWord);
    scan.scan(tables, &w);
    EXPECT_EQ(tb.moves[kNewToDram], static_cast<uint64_t>(tick + 1));
  }
  // A table resized is tracked afresh.
  ensure_track(&ta, 2000);
  EXPECT_FALSE(ta.primed);
  EXPECT_EQ(ta.count[at(policy::Place::kUntouched)], 2000u);
}

// The words of a table in a shmem segment, as mtierd maps its clients'
// (MAP_SHARED of a memfd), starting mid-page like a table's words do: the
// scan reads only the segment pages the client wrote, and leaves the
// memfd holding those alone (a read of any other would have made the
// kernel allocate it); the places it finds are every word's.
TEST(PageScan, ReadsOnlyTheSegmentPagesTheClientWrote) {
  constexpr uint64_t kWordsPerPage = 4096 / 8, kSegPages = 64, kFirst = 100;
  constexpr uint64_t kPages = kSegPages * kWordsPerPage - kFirst;  // the table's pages
  int fd = sys::memfd_open("words", kSegPages * 4096);
  ASSERT_GE(fd, 0);
  void* base = sys::map_shared(fd, kSegPages * 4096);
  ASSERT_NE(base, nullptr);
  auto* words = static_cast<std::atomic<uint64_t>*>(base) + kFirst;
  auto held_pages = [&] {
    struct stat st;
    EXPECT_EQ(fstat(fd, &st), 0);
    return static_cast<uint64_t>(st.st_blocks) * 512 / 4096;
  };
  words[5].store(kDramWord);                          // segment page 0
  words[10 * kWordsPerPage].store(kStoreWord);        // page 10
  words[10 * kWordsPerPage + 1].store(kSlowWord);     // page 10
  words[kPages - 1].store(kDramWord);                 // the last page
  ASSERT_EQ(held_pages(), 3u);

  std::vector<std::pair<uint64_t, uint64_t>> held_runs;
  uint64_t covered = 0;
  for_each_word_run(words, 0, kPages, [&](uint64_t a, uint64_t b, bool held) {
    EXPECT_EQ(a, covered);  // consecutive runs covering the range
    covered = b;
    if (held) held_runs.push_back({a, b});
  });
  EXPECT_EQ(covered, kPages);
  // Page 0 holds words [0, 512 - kFirst); page 10 words from 10 * 512 - kFirst on.
  std::vector<std::pair<uint64_t, uint64_t>> want = {
      {0, kWordsPerPage - kFirst},
      {10 * kWordsPerPage - kFirst, 11 * kWordsPerPage - kFirst},
      {(kSegPages - 1) * kWordsPerPage - kFirst, kPages}};
  EXPECT_EQ(held_runs, want);

  TableTrack t;
  ensure_track(&t, kPages);
  read_places(&t, words, 0, kPages);
  EXPECT_EQ(held_pages(), 3u) << "the scan made the segment allocate pages it read";
  EXPECT_EQ(t.count[at(policy::Place::kDram)], 2u);
  EXPECT_EQ(t.count[at(policy::Place::kStore)], 1u);
  EXPECT_EQ(t.count[at(policy::Place::kSlow)], 1u);
  EXPECT_EQ(t.count[at(policy::Place::kUntouched)], kPages - 4);
  EXPECT_EQ(t.place[kPages - 1], policy::Place::kDram);
  // A window that starts and ends inside pages, and one inside a hole.
  TableTrack w;
  ensure_track(&w, kPages);
  read_places(&w, words, 3, 10 * kWordsPerPage + 1);
  EXPECT_EQ(w.count[at(policy::Place::kDram)], 1u);
  EXPECT_EQ(w.count[at(policy::Place::kStore)], 1u);
  EXPECT_EQ(w.count[at(policy::Place::kSlow)], 0u);  // word 10*512+1 is past the window
  read_places(&w, words, 20 * kWordsPerPage, 30 * kWordsPerPage);
  EXPECT_EQ(held_pages(), 3u);
  EXPECT_EQ(sys::unmap(base, kSegPages * 4096), 0);
  close(fd);
}

}  // namespace
}  // namespace mtier::daemon
