// SPDX-License-Identifier: Apache-2.0
// The environment of the kernel's swap baseline, for `mtier demo` and
// `mtier bench swap-run`: what a user without mtier would configure: the
// kernel swapping the tables out under a memory cgroup of the same DRAM
// budget. It needs root, a memory cgroup (v2, or v1 as the benchmark suite
// also accepts) and swap: a swap file made for it (bench/swap_file.h), or,
// when that cannot be made, swap already active. When any is missing the
// baseline is skipped and skipped() says why, in one line.
#pragma once
#include <cstdint>
#include <string>

#include "cgroup.h"
#include "swap_file.h"

namespace mtier::tools::demo {

class SwapBaseline {
 public:
  // Checks root, the cgroup and swap; makes the swap file (of the tables'
  // bytes and a quarter, plus 64 MiB, as the suite does) in `dir`.
  void prepare(const std::string& dir, uint64_t table_bytes);
  // The same with a swap file of `swap_bytes` at `swap_path` (which must
  // not exist yet).
  void prepare_file(const std::string& swap_path, uint64_t swap_bytes);
  const std::string& skipped() const { return skipped_; }
  // How it runs: the cgroup and the swap, one line (after prepare()).
  const std::string& environment() const { return environment_; }

  // The cgroup of the run, mtier-bench-<pid>-`name`: memory limit
  // `limit_bytes`, swap allowed, swappiness kSwappiness (v1).
  int make_cgroup(const std::string& name, uint64_t limit_bytes, bench::MemoryCgroup* out,
                  std::string* err);
  static constexpr int kSwappiness = 60;  // the kernel's default

  // Switches off and removes the swap file; a failure is said in *err.
  int teardown(std::string* err);

 private:
  bench::CgroupSupport cg_;
  bench::SwapFile file_;
  std::string skipped_, environment_;
};

}  // namespace mtier::tools::demo
