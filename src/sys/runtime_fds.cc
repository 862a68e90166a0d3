// SPDX-License-Identifier: Apache-2.0
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace mtier::sys {
namespace {

constexpr int kMaxFd = 65536;
constexpr int kWordBits = 64;
std::atomic<uint64_t> g_bits[kMaxFd / kWordBits];

void set(int fd, bool on) {
  if (fd < 0 || fd >= kMaxFd) return;
  uint64_t bit = uint64_t{1} << (fd % kWordBits);
  if (on) g_bits[fd / kWordBits].fetch_or(bit, std::memory_order_acq_rel);
  else g_bits[fd / kWordBits].fetch_and(~bit, std::memory_order_acq_rel);
}

}  // namespace

int runtime_fd_floor() {
  static const int floor = [] {
    struct rlimit r;
    long soft = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY
                    ? static_cast<long>(r.rlim_cur) : 1024;
    long f = soft / 2;
    if (f > 512) f = 512;
    if (f < 3) f = 3;
    return static_cast<int>(f);
  }();
  return floor;
}

int adopt_fd(int fd) {
  if (fd < 0) return fd;
  if (fd < runtime_fd_floor()) {
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, runtime_fd_floor());
    if (moved >= 0) {
      (void)syscall(SYS_close, fd);
      fd = moved;
    }
  }
  set(fd, true);
  return fd;
}

void note_fd(int fd) { set(fd, true); }

int close_fd(int fd) {
  set(fd, false);
  return syscall(SYS_close, fd) == 0 ? 0 : -errno;
}

void forget_fd(int fd) { set(fd, false); }

bool is_runtime_fd(int fd) {
  if (fd < 0 || fd >= kMaxFd) return false;
  return g_bits[fd / kWordBits].load(std::memory_order_acquire) >> (fd % kWordBits) & 1;
}

int next_runtime_fd(int from) {
  if (from < 0) from = 0;
  for (int w = from / kWordBits; w < kMaxFd / kWordBits; w++) {
    uint64_t bits = g_bits[w].load(std::memory_order_acquire);
    if (w == from / kWordBits) bits &= ~uint64_t{0} << (from % kWordBits);
    if (bits) return w * kWordBits + __builtin_ctzll(bits);
  }
  return -1;
}

}  // namespace mtier::sys
