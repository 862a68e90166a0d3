// SPDX-License-Identifier: Apache-2.0
// mtier bench fault: the command line (bench/bench_probes.h says what the
// probes measure; bench/bench_fault.cc runs them, bench/bench_report.cc
// prints the figures and goals).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_probes.h"
#include "cli.h"
#include "bench_report.h"
#include "store/backing_file.h"

namespace mtier::tools {
namespace {

using namespace bench;

struct BenchArgs {
  std::string dir = "/var/tmp";
  uint64_t pages = 16384;  // 64 MiB: eviction figures need a table of several MiB
  uint64_t runs = 3;
  bool json = false;
};

void fault_help(FILE* out) {
  fprintf(out,
          "usage: mtier bench fault [--dir DIR] [--pages N] [--runs N] [--json]\n\n"
          "Measures, in one run, the median and p99 per-page cost of a bare UFFDIO_COPY\n"
          "round trip (the limit), a first touch through the engine (zero fill), a fetch\n"
          "from the PMem store and from the file store, a sampling MINOR fault, the bare\n"
          "round trip served in the faulting thread (SIGBUS), a page placed ahead three\n"
          "ways (UFFDIO_COPY; pwrite + UFFDIO_CONTINUE; pwrite into the page cache, mapped\n"
          "by the access) with its first access, the page checksum (crc32c) every store\n"
          "read is verified with, and dropping a page's mapping as the evictor does (a\n"
          "dirty or a clean entry, one madvise a page or 64 pages a process_madvise, or\n"
          "a 512-page span at once with the rest mapped again by UFFDIO_CONTINUE,\n"
          "another thread running); the eviction throughput to each store; the read-around;\n"
          "the device's QD32 4 KiB random write and read throughput through a store\n"
          "channel; and the access sampler's overhead on a DRAM-resident workload (%.0f s\n"
          "a run, sampler off and on, alternating). Goals are printed with PASS/MISS; the\n"
          "exit status is 0 unless a measurement could not run. Progress goes to stderr.\n\n"
          "  --dir DIR   directory for the store files (default /var/tmp)\n"
          "  --pages N   pages (4 KiB) a table and a device pass, 64..262144\n"
          "              (default 16384 = 64 MiB)\n"
          "  --runs N    runs, 1..100; figures are medians across runs (default 3)\n"
          "  --json      one JSON object instead of the table\n",
          kWorkloadSeconds);
}

const cli::Command kCmd("bench fault");

// -1 to run, else the exit status (0 after --help, 2 after a usage error).
int parse_args(int argc, char** argv, BenchArgs* a) {
  cli::Parser p(kCmd, fault_help);
  p.text("--dir", &a->dir)
      .count("--pages", &a->pages, 64, 262144)
      .count("--runs", &a->runs, 1, 100)
      .flag("--json", &a->json);
  return p.parse(argc, argv, nullptr);
}

// Checks the directory up front (one clear line instead of a failure per
// probe) and names its filesystem for the report.
int prepare(const BenchArgs& a, BenchConfig* c) {
  int fd = open(a.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "mtier bench fault: --dir %s: %s\n", a.dir.c_str(), strerror(errno));
    return -1;
  }
  c->dir = a.dir;
  c->pages = a.pages;
  c->fs = fs_name(fd);
  close(fd);
  return 0;
}

}  // namespace

int bench_fault(int argc, char** argv) {
  BenchArgs a;
  if (int rc = parse_args(argc, argv, &a); rc >= 0) return rc;
  BenchConfig c;
  if (prepare(a, &c) < 0) return 1;
  Samples s;
  std::vector<std::string> notes;
  auto runs = static_cast<unsigned>(a.runs);
  bool all_ran = run_probes(c, runs, &s, &notes);
  BenchReport report{&c, runs, &s, notes};
  if (a.json)
    print_json(stdout, report);
  else
    print_text(stdout, report);
  return all_ran ? 0 : 1;
}

}  // namespace mtier::tools
