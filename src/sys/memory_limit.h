// SPDX-License-Identifier: Apache-2.0
// What memory a process may really use: its memory cgroup's limit (v1 or
// v2, the least along its cgroup's ancestors) and its own resident set.
// Read once, when the engine sizes its default DRAM budget.
#pragma once
#include <cstdint>
#include <string>

namespace mtier::sys {

struct MemoryLimit {
  uint64_t bytes = 0;  // 0: no limit applies (or none could be read)
  std::string where;   // the file the limit came from, for the start line
};

// The limit for the process whose /proc/PID/cgroup reads `proc_cgroup`,
// under the cgroup filesystems mounted at `root` (/sys/fs/cgroup): with
// cgroup v2 ("0::/path") the least memory.max of root/path and its
// ancestors; with v1 ("N:memory:/path") the least memory.limit_in_bytes of
// root/memory/path and its ancestors. "max" and v1's near-2^63 "unlimited"
// are no limit. Files that cannot be read are skipped. Pure but for the
// files it reads (the tests give it fake trees).
MemoryLimit cgroup_memory_limit(const std::string& proc_cgroup, const std::string& root);

// cgroup_memory_limit for this process (/proc/self/cgroup, /sys/fs/cgroup).
MemoryLimit own_memory_limit();

// This process's resident set (VmRSS), or 0 if /proc/self/status says none.
uint64_t own_rss_bytes();

}  // namespace mtier::sys
