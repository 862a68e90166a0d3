// SPDX-License-Identifier: Apache-2.0
// The measurements behind `mtier bench fault`. Each probe runs once (one
// run), adds its figures to a Samples map and returns 0 or -errno. Probes
// that build an Engine build their own and destroy it before returning: an
// engine owns a region and a userfaultfd, so only one lives at a time.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench_timing.h"

namespace mtier::tools::bench {

// What a run measures and where, plus what the probes found out about the
// stores (for the report's config line).
struct BenchConfig {
  std::string dir;                   // directory for the file and PMem store files
  uint64_t pages = 0;                // pages per table (and per device pass)
  std::string fs;                    // filesystem of dir
  std::string file_mode, pmem_mode;  // Store::mode() of each store, once opened
  std::string checksum_impl;         // how the page checksum is computed, once measured
};

// Seconds of the DRAM-resident workload behind the sampler-overhead figure.
inline constexpr double kWorkloadSeconds = 2.0;
// The queue depth of the device figure and of the engine's batched I/O.
inline constexpr unsigned kDeviceDepth = 32;
// Adjacent pages the read-around probe asks the engine to fetch with a fault
// (prefetch_pages).
inline constexpr unsigned kReadAroundPages = 32;

// 1. Bare UFFDIO_COPY round trip on a private memfd: "bare.*".
int probe_bare_copy(BenchConfig& c, Samples* s);
// 2, 4, 5 and file eviction: "zero.*", "minor.*", "evict_file" (GiB/s),
// "fetch_file.*", through an engine whose only store is the file store.
int probe_file_engine(BenchConfig& c, Samples* s);
// 3 and PMem eviction: "evict_pmem" (GiB/s), "fetch_pmem.*". -ENOTSUP when
// the build has no libpmem2.
int probe_pmem_engine(BenchConfig& c, Samples* s);
// Sequential reads of an evicted table with the read-around: "prefetch" (GiB/s),
// "prefetch_share" (% of pages that came in ahead of their fault).
int probe_read_around(BenchConfig& c, Samples* s);
// The page checksum (crc32c) every page read from a store is verified
// with, over a buffer of `pages` pages larger than the caches, in page
// order: "checksum" (microseconds a page, the median of three passes).
int probe_checksum(BenchConfig& c, Samples* s);
// The device's QD32 4 KiB random-write and random-read throughput through a
// file-store channel: "dev_write_fresh" (into a new sparse file),
// "dev_write" (overwrite), "dev_read" (GiB/s), each also "<key>_kiops".
int probe_device(BenchConfig& c, Samples* s);
// Random 8-byte read-modify-writes over a resident table for
// kWorkloadSeconds, sampler on (default scan_rate) or off (0):
// "rw_on" / "rw_off" (million ops/s), "sampled_per_s" (MINOR faults/s, on).
int probe_sampler(BenchConfig& c, bool on, Samples* s);

// The ways to put a page in place, placed ahead and then accessed once:
// "place_copy", "place_continue", "place_fill" (placement + first access),
// and a missing fault served in the faulting thread's SIGBUS handler:
// "sigbus" (bench_placement.cc).
int probe_placement(BenchConfig& c, Samples* s);

// Dropping a page's mapping, as the evictor does before a write-back: a
// dirty or a clean entry, one madvise a page or 64 pages a process_madvise,
// another thread of the process running: "unmap_dirty_each",
// "unmap_dirty_vec", "unmap_clean_each", "unmap_clean_vec" (the _vec ones
// only where the kernel takes them), and "unmap_span": a 512-page span
// zapped at once and its non-victims mapped again (where userfaultfd
// serves MINOR faults; bench_unmap.cc).
int probe_unmap(BenchConfig& c, Samples* s);

// `runs` runs of every probe above, then the sampler workload off and on,
// their order alternating run by run, with progress on stderr
// (bench_fault.cc). A probe that fails is printed and noted in *notes; one
// the build or machine cannot run (-ENOTSUP) is noted and not retried.
// True when every probe that could run did.
[[nodiscard]] bool run_probes(BenchConfig& c, unsigned runs, Samples* s,
                              std::vector<std::string>* notes);

}  // namespace mtier::tools::bench
