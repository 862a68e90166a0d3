// SPDX-License-Identifier: Apache-2.0
// The report of `mtier bench fault`: the figures (medians across runs), their
// ratios to their limits, and the goals with PASS/MISS, as a table or as one
// JSON object.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "bench_probes.h"

namespace mtier::tools::bench {

struct BenchReport {
  const BenchConfig* config;
  unsigned runs;
  const Samples* samples;
  std::vector<std::string> notes;  // what could not be measured, and why
};

void print_text(FILE* out, const BenchReport& r);
void print_json(FILE* out, const BenchReport& r);

}  // namespace mtier::tools::bench
