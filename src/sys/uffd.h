// SPDX-License-Identifier: Apache-2.0
// Thin userfaultfd layer: every call returns 0 (or a count) or -errno.
// Constants newer than the 6.1 kernel headers are defined here
// (docs/architecture.md, "Platform facts").
#pragma once
#include <linux/userfaultfd.h>
#include <poll.h>
#include <cstddef>
#include <cstdint>

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1 << 16)
#endif
#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif
#ifndef _UFFDIO_POISON
#define _UFFDIO_POISON (0x08)
struct uffdio_poison {
  struct uffdio_range range;
#define UFFDIO_POISON_MODE_DONTWAKE ((__u64)1 << 0)
  __u64 mode;
  __s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

namespace mtier::sys {

// Opens a userfaultfd (syscall, then /dev/userfaultfd) and negotiates the API
// with `wanted` features; `*got` receives what the kernel offers.
// Returns the fd or -errno.
[[nodiscard]] int uffd_open(uint64_t wanted, uint64_t* got);
// Registers [addr, addr+len) with the given UFFDIO_REGISTER_MODE_* bits.
[[nodiscard]] int uffd_register(int fd, void* addr, size_t len, uint64_t modes);
[[nodiscard]] int uffd_unregister(int fd, void* addr, size_t len);
// Copies len bytes from src to dst (page aligned) and wakes the faulters
// unless `dontwake`; `wp` maps the page write-protected. -EEXIST if present.
[[nodiscard]] int uffd_copy(int fd, void* dst, const void* src, size_t len, bool wp,
                            bool dontwake = false);
// Maps the page-cache pages already in the file behind [addr, addr+len).
[[nodiscard]] int uffd_continue(int fd, void* addr, size_t len, bool wp,
                                bool dontwake = false);
// Sets (protect) or clears write protection on [addr, addr+len).
[[nodiscard]] int uffd_writeprotect(int fd, void* addr, size_t len, bool protect,
                                    bool dontwake = false);
// Wakes threads waiting on faults in [addr, addr+len).
[[nodiscard]] int uffd_wake(int fd, void* addr, size_t len);
// Installs a poison marker: the access gets SIGBUS (kernel >= 6.6).
[[nodiscard]] int uffd_poison(int fd, void* addr, size_t len);
// Whether UFFDIO_CONTINUE accepts UFFDIO_CONTINUE_MODE_WP on shmem (Linux
// 6.3; 6.1 refuses it with EINVAL). Probed on a one-page memfd of its own,
// registered on `fd` for the duration. Returns 1, 0, or -errno.
[[nodiscard]] int uffd_probe_continue_wp(int fd);
// Reads up to n messages without blocking. Returns the count, 0 if none.
[[nodiscard]] long uffd_read(int fd, struct uffd_msg* msgs, size_t n);
// poll(2) on fds[0, n), for at most timeout_ms (-1: no limit). Returns the
// count ready (0: timed out) or -errno (-EINTR included).
[[nodiscard]] int poll_fds(struct pollfd* fds, size_t n, int timeout_ms = -1);

// The calls the engine's threads make on a registered userfaultfd, behind
// one object: the seam under the fault path. The real one forwards to the
// functions above on its descriptor; a test derives from it to return
// EEXIST, EAGAIN or any error, or to record the calls, without a kernel.
// Does not own the descriptor (the engine opens and closes it).
class Uffd {
 public:
  explicit Uffd(int fd) : fd_(fd) {}
  virtual ~Uffd();
  Uffd(const Uffd&) = delete;
  Uffd& operator=(const Uffd&) = delete;

  int fd() const { return fd_; }
  [[nodiscard]] virtual int copy(void* dst, const void* src, size_t len, bool wp, bool dontwake);
  [[nodiscard]] virtual int cont(void* addr, size_t len, bool wp);
  [[nodiscard]] virtual int writeprotect(void* addr, size_t len, bool protect);
  [[nodiscard]] virtual int wake(void* addr, size_t len);
  [[nodiscard]] virtual int poison(void* addr, size_t len);
  [[nodiscard]] virtual long read(struct uffd_msg* msgs, size_t n);
  // The handler thread's wait: poll_fds() on fds[0, n) for at most
  // timeout_ms (-1: no limit), fds[0] being this userfaultfd and the rest
  // the thread's own eventfds and its forked children's descriptors.
  [[nodiscard]] virtual int wait(struct pollfd* fds, size_t n, int timeout_ms);

 private:
  int fd_;
};

}  // namespace mtier::sys
