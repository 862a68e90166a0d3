// SPDX-License-Identifier: Apache-2.0
// Thin io_uring layer (liburing): one ring, owned by one thread at a time.
// Every int result is 0 (or a count) or -errno.
#pragma once
#include <liburing.h>
#include <sys/uio.h>

#include <cstdint>

namespace mtier::sys {

struct UringCompletion {
  uint64_t user_data;
  int res;  // bytes transferred or -errno
};

// Virtual so that tests can inject completion and submission errors.
class Uring {
 public:
  Uring() = default;
  virtual ~Uring();
  Uring(const Uring&) = delete;
  Uring& operator=(const Uring&) = delete;

  // Sets up a ring of `depth` submission entries (CQ twice that).
  [[nodiscard]] virtual int init(unsigned depth);
  bool ready() const { return ready_; }
  // Registers n buffers; fixed I/O then names one by its index.
  [[nodiscard]] virtual int register_buffers(const struct iovec* iov, unsigned n);
  // Queues a read (write) of len bytes at offset off of fd into (from) buf.
  // fixed_index >= 0 uses that registered buffer (READ_FIXED/WRITE_FIXED).
  // Returns 0, or -EBUSY when the submission queue is full.
  [[nodiscard]] virtual int prep_read(int fd, void* buf, unsigned len, uint64_t off,
                                      int fixed_index, uint64_t user_data);
  [[nodiscard]] virtual int prep_write(int fd, const void* buf, unsigned len, uint64_t off,
                                       int fixed_index, uint64_t user_data);
  // Submits what is queued and waits for at least wait_nr completions.
  // Returns the number submitted or -errno.
  [[nodiscard]] virtual int submit_and_wait(unsigned wait_nr);
  // Takes up to max completions that are ready, without blocking. Returns the count.
  virtual unsigned reap(UringCompletion* out, unsigned max);

 private:
  struct io_uring ring_ = {};
  bool ready_ = false;
};

}  // namespace mtier::sys
