// mtier report heatmap|wss|tables|migrations FILE: what a recording of
// `mtier record` says, as text, JSON or CSV on stdout, or as a chart
// (--output x.png | x.svg | x.pdf) drawn through cairo (src/plot/).
#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

int usage_error(const std::string& what) {
  fprintf(stderr, "mtier report: %s\nTry 'mtier report --help'.\n", what.c_str());
  return 2;
}

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
  static const struct option longs[] = {
      {"json", no_argument, nullptr, 'j'},         {"csv", no_argument, nullptr, 'c'},
      {"output", required_argument, nullptr, 'o'}, {"table", required_argument, nullptr, 't'},
      {"pid", required_argument, nullptr, 'p'},    {"cols", required_argument, nullptr, 'n'},
      {"color", no_argument, nullptr, 'C'},        {"no-color", no_argument, nullptr, 'N'},
      {"help", no_argument, nullptr, 'h'},         {nullptr, 0, nullptr, 0}};
  record::Format format = record::Format::kText;
  int formats = 0;
  std::string output;
  record::ReportOptions o;
  int color = -1;  // -1: when stdout is a terminal
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "ho:", longs, nullptr)) != -1;) {
    char* end = nullptr;
    switch (c) {
      case 'j':
        format = record::Format::kJson, formats++;
        break;
      case 'c':
        format = record::Format::kCsv, formats++;
        break;
      case 'o':
        output = optarg, formats++;
        break;
      case 't':
        o.table = optarg;
        break;
      case 'p': {
        long v = strtol(optarg, &end, 10);
        if (*end || v <= 0 || v > 0x7fffffff)
          return usage_error("'" + std::string(optarg) + "' is not a process id");
        o.pid = static_cast<int32_t>(v);
        break;
      }
      case 'n': {
        long v = strtol(optarg, &end, 10);
        if (*end || v < 1 || v > 10000) return usage_error("bad --cols (1..10000)");
        o.time_cols = static_cast<unsigned>(v);
        break;
      }
      case 'C':
        color = 1;
        break;
      case 'N':
        color = 0;
        break;
      case 'h':
        return fputs(kUsage, stdout), 0;
      default:
        return usage_error("unknown option");
    }
  }
  if (argc - optind != 2) return usage_error("give a report and a recording");
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds)
    if (!strcmp(argv[optind], k.name)) kind = &k;
  if (!kind)
    return usage_error("unknown report '" + std::string(argv[optind]) +
                       "' (heatmap, wss, tables, migrations)");
  if (formats > 1) return usage_error("give one of --json, --csv and --output");
  plot::ChartFormat chart_format;
  if (std::string bad; !output.empty() && plot::chart_format(output, &chart_format, &bad) < 0)
    return usage_error("--output " + bad);
  if (std::string why; !output.empty() && plot::charts_available(&why) < 0) {
    fprintf(stderr, "mtier report: --output %s: %s\n", output.c_str(), why.c_str());
    return 1;
  }
  o.color = color < 0 ? isatty(STDOUT_FILENO) && format == record::Format::kText : color == 1;

  std::string path = argv[optind + 1], why;
  record::Recording rec;
  if (record::read_recording(path, &rec, &why) < 0) {
    fprintf(stderr, "mtier report: %s\n", why.c_str());
    return 1;
  }
  if (rec.truncated)
    fprintf(stderr, "mtier report: warning: %s: %s; reporting the %zu complete snapshots\n",
            path.c_str(), rec.tail_problem.c_str(), rec.snapshots.size());
  if (!output.empty()) {
    if (draw(*kind, rec, o, output, &why) < 0) {
      fprintf(stderr, "mtier report: %s\n", why.c_str());
      return 1;
    }
    fprintf(stderr, "mtier report: wrote %s\n", output.c_str());
    return 0;
  }
  std::string out;
  if (kind->text(rec, o, format, &out, &why) < 0) {
    fprintf(stderr, "mtier report: %s\n", why.c_str());
    return 1;
  }
  return fwrite(out.data(), 1, out.size(), stdout) == out.size() ? 0 : 1;
}

}  // namespace mtier::tools
