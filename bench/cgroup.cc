// SPDX-License-Identifier: Apache-2.0
#include "cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

namespace mtier::bench {
namespace {

constexpr char kPrefix[] = "mtier-bench-";

void set_err(std::string* err, std::string msg) {
  if (err) *err = std::move(msg);
}

// Reads a whole (small, pseudo-)file. 0 or -errno.
int read_text(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  out->clear();
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = -errno;
      close(fd);
      return e;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return 0;
}

// Writes `value` in one write(2): a cgroup control file takes one value per
// write and reports a refused value as the write's error. Never creates the
// file, so a control file the kernel lacks shows as -ENOENT. 0 or -errno.
int write_text(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n;
  do {
    n = write(fd, value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  int e = n < 0 ? -errno : (static_cast<size_t>(n) == value.size() ? 0 : -EIO);
  if (close(fd) != 0 && e == 0) e = -errno;
  return e;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Whether the space-separated list (cgroup.controllers, subtree_control)
// holds `word`.
bool has_word(const std::string& list, const std::string& word) {
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find_first_of(" \t\n", i);
    if (j == std::string::npos) j = list.size();
    if (list.compare(i, j - i, word) == 0) return true;
    i = j + 1;
  }
  return false;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

// A file holding one non-negative integer, or -errno (-EINVAL when it holds
// something else).
int64_t read_int(const std::string& path) {
  std::string text;
  if (int r = read_text(path, &text); r != 0) return r;
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || v < 0) return -EINVAL;
  return v;
}

// The value of the "key value" line of a file like memory.events, or -errno
// (-ENOENT when the file has no such line).
int64_t read_keyed(const std::string& path, const std::string& key) {
  std::string text;
  if (int r = read_text(path, &text); r != 0) return r;
  size_t i = 0;
  while (i < text.size()) {
    size_t eol = text.find('\n', i);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(i, key.size(), key) == 0 && i + key.size() < eol &&
        text[i + key.size()] == ' ') {
      char* end = nullptr;
      long long v = strtoll(text.c_str() + i + key.size() + 1, &end, 10);
      return v < 0 ? -EINVAL : v;
    }
    i = eol + 1;
  }
  return -ENOENT;
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Moves every process in cgroup `path` to `parent` and removes it. rmdir is
// retried for a while on EBUSY: a process that just exited (or was just
// moved) can keep the cgroup populated for a moment. 0 when gone, or -errno.
int evacuate_and_remove(const std::string& path, const std::string& parent, std::string* err) {
  int last = 0;
  for (int attempt = 0; attempt < 200; attempt++) {  // ~2 s in all
    std::string procs;
    if (read_text(path + "/cgroup.procs", &procs) == 0) {
      size_t i = 0;
      while (i < procs.size()) {
        size_t eol = procs.find('\n', i);
        if (eol == std::string::npos) eol = procs.size();
        std::string pid = procs.substr(i, eol - i);
        // ESRCH: it exited meanwhile, which is what we want anyway.
        if (!pid.empty()) (void)write_text(parent + "/cgroup.procs", pid);
        i = eol + 1;
      }
    }
    if (rmdir(path.c_str()) == 0 || errno == ENOENT) return 0;
    last = -errno;
    if (last != -EBUSY) break;
    sleep_ms(10);
  }
  set_err(err, "cgroup " + path + ": cannot remove it: " + strerror(-last) +
                   (last == -EBUSY ? " (processes still inside)" : ""));
  return last;
}

std::string hint(int e) {
  return e == -EACCES || e == -EPERM ? " (needs root, or a cgroup delegated to this user)" : "";
}

}  // namespace

CgroupSupport detect_memory_cgroup(const std::string& root) {
  CgroupSupport s;
  std::string controllers;
  int rv2 = read_text(root + "/cgroup.controllers", &controllers);
  if (rv2 == 0 && has_word(controllers, "memory")) {
    // Children of root get a memory.* interface only when root delegates
    // the controller to them.
    std::string sub_path = root + "/cgroup.subtree_control";
    std::string sub;
    if (read_text(sub_path, &sub) != 0 || !has_word(sub, "memory")) {
      if (int w = write_text(sub_path, "+memory"); w != 0) {
        s.reason_if_none = "cgroup v2 at " + root +
                           " has the memory controller but it cannot be enabled for child cgroups"
                           " (writing +memory to " + sub_path + ": " + strerror(-w) +
                           (w == -EBUSY ? ", processes live in that cgroup" : "") + ")";
        return s;
      }
    }
    s.version = CgroupVersion::kV2;
    s.mount = root;
    return s;
  }
  std::string v1 = root + "/memory";
  if (exists(v1 + "/memory.limit_in_bytes")) {
    s.version = CgroupVersion::kV1;
    s.mount = v1;
    return s;
  }
  s.reason_if_none =
      "no memory cgroup controller: " +
      (rv2 == 0 ? "cgroup v2 at " + root + " offers only \"" + trim(controllers) + "\""
                : "no cgroup v2 at " + root + " (" + root + "/cgroup.controllers: " +
                      strerror(-rv2) + ")") +
      ", and no v1 memory controller at " + v1;
  return s;
}

int MemoryCgroup::create(const std::string& name, uint64_t limit_bytes, bool swap_allowed,
                         int swappiness, MemoryCgroup* out, std::string* err) {
  return create(detect_memory_cgroup(), name, limit_bytes, swap_allowed, swappiness, out, err);
}

int MemoryCgroup::create(const CgroupSupport& where, const std::string& name,
                         uint64_t limit_bytes, bool swap_allowed, int swappiness,
                         MemoryCgroup* out, std::string* err) {
  if (where.version == CgroupVersion::kNone) {
    set_err(err, where.reason_if_none.empty() ? "no memory cgroup controller"
                                              : where.reason_if_none);
    return -ENODEV;
  }
  if (name.empty() || name.find('/') != std::string::npos) {
    set_err(err, "cgroup name \"" + name + "\" must be non-empty and hold no '/'");
    return -EINVAL;
  }
  if (limit_bytes == 0 || limit_bytes > static_cast<uint64_t>(INT64_MAX)) {
    set_err(err, "cgroup memory limit " + std::to_string(limit_bytes) + " is out of range");
    return -EINVAL;
  }
  std::string path = where.mount + "/" + kPrefix + std::to_string(getpid()) + "-" + name;
  if (mkdir(path.c_str(), 0755) != 0) {
    int e = -errno;
    set_err(err, "cannot make cgroup " + path + ": " + strerror(-e) +
                     (e == -EEXIST ? " (this process made one of that name already)" : hint(e)));
    return e;
  }
  // Each setting in order; the first that fails removes the directory.
  std::string limit = std::to_string(limit_bytes);
  std::vector<std::pair<std::string, std::string>> settings;
  if (where.version == CgroupVersion::kV1) {
    // memory.limit_in_bytes first: the kernel refuses a memsw limit below
    // the memory limit.
    settings.emplace_back("memory.limit_in_bytes", limit);
    settings.emplace_back("memory.swappiness", std::to_string(swappiness));
    if (!swap_allowed && exists(path + "/memory.memsw.limit_in_bytes"))
      settings.emplace_back("memory.memsw.limit_in_bytes", limit);
  } else {
    settings.emplace_back("memory.max", limit);
    if (exists(path + "/memory.swap.max"))  // absent when the kernel does not account swap
      settings.emplace_back("memory.swap.max", swap_allowed ? "max" : "0");
  }
  for (auto& [file, value] : settings) {
    if (int w = write_text(path + "/" + file, value); w != 0) {
      set_err(err, "cgroup " + path + ": writing " + value + " to " + file + ": " +
                       strerror(-w) + hint(w));
      rmdir(path.c_str());
      return w;
    }
  }
  MemoryCgroup cg;
  cg.path_ = std::move(path);
  cg.parent_ = where.mount;
  cg.version_ = where.version;
  *out = std::move(cg);
  return 0;
}

MemoryCgroup::~MemoryCgroup() { destroy(nullptr); }

MemoryCgroup::MemoryCgroup(MemoryCgroup&& o) noexcept
    : path_(std::move(o.path_)), parent_(std::move(o.parent_)), version_(o.version_) {
  o.path_.clear();
  o.version_ = CgroupVersion::kNone;
}

MemoryCgroup& MemoryCgroup::operator=(MemoryCgroup&& o) noexcept {
  if (this != &o) {
    destroy(nullptr);
    path_ = std::move(o.path_);
    parent_ = std::move(o.parent_);
    version_ = o.version_;
    o.path_.clear();
    o.version_ = CgroupVersion::kNone;
  }
  return *this;
}

int MemoryCgroup::add_pid(pid_t pid, std::string* err) {
  if (path_.empty()) {
    set_err(err, "add_pid on a cgroup that was not created");
    return -EINVAL;
  }
  int w = write_text(path_ + "/cgroup.procs", std::to_string(pid));
  if (w != 0)
    set_err(err, "cgroup " + path_ + ": adding pid " + std::to_string(pid) + ": " +
                     strerror(-w) + hint(w));
  return w;
}

int64_t MemoryCgroup::peak_bytes() const {
  if (path_.empty()) return -EINVAL;
  return read_int(path_ + (version_ == CgroupVersion::kV1 ? "/memory.max_usage_in_bytes"
                                                          : "/memory.peak"));
}

int64_t MemoryCgroup::current_bytes() const {
  if (path_.empty()) return -EINVAL;
  return read_int(path_ + (version_ == CgroupVersion::kV1 ? "/memory.usage_in_bytes"
                                                          : "/memory.current"));
}

int64_t MemoryCgroup::oom_kills() const {
  if (path_.empty()) return -EINVAL;
  return read_keyed(path_ + (version_ == CgroupVersion::kV1 ? "/memory.oom_control"
                                                            : "/memory.events"),
                    "oom_kill");
}

int MemoryCgroup::destroy(std::string* err) {
  if (path_.empty()) return 0;
  if (int r = evacuate_and_remove(path_, parent_, err); r != 0) return r;
  path_.clear();
  version_ = CgroupVersion::kNone;
  return 0;
}

void remove_stale_cgroups(const CgroupSupport& support) {
  if (support.version == CgroupVersion::kNone) return;
  DIR* d = opendir(support.mount.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  const size_t plen = sizeof kPrefix - 1;
  while (dirent* e = readdir(d)) {
    if (strncmp(e->d_name, kPrefix, plen) != 0) continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    char* end = nullptr;
    long pid = strtol(e->d_name + plen, &end, 10);
    if (pid <= 0 || end == e->d_name + plen || *end != '-') continue;
    // A live process (ours included) keeps its cgroups; EPERM also means alive.
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    stale.push_back(support.mount + "/" + e->d_name);
  }
  closedir(d);
  for (auto& p : stale) (void)evacuate_and_remove(p, support.mount, nullptr);
}

}  // namespace mtier::bench
