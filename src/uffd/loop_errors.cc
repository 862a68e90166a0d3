// SPDX-License-Identifier: Apache-2.0
// The fault-handler thread's error runs: logging and back-off (loop_errors.h).
#include "uffd/loop_errors.h"

#include <algorithm>
#include <cstring>

#include "log/log.h"

namespace mtier {

uint64_t LoopErrors::failed(const char* what, int err, uint64_t now_ns) {
  if (count_++ == 0) {
    first_ns_ = now_ns;
    backoff_ns_ = kFirstBackoffNs;
    reported_persistent_ = false;
    MTIER_LOG_ERROR("fault handler: %s: %s; retrying (faults wait until it works)", what,
                    strerror(-err));
  } else {
    backoff_ns_ = std::min(backoff_ns_ * 2, kMaxBackoffNs);
  }
  if (!reported_persistent_ && now_ns - first_ns_ >= kPersistentNs) {
    reported_persistent_ = true;
    MTIER_LOG_ERROR("fault handler: %s: %s: %llu consecutive failures over %llu ms; "
                    "faults in managed tables wait while it lasts; still retrying",
                    what, strerror(-err), static_cast<unsigned long long>(count_),
                    static_cast<unsigned long long>((now_ns - first_ns_) / 1'000'000));
  }
  return backoff_ns_;
}

void LoopErrors::succeeded(uint64_t now_ns) {
  if (count_ == 0) return;
  MTIER_LOG_WARN("fault handler: recovered after %llu consecutive failures over %llu ms",
                 static_cast<unsigned long long>(count_),
                 static_cast<unsigned long long>((now_ns - first_ns_) / 1'000'000));
  count_ = 0;
}

}  // namespace mtier
