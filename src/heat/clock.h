// SPDX-License-Identifier: Apache-2.0
// A CLOCK hand over the resident pages of all tables. A page whose referenced
// bit is set gets a second chance: the bit is cleared and its PTE zapped, so
// its next access is a MINOR fault that sets the bit again (the access
// sampler). A page found unreferenced is cold. The caller holds the table
// registry's shared lock.
#pragma once
#include <cstdint>
#include <vector>

#include "page/core.h"
#include "page/page_ref.h"

namespace mtier {

class ClockHand {
 public:
  // What a hand is, fixed at its creation (the modes a pass changes are
  // set_spare_walks and set_take_any below).
  struct Mode {
    // Halve the heat of every page visited: the sampler's hand (the
    // evictor's does not, so heat decays once per sampler rotation).
    bool decay_heat = false;
    // By frequency (GCLOCK, the evictor's hand with evict_lfu): an
    // unreferenced page with heat left is passed over with its heat
    // halved, so a page's chances grow with its decayed access count (a
    // page hit 2^k times survives k more rotations untouched); only pages
    // whose heat is spent are cold.
    bool by_frequency = false;
    // The scan hand (the evictor's first, with scan_resistant): only a
    // walk's pages the walk is past are cold (placed walked and
    // referenced, the bit cleared behind the walk, see
    // FaultHandler::read_behind; PageWord::kWalked; heat a page kept from
    // before its last eviction does not count: its rows were used then,
    // not since it came back, or it would not be walked); every other
    // page is passed over untouched (no bit cleared, no zap, no decay).
    // A scan's pages go before any page the program used on its own
    // spends its second chance. Why only walked pages: a training step's
    // rows whose bits the sampler spent look the same as a scan's
    // otherwise, and were evicted with it
    // (EngineTest.AWalkLeavesTheProgramsPagesWhoseMarksWereSpent).
    // Tables a live walk is reading (Table::spared_from) are passed over
    // whole by sweep: their walked pages go last and newest first
    // (take_behind_walks).
    bool scan_only = false;
  };
  ClockHand(Core& core, Mode mode) : core_(core), mode_(mode) {}
  // Marked pages (referenced, or with heat) at or after a live walk's
  // front (Table::spared_from: a front-to-back walk that faulted within
  // kWalkLiveMs is about to read them) are passed over untouched (no
  // victim, no bit cleared, no zap), while on: the evictor's first
  // rotation. An unmarked page there stays a victim: it is what an
  // earlier pass over the table left behind (scan_resistant clears a
  // walk's pages behind it), read again only at this pass's end; spared,
  // it made the CLOCK evict the hot set instead (the engine test
  // AWalkOverAColdTableLeavesAHotSetThatFitsInDram, under load).
  void set_spare_walks(bool on) { spare_walks_ = on; }
  // Every page the hand may take is cold: referenced or hot, ahead of a
  // walk or not (pinned, held and hinted pages still are not; nothing is
  // zapped, the victims' eviction unmaps them). The evictor's last resort,
  // for a pass whose rotations freed nothing while the budget is full: a
  // hot page keeps its bit at each rotation with its heat halved, so pages
  // hit often enough outlast any fixed count of rotations
  // (EvictorTest.APassFreesPagesWhenEveryResidentPageIsHot).
  void set_take_any(bool on) { take_any_ = on; }
  // Visits up to `budget` resident pages from the hand: referenced ones are
  // cleared and zapped, unreferenced ones appended to `cold` (at most
  // `max_cold`; nullptr to only sample). Returns the pages visited.
  // `tier`: only pages of that memory tier (0 DRAM, 1 slow), -1 all.
  // `use_hints`: a page the daemon asks to keep (hint >= kKeepHint) is
  // passed over: not cold, and its referenced bit neither cleared nor zapped
  // (it is no victim either way; the zap would only cost a fault).
  uint64_t sweep(uint64_t budget, std::vector<PageRef>* cold, size_t max_cold, int tier = -1,
                 bool use_hints = false);
  // A live walk's own pages behind its front (DRAM's, still only the
  // walk's - PageWord::kWalked - whatever their referenced bit, since the
  // walk is past them; neither pinned, held nor kept by a hint), the
  // newest first: up to `max_cold` appended to `cold`, looking at most
  // kBehindPages pages of each live walk's table a call
  // (Table::behind_lo/hi keep the place). Why newest first: torch.save
  // reads each tensor twice, front to back (the zip writer's CRC-32, then
  // the write); a walk's oldest pages are the next pass's first, so
  // taking the pages the walk has just passed keeps the start of the
  // table for the second pass (MRU, which is what Belady's MIN does on a
  // repeated scan longer than the room). A single pass loses nothing:
  // every page it is past is dead. Returns the pages appended. No zaps.
  size_t take_behind_walks(std::vector<PageRef>* cold, size_t max_cold, bool use_hints);
  static constexpr uint64_t kBehindPages = 65536;
  static constexpr uint8_t kKeepHint = 128;
  // The evictor's hand spares the zap of a referenced page this hot (sweep).
  static constexpr unsigned kHotHeat = 2;
  // Completed rotations since creation (for heat decay).
  uint64_t rotations() const { return rotations_; }
  // madvise calls made so far (each is a TLB shootdown): for tests.
  uint64_t zap_calls() const { return zap_calls_; }

 private:
  void flush_zap();
  void zap_page(char* a);
  void span(char* a);
  // A zap's extent at most (its page-table walk stays short; beyond 33
  // pages the kernel flushes the whole TLB anyway).
  static constexpr uint64_t kMaxZapBytes = 8ull << 20;

  // Whether page `page` of `t`, in DRAM, is kept mapped on purpose and is
  // no victim: pinned (the lookahead's window), held, or kept by a daemon
  // hint (`hints`, nullptr when not used).
  static bool kept(const Table* t, uint64_t page, uint64_t word, const uint8_t* hints);

  Core& core_;
  const Mode mode_;
  bool spare_walks_ = false;
  bool take_any_ = false;
  uint64_t hand_ = 0;  // region page index of the next page to visit
  uint64_t rotations_ = 0;
  char* zap_start_ = nullptr;
  uint64_t zap_len_ = 0;
  uint64_t zap_calls_ = 0;
  uint64_t zap_pages_ = 0;      // referenced pages in the pending zap (sampled_pages)
  char* span_end_ = nullptr;    // the pending zap may grow to a page at this address
};

}  // namespace mtier
