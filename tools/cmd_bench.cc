// SPDX-License-Identifier: Apache-2.0
// mtier bench: dispatches to the benchmarks: the fault path (cmd_bench_fault.cc),
// the suite with its trace generator and replayer (bench_suite.h), and the
// swap baseline's environment for any command (cmd_bench_swap_run.cc).
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "commands.h"

namespace mtier::tools {

int bench_fault(int argc, char** argv);
int bench_suite(int argc, char** argv);
int bench_trace(int argc, char** argv);
int bench_replay(int argc, char** argv);
int bench_swap_run(int argc, char** argv);
int bench_setup(int argc, char** argv);
int bench_device(int argc, char** argv);

int cmd_bench(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: mtier bench fault|suite|setup|device|trace|replay|swap-run [--help] [OPTIONS]\n\n"
            "  fault   per-page cost of the fault path (bare UFFDIO_COPY, first touch,\n"
            "          PMem and file-store fetch, sampling MINOR fault) and eviction\n"
            "          throughput to each store, with ratios to their limits\n"
            "  suite   one embedding trace replayed all in DRAM, under mtier, through the\n"
            "          kernel page cache and kernel swap at several DRAM budgets, beside\n"
            "          the offline oracle's hit ratios (Belady's MIN, LRU)\n"
            "  setup   a DLRM set-up with tables bigger than the budget (float64\n"
            "          temporaries written, read into the tables, freed): all in DRAM,\n"
            "          kernel swap and mtier, beside the disk's sequential write bandwidth\n"
            "  device  the store device's QD32 random 4 KiB read and write IOPS\n"
            "  trace   generate a workload preset's lookup trace, print its statistics\n"
            "  replay  replay a trace once on one kind of memory (the suite's runs)\n"
            "  swap-run --limit SIZE [--dir DIR] [--swap-bytes SIZE] -- COMMAND...\n"
            "          run COMMAND as the kernel's swap baseline: in a fresh memory cgroup\n"
            "          of the limit, swapping to a swap file of its own in DIR (root)\n");
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "fault")) return bench_fault(argc - 1, argv + 1);
  if (!strcmp(argv[1], "suite")) return bench_suite(argc - 1, argv + 1);
  if (!strcmp(argv[1], "trace")) return bench_trace(argc - 1, argv + 1);
  if (!strcmp(argv[1], "replay")) return bench_replay(argc - 1, argv + 1);
  if (!strcmp(argv[1], "swap-run")) return bench_swap_run(argc - 1, argv + 1);
  if (!strcmp(argv[1], "setup")) return bench_setup(argc - 1, argv + 1);
  if (!strcmp(argv[1], "device")) return bench_device(argc - 1, argv + 1);
  return cli::Command("bench").usage_error(std::string("unknown benchmark '") + argv[1] + "'");
}

}  // namespace mtier::tools
