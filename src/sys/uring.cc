// SPDX-License-Identifier: Apache-2.0
#include "sys/uring.h"
#include "sys/runtime_fds.h"

#include <cerrno>

namespace mtier::sys {

Uring::~Uring() {
  if (!ready_) return;
  forget_fd(ring_.ring_fd);
  io_uring_queue_exit(&ring_);
}

int Uring::init(unsigned depth) {
  if (ready_) return -EBUSY;
  int rc = io_uring_queue_init(depth, &ring_, 0);
  if (rc < 0) return rc;
  // Moved above the floor like the runtime's other descriptors; liburing
  // enters the ring through enter_ring_fd, the same descriptor unless the
  // ring fd was registered (it is not).
  int moved = adopt_fd(ring_.ring_fd);
  ring_.enter_ring_fd = ring_.ring_fd = moved;
  ready_ = true;
  return 0;
}

int Uring::register_buffers(const struct iovec* iov, unsigned n) {
  return io_uring_register_buffers(&ring_, iov, n);
}

int Uring::prep_read(int fd, void* buf, unsigned len, uint64_t off, int fixed_index,
                     uint64_t user_data) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return -EBUSY;
  if (fixed_index >= 0)
    io_uring_prep_read_fixed(sqe, fd, buf, len, off, fixed_index);
  else
    io_uring_prep_read(sqe, fd, buf, len, off);
  io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(static_cast<uintptr_t>(user_data)));
  return 0;
}

int Uring::prep_write(int fd, const void* buf, unsigned len, uint64_t off, int fixed_index,
                      uint64_t user_data) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return -EBUSY;
  if (fixed_index >= 0)
    io_uring_prep_write_fixed(sqe, fd, buf, len, off, fixed_index);
  else
    io_uring_prep_write(sqe, fd, buf, len, off);
  io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(static_cast<uintptr_t>(user_data)));
  return 0;
}

int Uring::submit_and_wait(unsigned wait_nr) { return io_uring_submit_and_wait(&ring_, wait_nr); }

unsigned Uring::reap(UringCompletion* out, unsigned max) {
  unsigned n = 0;
  struct io_uring_cqe* cqe = nullptr;
  while (n < max && io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe) {
    out[n].user_data = reinterpret_cast<uintptr_t>(io_uring_cqe_get_data(cqe));
    out[n].res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    ++n;
  }
  return n;
}

}  // namespace mtier::sys
