// SPDX-License-Identifier: Apache-2.0
#include "sys/vm.h"
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mtier::sys {
namespace {

// The memory-map calls go straight to the kernel: libmtier.so interposes the
// libc functions of these names for the trainer (lib/), and the runtime's own
// calls on the region must never take that path.
void* raw_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  // syscall() returns -1 with errno set on failure (not the kernel's
  // -errno: reading that as the error named every failure EPERM).
  long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
  if (r == -1) return MAP_FAILED;
  return reinterpret_cast<void*>(r);
}

int raw_call(long rc) { return rc == 0 ? 0 : -errno; }

}  // namespace

int memfd_open(const char* name, uint64_t size) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -errno;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = -errno;
    (void)sys::close_fd(fd);
    return err;
  }
  return adopt_fd(fd);
}

int memfd_punch(int fd, uint64_t off, uint64_t len) {
  return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                   static_cast<off_t>(len)) == 0
             ? 0
             : -errno;
}

int read_at(int fd, uint64_t off, void* buf, size_t len) {
  auto* p = static_cast<char*>(buf);
  while (len) {
    ssize_t n = pread(fd, p, len, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return -EIO;
    p += n;
    off += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return 0;
}

void* map_shared(int fd, size_t len, bool writable) {
  // Mapped without access first, unlocked, then opened: a program that
  // called mlockall(MCL_FUTURE) would otherwise have the kernel lock and
  // populate the whole mapping at once (a region of tens of GiB: out of
  // memory). PROT_NONE is not populated; munlock clears the lock flag.
  void* p = raw_mmap(nullptr, len, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  (void)syscall(SYS_munlock, p, len);
  if (syscall(SYS_mprotect, p, len, writable ? PROT_READ | PROT_WRITE : PROT_READ) != 0) {
    int err = errno;
    (void)syscall(SYS_munmap, p, len);
    errno = err;
    return nullptr;
  }
  return p;
}

void* map_reserve(size_t len) {
  void* p = raw_mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

int map_private_at(int fd, void* addr, size_t len) {
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
  void* p = raw_mmap(addr, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) return -errno;
  if (p != addr) {  // a kernel older than 4.17 takes NOREPLACE as a hint
    (void)syscall(SYS_munmap, p, len);
    return -EEXIST;
  }
  return 0;
}

int map_anonymous_at(void* addr, size_t len, bool writable) {
  void* p = raw_mmap(addr, len, writable ? PROT_READ | PROT_WRITE : PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? -errno : 0;
}

int unmap(void* addr, size_t len) { return raw_call(syscall(SYS_munmap, addr, len)); }

int zap(void* addr, size_t len) { return raw_call(syscall(SYS_madvise, addr, len, MADV_DONTNEED)); }

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int pidfd_self() { return pidfd_of(getpid()); }

int pidfd_of(pid_t pid) {
  long fd = syscall(SYS_pidfd_open, pid, 0);  // pidfds are O_CLOEXEC
  return fd < 0 ? -errno : adopt_fd(static_cast<int>(fd));
}

long zap_ranges(int pidfd, const struct iovec* ranges, size_t n) {
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
  long rc = syscall(SYS_process_madvise, pidfd, ranges, n, MADV_DONTNEED, 0);
  return rc < 0 ? -errno : rc;
}

int populate_read(void* addr, size_t len) {
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
  return raw_call(syscall(SYS_madvise, addr, len, MADV_POPULATE_READ));
}

int populate_write(void* addr, size_t len) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  return raw_call(syscall(SYS_madvise, addr, len, MADV_POPULATE_WRITE));
}

int protect(void* addr, size_t len, bool writable) {
  return raw_call(syscall(SYS_mprotect, addr, len, writable ? PROT_READ | PROT_WRITE : PROT_NONE));
}

int dont_fork(void* addr, size_t len) {
  return raw_call(syscall(SYS_madvise, addr, len, MADV_DONTFORK));
}

int dont_dump(void* addr, size_t len) {
  return raw_call(syscall(SYS_madvise, addr, len, MADV_DONTDUMP));
}

long resident_pages(void* addr, size_t len) {
  size_t pages = (len + kPageSize - 1) / kPageSize;
  long count = 0;
  constexpr size_t kChunk = 1 << 16;
  std::vector<unsigned char> vec(kChunk);
  for (size_t done = 0; done < pages; done += kChunk) {
    size_t n = pages - done < kChunk ? pages - done : kChunk;
    if (int rc = pages_in_memory(static_cast<char*>(addr) + done * kPageSize, n * kPageSize,
                                 vec.data());
        rc < 0)
      return rc;
    for (size_t i = 0; i < n; i++) count += vec[i] & 1;
  }
  return count;
}

int pages_in_memory(const void* addr, size_t len, unsigned char* out) {
  return mincore(const_cast<void*>(addr), len, out) == 0 ? 0 : -errno;
}

long long smaps_rss(const void* addr) {
  FILE* f = fopen("/proc/self/smaps", "re");
  if (!f) return -errno;
  char line[512];
  bool inside = false;
  long long rss = -ENOENT;
  auto a = reinterpret_cast<uintptr_t>(addr);
  while (fgets(line, sizeof line, f)) {
    uintptr_t lo, hi;
    if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && strchr(line, ' ') &&
        line[strspn(line, "0123456789abcdef")] == '-') {
      inside = a >= lo && a < hi;
      continue;
    }
    long long kb;
    if (inside && sscanf(line, "Rss: %lld kB", &kb) == 1) {
      rss = kb * 1024;
      break;
    }
  }
  fclose(f);
  return rss;
}

uint64_t address_space_left() {
  struct rlimit r;
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  uint64_t used = 0;
  if (FILE* f = fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned long long kb;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "VmSize: %llu kB", &kb) == 1) used = kb * 1024;
    fclose(f);
  }
  return r.rlim_cur > used ? r.rlim_cur - used : 0;
}

uint64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  return pages > 0 ? static_cast<uint64_t>(pages) * kPageSize : 0;
}

pid_t thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

int signal_thread(pid_t tid, int sig) { return signal_thread_of(getpid(), tid, sig); }

int signal_thread_of(pid_t pid, pid_t tid, int sig) {
  return syscall(SYS_tgkill, pid, tid, sig) == 0 ? 0 : -errno;
}

}  // namespace mtier::sys
