// SPDX-License-Identifier: Apache-2.0
// Small measurement helpers shared by the replayer and `mtier bench`.
#pragma once
#include <chrono>
#include <vector>

namespace mtier::bench {

// Seconds elapsed since t0 on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point t0);
// The q-quantile (0 < q <= 1, nearest rank) of v, which is reordered; NaN if empty.
double quantile(std::vector<double>& v, double q);
// The median of v (the mean of the middle two for an even count); 0 if empty.
double median(std::vector<double> v);

}  // namespace mtier::bench
