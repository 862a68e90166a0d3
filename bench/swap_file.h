// SPDX-License-Identifier: Apache-2.0
// The swap file of the "swap" kernel baseline: the kernel pages the trainer's
// memory out to it once the cgroup limit is reached, which is what a user
// without mtier would configure. Made on the same disk as the benchmark's
// store so that both baselines pay for the same device.
//
// Calls return 0 or -errno with a one-line reason in *err (err may be null).
#pragma once
#include <cstdint>
#include <string>

namespace mtier::bench {

class SwapFile {
 public:
  SwapFile() = default;
  ~SwapFile();  // destroy(), reason dropped
  SwapFile(SwapFile&& o) noexcept;
  SwapFile& operator=(SwapFile&& o) noexcept;  // destroys what *this held
  SwapFile(const SwapFile&) = delete;
  SwapFile& operator=(const SwapFile&) = delete;

  // Creates a swap file of `bytes` (rounded down to whole pages, at least
  // 40 KiB, mkswap's minimum) at `path`, which must not exist yet, and
  // activates it. The file is fully written with zeros, neither sparse nor
  // fallocated (swapon refuses files with holes or unwritten extents on
  // some filesystems), made 0600, formatted by the mkswap program
  // (util-linux) and switched on by sys::swap_on. Refuses, with a reason
  // naming the path, when not root (-EPERM), when the filesystem lacks the
  // space (-ENOSPC), when mkswap is missing or fails, and when swapon fails
  // (EINVAL on tmpfs or overlayfs, EPERM in a container without
  // CAP_SYS_ADMIN). On any failure removes the file it made.
  static int create(const std::string& path, uint64_t bytes, SwapFile* out, std::string* err);

  // swapoff, then unlink. Idempotent: 0 once done (or when never created).
  // When swapoff fails (ENOMEM: the pages it holds do not fit in memory)
  // the file is kept active and held, so a later call can retry.
  int destroy(std::string* err);

  const std::string& path() const { return path_; }  // empty when none
  // The swap space it adds, as /proc/swaps (active_swap_bytes) counts it:
  // the file's size less mkswap's header page. 0 when none.
  uint64_t bytes() const { return bytes_; }

 private:
  std::string path_;
  uint64_t bytes_ = 0;
};

// Total size in bytes of the swap areas active now (the Size column of
// /proc/swaps), 0 when there are none or it cannot be read. The suite reports
// it: swap that is already active also serves the "swap" configuration.
uint64_t active_swap_bytes();
// The same for a /proc/swaps text (tests).
uint64_t parse_proc_swaps(const std::string& text);

}  // namespace mtier::bench
