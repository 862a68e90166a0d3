// SPDX-License-Identifier: Apache-2.0
// The ranked locks of the LOCKING contract (page/core.h) and, in builds
// configured with lock checks (--enable-sanitizers or --enable-lock-checks:
// build::kCheckLockOrder), a per-thread check of the one order in which they
// are taken. An acquisition out of order, a recursive acquisition, or a wait
// for DRAM room with a ranked lock held aborts with both names: a deadlock
// that could happen is reported the first time the code path runs, not the
// day it hangs. Without the checks the wrappers are the plain mutexes.
#pragma once
#include <mutex>
#include <shared_mutex>

#include "build_config.h"

namespace mtier {

// In the order they are taken: a thread holding one may take only a later one.
enum class LockRank : unsigned { kEvictPass = 0, kRegistry = 1, kPage = 2 };
inline constexpr unsigned kLockRanks = 3;

namespace lock_order {
// Before taking a lock of rank `r`; aborts if the thread holds a lock of a
// later rank, or one of rank `r` itself (only page stripes may be held
// several at a time: the evictor's runs).
void acquiring(LockRank r);
void released(LockRank r);
// Aborts if the thread holds any ranked lock: `what` is the wait that must
// not happen under one ("waiting for DRAM room").
void assert_unlocked(const char* what);
// Ranked locks the calling thread holds (for tests).
unsigned held(LockRank r);
}  // namespace lock_order

// A std::mutex of rank R (Lockable: lock_guard, unique_lock, condition
// variables over unique_lock<RankedMutex> are not used with it).
template <LockRank R>
class RankedMutex {
 public:
  void lock() {
    if constexpr (build::kCheckLockOrder) lock_order::acquiring(R);
    mu_.lock();
  }
  bool try_lock() {
    if constexpr (build::kCheckLockOrder) lock_order::acquiring(R);
    if (mu_.try_lock()) return true;
    if constexpr (build::kCheckLockOrder) lock_order::released(R);
    return false;
  }
  void unlock() {
    mu_.unlock();
    if constexpr (build::kCheckLockOrder) lock_order::released(R);
  }

 private:
  std::mutex mu_;
};

// A std::shared_mutex of rank R; shared and exclusive holds count alike.
template <LockRank R>
class RankedSharedMutex {
 public:
  void lock() {
    if constexpr (build::kCheckLockOrder) lock_order::acquiring(R);
    mu_.lock();
  }
  void unlock() {
    mu_.unlock();
    if constexpr (build::kCheckLockOrder) lock_order::released(R);
  }
  void lock_shared() {
    if constexpr (build::kCheckLockOrder) lock_order::acquiring(R);
    mu_.lock_shared();
  }
  void unlock_shared() {
    mu_.unlock_shared();
    if constexpr (build::kCheckLockOrder) lock_order::released(R);
  }

 private:
  std::shared_mutex mu_;
};

}  // namespace mtier
