// SPDX-License-Identifier: Apache-2.0
// The process's open file limit (RLIMIT_NOFILE).
#pragma once
#include <cstdint>

namespace mtier::sys {

// Raises the soft limit towards `want` (never above the hard limit, never
// lowers it); *now gets the soft limit in effect afterwards. 0 or -errno.
[[nodiscard]] int raise_fd_limit(uint64_t want, uint64_t* now);

}  // namespace mtier::sys
