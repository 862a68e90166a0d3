// SPDX-License-Identifier: Apache-2.0
// The tick's bounded look at the page words: each tick reads the words of
// at most `budget` pages, all registered processes together, so the tick's
// cost does not grow with the tables' size. The budget is shared like
// water: the processes whose pages fit in an equal share are read whole at
// every tick, and the rest of the budget goes to the larger ones, read a
// window a tick from a cursor over their tables laid end to end that
// continues where the last tick stopped (a pass over them spans several
// ticks). So one huge table slows the reads of no other process, and when
// every table fits in the budget, every tick reads every page, as before
// the budget existed.
//
// What a window of a table read this tick gives the rest of the tick (the
// track's places and counts, the policy's view) is exact for the window and
// as of the last pass for the rest of the table. Owned and called by the
// daemon's one tiering thread; nothing here allocates (read_places() only
// after ensure_track()), so nothing throws.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "page_moves.h"

namespace mtier::daemon {

// One table of one process, in the scan's order. `words` and `track` are
// the caller's and stay valid for the scan() call.
struct ScanTable {
  const std::atomic<uint64_t>* words = nullptr;  // the table's page words (its segment)
  uint64_t pages = 0;
  TableTrack* track = nullptr;                   // sized by ensure_track(pages)
  uint64_t group = 0;  // the process: a process's tables are consecutive, with one group
};

// Pages [lo, hi) of a table, read by this tick's scan (lo == hi: none).
struct ScanWindow {
  uint64_t lo = 0, hi = 0;
  bool empty() const { return lo >= hi; }
};

// Makes *track the track of a table of `pages` pages: kept when it already
// is, else fresh (every page untouched, nothing seen yet). May throw
// std::bad_alloc (its place array).
void ensure_track(TableTrack* track, uint64_t pages);

// Reads the places of pages [lo, hi) from `words` into *track (sized by
// ensure_track; hi <= track->pages), counting the moves since those pages
// were last read and keeping track->count in step.
void read_places(TableTrack* track, const std::atomic<uint64_t>* words, uint64_t lo, uint64_t hi);

class PageScan {
 public:
  // `budget`: pages (words) read per scan() at most; 0 is taken as 1.
  explicit PageScan(uint64_t budget) { set_budget(budget); }
  void set_budget(uint64_t budget) { budget_ = budget ? budget : 1; }
  uint64_t budget() const { return budget_; }

  // This tick's reads: (*windows)[i] is what was read of tables[i]. All of
  // every table when their pages add up to at most the budget. Else the
  // level L is the largest with sum over groups of min(pages, L) within the
  // budget: groups of at most L pages are read whole, and the larger ones
  // share the rest of the budget: the next pages of their tables after the
  // cursor, up to the end of the last one (the pass after that starts again
  // at the first). Returns the pages read. Does not allocate once *windows
  // has room for the tables.
  uint64_t scan(const std::vector<ScanTable>& tables, std::vector<ScanWindow>* windows);

  // For tests and the debug log: pages read by the last scan(), and where
  // the next one starts (pages into the larger groups' tables end to end).
  uint64_t last_pages() const { return last_pages_; }
  uint64_t cursor() const { return cursor_; }

 private:
  uint64_t budget_ = 1;
  uint64_t cursor_ = 0;
  uint64_t last_pages_ = 0;
};

}  // namespace mtier::daemon
