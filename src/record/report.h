// SPDX-License-Identifier: Apache-2.0
// `mtier report`: what a recording (recording.h) says, as text for the
// terminal, JSON or CSV, and as charts (plot/) for --output x.png, x.svg or x.pdf.
//
//   heatmap     heat over time: x time since the first snapshot (s), y the
//               offset within a table (--table) or every table stacked
//               (a band per table), value the slice's heat
//   wss         the sampled working-set size over time (sum of active_bytes
//               per snapshot) and its percentiles (p0 p25 p50 p75 p90 p99 p100)
//   tables      per table: size, mean and peak heat, share of all heat, mean
//               and peak bytes in DRAM / slow / store, pages moved
//   migrations  pages and bytes moved per tier pair (Move) over the
//               recording, and the rate per interval
#pragma once
#include <string>

#include "plot/line_chart.h"
#include "plot/heatmap_chart.h"
#include "record/recording.h"

namespace mtier::record {

enum class Format { kText, kJson, kCsv };

struct ReportOptions {
  int32_t pid = 0;      // only this process (0: every process in the recording)
  std::string table;    // only this table: its name, or its id as digits; "" all
  unsigned time_cols = 0;    // heatmap text: at most this many time columns (0: 60), the
                             // snapshots of a column merged by their mean
  bool color = false;   // ANSI colour in text output
};

// Each returns 0 with *out the whole output, or -EINVAL / -ENOENT with *why
// one line (an unknown table or pid, an empty recording).
int report_heatmap(const Recording& r, const ReportOptions& o, Format f, std::string* out,
                   std::string* why);
int report_wss(const Recording& r, const ReportOptions& o, Format f, std::string* out,
               std::string* why);
int report_tables(const Recording& r, const ReportOptions& o, Format f, std::string* out,
                  std::string* why);
int report_migrations(const Recording& r, const ReportOptions& o, Format f, std::string* out,
                      std::string* why);

// The charts for --output. Same errors.
int heatmap_chart(const Recording& r, const ReportOptions& o, plot::HeatmapChart* c,
                  std::string* why);
int wss_chart(const Recording& r, const ReportOptions& o, plot::LineChart* c, std::string* why);
int tables_chart(const Recording& r, const ReportOptions& o, plot::LineChart* c,
                 std::string* why);
int migrations_chart(const Recording& r, const ReportOptions& o, plot::LineChart* c,
                     std::string* why);

}  // namespace mtier::record
