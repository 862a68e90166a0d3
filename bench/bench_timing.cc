// SPDX-License-Identifier: Apache-2.0
#include "bench_timing.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "sys/page_size.h"

namespace mtier::tools::bench {

std::vector<double> time_touches(char* base, uint64_t pages, bool write) {
  std::vector<double> us(pages);
  for (uint64_t p = 0; p < pages; p++) {
    volatile char* a = base + p * kPageSize;
    auto t0 = Clock::now();
    // The fences keep the access between the two clock reads.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (write)
      *a = static_cast<char>(p | 1);
    else
      (void)*a;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    us[p] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }
  return us;
}

void read_all(const char* base, uint64_t pages) {
  for (uint64_t p = 0; p < pages; p++) (void)*static_cast<const volatile char*>(base + p * kPageSize);
}

void dirty_all(char* base, uint64_t pages) {
  for (uint64_t p = 0; p < pages; p++)
    *static_cast<volatile char*>(base + p * kPageSize) = static_cast<char>(p | 1);
}

void add_costs(Samples* s, const std::string& name, std::vector<double> us) {
  (*s)[name + ".median"].push_back(quantile(us, 0.5));
  (*s)[name + ".p99"].push_back(quantile(us, 0.99));
}

double median_of(const Samples& s, const std::string& name) {
  auto it = s.find(name);
  if (it == s.end()) return NAN;
  std::vector<double> v = it->second;
  return quantile(v, 0.5);
}

}  // namespace mtier::tools::bench
