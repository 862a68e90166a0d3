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
#include "commands.h"
#include "config/options.h"
#include "demo_child.h"
#include "demo_report.h"
#include "demo_runs.h"
#include "demo_swap.h"
#include "sample_trainer.h"
#include "units.h"

namespace mtier::tools {
namespace {

struct DemoArgs {
  std::string dram = "25%";  // of table bytes
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
          "usage: mtier demo [--dram SIZE|PCT] [--store DIR] [--steps N] [--columns N]\n"
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
          "  --dram SIZE|PCT   DRAM budget for the tables: bytes (64M, 1G) or a share of\n"
          "                    the table bytes (default 25%%)\n"
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

// Parses a count from 1 to max; false (with the message printed) otherwise.
bool parse_count(const std::string& k, const std::string& v, unsigned long max, unsigned* out) {
  char* end = nullptr;
  errno = 0;
  unsigned long n = strtoul(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n == 0 || n > max || v[0] == '-') {
    fprintf(stderr, "mtier demo: %s: '%s' is not a count from 1 to %lu\n", k.c_str(), v.c_str(), max);
    return false;
  }
  *out = static_cast<unsigned>(n);
  return true;
}

// 0, 1 for --help (printed), -1 for a usage error (said).
int parse_args(int argc, char** argv, DemoArgs* a) {
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      demo_help(stdout);
      return 1;
    }
    if (k == "--json" || k == "--lookahead-sync" || k == "--quiet" || k == "-q") {
      (k == "--json" ? a->json : k == "--lookahead-sync" ? a->sync : a->quiet) = true;
      continue;
    }
    bool known = k == "--dram" || k == "--store" || k == "--steps" || k == "--columns" ||
                 k == "--lookahead" || k == "--timeout";
    if (!known) {
      fprintf(stderr, "mtier demo: unknown option '%s' (see --help)\n", k.c_str());
      return -1;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "mtier demo: %s needs a value (see --help)\n", k.c_str());
      return -1;
    }
    std::string v = argv[++i];
    if (k == "--dram") a->dram = v;
    else if (k == "--store") a->store = v;
    else if (k == "--steps" && !parse_count(k, v, 1000000, &a->steps)) return -1;
    else if (k == "--columns" && !parse_count(k, v, 1000000, &a->columns)) return -1;
    else if (k == "--lookahead" && !parse_count(k, v, 64, &a->lookahead)) return -1;
    else if (k == "--timeout" && !parse_count(k, v, 86400, &a->timeout_s)) return -1;
  }
  return 0;
}

// Bytes of DRAM budget from "25%" (of the tables) or a size.
int budget_bytes(const std::string& text, uint64_t table_bytes, uint64_t* out) {
  if (!text.empty() && text.back() == '%') {
    char* end = nullptr;
    double pct = strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || pct <= 0 || pct > 1000) return -EINVAL;
    *out = static_cast<uint64_t>(table_bytes * pct / 100) & ~uint64_t{4095};
    return 0;
  }
  return parse_size(text, out);
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
  if (int rc = parse_args(argc, argv, &args); rc != 0) return rc > 0 ? 0 : 2;
  demo::Setup s;
  s.workload = default_workload();
  if (args.steps) s.workload.steps = args.steps;
  s.columns = args.columns;
  s.lookahead = {args.lookahead, !args.sync};
  s.timeout_s = args.timeout_s;
  s.quiet = args.quiet;
  if (budget_bytes(args.dram, s.workload.table_bytes(), &s.budget) < 0 || s.budget < 4096) {
    fprintf(stderr, "mtier demo: --dram: '%s' is not a size (64M, 1G) or a share (25%%)\n",
            args.dram.c_str());
    return 2;
  }
  Scratch scratch;
  std::string tmpl = args.store + "/mtier-demo-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    fprintf(stderr, "mtier demo: --store %s: cannot make a scratch directory there: %s\n",
            args.store.c_str(), strerror(errno));
    return 1;
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
    fprintf(stderr, "mtier demo: interrupted: the run in progress was killed; its cgroup, swap file "
                    "and store are removed\n");
    return 1;
  }
  if (json)
    demo::print_json(stdout, rep);
  else
    demo::print_text(stdout, rep, isatty(1));
  return demo::exit_status(rep);
}

}  // namespace mtier::tools
