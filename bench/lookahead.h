// SPDX-License-Identifier: Apache-2.0
// The replayer's lookahead: before batch i it names the pages that batches
// i+1..i+K will read to the memory below the tables, each batch once, when
// it enters the window. A training loop knows its next batches (the data
// loader has them), so this is what a trainer could do too.
//
// mtier: mtier_prefetch_advance(i), then mtier_prefetch_rows per table and
// batch (the batch's row ids, batch number = its index): mtier reads the
// missing pages at the store's queue depth and pins them until the window
// passes them. The kernel backings (a MAP_SHARED file, anonymous memory
// under swap): madvise(MADV_WILLNEED) on the batch's pages, deduplicated
// and coalesced into ranges of adjacent pages, up to 1024 ranges in one
// process_madvise (measured on the tiny preset, all resident: 9 calls and
// no measurable cost, against 3761 madvise calls that doubled the replay;
// MTIER_BENCH_NO_PROCESS_MADVISE=1 forces madvise, to compare). malloc:
// nothing to hint.
//
// Hints are advisory: a call that fails is counted (errors()) and the
// replay goes on with demand faults; the data is never affected.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <sys/uio.h>
#include <vector>

#include "replayer.h"
#include "trace.h"

namespace mtier::bench {

class Lookahead {
 public:
  // `base[t]` is table t's first row (as the replayer placed it); `k` the
  // window in batches (0: off); `async`: mtier's MTIER_PREFETCH_ASYNC form,
  // each batch's tickets waited for just before that batch runs.
  Lookahead(const Trace& t, const std::vector<float*>& base, Backing backing, unsigned k, bool async);
  ~Lookahead();
  Lookahead(const Lookahead&) = delete;
  Lookahead& operator=(const Lookahead&) = delete;

  // Call before batch i runs, for i = 0, 1, ... in order.
  void before_batch(size_t i);

  uint64_t calls() const { return calls_; }    // hint calls made (API calls, (process_)madvise calls)
  uint64_t pages() const { return pages_; }    // kernel: distinct pages named; mtier: row ids named
  uint64_t errors() const { return errors_; }  // calls that failed (and waits that did)

 private:
  void hint(size_t batch);
  void hint_mtier(size_t batch);
  void hint_kernel(size_t batch);
  void wait_for(size_t batch);

  const Trace& t_;
  const std::vector<float*>& base_;
  Backing backing_;
  unsigned k_;
  bool async_;
  void advise(const std::vector<struct iovec>& ranges);

  std::vector<uintptr_t> scratch_;  // page addresses of one batch (kept: no reallocation per batch)
  std::vector<struct iovec> ranges_;  // their runs of adjacent pages
  int pidfd_ = -1;                  // this process, for process_madvise; -1: one madvise per range
  std::deque<std::pair<size_t, long>> tickets_;  // (batch, ticket) of async mtier hints, oldest first
  uint64_t calls_ = 0, pages_ = 0, errors_ = 0;
};

}  // namespace mtier::bench
