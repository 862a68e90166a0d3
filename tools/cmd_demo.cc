// SPDX-License-Identifier: Apache-2.0
// mtier demo: the sample trainer on one generated workload, side by side:
// all tables in DRAM (dram), the kernel's swap under a memory cgroup of the
// DRAM budget (swap; root only), mtier with the budget and a file store
// (mtier), and mtier with the trainer naming the steps ahead
// (mtier+lookahead). Each runs in a process of its own (demo_runs.h). Prints
// steps/s, the ratio to dram, whether losses and final weights are
// bit-identical to dram's, the goal at the 25% budget and a heat map of the
// tables (demo_report.h); --json prints the same as one object.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cgroup.h"
#include "cli.h"
#include "commands.h"
#include "demo_child.h"
#include "demo_report.h"
#include "demo_runs.h"
#include "demo_swap.h"
#include "sample_trainer.h"
#include "sys/page_size.h"
#include "units.h"

namespace mtier::tools {
namespace {

struct DemoArgs {
  uint64_t dram = 0;        // --dram: bytes (0: not given)
  unsigned budget_pct = 0;  // --budget: % of the table bytes (0: not given, 25)
  std::string store = "/var/tmp";
  unsigned steps = 0;
  unsigned columns = 64;
  unsigned lookahead = 1;
  bool sync = false;
  unsigned timeout_s = 300;
  bool json = false;
  bool quiet = false;
};

void demo_help(FILE* out) {
  fprintf(out,
          "usage: mtier demo [--budget PCT%% | --dram SIZE|PCT%%] [--store DIR] [--steps N]\n"
          "                  [--columns N]\n"
          "                  [--lookahead K] [--lookahead-sync] [--timeout S] [--json] [-q]\n\n"
          "Trains the built-in DLRM-style sample model on one generated workload, four\n"
          "ways, each in a process of its own:\n"
          "  dram             all tables in DRAM (malloc)\n"
          "  swap             the same in a memory cgroup of the DRAM budget, the kernel\n"
          "                   swapping to a swap file (needs root, a memory cgroup and\n"
          "                   swap; otherwise skipped, and the reason printed)\n"
          "  mtier            the tables under mtier with the DRAM budget and a file store\n"
          "  mtier+lookahead  the same, the trainer naming the rows of the next K steps\n"
          "                   to mtier before each step (mtier_prefetch_rows)\n"
          "Prints steps/s of each, the ratio to dram, whether losses and final weights\n"
          "are bit-identical to dram's, the goal at the 25%% budget (mtier+lookahead at\n"
          ">= 0.1x dram and >= 3x swap), and a heat map of every table.\n\n"
          "  --budget PCT%%     DRAM budget as a share of the table bytes, 1%% to 100%%\n"
          "                    (default 25%%)\n"
          "  --dram SIZE|PCT%%  DRAM budget as a size (64M, 1G) or a share of physical\n"
          "                    memory, as `mtier run --dram` takes it (instead of --budget)\n"
          "  --store DIR       directory for the file store and the swap file\n"
          "                    (default /var/tmp)\n"
          "  --steps N         training steps (default 200)\n"
          "  --columns N       heat-map extents per table (default 64)\n"
          "  --lookahead K     steps named ahead by mtier+lookahead, 1 to 64 (default 1)\n"
          "  --lookahead-sync  name them synchronously (default: MTIER_PREFETCH_ASYNC,\n"
          "                    the reads overlapping the current step's compute)\n"
          "  --timeout S       seconds each configuration may run before it is killed\n"
          "                    (default 300)\n"
          "  --json            print the results as one JSON object: \"configurations\"\n"
          "                    (name, steps_per_second, ratio_to_dram, bit_identical, ...\n"
          "                    or skipped/failed with the reason), the workload, the\n"
          "                    budget, the goal and the heat map\n"
          "  -q, --quiet       no progress on stderr (by default, when stderr is a\n"
          "                    terminal: the run's steps done of all, the time elapsed\n"
          "                    and an estimate of the time left)\n\n"
          "Exit status: 0 when dram and both mtier runs completed with results\n"
          "bit-identical to dram's, 1 otherwise, 2 for a usage error.\n");
}

const cli::Command kCmd("demo");

// -1 to run, else the exit status (0 after --help, 2 after a usage error).
int parse_args(int argc, char** argv, DemoArgs* a) {
  cli::Parser p(kCmd, demo_help);
  p.percent("--budget", &a->budget_pct, 1, 100)
      .dram("--dram", &a->dram)
      .text("--store", &a->store)
      .count("--steps", &a->steps, 1, 1000000)
      .count("--columns", &a->columns, 1, 1000000)
      .count("--lookahead", &a->lookahead, 1, 64)
      .count("--timeout", &a->timeout_s, 1, 86400)
      .flag("--lookahead-sync", &a->sync)
      .flag("--json", &a->json)
      .flag("-q, --quiet", &a->quiet);
  if (int rc = p.parse(argc, argv, nullptr); rc >= 0) return rc;
  if (a->dram && a->budget_pct) return kCmd.usage_error("give --budget or --dram, not both");
  return -1;
}

using bench::mib;

// The scratch directory (the mtier store's file, unlinked at once, and the
// swap file) and everything in it, removed when the demo ends.
struct Scratch {
  std::string path;
  ~Scratch() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// Prints one run's line (text mode).
void said(bool json, const demo::ConfigResult& c) {
  if (json) return;
  if (!c.skipped.empty())
    printf("      skipped: %s\n", c.skipped.c_str());
  else if (!c.failure.empty())
    printf("      FAILED: %s\n", c.failure.c_str());
  else
    printf("      %zu steps in %.2f s: %.1f steps/s\n", c.train.losses.size(), c.train.seconds,
           c.train.steps_per_second());
  fflush(stdout);
}

// The swap baseline: set up, run in its cgroup, torn down (the swap file is
// off before the mtier runs start).
demo::ConfigResult run_swap(const demo::Setup& s, const demo::ConfigResult& dram, demo::Report* rep) {
  demo::ConfigResult r;
  r.name = "swap";
  demo::SwapBaseline sb;
  sb.prepare(s.scratch, s.workload.table_bytes());
  if (!sb.skipped().empty()) {
    r.skipped = sb.skipped();
    return r;
  }
  // The limit's slack is the process's memory besides its tables, as the
  // dram run's peak RSS shows it (which also counts the pages shared with
  // this process, charged to its cgroup, not the child's: the slack is
  // generous to the kernel).
  uint64_t table_bytes = s.workload.table_bytes(), slack = 32ull << 20;
  rep->slack_how = mib(slack) + " for the process's own memory (no dram run to measure it)";
  if (dram.ok() && dram.peak_rss > table_bytes) {
    slack = dram.peak_rss - table_bytes + (8ull << 20);
    rep->slack_how = mib(slack) + ": the dram run's peak RSS beyond its tables + 8 MiB";
  }
  rep->cgroup_limit = s.budget + slack;
  rep->swap_environment = sb.environment();
  bench::MemoryCgroup cg;
  std::string why;
  if (sb.make_cgroup("demo-swap", rep->cgroup_limit, &cg, &why) < 0) {
    r.failure = "cgroup: " + why;
  } else {
    r = demo::run_swap(s, &cg);
    if (cg.destroy(&why) < 0) fprintf(stderr, "mtier demo: removing the cgroup: %s\n", why.c_str());
  }
  if (sb.teardown(&why) < 0) fprintf(stderr, "mtier demo: the swap file: %s\n", why.c_str());
  return r;
}

}  // namespace

int cmd_demo(int argc, char** argv) {
  DemoArgs args;
  if (int rc = parse_args(argc, argv, &args); rc >= 0) return rc;
  demo::Setup s;
  s.workload = default_workload();
  if (args.steps) s.workload.steps = args.steps;
  s.columns = args.columns;
  s.lookahead = {args.lookahead, !args.sync};
  s.timeout_s = args.timeout_s;
  s.quiet = args.quiet;
  s.budget = args.dram ? args.dram / kPageSize * kPageSize
                       : s.workload.table_bytes() * (args.budget_pct ? args.budget_pct : 25) /
                             100 / kPageSize * kPageSize;
  if (s.budget < kPageSize) return kCmd.usage_error("--dram: the budget is less than one page");
  Scratch scratch;
  std::string tmpl = args.store + "/mtier-demo-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    return kCmd.fail("--store " + args.store + ": cannot make a scratch directory there: " +
                     strerror(errno));
  }
  scratch.path = s.scratch = tmpl;
  demo::catch_interrupts();

