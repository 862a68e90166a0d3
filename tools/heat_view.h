// SPDX-License-Identifier: Apache-2.0
// What `mtier heat` draws, as pure functions of a Snapshot (record/snapshot.h)
// and the viewer's state, so that the layout is tested without a terminal or
// a daemon. cmd_heat.cc owns the terminal and the daemon; this file owns the
// frame.
//
// Two views of one process:
//   tables  one heat bar per table (each bar is the table's address space,
//           left to right, resampled to the width), a row of place marks
//           under it and the table's MiB in DRAM, the slow tier and the store.
//   ranges  one table cut into address ranges, one per row, each a heat bar
//           with its place marks, labelled with its offsets in MiB.
// Zoom and pan apply to both: at zoom z the bars (tables view) or the rows
// together (ranges view) cover the z-th part `pan` of each table.
//
// The heat drawn is heat per MiB (each cell's share of the slices' heat over
// its size), so that a small hot table is as hot as a big one's hot corner;
// the ramp is scaled to the hottest cell in the frame.
#pragma once
#include <cstdint>
#include <string>

#include "record/snapshot.h"
#include "terminal.h"

namespace mtier::tools {

enum class HeatMode { kTables, kRanges };

// The largest zoom apply_key goes to (the daemon's most slices per table).
inline constexpr unsigned kMaxHeatZoom = 4096;

struct HeatView {
  // The process shown; one not in the snapshot (0 among them) means the first.
  int32_t pid = 0;
  HeatMode mode = HeatMode::kTables;
  // The selected table (the ranges view draws it; the tables view marks it
  // and scrolls to it); an id the process does not have means its first.
  uint32_t table_id = 0;
  // Magnification, a power of two: 1 is the whole table. render_frame reads
  // anything else as the power of two at or below it, at most kMaxHeatZoom.
  unsigned zoom = 1;
  // Which of the zoom equal parts of the table is shown: 0..zoom - 1
  // (render_frame clamps it).
  unsigned pan = 0;
};

// The process the view shows (nullptr when the snapshot has none), and
// within it the index of the selected table (-1 when it has no tables).
const record::ProcessSnap* shown_process(const record::Snapshot& snap, const HeatView& view);
int shown_table(const record::ProcessSnap& proc, const HeatView& view);

// The table of `proc` named `name_or_id`: by exact name first, else, when
// it is a decimal number, by id. True with *id set, else false.
bool find_table(const record::ProcessSnap& proc, const std::string& name_or_id, uint32_t* id);

// The rows a frame needs to show everything at once (every table in the
// tables view; in the ranges view one row per slice shown, at most 16), for
// output that is not a terminal and so has no height of its own.
unsigned natural_rows(const record::Snapshot& snap, const HeatView& view);

// The frame: at most `rows` lines joined by '\n' (no newline after the
// last), each at most `cols` visible characters (ANSI escapes not counted;
// names from the snapshot have bytes outside printable ASCII replaced by
// '?', so a byte is a column). ANSI escapes (SGR colours and attributes
// only) appear only when `color`, and every line that sets an attribute
// resets it before its end. rows or cols 0 give an empty string.
//
// Layout, top to bottom, lines dropped from the end of this list first when
// rows are few: a header (pid, name, time, view, key help); the body (at
// least two lines when rows allow); the legend (ramp, units and scale); a
// column header; the place key.
std::string render_frame(const record::Snapshot& snap, const HeatView& view, unsigned cols,
                         unsigned rows, bool color);

// Applies one key to the view. Returns false when the key means quit ('q',
// Ctrl-C as 3, Esc as 27), else true (unknown keys change nothing):
//   + =      zoom in (x2, up to the selected table's slices and kMaxHeatZoom)
//   -        zoom out (down to 1)
//   < , Left   pan back by a screen; > . Right  forward (no wrap)
//   n Down   next table; p Up  previous (both wrap)
//   t        tables view <-> ranges view
//   Tab      next process (wraps), when the snapshot has several
// Keys are bytes, or the kKey* codes of terminal.h for arrows.
bool apply_key(int key, const record::Snapshot& snap, HeatView* view);

}  // namespace mtier::tools
