// SPDX-License-Identifier: Apache-2.0
// What the engine tests and the daemon's end-to-end tiering test share:
// page contents that name their table, page and generation (so a page that
// went astray in a migration is caught), and where the kernel has the
// pages (the NUMA node to use as the slow tier, pages per node of a mapping
// from /proc/self/numa_maps).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "sys/numa.h"

namespace mtier::testutil {

constexpr uint64_t kPage = 4096;

inline uint64_t pattern(uint64_t table, uint64_t page, uint64_t gen) {
  return (table * 0x9E3779B97F4A7C15ull) ^ (page * 0xC2B2AE3D27D4EB4Full) ^ (gen << 1) ^ 1;
}

inline void fill_page(char* p, uint64_t v) {
  auto* w = reinterpret_cast<uint64_t*>(p);
  for (size_t i = 0; i < kPage / 8; i++) w[i] = v + i;
}

inline bool check_page(const char* p, uint64_t v) {
  auto* w = reinterpret_cast<const uint64_t*>(p);
  for (size_t i = 0; i < kPage / 8; i++)
    if (w[i] != v + i) return false;
  return true;
}

// The slow tier's node in these tests: the last node this process may use
// (node 0 on one node; the CPU-less node in the QEMU machine), or -errno.
inline int last_allowed_node() {
  sys::NodeMask allowed;
  if (int rc = sys::mems_allowed(&allowed); rc < 0) return rc;
  int last = 0;
  for (int n = 0; n < sys::NodeMask::kMaxNodes; n++)
    if (allowed.test(n)) last = n;
  return last;
}

// The kernel's count of pages per NUMA node in the mapping that holds
// addr, from /proc/self/numa_maps ("N<node>=<pages>"): pages mapped in
// that VMA, by the node they are on.
inline std::map<int, long> numa_maps_pages(const void* addr) {
  std::map<int, long> out;
  std::ifstream f("/proc/self/numa_maps");
  std::string line, best;
  uintptr_t best_start = 0, a = reinterpret_cast<uintptr_t>(addr);
  while (std::getline(f, line)) {
    uintptr_t start = std::strtoull(line.c_str(), nullptr, 16);
    if (start <= a && start >= best_start) best_start = start, best = line;
  }
  std::istringstream words(best);
  for (std::string w; words >> w;) {
    int node;
    long n;
    if (sscanf(w.c_str(), "N%d=%ld", &node, &n) == 2) out[node] = n;
  }
  return out;
}

}  // namespace mtier::testutil
