// SPDX-License-Identifier: Apache-2.0
// Milliseconds on the steady clock (CLOCK_MONOTONIC): for "how long since"
// stamps kept in atomics (a walk's last fault, a warning last said). No
// allocation, no lock: callable on the fault path.
#pragma once
#include <chrono>
#include <cstdint>

namespace mtier {

inline uint64_t monotonic_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace mtier