  bool json = args.json;
  if (!json) {
    printf("mtier demo: workload: %s\n", s.workload.describe().c_str());
    printf("[1/4] dram: all tables in DRAM (malloc)\n");
    fflush(stdout);
  }
  demo::Report rep;
  rep.setup = s;
  rep.heat_run = "mtier+lookahead";
  rep.configs.push_back(demo::run_dram(s));
  said(json, rep.configs.back());
  if (!json) {
    printf("[2/4] swap: the same in a memory cgroup of the budget, kernel swap\n");
    fflush(stdout);
  }
  if (!demo::interrupted()) {
    rep.configs.push_back(run_swap(s, rep.configs.front(), &rep));
    said(json, rep.configs.back());
  }
  for (bool lookahead : {false, true}) {
    if (demo::interrupted()) break;
    if (!json) {
      printf("[%d/4] %s: DRAM budget %s (%.0f%% of the tables)%s\n", lookahead ? 4 : 3,
             lookahead ? "mtier+lookahead" : "mtier", mib(s.budget).c_str(),
             100.0 * s.budget / s.workload.table_bytes(),
             lookahead ? ", the next steps named ahead" : "");
      fflush(stdout);
    }
    rep.configs.push_back(demo::run_mtier(s, lookahead, lookahead));
    if (!json && !lookahead && rep.configs.back().ok())
      printf("      %s\n", rep.configs.back().describe.c_str());
    said(json, rep.configs.back());
  }
  if (demo::interrupted()) {
    return kCmd.fail("interrupted: the run in progress was killed; its cgroup, swap file and "
                     "store are removed");
  }
  if (json)
    demo::print_json(stdout, rep);
  else
    demo::print_text(stdout, rep, isatty(1));
  return demo::exit_status(rep);
}

}  // namespace mtier::tools
