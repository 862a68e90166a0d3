// mtier bench suite: the command line (see bench_suite.h for what it runs).
#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "bench_suite.h"
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

bool parse_unsigned(const char* s, unsigned lo, unsigned hi, unsigned* out) {
  char* end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi) return false;
  *out = static_cast<unsigned>(v);
  return true;
}

int bad(const char* opt, const char* value, const char* want) {
  fprintf(stderr, "mtier bench suite: %s '%s': %s\n", opt, value, want);
  return 2;
}

std::string self_exe(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

}  // namespace

int bench_suite(int argc, char** argv) {
  enum { kPreset = 256, kTableBytes, kBatches, kSeed, kTrace, kBudgets, kConfigs, kRepeats, kThreads,
         kDir, kSlack, kTimeout, kJson, kPlot, kPmem, kLookahead, kLookaheadSync, kDeviceBytes };
  static const option longopts[] = {
      {"preset", required_argument, nullptr, kPreset}, {"table-bytes", required_argument, nullptr, kTableBytes},
      {"batches", required_argument, nullptr, kBatches}, {"seed", required_argument, nullptr, kSeed},
      {"trace", required_argument, nullptr, kTrace}, {"budgets", required_argument, nullptr, kBudgets},
      {"configs", required_argument, nullptr, kConfigs}, {"repeats", required_argument, nullptr, kRepeats},
      {"threads", required_argument, nullptr, kThreads}, {"dir", required_argument, nullptr, kDir},
      {"slack", required_argument, nullptr, kSlack}, {"timeout", required_argument, nullptr, kTimeout},
      {"json", no_argument, nullptr, kJson}, {"plot", required_argument, nullptr, kPlot},
      {"pmem", required_argument, nullptr, kPmem},
      {"lookahead", required_argument, nullptr, kLookahead}, {"device-bytes", required_argument, nullptr, kDeviceBytes},
      {"lookahead-sync", no_argument, nullptr, kLookaheadSync},
      {"quiet", no_argument, nullptr, 'q'}, {"help", no_argument, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
  suite::SuiteOptions o;
  bool preset_set = false, configs_set = false;
  o.self = self_exe(argv[0]);
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "o:qh", longopts, nullptr)) != -1) {
    switch (c) {
      case kPreset: o.preset = optarg, preset_set = true; break;
      case kTableBytes:
        if (parse_size(optarg, &o.table_bytes) < 0 || o.table_bytes < (1u << 20))
          return bad("--table-bytes", optarg, "want a size of at least 1M (K, M, G suffixes)");
        break;
      case kBatches:
        if (!parse_unsigned(optarg, 1, 100000000, &o.batches)) return bad("--batches", optarg, "want 1 or more");
        break;
      case kSeed: {
        char* end;
        o.seed = strtoull(optarg, &end, 10);
        if (*end || !o.seed) return bad("--seed", optarg, "want a positive integer");
        break;
      }
      case kTrace: o.trace_file = optarg; break;
      case kBudgets: {
        o.budgets.clear();
        std::stringstream ss(optarg);
        for (std::string item; std::getline(ss, item, ',');) {
          unsigned pct;
          if (!parse_unsigned(item.c_str(), 1, 1000, &pct)) return bad("--budgets", optarg, "want percentages 1 to 1000, comma-separated");
          o.budgets.push_back(pct);
        }
        if (o.budgets.empty()) return bad("--budgets", optarg, "want at least one budget");
        break;
      }
      case kConfigs: {
        configs_set = true;
        o.configs.clear();
        std::stringstream ss(optarg);
        for (std::string item; std::getline(ss, item, ',');) {
          suite::Config cfg;
          if (!suite::parse_config(item, &cfg))
            return bad("--configs", optarg,
                       "want dram, mtier, mtier-pmem, pagecache, pagecache-random, swap, comma-separated");
          o.configs.push_back(cfg);
        }
        if (o.configs.empty()) return bad("--configs", optarg, "want at least one configuration");
        break;
      }
      case kRepeats:
        if (!parse_unsigned(optarg, 1, 1000, &o.repeats)) return bad("--repeats", optarg, "want 1 to 1000");
        break;
      case kThreads:
        if (!parse_unsigned(optarg, 1, 256, &o.threads)) return bad("--threads", optarg, "want 1 to 256");
        break;
      case kLookahead:
        if (!bench::parse_lookahead(optarg, &o.lookahead)) return bad("--lookahead", optarg, bench::kLookaheadWant);
        break;
      case kLookaheadSync: o.lookahead_sync = true; break;
      case kDeviceBytes:
        if (parse_size(optarg, &o.device_bytes) < 0 || (o.device_bytes && o.device_bytes < (1u << 20)))
          return bad("--device-bytes", optarg, "want 0 (no probe) or a size of at least 1M (K, M, G suffixes)");
        break;
      case kDir: o.dir = optarg; break;
      case kSlack:
        if (parse_size(optarg, &o.slack) < 0 || !o.slack) return bad("--slack", optarg, "want a size above 0 (K, M, G suffixes)");
        break;
      case kTimeout:
        if (!parse_unsigned(optarg, 1, 86400, &o.timeout_s)) return bad("--timeout", optarg, "want 1 to 86400 seconds");
        break;
      case kJson: o.json = true; break;
      case kPlot: {
        plot::ChartFormat format;
        if (std::string why; plot::chart_format(optarg, &format, &why) < 0) {
          fprintf(stderr, "mtier bench suite: --plot %s\n", why.c_str());
          return 2;
        }
        if (std::string why; plot::charts_available(&why) < 0) {  // before the runs
          fprintf(stderr, "mtier bench suite: --plot %s: %s\n", optarg, why.c_str());
          return 1;
        }
        o.plot = optarg;
        break;
      }
      case kPmem: o.pmem = optarg; break;
      case 'o':
        if (!strchr(optarg, '=')) return bad("-o", optarg, "want NAME=VALUE (an option of mtier.conf(5))");
        o.mtier_options += (o.mtier_options.empty() ? "" : ",") + std::string(optarg);
        break;
      case 'q': o.quiet = true; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "mtier bench suite: unexpected argument '%s' (try --help)\n", argv[optind]);
    return 2;
  }
  if (!o.pmem.empty() && !configs_set) {  // the default set, with mtier-pmem after mtier
    auto at = std::find(o.configs.begin(), o.configs.end(), suite::Config::kMtier);
    o.configs.insert(at == o.configs.end() ? at : at + 1, suite::Config::kMtierPmem);
  }
  if (!o.trace_file.empty() && (preset_set || o.table_bytes || o.batches || o.seed)) {
    fprintf(stderr, "mtier bench suite: --trace replays a trace as it is: leave out --preset, "
                    "--table-bytes, --batches and --seed\n");
    return 2;
  }
  if (o.trace_file.empty() && !bench::find_preset(o.preset)) {
    fprintf(stderr, "mtier bench suite: unknown preset '%s' (mtier bench trace --list)\n", o.preset.c_str());
    return 2;
  }
  suite::SuiteResults r;
  std::string err;
  if (suite::run_suite(o, &r, &err) != 0) {
    fprintf(stderr, "mtier bench suite: %s\n", err.c_str());
    return 1;
  }
  if (o.json)
    suite::print_json(stdout, o, r);
  else
    suite::print_text(stdout, o, r);
  if (!o.plot.empty()) {
    if (suite::write_plot(r, o.plot, &err) < 0) {
      fprintf(stderr, "mtier bench suite: plot %s: %s\n", o.plot.c_str(), err.c_str());
      return 1;
    }
    if (!o.quiet) fprintf(stderr, "bench suite: plot written to %s\n", o.plot.c_str());
  }
  return r.data_identical ? 0 : 1;
}

}  // namespace mtier::tools
