// SPDX-License-Identifier: Apache-2.0
// The page moves mtierd counts per table: from the page words it reads at
// each tick, the place of every page (DRAM, slow tier, store, untouched) is
// compared with the place seen when it was last read (the tick before, while
// the tables fit the tick's scan budget; page_scan.h). A page that leaves
// and comes back in between is not seen, so these are lower bounds; the
// runtime's own counters (segment header) are exact but per process.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "ipc/page_moves.h"
#include "policy/policy.h"

namespace mtier::daemon {

// The kinds (ipc/page_moves.h: the status JSON's and the recordings' order).
using ipc::page_move_name;
using ipc::PageMove;
using enum ipc::PageMove;

// Where the page with word w is: resident (or being placed or evicted) in
// DRAM or the slow tier, in the store (a slot, or failed), or untouched.
policy::Place place_of_word(uint64_t w);

// The move from `was` to `now`, or kPageMoveKinds for none counted (no
// change, or a page dropped: a table's pages freed, MADV_DONTNEED).
unsigned page_move(policy::Place was, policy::Place now);

// One table's places as last seen, and its counts. The tick reads a
// window of the table at a time (page_scan.h): place[p] is as of the last
// time page p was read, and count (pages per place, indexed by
// policy::Place) always adds up place, so the table's residency is known
// without a walk over its pages.
struct TableTrack {
  uint64_t pages = 0;
  std::vector<policy::Place> place;  // per page, as last read
  std::array<uint64_t, 4> count{};   // pages per place in `place`
  uint64_t unread = 0;               // pages still to read before `primed`
  bool primed = false;               // place holds a first look (nothing counted before it)
  uint64_t view_lo = 0, view_hi = 0; // the pages the policy was shown at the last tick
  std::array<uint64_t, kPageMoveKinds> moves{};
  std::array<uint64_t, kPageMoveKinds> moves_counted{};  // of moves, in the node's totals
  std::array<uint64_t, kPageMoveKinds> moves_at_rate{};  // moves at the last rate update
  std::array<double, kPageMoveKinds> per_s{};            // pages per second over that last second
};

}  // namespace mtier::daemon
