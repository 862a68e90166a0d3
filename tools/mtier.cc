// SPDX-License-Identifier: Apache-2.0
// mtier: the command-line tool. One file per subcommand (cmd_*.cc).
#include <cstdio>
#include <cstring>

#include "build_config.h"
#include "commands.h"
#include "config.h"
#include "config/options.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"demo", mtier::tools::cmd_demo,
     "train the built-in sample model all-DRAM and under mtier; print the heat map and the "
     "throughput ratio"},
    {"bench", mtier::tools::cmd_bench,
     "benchmarks: `mtier bench suite` (mtier against the kernel page cache and swap, with\n"
     "            an offline oracle), `mtier bench fault` (per-page costs of the fault path)"},
    {"run", mtier::tools::cmd_run,
     "run a program with libmtier.so preloaded: its big allocations become managed tables"},
    {"status", mtier::tools::cmd_status,
     "what mtierd knows: policy, heat sources, registered processes and their tables"},
    {"policy", mtier::tools::cmd_policy,
     "mtierd's tiering policies: list them, show the one in effect, switch it at run time"},
    {"heat", mtier::tools::cmd_heat,
     "a live heat map of a process's tables from mtierd: heat per slice, tier of residence"},
    {"record", mtier::tools::cmd_record,
     "record heat, residency and page moves of a process over time to a file"},
    {"report", mtier::tools::cmd_report,
     "reports on a recording: heatmap, wss, tables, migrations (text, JSON, CSV, PNG, SVG)"},
};

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier COMMAND [ARGS...]\n"
          "       mtier --help | --version\n\ncommands:\n");
  for (const Command& c : kCommands) fprintf(out, "  %-8s %s\n", c.name, c.summary);
  fprintf(out, "\n`mtier COMMAND --help` describes each. See mtier(1), mtier(7).\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("mtier %s\nLicense: %s (the Apache License, Version 2.0)\nBugs: %s\n"
           "Configuration: %s (the runtime), %s (mtierd)\nCharts: %s\n",
           PACKAGE_VERSION, PACKAGE_LICENSE, PACKAGE_BUGREPORT, mtier::kSystemConfigPath,
           MTIER_SYSCONFDIR "/mtier/mtierd.conf",
           mtier::build::kHaveCairo ? "yes (cairo)" : "no (built without cairo)");
    return 0;
  }
  for (const Command& c : kCommands)
    if (!strcmp(argv[1], c.name)) return c.run(argc - 1, argv + 1);
  fprintf(stderr, "mtier: unknown command '%s'\nTry 'mtier --help'.\n", argv[1]);
  return 2;
}
