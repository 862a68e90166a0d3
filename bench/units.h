// SPDX-License-Identifier: Apache-2.0
// How the benchmarks and the tool's reports print a byte count.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace mtier::bench {

// "12.3 MiB".
inline std::string mib(uint64_t bytes) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  return buf;
}

}  // namespace mtier::bench
