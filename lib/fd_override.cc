// SPDX-License-Identifier: Apache-2.0
// close, close_range, closefrom, dup2 and dup3, interposed: a program that
// closes "all" its descriptors (daemonising code, launchers, Python's
// os.closerange) leaves mtier's own alone (sys/runtime_fds.h), so that its
// tables keep their data - closing the userfaultfd, the memfd or a store
// turned every evicted page into zeros. The program's call does the rest as
// it asked, and a close of one of mtier's descriptors succeeds as a close
// of a descriptor that is not the program's business would (it stays
// open). A dup2 or dup3 onto one of them fails with EBUSY after one line:
// the runtime cannot give it up. The runtime's own calls, a forked child's
// (its copies are not needed after it attached) and descriptors mtier does
// not hold pass through untouched.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "interposer_state.h"
#include "log/log.h"
#include "sys/runtime_fds.h"
#include "util/runtime_scope.h"

#define MTIER_OVERRIDE extern "C" __attribute__((visibility("default")))

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace {

// Whether fd is mtier's and the caller the program's.
bool guarded(int fd) {
  return mtier::sys::is_runtime_fd(fd) && !mtier::in_runtime() && !mtier::lib::state().child;
}

int raw_close_range(unsigned first, unsigned last, unsigned flags) {
  return static_cast<int>(syscall(SYS_close_range, first, last, flags));
}

// close_range over [first, last] but mtier's descriptors: the gaps between
// them, each with the caller's flags. 0, or -1 with errno of the first
// failure.
int close_range_around(unsigned first, unsigned last, unsigned flags) {
  int rc = 0;
  for (unsigned lo = first; lo <= last;) {
    int next = mtier::sys::next_runtime_fd(static_cast<int>(lo > 0x7fffffffu ? 0x7fffffffu : lo));
    bool inside = next >= 0 && static_cast<unsigned>(next) <= last;
    unsigned hi = inside ? static_cast<unsigned>(next) - 1 : last;
    if (!inside || static_cast<unsigned>(next) > lo)
      if (raw_close_range(lo, hi, flags) != 0 && rc == 0) rc = -1;
    if (!inside) break;
    lo = static_cast<unsigned>(next) + 1;
    if (lo == 0) break;  // wrapped past the top
  }
  return rc;
}

void say_refused(const char* call, int fd) {
  static std::atomic<int> said{0};
  if (said.fetch_add(1, std::memory_order_relaxed) < 4)
    MTIER_LOG_WARN("%s onto descriptor %d: mtier holds it for its tables (moved above %d to keep "
                   "clear of the program's); refused with EBUSY", call, fd,
                   mtier::sys::runtime_fd_floor());
}

}  // namespace

MTIER_OVERRIDE int close(int fd) {
  if (guarded(fd)) return 0;
  if (mtier::in_runtime()) mtier::sys::forget_fd(fd);
  return static_cast<int>(syscall(SYS_close, fd));
}

MTIER_OVERRIDE int close_range(unsigned first, unsigned last, int flags) {
  if (mtier::in_runtime() || mtier::lib::state().child || first > last)
    return raw_close_range(first, last, static_cast<unsigned>(flags));
  return close_range_around(first, last, static_cast<unsigned>(flags));
}

MTIER_OVERRIDE void closefrom(int lowfd) {
  if (lowfd < 0) lowfd = 0;
  (void)close_range(static_cast<unsigned>(lowfd), ~0u, 0);
}

MTIER_OVERRIDE int dup2(int oldfd, int newfd) {
  if (oldfd != newfd && guarded(newfd)) {
    say_refused("dup2", newfd);
    errno = EBUSY;
    return -1;
  }
  return static_cast<int>(syscall(SYS_dup2, oldfd, newfd));
}

MTIER_OVERRIDE int dup3(int oldfd, int newfd, int flags) {
  if (oldfd != newfd && guarded(newfd)) {
    say_refused("dup3", newfd);
    errno = EBUSY;
    return -1;
  }
  return static_cast<int>(syscall(SYS_dup3, oldfd, newfd, flags));
}
