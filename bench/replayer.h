// SPDX-License-Identifier: Apache-2.0
// The replayer: executes a trace as an embedding-bag forward pass (gather
// and sum each bag's rows) and backward pass (an SGD update of the same
// rows) on tables placed in memory of one kind, and measures it.
//
// The arithmetic is fixed: loss = 0.5 * |out|^2 summed over bags and
// averaged over the batch's samples, so the gradient of a bag's output is
// out / batch and each looked-up row takes row -= (lr / batch) * out(bag)
// (averaging keeps the hottest rows, hit hundreds of times a batch, from
// growing without bound). Threads split the forward by bags and the
// backward by row ownership (a row is updated by one thread, in trace
// order), so losses and final tables are bit-identical for any thread count
// and any memory: the checksums prove that data survived every migration.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trace.h"

#include "util/json.h"

namespace mtier::bench {

enum class Backing {
  kMalloc,  // aligned_alloc: all in DRAM, no mtier (the upper bound)
  kMtier,   // one mtier table per embedding table (mtier_table_create)
  kFile,    // the kernel page cache: a file mapped MAP_SHARED
  kAnon,    // anonymous private memory (kernel swap under a cgroup limit)
};
const char* backing_name(Backing b);
// "malloc", "mtier", "file", "anon"; false when unknown.
bool parse_backing(const std::string& s, Backing* out);

struct ReplayOptions {
  Backing backing = Backing::kMalloc;
  unsigned threads = 1;
  float lr = 0.01f;
  std::string file_path;      // kFile: the backing file (created, removed after)
  bool madv_random = false;   // kFile, kAnon: MADV_RANDOM on the tables
  std::string mtier_options;  // kMtier: passed to mtier_init ("name=value,...")
  // Before batch i, hint the pages of batches i+1..i+lookahead (0: off;
  // ignored by kMalloc); see lookahead.h. The hints are timed with the
  // replay. lookahead_async: mtier's asynchronous form.
  unsigned lookahead = 0;
  bool lookahead_async = false;
  // Told after each batch (batches done, of the trace's), on the replay's
  // first thread, inside the timed replay: for a progress line, so cheap.
  std::function<void(uint64_t done, uint64_t total)> on_batch;
};

struct ReplayResult {
  uint64_t batches = 0, lookups = 0;  // executed (the whole trace when complete)
  double init_seconds = 0;   // allocating and initialising the tables
  double seconds = 0;        // replaying the trace
  double lookups_per_second() const { return seconds > 0 ? lookups / seconds : 0; }
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;  // per-batch latency
  double loss = 0;           // sum of every batch's loss (bit-exact across backings)
  uint64_t checksum = 0;     // FNV-1a of every table's bytes at the end
  // Deltas over the replay only (not init):
  uint64_t major_faults = 0;    // getrusage: faults that waited for I/O
  uint64_t read_bytes = 0, write_bytes = 0;  // /proc/self/io (block I/O of this process)
  uint64_t swap_in_pages = 0, swap_out_pages = 0;  // /proc/vmstat (machine-wide)
  uint64_t mtier_misses = 0;    // mtier: MISSING faults (pages not in memory)
  uint64_t mtier_fetched_pages = 0, mtier_written_pages = 0;  // store reads (incl. prefetch), write-backs
  // mtier: faults on resident pages, each a round trip through the handler:
  // accesses the CLOCK sampled (zapped PTEs) and first writes to clean pages.
  uint64_t mtier_minor_faults = 0, mtier_wp_faults = 0;
  uint64_t peak_rss_bytes = 0;  // getrusage ru_maxrss of the whole run
  // Lookahead (0 when off):
  uint64_t hint_calls = 0, hint_pages = 0, hint_errors = 0;  // see Lookahead
  uint64_t mtier_prefetch_reads = 0, mtier_prefetch_hits = 0;  // mtier_stats deltas
  uint64_t mtier_window_overflows = 0;
};

// --lookahead's largest value, in batches (a wider window pins more than a
// budget holds); 0 is off.
inline constexpr unsigned kMaxLookahead = 64;

// Replays `t`. Returns 0 or -errno with a reason in *err (a table that could
// not be allocated, mtier not starting, the backing file not created).
int replay(const Trace& t, const ReplayOptions& o, ReplayResult* r, std::string* err);

// Formats a result as one line "key=value ..." and parses it back (the
// suite runs each configuration in a child process and reads this line).
std::string format_result(const ReplayResult& r);
bool parse_result(const std::string& line, ReplayResult* r);
// The same fields as members of the object `j` has open (the keys of
// format_result, and lookups_per_second): counts as integers, times as
// numbers, except loss, a string of its exact value in C's %a notation, and
// checksum, 16 hex digits (both as `mtier bench suite --json` gives them).
void write_result_json(json::Json& j, const ReplayResult& r);

}  // namespace mtier::bench
