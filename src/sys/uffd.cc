// SPDX-License-Identifier: Apache-2.0
#include "sys/uffd.h"
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier::sys {
namespace {

int ioctl_errno(int fd, unsigned long req, void* arg) {
  return ioctl(fd, req, arg) == 0 ? 0 : -errno;
}

int open_raw() {
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd >= 0) return fd;
  int err = errno;
  int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
  if (dev < 0) return -err;
  fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
  err = errno;
  close(dev);
  return fd >= 0 ? fd : -err;
}

}  // namespace

int uffd_open(uint64_t wanted, uint64_t* got) {
  // Probe what the kernel offers, then open again asking for the overlap:
  // UFFDIO_API may only be called once per fd.
  int probe = open_raw();
  if (probe < 0) return probe;
  struct uffdio_api api = {};
  api.api = UFFD_API;
  int rc = ioctl_errno(probe, UFFDIO_API, &api);
  close_fd(probe);
  if (rc < 0) return rc;
  int fd = open_raw();
  if (fd < 0) return fd;
  struct uffdio_api req = {};
  req.api = UFFD_API;
  req.features = wanted & api.features;
  rc = ioctl_errno(fd, UFFDIO_API, &req);
  if (rc < 0) {
    close_fd(fd);
    return rc;
  }
  if (got) *got = api.features;
  return adopt_fd(fd);
}

int uffd_register(int fd, void* addr, size_t len, uint64_t modes) {
  struct uffdio_register reg = {};
  reg.range.start = reinterpret_cast<uintptr_t>(addr);
  reg.range.len = len;
  reg.mode = modes;
  return ioctl_errno(fd, UFFDIO_REGISTER, &reg);
}

int uffd_unregister(int fd, void* addr, size_t len) {
  struct uffdio_range r = {reinterpret_cast<uintptr_t>(addr), len};
  return ioctl_errno(fd, UFFDIO_UNREGISTER, &r);
}

int uffd_copy(int fd, void* dst, const void* src, size_t len, bool wp, bool dontwake) {
  struct uffdio_copy c = {};
  c.dst = reinterpret_cast<uintptr_t>(dst);
  c.src = reinterpret_cast<uintptr_t>(src);
  c.len = len;
  c.mode = (wp ? UFFDIO_COPY_MODE_WP : 0) | (dontwake ? UFFDIO_COPY_MODE_DONTWAKE : 0);
  return ioctl_errno(fd, UFFDIO_COPY, &c);
}

int uffd_continue(int fd, void* addr, size_t len, bool wp, bool dontwake) {
  struct uffdio_continue c = {};
  c.range.start = reinterpret_cast<uintptr_t>(addr);
  c.range.len = len;
  c.mode = (wp ? UFFDIO_CONTINUE_MODE_WP : 0) | (dontwake ? UFFDIO_CONTINUE_MODE_DONTWAKE : 0);
  return ioctl_errno(fd, UFFDIO_CONTINUE, &c);
}

int uffd_writeprotect(int fd, void* addr, size_t len, bool protect, bool dontwake) {
  struct uffdio_writeprotect w = {};
  w.range.start = reinterpret_cast<uintptr_t>(addr);
  w.range.len = len;
  w.mode = (protect ? UFFDIO_WRITEPROTECT_MODE_WP : 0) |
           (dontwake ? UFFDIO_WRITEPROTECT_MODE_DONTWAKE : 0);
  return ioctl_errno(fd, UFFDIO_WRITEPROTECT, &w);
}

int uffd_wake(int fd, void* addr, size_t len) {
  struct uffdio_range r = {reinterpret_cast<uintptr_t>(addr), len};
  return ioctl_errno(fd, UFFDIO_WAKE, &r);
}

int uffd_poison(int fd, void* addr, size_t len) {
  struct uffdio_poison p = {};
  p.range.start = reinterpret_cast<uintptr_t>(addr);
  p.range.len = len;
  return ioctl_errno(fd, UFFDIO_POISON, &p);
}

int uffd_probe_continue_wp(int fd) {
  int mfd = memfd_create("mtier-probe", MFD_CLOEXEC);
  if (mfd < 0) return -errno;
  char page[kPageSize] = {1};
  void* addr = MAP_FAILED;
  int rc = pwrite(mfd, page, sizeof page, 0) == sizeof page ? 0 : -EIO;  // in the page cache
  if (rc == 0) {
    // map_shared: not populated even under mlockall(MCL_FUTURE), which would
    // map the page and make the CONTINUE below find it there (EEXIST).
    void* p = map_shared(mfd, kPageSize);
    if (p) addr = p;
    else rc = -errno;
  }
  if (rc == 0)
    rc = uffd_register(fd, addr, kPageSize, UFFDIO_REGISTER_MODE_MINOR | UFFDIO_REGISTER_MODE_WP);
  if (rc == 0) {
    int c = uffd_continue(fd, addr, kPageSize, true);
    rc = c == 0 ? 1 : c == -EINVAL ? 0 : c;
    (void)uffd_unregister(fd, addr, kPageSize);
  }
  if (addr != MAP_FAILED) munmap(addr, kPageSize);
  close(mfd);
  return rc;
}

long uffd_read(int fd, struct uffd_msg* msgs, size_t n) {
  ssize_t got = read(fd, msgs, n * sizeof(*msgs));
  if (got < 0) return errno == EAGAIN ? 0 : -errno;
  return got / static_cast<long>(sizeof(*msgs));
}

int poll_fds(struct pollfd* fds, size_t n, int timeout_ms) {
  int rc = poll(fds, static_cast<nfds_t>(n), timeout_ms);
  return rc < 0 ? -errno : rc;
}

Uffd::~Uffd() = default;

int Uffd::copy(void* dst, const void* src, size_t len, bool wp, bool dontwake) {
  return uffd_copy(fd_, dst, src, len, wp, dontwake);
}
int Uffd::cont(void* addr, size_t len, bool wp) { return uffd_continue(fd_, addr, len, wp); }
int Uffd::writeprotect(void* addr, size_t len, bool protect) {
  return uffd_writeprotect(fd_, addr, len, protect);
}
int Uffd::wake(void* addr, size_t len) { return uffd_wake(fd_, addr, len); }
int Uffd::poison(void* addr, size_t len) { return uffd_poison(fd_, addr, len); }
long Uffd::read(struct uffd_msg* msgs, size_t n) { return uffd_read(fd_, msgs, n); }
int Uffd::wait(struct pollfd* fds, size_t n, int timeout_ms) { return poll_fds(fds, n, timeout_ms); }

}  // namespace mtier::sys
