// SPDX-License-Identifier: Apache-2.0
// mtier bench fault: the per-page cost of every fault path (bare UFFDIO_COPY,
// first touch, PMem and file-store fetch, sampling MINOR fault), eviction
// throughput to each store, the read-around, the device's own QD32 figure and the
// sampler's overhead, all in one run so that ratios compare like with like on
// a noisy machine. A benchmark, not a test: goals are printed as PASS/MISS
// and the exit status only says whether every probe could run.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench_probes.h"

namespace mtier::tools::bench {
namespace {

struct Probe {
  const char* what;
  int (*run)(BenchConfig&, Samples*);
};

const Probe kProbes[] = {
    {"bare UFFDIO_COPY round trip", probe_bare_copy},
    {"engine + file store: first touch, MINOR fault, eviction, fetch", probe_file_engine},
    {"engine + PMem store: eviction, fetch", probe_pmem_engine},
    {"engine + file store: read-around", probe_read_around},
    {"device QD32 4 KiB random write and read", probe_device},
    {"placement ahead (COPY, CONTINUE, page cache) and the SIGBUS round trip", probe_placement},
    {"page checksum (crc32c)", probe_checksum},
    {"unmapping a page: dirty or clean, one call each or 64 a call", probe_unmap},
};

struct RunState {
  std::set<std::string> unavailable;  // probes skipped after their first -ENOTSUP
  std::vector<std::string> notes;
  bool failed = false;
};

// Records a probe's outcome. One the build or machine cannot run (-ENOTSUP:
// no libpmem2) is a note, not a failure, and is not retried in later runs.
void record(const char* what, int rc, RunState* st) {
  if (rc == 0) return;
  std::string line = std::string(what) + ": " + strerror(-rc);
  fprintf(stderr, "mtier bench fault: %s\n", line.c_str());
  if (rc == -ENOTSUP) {
    st->unavailable.insert(what);
    st->notes.push_back(line + " (not measured)");
    return;
  }
  line += " (failed)";
  if (std::find(st->notes.begin(), st->notes.end(), line) == st->notes.end())
    st->notes.push_back(line);
  st->failed = true;
}

// One run: every probe, then the sampler workload off and on, their order
// alternating run by run so that drift over time does not favour one side.
void run_once(unsigned run, unsigned runs, BenchConfig& c, Samples* s, RunState* st) {
  for (const Probe& p : kProbes) {
    if (st->unavailable.count(p.what)) continue;
    fprintf(stderr, "mtier bench fault: run %u/%u: %s\n", run + 1, runs, p.what);
    record(p.what, p.run(c, s), st);
  }
  for (int k = 0; k < 2; k++) {
    bool on = (k == 1) != (run % 2 == 1);
    const char* what = on ? "sampler workload, scan_rate default" : "sampler workload, scan_rate 0";
    fprintf(stderr, "mtier bench fault: run %u/%u: %s (%.0f s)\n", run + 1, runs, what,
            kWorkloadSeconds);
    record(what, probe_sampler(c, on, s), st);
  }
}

}  // namespace

bool run_probes(BenchConfig& c, unsigned runs, Samples* s, std::vector<std::string>* notes) {
  RunState st;
  for (unsigned r = 0; r < runs; r++) run_once(r, runs, c, s, &st);
  *notes = std::move(st.notes);
  return !st.failed;
}

}  // namespace mtier::tools::bench
