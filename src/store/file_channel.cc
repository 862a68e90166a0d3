// SPDX-License-Identifier: Apache-2.0
#include "store/file_channel.h"

#include <cerrno>
#include <cstring>

#include "log/log.h"

namespace mtier {
namespace {

constexpr int kPending = 1;           // ios[i].result while the I/O is in flight
constexpr int kSubmitRetries = 1000;  // transient io_uring_enter errors in a row
constexpr unsigned kIoRetries = 64;   // -EAGAIN/-EINTR completions per batch, plus n

bool transient(int err) { return err == -EAGAIN || err == -EINTR || err == -EBUSY; }

}  // namespace

struct FileChannel::Batch {
  StoreIo* ios;
  size_t n;
  bool write;
  size_t next = 0;  // first I/O not yet queued
  size_t done = 0;  // I/Os with a final result
  unsigned inflight = 0;
  size_t retries_left = 0;
  int first_err = 0;

  void finish(size_t i, int res) {
    ios[i].result = res;
    ++done;
    if (res < 0 && first_err == 0) first_err = res;
  }
};

int FileChannel::init(unsigned depth, const std::string& path) {
  path_ = path;
  int rc = bufs_.init(depth);
  if (rc == 0) rc = ring_->init(depth);
  if (rc < 0) {
    MTIER_LOG_ERROR("file store %s: cannot set up an io_uring channel of depth %u: %s",
                    path.c_str(), depth, strerror(-rc));
    return rc;
  }
  // One registered buffer over the whole block: a merged I/O (below) spans
  // several staging buffers, and a fixed I/O must lie within one.
  struct iovec iov = {bufs_.at(0), size_t{depth} * kStorePage};
  rc = ring_->register_buffers(&iov, 1);
  registered_ = rc == 0;
  if (rc < 0)
    MTIER_LOG_WARN(
        "file store %s: cannot register %u staging buffers with io_uring (%s): "
        "using unregistered I/O",
        path.c_str(), depth, strerror(-rc));
  cqes_.resize(depth);
  return 0;
}

int FileChannel::transfer(StoreIo* ios, size_t n, bool write) {
  Batch b{ios, n, write};
  b.retries_left = n + kIoRetries;
  if (broken_) abandon(&b, broken_);
  while (b.done < n) {
    fill(&b);
    int rc = b.inflight ? wait() : (b.done < n ? -EBUSY : 0);
    if (rc < 0) {
      abandon(&b, rc);
      break;
    }
    reap(&b);
  }
  return b.first_err;
}

// How many I/Os from i on go as one: consecutive slots in consecutive
// staging bytes (the evictor's fresh slots are handed out in order, and a
// front-to-back walk reads them back in order), up to kMaxMerge pages.
size_t FileChannel::mergeable(const Batch& b, size_t i) const {
  const StoreIo* ios = b.ios;
  size_t len = 1;
  while (i + len < b.n && len < kMaxMerge && ios[i + len].slot == ios[i].slot + len &&
         ios[i + len].slot < capacity_ &&
         static_cast<char*>(ios[i + len].buf) == static_cast<char*>(ios[i].buf) + len * kStorePage)
    ++len;
  return len;
}

// Queues I/Os until `depth` are in flight; out-of-range slots fail at once.
void FileChannel::fill(Batch* b) {
  while (b->next < b->n && b->inflight < depth()) {
    size_t i = b->next;
    if (b->ios[i].slot >= capacity_) {
      ++b->next;
      b->finish(i, -EINVAL);
      continue;
    }
    size_t len = mergeable(*b, i);
    if (queue(b, i, len) < 0) return;
    b->next += len;
    ++b->inflight;
  }
}

// Preps I/Os [i, i+len) as one transfer: fixed when its bytes lie in the
// registered staging block. The completion's user data is i and len.
int FileChannel::queue(Batch* b, size_t i, size_t len) {
  StoreIo& io = b->ios[i];
  int fixed = registered_ && bufs_.index_of(io.buf) >= 0 ? 0 : -1;
  uint64_t off = io.slot * kStorePage;
  auto bytes = static_cast<unsigned>(len * kStorePage);
  uint64_t data = i | (uint64_t{len} << 32);
  for (size_t k = 0; k < len; ++k) b->ios[i + k].result = kPending;
  if (b->write) return ring_->prep_write(fd_, io.buf, bytes, off, fixed, data);
  return ring_->prep_read(fd_, io.buf, bytes, off, fixed, data);
}

// Submits what is queued and waits for one completion, riding out transient errors.
int FileChannel::wait() {
  int rc = 0;
  for (int tries = 0; tries < kSubmitRetries; ++tries) {
    rc = ring_->submit_and_wait(1);
    if (rc >= 0 || !transient(rc)) break;
  }
  return rc < 0 ? rc : 0;
}

// Takes the completions that are ready: a transient error is queued again,
// a short transfer is -EIO.
void FileChannel::reap(Batch* b) {
  unsigned got = ring_->reap(cqes_.data(), static_cast<unsigned>(cqes_.size()));
  for (unsigned k = 0; k < got; ++k) {
    size_t i = cqes_[k].user_data & 0xffffffffu, len = cqes_[k].user_data >> 32;
    int res = cqes_[k].res;
    if ((res == -EAGAIN || res == -EINTR) && b->retries_left > 0) {
      --b->retries_left;
      if (queue(b, i, len) == 0) continue;
    }
    --b->inflight;
    // A merged transfer stands or falls as one: a short one fails all its pages.
    int r = res < 0 ? res : (res == static_cast<int>(len * kStorePage) ? 0 : -EIO);
    for (size_t j = 0; j < len; ++j) b->finish(i + j, r);
  }
}

// The ring failed (io_uring_enter with a non-transient error: a bug or a
// kernel fault): every I/O without a result gets err, and so does every later
// call. I/Os the kernel had already taken may still land in their buffers.
void FileChannel::abandon(Batch* b, int err) {
  if (!broken_)
    MTIER_LOG_ERROR("file store %s: io_uring failed (%s): channel disabled", path_.c_str(),
                    strerror(-err));
  broken_ = err;
  for (size_t i = 0; i < b->n; ++i)
    if (i >= b->next || b->ios[i].result == kPending) b->finish(i, err);
  b->next = b->n;
  b->inflight = 0;
}

}  // namespace mtier
