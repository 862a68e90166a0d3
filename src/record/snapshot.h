// SPDX-License-Identifier: Apache-2.0
// One look at what mtierd knows of the processes it serves: per process its
// budgets and counters, per table its residency per tier, its heat as a row
// of equal slices, where each slice lives, and the page moves the daemon has
// seen. `mtier heat` draws it, `mtier record` writes a series of them to a
// recording (recording.h) and `mtier report` reads them back (report.h).
// Filled from the daemon's reply to HEAT_REQUEST (docs/protocol.md).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ipc/page_moves.h"

namespace mtier::record {

// Page moves between places, counted by the daemon from the page states it
// sees at each tick (a page that leaves and comes back within one tick is
// not counted): the kinds of ipc/page_moves.h (kNewToDram ... kSlowToStore),
// in their order, which is part of the recording format.
using Move = ipc::PageMove;
using enum ipc::PageMove;
inline constexpr unsigned kMoveKinds = ipc::kPageMoveKinds;
// "new>dram", ...; nullptr for m >= kMoveKinds.
inline const char* move_name(unsigned m) { return ipc::page_move_name(m); }

// The place chars of TableSnap::place.
inline constexpr char kPlaceDram = 'D';       // every touched page of the slice in DRAM
inline constexpr char kPlaceSlow = 'm';       // ... in the slow memory tier
inline constexpr char kPlaceStore = 's';      // ... in the store
inline constexpr char kPlaceMixed = '~';      // in more than one place
inline constexpr char kPlaceUntouched = ' ';  // no page of the slice touched yet

struct TableSnap {
  uint32_t id = 0;
  std::string name;
  uint64_t bytes = 0, pages = 0;
  uint64_t dram_pages = 0, slow_pages = 0, store_pages = 0, untouched_pages = 0;
  // Bytes of the extents that took a heat sample within the request's window
  // (the interval of `mtier record`): the sampled working set.
  uint64_t active_bytes = 0;
  double heat = 0;           // total heat: samples, halved every cooling period
  double samples_per_s = 0;  // the daemon's moving average
  std::array<uint64_t, kMoveKinds> moves{};  // pages, since the daemon first saw the table
  // heat_map[i]: the summed heat of slice i of the table (equal slices,
  // slice i covering pages [pages * i / n, pages * (i + 1) / n)); place[i]
  // where slice i lives (one of the kPlace chars). Same length n >= 1.
  std::vector<float> heat_map;
  std::string place;
};

struct ProcessSnap {
  int32_t pid = 0;
  std::string name;
  std::string job;    // the job it is a rank of ("" none); not in recordings
  int32_t rank = -1;  // its rank (-1 not said); not in recordings
  uint64_t dram_budget_bytes = 0, dram_resident_bytes = 0;
  uint64_t slow_budget_bytes = 0, slow_resident_bytes = 0;
  // Cumulative counters of the runtime (its segment header).
  uint64_t missing_faults = 0, evictions = 0, fetches = 0;
  std::vector<TableSnap> tables;
};

struct Snapshot {
  uint64_t unix_ms = 0;  // when it was taken (CLOCK_REALTIME)
  std::vector<ProcessSnap> procs;
};

}  // namespace mtier::record
