// SPDX-License-Identifier: Apache-2.0
#include "swap_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "sys/swap_area.h"
#include "sys/page_size.h"

namespace mtier::bench {
namespace {

constexpr uint64_t kPage = kPageSize;
constexpr uint64_t kMinBytes = 10 * kPage;  // mkswap refuses fewer than 10 pages
constexpr size_t kChunk = 1 << 20;

void set_err(std::string* err, std::string msg) {
  if (err) *err = std::move(msg);
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Writes `bytes` of zeros at the start of fd, in 1 MiB pwrites. 0 or -errno.
int write_zeros(int fd, uint64_t bytes) {
  std::vector<char> zeros(kChunk, 0);
  uint64_t off = 0;
  while (off < bytes) {
    size_t n = bytes - off < kChunk ? static_cast<size_t>(bytes - off) : kChunk;
    ssize_t w = pwrite(fd, zeros.data(), n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    if (w == 0) return -EIO;
    off += static_cast<uint64_t>(w);
  }
  return fsync(fd) == 0 ? 0 : -errno;
}

// Runs `mkswap path` as a child with its output sent to /dev/null. When
// "mkswap" is not on PATH (a root shell started without the sbin
// directories) the usual locations are tried. 0 or -errno.
int run_mkswap(const std::string& path, std::string* err) {
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) {
    int e = -errno;
    set_err(err, std::string("mkswap: cannot open /dev/null: ") + strerror(-e));
    return e;
  }
  // The child reports a failed exec's errno through this pipe; a successful
  // exec closes it (O_CLOEXEC) and the parent reads nothing.
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) {
    int e = -errno;
    close(devnull);
    set_err(err, std::string("mkswap: pipe: ") + strerror(-e));
    return e;
  }
  // Everything the child needs is made before fork: between fork and exec
  // it may only call async-signal-safe functions.
  char* argv[] = {const_cast<char*>("mkswap"), const_cast<char*>(path.c_str()), nullptr};
  pid_t pid = fork();
  if (pid < 0) {
    int e = -errno;
    close(devnull);
    close(pfd[0]);
    close(pfd[1]);
    set_err(err, std::string("mkswap: fork: ") + strerror(-e));
    return e;
  }
  if (pid == 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execvp("mkswap", argv);
    int e = errno;
    if (e == ENOENT) {
      execv("/usr/sbin/mkswap", argv);
      execv("/sbin/mkswap", argv);
    }
    ssize_t ignored = write(pfd[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  close(devnull);
  close(pfd[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(pfd[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(pfd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      int e = -errno;
      set_err(err, std::string("mkswap: waitpid: ") + strerror(-e));
      return e;
    }
  }
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    set_err(err, exec_errno == ENOENT
                     ? std::string("mkswap not found (on PATH, /usr/sbin, /sbin): install util-linux")
                     : std::string("cannot run mkswap: ") + strerror(exec_errno));
    return -exec_errno;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    set_err(err, "mkswap " + path + " failed (" +
                     (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "killed by signal " + std::to_string(WTERMSIG(status))) +
                     ")");
    return -EIO;
  }
  return 0;
}

std::string swapon_hint(int e) {
  switch (e) {
    case -EINVAL:
      return " (this filesystem cannot hold a swap file: tmpfs, overlayfs and some others cannot)";
    case -EPERM:
      return " (not permitted: a container without CAP_SYS_ADMIN, or the kernel's limit of swap"
             " areas reached)";
    case -EBUSY:
      return " (already in use as swap)";
    default:
      return "";
  }
}

}  // namespace

int SwapFile::create(const std::string& path, uint64_t bytes, SwapFile* out, std::string* err) {
  if (path.empty()) {
    set_err(err, "swap file: empty path");
    return -EINVAL;
  }
  uint64_t size = bytes / kPage * kPage;
  if (size < kMinBytes) {
    set_err(err, "swap file " + path + ": " + std::to_string(bytes) +
                     " bytes is below mkswap's minimum of " + std::to_string(kMinBytes));
    return -EINVAL;
  }
  if (geteuid() != 0) {
    set_err(err, "swap file " + path + ": needs root (swapon needs CAP_SYS_ADMIN)");
    return -EPERM;
  }
  std::string dir = dir_of(path);
  struct statvfs vfs;
  if (statvfs(dir.c_str(), &vfs) != 0) {
    int e = -errno;
    set_err(err, "swap file " + path + ": statvfs " + dir + ": " + strerror(-e));
    return e;
  }
  // f_bavail, not f_bfree: the blocks reserved for root stay for the system.
  uint64_t avail = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (avail < size) {
    set_err(err, "swap file " + path + ": needs " + mib(size) + " but " + dir + " has " +
                     mib(avail) + " free");
    return -ENOSPC;
  }
  // O_EXCL: never overwrite a file that is there (another run's active swap
  // file, or somebody's data).
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = -errno;
    set_err(err, "swap file " + path + ": cannot create it: " + strerror(-e) +
                     (e == -EEXIST ? " (left there, not overwritten)" : ""));
    return e;
  }
  auto fail = [&](int e, const std::string& why) {
    unlink(path.c_str());
    set_err(err, why);
    return e;
  };
  // fchmod as well as the open mode: the umask may only take bits away, but
  // a swap file readable by others would expose swapped-out memory.
  int e = fchmod(fd, 0600) == 0 ? 0 : -errno;
  if (e == 0) e = write_zeros(fd, size);
  if (close(fd) != 0 && e == 0) e = -errno;
  if (e != 0) return fail(e, "swap file " + path + ": writing " + mib(size) + ": " + strerror(-e));
  std::string why;
  if (int m = run_mkswap(path, &why); m != 0) return fail(m, why);
  uint64_t before = active_swap_bytes();
  if (int s = sys::swap_on(path.c_str()); s != 0)
    return fail(s, "swapon " + path + ": " + strerror(-s) + swapon_hint(s));
  // What the kernel counts for it (the file less mkswap's header page), so
  // that active_swap_bytes() - bytes() is the other swap; the estimate only
  // if another area came or went meanwhile.
  uint64_t after = active_swap_bytes();
  SwapFile f;
  f.path_ = path;
  f.bytes_ = after > before && after - before <= size ? after - before : size - kPage;
  *out = std::move(f);
  return 0;
}

SwapFile::~SwapFile() { destroy(nullptr); }

SwapFile::SwapFile(SwapFile&& o) noexcept : path_(std::move(o.path_)), bytes_(o.bytes_) {
  o.path_.clear();
  o.bytes_ = 0;
}

SwapFile& SwapFile::operator=(SwapFile&& o) noexcept {
  if (this != &o) {
    destroy(nullptr);
    path_ = std::move(o.path_);
    bytes_ = o.bytes_;
    o.path_.clear();
    o.bytes_ = 0;
  }
  return *this;
}

int SwapFile::destroy(std::string* err) {
  if (path_.empty()) return 0;
  // EINVAL: not an active swap area (switched off already, e.g. by a retry
  // after unlink failed, or by hand); ENOENT: the file is gone.
  int s = sys::swap_off(path_.c_str());
  if (s != 0 && s != -EINVAL && s != -ENOENT) {
    set_err(err, "swapoff " + path_ + ": " + strerror(-s) +
                     (s == -ENOMEM ? " (the pages it holds do not fit in memory)" : ""));
    return s;
  }
  if (unlink(path_.c_str()) != 0 && errno != ENOENT) {
    int e = -errno;
    set_err(err, "swap file " + path_ + ": swapped off but cannot remove it: " + strerror(-e));
    return e;
  }
  path_.clear();
  bytes_ = 0;
  return 0;
}

uint64_t parse_proc_swaps(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  uint64_t total = 0;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {  // "Filename Type Size Used Priority"
      header = false;
      continue;
    }
    // The kernel escapes blanks in names (\040), so fields split on blanks.
    std::istringstream fields(line);
    std::string name, type;
    uint64_t size_kib = 0;
    if (fields >> name >> type >> size_kib) total += size_kib * 1024;
  }
  return total;
}

uint64_t active_swap_bytes() {
  int fd = open("/proc/swaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return parse_proc_swaps(text);
}

}  // namespace mtier::bench
