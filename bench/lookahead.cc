// SPDX-License-Identifier: Apache-2.0
#include "lookahead.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "mtier.h"
#include "sys/page_size.h"

namespace mtier::bench {
namespace {

constexpr uintptr_t kPage = kPageSize;

}  // namespace

Lookahead::Lookahead(const Trace& t, const std::vector<float*>& base, Backing backing, unsigned k,
                     bool async)
    : t_(t), base_(base), backing_(backing), k_(backing == Backing::kMalloc ? 0 : k), async_(async) {
  // One process_madvise call takes up to IOV_MAX ranges: a scattered batch
  // is thousands of ranges, and a syscall each costs more than the advice
  // on pages already resident. Without it (old kernel, seccomp): madvise.
  if (k_ && backing_ != Backing::kMtier && getenv("MTIER_BENCH_NO_PROCESS_MADVISE") == nullptr)
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
}

Lookahead::~Lookahead() {
  if (pidfd_ >= 0) close(pidfd_);
}

void Lookahead::before_batch(size_t i) {
  if (k_ == 0) return;
  if (backing_ == Backing::kMtier) {
    // Releases the pins of the batches already run: their pages may go.
    if (mtier_prefetch_advance(i) < 0) errors_++;
  }
  // Batch 0 has no earlier batch to be hinted before; batches 1..K enter the
  // window together before it, then one batch (i + K) before each.
  size_t n = t_.batches.size();
  for (size_t j = i == 0 ? 1 : i + k_; j <= i + k_ && j < n; j++) hint(j);
  if (async_) wait_for(i);
}

void Lookahead::hint(size_t batch) {
  if (backing_ == Backing::kMtier) hint_mtier(batch);
  else hint_kernel(batch);
}

// One call per table: table t's bags are one contiguous run of the batch's
// row ids (bags are stored table by table).
void Lookahead::hint_mtier(size_t batch) {
  const TraceBatch& b = t_.batches[batch];
  uint32_t per_table = t_.spec.batch;
  for (size_t t = 0; t < t_.spec.tables.size(); t++) {
    uint32_t lo = b.offsets[t * per_table], hi = b.offsets[(t + 1) * per_table];
    if (lo == hi) continue;
    size_t row_bytes = size_t(t_.spec.tables[t].dim) * sizeof(float);
    // The backward pass updates every row it looked up: named for writing.
    long rc = mtier_prefetch_rows(base_[t], row_bytes, &b.rows[lo], hi - lo, sizeof(uint32_t), batch,
                                  MTIER_PREFETCH_WRITE | (async_ ? MTIER_PREFETCH_ASYNC : 0));
    calls_++;
    pages_ += hi - lo;
    if (rc < 0) errors_++;
    else if (async_ && rc > 0) tickets_.emplace_back(batch, rc);  // 0: nothing to wait for
  }
}

// Every page a row of the batch touches (a row may straddle two), sorted
// and deduplicated, then one madvise per run of adjacent pages.
void Lookahead::hint_kernel(size_t batch) {
  const TraceBatch& b = t_.batches[batch];
  uint32_t per_table = t_.spec.batch;
  scratch_.clear();
  for (size_t t = 0; t < t_.spec.tables.size(); t++) {
    uintptr_t row_bytes = uintptr_t(t_.spec.tables[t].dim) * sizeof(float);
    auto base = reinterpret_cast<uintptr_t>(base_[t]);
    for (uint32_t k = b.offsets[t * per_table]; k < b.offsets[(t + 1) * per_table]; k++) {
      uintptr_t first = base + uintptr_t(b.rows[k]) * row_bytes;
      for (uintptr_t p = first & ~(kPage - 1); p < first + row_bytes; p += kPage) scratch_.push_back(p);
    }
  }
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  pages_ += scratch_.size();
  ranges_.clear();
  for (size_t s = 0; s < scratch_.size();) {
    size_t e = s + 1;
    while (e < scratch_.size() && scratch_[e] == scratch_[e - 1] + kPage) e++;
    ranges_.push_back({reinterpret_cast<void*>(scratch_[s]), (e - s) * kPage});
    s = e;
  }
  advise(ranges_);
}

void Lookahead::advise(const std::vector<struct iovec>& ranges) {
  constexpr size_t kIovMax = 1024;  // UIO_MAXIOV
  size_t done = 0;
  while (pidfd_ >= 0 && done < ranges.size()) {
    size_t n = std::min(kIovMax, ranges.size() - done);
    calls_++;
    if (syscall(SYS_process_madvise, pidfd_, &ranges[done], n, MADV_WILLNEED, 0) < 0) {
      // Not supported here (ENOSYS, EINVAL, EPERM): madvise from now on,
      // starting with this chunk (advice is idempotent).
      close(pidfd_);
      pidfd_ = -1;
      break;
    }
    done += n;
  }
  for (; done < ranges.size(); done++) {
    calls_++;
    if (madvise(ranges[done].iov_base, ranges[done].iov_len, MADV_WILLNEED) < 0) errors_++;
  }
}

// Async mtier hints: the batch about to run waits for its own reads (they
// overlapped the batches before it), so that it does not fault on pages
// still in flight.
void Lookahead::wait_for(size_t batch) {
  while (!tickets_.empty() && tickets_.front().first <= batch) {
    if (mtier_prefetch_wait(tickets_.front().second, -1) < 0) errors_++;
    tickets_.pop_front();
  }
}

}  // namespace mtier::bench
