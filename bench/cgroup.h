// SPDX-License-Identifier: Apache-2.0
// The memory cgroup of the kernel baselines: the suite runs the trainer under
// a memory limit that the kernel enforces (reclaiming page cache, swapping,
// OOM-killing), and reads back what the kernel counted. Works with whichever
// memory controller the machine has, cgroup v1 or v2.
//
// Every call returns 0 or -errno and, where it takes `err`, puts a one-line
// reason there (err may be null).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace mtier::bench {

enum class CgroupVersion { kNone, kV1, kV2 };

struct CgroupSupport {
  CgroupVersion version = CgroupVersion::kNone;
  std::string mount;           // where the cgroups are made: <root> (v2) or <root>/memory (v1)
  std::string reason_if_none;  // why there is none, for the suite's report
};

// Which memory controller the machine has, and where: v2 if
// <root>/cgroup.controllers lists "memory", else v1 if
// <root>/memory/memory.limit_in_bytes exists, else kNone with the reason.
// For v2 the cgroups made under <root> need "memory" in
// <root>/cgroup.subtree_control: it is enabled here when missing, and when
// that fails the answer is kNone with the reason (the controller exists but
// the suite cannot use it). `root` lets tests point it at a fake tree.
CgroupSupport detect_memory_cgroup(const std::string& root = "/sys/fs/cgroup");

class MemoryCgroup {
 public:
  MemoryCgroup() = default;
  ~MemoryCgroup();  // destroy(), reason dropped
  MemoryCgroup(MemoryCgroup&& o) noexcept;
  MemoryCgroup& operator=(MemoryCgroup&& o) noexcept;  // destroys what *this held
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Creates <mount>/mtier-bench-<pid>-<name> (name: no '/') in the memory
  // cgroup of detect_memory_cgroup() with a limit of `limit_bytes` (> 0):
  //   v1: memory.limit_in_bytes = limit, memory.swappiness = swappiness, and
  //       when !swap_allowed and the kernel accounts swap (memory.memsw.*
  //       exists) memory.memsw.limit_in_bytes = limit, so nothing can swap.
  //       Without memsw only swappiness 0 keeps the cgroup from swapping.
  //   v2: memory.max = limit, memory.swap.max = "max" or "0" (when the file
  //       exists); memory.high is left alone; v2 has no per-cgroup
  //       swappiness, so `swappiness` is ignored.
  // On failure removes what it made and leaves *out untouched.
  static int create(const std::string& name, uint64_t limit_bytes, bool swap_allowed,
                    int swappiness, MemoryCgroup* out, std::string* err);
  // The same under an explicit controller (tests, or a caller that already
  // detected one).
  static int create(const CgroupSupport& where, const std::string& name, uint64_t limit_bytes,
                    bool swap_allowed, int swappiness, MemoryCgroup* out, std::string* err);

  // Moves the process (all its threads) into this cgroup via cgroup.procs.
  // Memory it touched before stays charged where it was.
  int add_pid(pid_t pid, std::string* err);

  // What the kernel counted, in bytes, or -errno when unreadable:
  // peak usage (v1 memory.max_usage_in_bytes, v2 memory.peak, which kernels
  // before 5.19 lack: -ENOENT), current usage (v1 memory.usage_in_bytes,
  // v2 memory.current), and the number of processes the OOM killer killed in
  // it (v1 memory.oom_control "oom_kill", kernel >= 4.13; v2 memory.events
  // "oom_kill").
  int64_t peak_bytes() const;
  int64_t current_bytes() const;
  int64_t oom_kills() const;

  // Moves any processes still inside to the parent cgroup and removes the
  // directory. Idempotent: 0 once removed (or never made). On failure the
  // object still holds the cgroup, so a later call can retry.
  int destroy(std::string* err);

  const std::string& path() const { return path_; }  // empty when none
  CgroupVersion version() const { return version_; }

 private:
  std::string path_;
  std::string parent_;
  CgroupVersion version_ = CgroupVersion::kNone;
};

// Removes the mtier-bench-<pid>-* cgroups under support.mount whose process
// no longer exists (left behind by a run that crashed), moving anything still
// inside them to the parent first. Cgroups of live processes are kept.
void remove_stale_cgroups(const CgroupSupport& support);

}  // namespace mtier::bench
