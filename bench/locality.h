// SPDX-License-Identifier: Apache-2.0
// Locality statistics of a trace, comparable with Meta's dlrm_datasets
// figures in docs/architecture.md: how concentrated the accesses are on hot rows, the
// pooling, and how often a row repeats within one batch.
#pragma once
#include <cstdint>
#include <string>

#include "trace.h"

namespace mtier::bench {

struct LocalityStats {
  // Fractions of the distinct touched (table, row) pairs that, hottest first,
  // take 50 / 80 / 90% of all accesses over the whole trace.
  double share_50 = 0, share_80 = 0, share_90 = 0;
  double mean_pooling = 0;  // lookups per bag
  // Per (batch, table): lookups / distinct rows, summed over all pairs
  // before dividing (the mean reuse of a unique row within a batch).
  double mean_reuse_per_unique_row_in_batch = 0;
  // Of the distinct rows of each (batch, table), the fraction used once.
  double once_in_batch_fraction = 0;
  uint64_t lookups = 0, distinct_rows = 0;  // distinct over the whole trace
};

// Sort-based counting, one table at a time: memory is about 4 bytes per
// lookup of the busiest table plus 4 per distinct row.
LocalityStats compute_locality(const Trace& trace);

// One line: shares, pooling, reuse, once-fraction, lookups, distinct rows.
std::string describe(const LocalityStats& s);

}  // namespace mtier::bench
