// mtier bench: dispatches to the benchmarks (bench_fault.cc for now).
#include <cstdio>
#include <cstring>

#include "commands.h"

namespace mtier::tools {

int bench_fault(int argc, char** argv);

int cmd_bench(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: mtier bench fault [--help] [OPTIONS]\n\n"
            "  fault   per-page cost of the fault path (bare UFFDIO_COPY, first touch,\n"
            "          PMem and file-store fetch, sampling MINOR fault) and eviction\n"
            "          throughput to each store, with ratios to their limits\n");
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "fault")) return bench_fault(argc - 1, argv + 1);
  fprintf(stderr, "mtier bench: unknown benchmark '%s' (try mtier bench --help)\n", argv[1]);
  return 2;
}

}  // namespace mtier::tools
