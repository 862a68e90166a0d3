// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: the command line (see bench_suite.h for what it runs).
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "bench_suite.h"
#include "cli.h"
#include "config/option_table.h"
#include "config/options.h"
#include "plot/chart.h"

namespace mtier::tools {
namespace {

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench suite [OPTIONS]\n\n"
          "Generates an embedding lookup trace (or reads one) and replays the same trace\n"
          "in every configuration at every DRAM budget B, each run in its own process:\n"
          "  dram              all tables in DRAM, no mtier (the upper bound)\n"
          "  mtier             mtier with a DRAM budget of B and a file store\n"
          "  mtier-pmem        the same with a PMem store first (only with --pmem)\n"
          "  pagecache         tables in a file mapped MAP_SHARED (the kernel page cache)\n"
          "  pagecache-random  the same with MADV_RANDOM\n"
          "  swap              anonymous tables, kernel swap to a swap file\n"
          "With --lookahead K every configuration but dram also runs hinted, as\n"
          "<config>+lookahead: before batch i the replayer names the pages of batches\n"
          "i+1..i+K (mtier: mtier_prefetch_rows, asynchronous, each batch waiting for its\n"
          "own hints just before it runs, pinned until passed; the kernel's:\n"
          "madvise(MADV_WILLNEED), which starts the reads and returns), inside the timed\n"
          "replay.\n"
          "The kernel configurations and mtier run in a memory cgroup (v1 or v2) limited\n"
          "to B plus a slack; the suite makes and removes the cgroups and the swap file\n"
          "itself (root; without root, a memory cgroup or swapon it refuses to start:\n"
          "pass --configs dram,mtier). Beside them: the oracle's hit ratios (Belady's MIN and\n"
          "LRU with B bytes of pages), and the device's QD32 random 4 KiB read and write\n"
          "IOPS, measured first in DIR. Prints a table per budget with lookups/s, the\n"
          "ratio to all-DRAM, mtier over the best kernel configuration, hit ratios, the\n"
          "misses (pages read below DRAM) and bytes read and written, the device-bound\n"
          "time (those pages at the device's IOPS) and the replay time over it, then\n"
          "the goals with PASS/MISS (or not measured, and why).\n\n"
          "  --preset NAME       workload preset (default meta2022; mtier bench trace --list)\n"
          "  --table-bytes SIZE  scale the preset's tables to about SIZE in all (e.g. 1G)\n"
          "  --batches N         batches in the trace (default: the preset's)\n"
          "  --seed N            trace seed (default: the preset's)\n"
          "  --trace FILE        replay this trace (from mtier bench trace -o) instead\n"
          "  --budgets LIST      DRAM budgets in %% of the table bytes (default 100,50,25,10)\n"
          "  --configs LIST      configurations to run (default all but mtier-pmem)\n"
          "  --pmem PATH         PMem for mtier-pmem: a DAX device (/dev/dax0.0), or a file or\n"
          "                      directory on a DAX filesystem; adds mtier-pmem to the default set\n"
          "  --repeats N         runs per configuration, interleaved (default 3)\n"
          "  --threads N         replayer threads (default 1)\n"
          "  --lookahead K       also run every configuration but dram hinted, K batches\n"
          "                      ahead (0 = off, default; at most 64)\n"
          "  --lookahead-sync    mtier's hints in the synchronous form (each call returns\n"
          "                      once its pages are in) instead of the asynchronous one\n"
          "  --device-bytes SIZE the device probe's file (default 256M; 0: no probe, no\n"
          "                      device-bound times)\n"
          "  --dir DIR           where the store, page-cache file, swap file and trace go\n"
          "                      (default /var/tmp; all on the same disk)\n"
          "  --slack SIZE        cgroup limit = budget + SIZE (default: what the first all-DRAM\n"
          "                      run used beyond its tables, + 8M)\n"
          "  -o NAME=VALUE       an mtier option for the mtier runs (repeatable)\n"
          "  --timeout S         seconds a run may take before it is killed (default 600);\n"
          "                      a configuration that times out is not run at smaller budgets\n"
          "  --json              print one JSON object instead of the tables\n"
          "  --plot FILE         also draw lookups/s against the budget, a line per configuration:\n"
          "                      FILE ending .png, .svg or .pdf\n"
          "  -q, --quiet         no progress on stderr (otherwise a line per step; and when\n"
          "                      stderr is a terminal, a live line under them: the oracle's\n"
          "                      and then the runs' done/total, the time elapsed and left)\n"
          "  -h, --help          this text\n\n"
          "Exit status: 0 when every run that ran computed the same losses and tables as\n"
          "the all-DRAM run (the goals are reported, not enforced), 1 when the suite could\n"
          "not run or data differed, 2 for a usage error.\n");
}

const cli::Command kCmd("bench suite");

