// SPDX-License-Identifier: Apache-2.0
// What the fault-handler thread does when its wait (poll) or its read from
// the userfaultfd fails: it never leaves. A thread that left would leave
// every later fault in a managed table unanswered - the faulting thread
// blocked in the kernel for ever, the program hung with no message - so an
// error is logged, waited out with a back-off and retried until stop().
// Logged: the first failure of a run of consecutive ones; once more, with
// the count, when the run has lasted kPersistentNs; and the recovery, with
// the count. Owned by the handler thread (not thread-safe); allocates nothing.
#pragma once
#include <cstdint>

namespace mtier {

class LoopErrors {
 public:
  static constexpr uint64_t kFirstBackoffNs = 1'000'000;    // 1 ms, doubled per failure
  static constexpr uint64_t kMaxBackoffNs = 100'000'000;    // 100 ms: stop() waits at most this
  static constexpr uint64_t kPersistentNs = 1'000'000'000;  // a run this long is logged again

  // A failure of `what` ("poll", "read from userfaultfd") with -errno `err`
  // at `now_ns` (a monotonic clock). Returns the back-off, in ns, to wait
  // before retrying.
  [[nodiscard]] uint64_t failed(const char* what, int err, uint64_t now_ns);
  // A wait and read that worked: ends the run of failures, if any.
  void succeeded(uint64_t now_ns);
  // Failures in the current run (0 when the last attempt worked).
  uint64_t consecutive() const { return count_; }

 private:
  uint64_t count_ = 0;
  uint64_t first_ns_ = 0;
  uint64_t backoff_ns_ = 0;
  bool reported_persistent_ = false;
};

}  // namespace mtier
