// SPDX-License-Identifier: Apache-2.0
// Timing helpers for `mtier bench`: per-page touch timing, quantiles, and
// the figures a benchmark collects (a name -> one value per run).
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "quantile.h"

namespace mtier::tools::bench {

// seconds_since() and quantile() (nearest rank) are the benchmark suite's.
using ::mtier::bench::quantile;
using ::mtier::bench::seconds_since;

using Clock = std::chrono::steady_clock;
using Samples = std::map<std::string, std::vector<double>>;

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Times one access to each of `pages` pages from `base`, in page order: a
// one-byte store when `write`, else a one-byte load. Microseconds per page.
std::vector<double> time_touches(char* base, uint64_t pages, bool write);
// Reads one byte of every page in page order (untimed setup or a timed pass).
void read_all(const char* base, uint64_t pages);
// Writes one byte of every page, so each page is resident and dirty.
void dirty_all(char* base, uint64_t pages);
// Adds "<name>.median" and "<name>.p99" (microseconds) of per-page costs.
void add_costs(Samples* s, const std::string& name, std::vector<double> us);
// Median across runs of s[name]; NaN when the figure was never measured.
double median_of(const Samples& s, const std::string& name);

}  // namespace mtier::tools::bench
