// SPDX-License-Identifier: Apache-2.0
#include "demo_swap.h"

#include <unistd.h>

#include <cstdio>

#include "units.h"

namespace mtier::tools::demo {
namespace {

using bench::mib;

}  // namespace

void SwapBaseline::prepare(const std::string& dir, uint64_t table_bytes) {
  prepare_file(dir + "/swapfile", table_bytes + table_bytes / 4 + (64ull << 20));
}

void SwapBaseline::prepare_file(const std::string& swap_path, uint64_t swap_bytes) {
  if (geteuid() != 0) {
    skipped_ = "needs root (a memory cgroup and a swap file)";
    return;
  }
  // Only as root: detection may enable the memory controller for children.
  cg_ = bench::detect_memory_cgroup();
  if (cg_.version == bench::CgroupVersion::kNone) {
    skipped_ = cg_.reason_if_none;
    return;
  }
  bench::remove_stale_cgroups(cg_);  // of demo or suite runs that crashed
  std::string cg_line = (cg_.version == bench::CgroupVersion::kV2 ? "cgroup v2 at " : "cgroup v1 at ") + cg_.mount;
  std::string why;
  if (bench::SwapFile::create(swap_path, swap_bytes, &file_, &why) == 0) {
    environment_ = cg_line + ", " + mib(file_.bytes()) + " swap file " + swap_path;
    return;
  }
  uint64_t active = bench::active_swap_bytes();
  if (active == 0) {
    skipped_ = "no swap: none is active and no swap file can be made: " + why;
    return;
  }
  environment_ = cg_line + ", the " + mib(active) + " of swap already active (no swap file of its own: " +
                 why + ")";
}

int SwapBaseline::make_cgroup(const std::string& name, uint64_t limit_bytes, bench::MemoryCgroup* out,
                              std::string* err) {
  return bench::MemoryCgroup::create(cg_, name, limit_bytes, true, kSwappiness, out, err);
}

int SwapBaseline::teardown(std::string* err) { return file_.destroy(err); }

}  // namespace mtier::tools::demo
