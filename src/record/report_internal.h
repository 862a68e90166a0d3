// SPDX-License-Identifier: Apache-2.0
// What the reports of report.h share (report.cc, report_heatmap.cc and
// report_select.cc): which tables a report covers, the heat maps brought to
// one length, the page-move counters turned into moves per interval, and the
// fixed number formats that make the outputs byte-for-byte reproducible.
// Not part of the API: only the report sources include it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "record/recording.h"
#include "record/report.h"
#include "record/snapshot.h"

namespace mtier::record::report_internal {

inline constexpr double kMiB = 1024.0 * 1024.0;

// One table over the recording, identified by (pid, id).
struct TableSeries {
  int32_t pid = 0;
  uint32_t id = 0;
  std::string name;                  // as in the last snapshot that holds the table
  uint64_t bytes = 0, pages = 0;     // as in the last snapshot that holds the table
  size_t slices = 1;                 // the longest heat map of any snapshot, >= 1
  std::string label;                 // name, or "name (pid N)" when several processes are chosen
  std::vector<const TableSnap*> at;  // per snapshot of the recording; nullptr where absent
};

struct ProcessSeries {
  int32_t pid = 0;
  std::string name;   // as in the last snapshot that holds the process
  std::string label;  // "name (pid N)", or "pid N" without a name
};

// What a report covers. The pointers in `at` point into the Recording, which
// must outlive the Selection.
struct Selection {
  std::vector<double> t;             // per snapshot: seconds since the first snapshot
  std::vector<TableSeries> all;      // every table of the chosen processes, by (pid, id)
  std::vector<TableSeries> tables;   // the tables the report covers (--table), by (pid, id)
  std::vector<ProcessSeries> procs;  // the processes of `tables`, by pid
  std::string what;                  // for titles: "all tables", or the table's name; + pid
};

// Chooses by o.pid and o.table. 0; -EINVAL for a recording without
// snapshots; -ENOENT for a pid or table not in it, or no tables at all.
// *why is one line.
int select_tables(const Recording& r, const ReportOptions& o, Selection* s, std::string* why);

// `src` (m equal slices of a table) as n equal slices, each target slice
// taking every source slice's heat in proportion to their overlap, so the
// total is kept: a longer row splits a slice's heat evenly, a shorter one
// sums slices. An empty src gives n zeros.
std::vector<double> rebin(const std::vector<double>& src, size_t n);
std::vector<double> rebin(const std::vector<float>& src, size_t n);

// The table's heat map at each snapshot as n slices (rebin); empty where
// the table is absent.
std::vector<std::vector<double>> heat_rows(const TableSeries& ts, size_t n);

// Pages moved per kind, per snapshot: entry s is what the table's cumulative
// counters grew by since the previous snapshot that holds the table (zeros
// at its first). A counter that went backwards (a daemon restart, which
// starts counting again from zero) counts as no move, per counter.
using Moves = std::array<uint64_t, kMoveKinds>;
std::vector<Moves> move_deltas(const TableSeries& ts);

// `pages` of table snapshot t in bytes (its bytes / pages; 4096 per page
// for a table of no pages).
double pages_bytes(const TableSnap& t, uint64_t pages);
// Exact integer bytes * num / den (den 0 gives 0).
uint64_t scale(uint64_t bytes, uint64_t num, uint64_t den);

// printf into a string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// The fixed formats of times: JSON numbers go through json::number (%.6g);
// CSV times are "%.3f" (milliseconds); text times "%.1f".
std::string csv_time(double t);
// s with control bytes (escapes among them) as '?', for text meant for a
// terminal: names come from other processes.
std::string printable(const std::string& s);
// A CSV field, quoted (RFC 4180) when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);

// Rows of cells as aligned text: row 0 is the header, columns joined by two
// spaces, column c left-aligned when align[c] is 'l', else right-aligned;
// each line ends in '\n' without trailing blanks.
std::string text_table(const std::vector<std::vector<std::string>>& rows, const char* align);

}  // namespace mtier::record::report_internal
