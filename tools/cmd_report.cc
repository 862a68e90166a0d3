// SPDX-License-Identifier: Apache-2.0
// mtier report heatmap|wss|tables|migrations FILE: what a recording of
// `mtier record` says, as text, JSON or CSV on stdout, or as a chart
// (--output x.png | x.svg | x.pdf) drawn through cairo (src/plot/).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "plot/heatmap_chart.h"
#include "plot/line_chart.h"
#include "record/recording.h"
#include "record/report.h"

namespace mtier::tools {
namespace {

const char kUsage[] =
    "usage: mtier report REPORT FILE [--json | --csv | --output IMAGE]\n"
    "                    [--table NAME|ID] [--pid PID] [--cols N] [--color | --no-color]\n"
    "\n"
    "Reads a recording made by `mtier record` and prints one report:\n"
    "\n"
    "  heatmap     heat over time: time since the first snapshot across, the\n"
    "              offset within each table up; with --table, that table only\n"
    "  wss         the sampled working-set size over time, and its percentiles\n"
    "  tables      per table: size, heat (mean, peak, share), bytes per tier\n"
    "              (mean, peak), pages moved in and out\n"
    "  migrations  pages and MiB moved per tier pair (new, dram, slow, store),\n"
    "              mean and peak MiB/s\n"
    "\n"
    "  --json            JSON instead of text\n"
    "  --csv             CSV instead of text\n"
    "  --output IMAGE    draw the report as a chart: IMAGE ending .png, .svg or\n"
    "                    .pdf\n"
    "                    (heatmap: a heat map with a colour bar; wss, tables,\n"
    "                    migrations: line charts over time)\n"
    "  --table NAME|ID   only this table (its name, or its id)\n"
    "  --pid PID         only this process (a recording may hold several)\n"
    "  --cols N          heatmap text: at most N time columns (default 60)\n"
    "  --color, --no-color  ANSI colour in the heatmap text (default: when\n"
    "                    stdout is a terminal)\n"
    "  -h, --help        this text\n"
    "\n"
    "A recording cut off by a crash is read up to its last complete record\n"
    "(a warning says so). Exit status: 0; 1 for a file that is not a\n"
    "recording, an unknown table or pid, an image that cannot be written;\n"
    "2 for usage errors. The file format: docs/recording.md.\n";

const cli::Command kCmd("report");

using TextReport = int (*)(const record::Recording&, const record::ReportOptions&, record::Format,
                           std::string*, std::string*);
using LineReport = int (*)(const record::Recording&, const record::ReportOptions&, plot::LineChart*,
                           std::string*);

struct Kind {
  const char* name;
  TextReport text;
  LineReport chart;  // nullptr: the heat map
};
constexpr Kind kKinds[] = {
    {"heatmap", record::report_heatmap, nullptr},
    {"wss", record::report_wss, record::wss_chart},
    {"tables", record::report_tables, record::tables_chart},
    {"migrations", record::report_migrations, record::migrations_chart},
};

// Draws kind's chart to `path` (.png, .svg or .pdf). 0 or -errno with *why.
int draw(const Kind& kind, const record::Recording& r, const record::ReportOptions& o,
         const std::string& path, std::string* why) {
  if (!kind.chart) {
    plot::HeatmapChart c;
    if (int rc = record::heatmap_chart(r, o, &c, why); rc < 0) return rc;
    return plot::write_heatmap(c, path, why);
  }
  plot::LineChart c;
  if (int rc = kind.chart(r, o, &c, why); rc < 0) return rc;
  return plot::write_line_chart(c, path, why);
}

}  // namespace

int cmd_report(int argc, char** argv) {
  record::Format format = record::Format::kText;
  int formats = 0;
  std::string output;
  record::ReportOptions o;
  int color = -1;  // -1: when stdout is a terminal
  long pid = 0;
  std::vector<std::string> operands;
  cli::Parser p(kCmd, [](FILE* out) { fputs(kUsage, out); });
  p.flag("--json", [&] { format = record::Format::kJson, formats++; })
      .flag("--csv", [&] { format = record::Format::kCsv, formats++; })
      .value("-o, --output",
             [&](const std::string& flag, const std::string& v) {
               plot::ChartFormat chart_format;
               std::string bad;
               if (plot::chart_format(v, &chart_format, &bad) < 0) return flag + " " + bad;
               output = v, formats++;
               return std::string();
             })
      .text("--table", &o.table)
      .value("--pid",
             [&](const std::string& flag, const std::string& v) {
               std::string why;
               return cli::parse_pid(flag, v, &pid, &why) == 0 ? std::string() : why;
             })
      .count("--cols", &o.time_cols, 1, 10000)
      .flag("--color", [&] { color = 1; })
      .flag("--no-color", [&] { color = 0; });
  if (int rc = p.parse(argc, argv, &operands); rc >= 0) return rc;
  o.pid = static_cast<int32_t>(pid);
  if (operands.size() != 2) return kCmd.usage_error("give a report and a recording");
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds)
    if (operands[0] == k.name) kind = &k;
  if (!kind)
    return kCmd.usage_error("unknown report '" + operands[0] +
                            "' (heatmap, wss, tables, migrations)");
  if (formats > 1) return kCmd.usage_error("give one of --json, --csv and --output");
  if (std::string why; !output.empty() && plot::charts_available(&why) < 0) {
    fprintf(stderr, "mtier report: --output %s: %s\n", output.c_str(), why.c_str());
    return 1;
  }
  o.color = color < 0 ? isatty(STDOUT_FILENO) && format == record::Format::kText : color == 1;

  std::string path = operands[1], why;
  record::Recording rec;
  if (record::read_recording(path, &rec, &why) < 0) return kCmd.fail(why);
  if (rec.truncated)
    kCmd.say("warning: " + path + ": " + rec.tail_problem + "; reporting the " +
             std::to_string(rec.snapshots.size()) + " complete snapshots");
  if (!output.empty()) {
    if (draw(*kind, rec, o, output, &why) < 0) return kCmd.fail(why);
    kCmd.say("wrote " + output);
    return 0;
  }
  std::string out;
  if (kind->text(rec, o, format, &out, &why) < 0) return kCmd.fail(why);
  return fwrite(out.data(), 1, out.size(), stdout) == out.size() ? 0 : 1;
}

}  // namespace mtier::tools