// --budgets: percentages of the table bytes, comma-separated.
cli::Handler budgets(std::vector<unsigned>* out) {
  return [out](const std::string& flag, const std::string& v) {
    std::vector<unsigned> got;
    std::stringstream ss(v);
    for (std::string item; std::getline(ss, item, ',');) {
      uint64_t pct = 0;
      if (!item.empty() && item.back() == '%') item.pop_back();
      if (config::parse_decimal(item, &pct) != 0 || pct < 1 || pct > 1000)
        return cli::bad_value(flag, v, "is not a list of percentages 1 to 1000, comma-separated");
      got.push_back(static_cast<unsigned>(pct));
    }
    if (got.empty()) return cli::bad_value(flag, v, "names no budget");
    *out = std::move(got);
    return std::string();
  };
}

// --configs: configuration names, comma-separated.
cli::Handler configs(std::vector<suite::Config>* out, bool* given) {
  return [out, given](const std::string& flag, const std::string& v) {
    std::vector<suite::Config> got;
    std::stringstream ss(v);
    for (std::string item; std::getline(ss, item, ',');) {
      suite::Config cfg;
      if (!suite::parse_config(item, &cfg))
        return cli::bad_value(flag, v,
                              "is not a list of configurations (dram, mtier, mtier-pmem, "
                              "pagecache, pagecache-random, swap), comma-separated");
      got.push_back(cfg);
    }
    if (got.empty()) return cli::bad_value(flag, v, "names no configuration");
    *out = std::move(got);
    *given = true;
    return std::string();
  };
}

std::string self_exe(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

}  // namespace

int bench_suite(int argc, char** argv) {
  suite::SuiteOptions o;
  bool preset_set = false, configs_set = false;
  o.self = self_exe(argv[0]);
  cli::Parser p(kCmd, usage);
  p.value("--preset",
          [&](const std::string&, const std::string& v) {
            o.preset = v, preset_set = true;
            return std::string();
          })
      .size("--table-bytes", &o.table_bytes, 1u << 20)
      .count("--batches", &o.batches, 1, 100000000)
      .count("--seed", &o.seed, 1, UINT64_MAX)
      .text("--trace", &o.trace_file)
      .value("--budgets", budgets(&o.budgets))
      .value("--configs", configs(&o.configs, &configs_set))
      .count("--repeats", &o.repeats, 1, 1000)
      .count("--threads", &o.threads, 1, 256)
      .count("--lookahead", &o.lookahead, 0, bench::kMaxLookahead)
      .flag("--lookahead-sync", &o.lookahead_sync)
      .value("--device-bytes",
             [&o](const std::string& flag, const std::string& v) {
               uint64_t n = 0;
               if (parse_size(v, &n) == 0 && (n == 0 || n >= (1u << 20))) {
                 o.device_bytes = n;
                 return std::string();
               }
               return cli::bad_value(flag, v, "is not 0 (no probe) or a size of at least 1M");
             })
      .text("--dir", &o.dir)
      .size("--slack", &o.slack, 1)
      .count("--timeout", &o.timeout_s, 1, 86400)
      .flag("--json", &o.json)
      .value("--plot",
             [&o](const std::string& flag, const std::string& v) {
               plot::ChartFormat format;
               std::string why;
               if (plot::chart_format(v, &format, &why) < 0) return flag + " " + why;
               o.plot = v;
               return std::string();
             })
      .text("--pmem", &o.pmem)
      .value("-o",
             [&o](const std::string& flag, const std::string& v) {
               if (v.find('=') == std::string::npos)
                 return cli::bad_value(flag, v, "is not NAME=VALUE (an option of mtier.conf(5))");
               o.mtier_options += (o.mtier_options.empty() ? "" : ",") + v;
               return std::string();
             })
      .flag("-q, --quiet", &o.quiet);
  if (int rc = p.parse(argc, argv, nullptr); rc >= 0) return rc;
  if (std::string why; !o.plot.empty() && plot::charts_available(&why) < 0) {  // before the runs
    fprintf(stderr, "mtier bench suite: --plot %s: %s\n", o.plot.c_str(), why.c_str());
    return 1;
  }
  if (!o.pmem.empty() && !configs_set) {  // the default set, with mtier-pmem after mtier
    auto at = std::find(o.configs.begin(), o.configs.end(), suite::Config::kMtier);
    o.configs.insert(at == o.configs.end() ? at : at + 1, suite::Config::kMtierPmem);
  }
  if (!o.trace_file.empty() && (preset_set || o.table_bytes || o.batches || o.seed))
    return kCmd.usage_error("--trace replays a trace as it is: leave out --preset, "
                            "--table-bytes, --batches and --seed");
  if (o.trace_file.empty() && !bench::find_preset(o.preset))
    return kCmd.usage_error("--preset: unknown preset '" + o.preset +
                            "' (mtier bench trace --list)");
  suite::SuiteResults r;
  std::string err;
  if (suite::run_suite(o, &r, &err) != 0) return kCmd.fail(err);
  if (o.json)
    suite::print_json(stdout, o, r);
  else
    suite::print_text(stdout, o, r);
  if (!o.plot.empty()) {
    if (suite::write_plot(r, o.plot, &err) < 0) return kCmd.fail("plot " + o.plot + ": " + err);
    if (!o.quiet) kCmd.say("plot written to " + o.plot);
  }
  return r.data_identical ? 0 : 1;
}

}  // namespace mtier::tools
