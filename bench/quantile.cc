// SPDX-License-Identifier: Apache-2.0
#include "quantile.h"

#include <algorithm>
#include <cmath>

namespace mtier::bench {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return NAN;
  auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  size_t k = std::min(v.size() - 1, rank ? rank - 1 : 0);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace mtier::bench
