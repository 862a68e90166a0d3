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
  // `decay_heat`: halve the heat of every page visited (the sampler's hand
  // does; the evictor's does not, so heat decays once per sampler rotation).
  ClockHand(Core& core, bool decay_heat) : core_(core), decay_(decay_heat) {}
  // By frequency (GCLOCK, the evictor's hand with evict_lfu): an
  // unreferenced page with heat left is passed over with its heat halved,
  // so a page's chances grow with its decayed access count (a page hit 2^k
  // times survives k more rotations untouched); only pages whose heat is
  // spent are cold.
  void set_by_frequency(bool on) { by_frequency_ = on; }
  // Only a walk's pages the walk is past are cold (scan_resistant's:
  // placed walked and referenced with heat 0, the bit cleared behind the
  // walk, see FaultHandler::read_behind; PageWord::kWalked); every other
  // page is passed over untouched (no bit cleared, no zap, no decay). The
  // evictor's first hand: a scan's pages go before any page the program
  // used on its own spends its second chance. Why only walked pages: a
  // training step's rows whose bits the sampler spent look the same as a
  // scan's otherwise, and were evicted with it
  // (EngineTest.AWalkLeavesTheProgramsPagesWhoseMarksWereSpent).
  void set_unmarked_only(bool on) { unmarked_only_ = on; }
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

  Core& core_;
  bool decay_;
  bool by_frequency_ = false;
  bool unmarked_only_ = false;
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
