// SPDX-License-Identifier: Apache-2.0
// compute_locality(): whole-trace access counts per (table, row), gathered
// table by table and sorted, then the hottest-first cumulative shares; and
// per-(batch, table) distinct counts for the within-batch reuse.
#include "locality.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace mtier::bench {
namespace {

// Appends the number of times each distinct value occurs in sorted [i, end).
void count_runs(const uint32_t* i, const uint32_t* end, std::vector<uint32_t>* counts) {
  while (i < end) {
    const uint32_t* j = i + 1;
    while (j < end && *j == *i) j++;
    counts->push_back(static_cast<uint32_t>(j - i));
    i = j;
  }
}

// Rows of table t in a batch: its bags are contiguous.
std::pair<const uint32_t*, const uint32_t*> table_rows(const TraceBatch& b, size_t t,
                                                       size_t batch) {
  const uint32_t* base = b.rows.data();
  return {base + b.offsets[t * batch], base + b.offsets[(t + 1) * batch]};
}

// The fraction of counts (sorted hottest first) needed to reach share of total.
double share_of_rows(const std::vector<uint32_t>& counts, uint64_t total, double share) {
  if (counts.empty()) return 0;
  double need = share * double(total);
  uint64_t sum = 0;
  size_t k = 0;
  while (k < counts.size() && double(sum) < need) sum += counts[k++];
  return double(k) / double(counts.size());
}

}  // namespace

LocalityStats compute_locality(const Trace& trace) {
  LocalityStats s;
  const size_t tables = trace.spec.tables.size(), batch = trace.spec.batch;
  std::vector<uint32_t> counts, rows, batch_counts;
  uint64_t bags = 0, batch_distinct = 0, batch_once = 0;
  for (size_t t = 0; t < tables; t++) {
    rows.clear();
    for (auto& b : trace.batches) {
      auto [first, last] = table_rows(b, t, batch);
      size_t old = rows.size();
      rows.insert(rows.end(), first, last);
      std::sort(rows.begin() + old, rows.end());
      batch_counts.clear();
      count_runs(rows.data() + old, rows.data() + rows.size(), &batch_counts);
      batch_distinct += batch_counts.size();
      batch_once += std::count(batch_counts.begin(), batch_counts.end(), 1u);
      bags += batch;
    }
    std::sort(rows.begin(), rows.end());
    count_runs(rows.data(), rows.data() + rows.size(), &counts);
    s.lookups += rows.size();
  }
  std::sort(counts.begin(), counts.end(), std::greater<>());
  s.distinct_rows = counts.size();
  s.share_50 = share_of_rows(counts, s.lookups, 0.5);
  s.share_80 = share_of_rows(counts, s.lookups, 0.8);
  s.share_90 = share_of_rows(counts, s.lookups, 0.9);
  s.mean_pooling = bags ? double(s.lookups) / double(bags) : 0;
  s.mean_reuse_per_unique_row_in_batch =
      batch_distinct ? double(s.lookups) / double(batch_distinct) : 0;
  s.once_in_batch_fraction = batch_distinct ? double(batch_once) / double(batch_distinct) : 0;
  return s;
}

std::string describe(const LocalityStats& s) {
  char buf[320];
  snprintf(buf, sizeof buf,
           "rows taking 50/80/90%% of accesses: %.2f%%/%.1f%%/%.1f%% of %llu touched; "
           "pooling %.2f; reuse per unique row in a batch %.2f, %.1f%% used once; %llu lookups",
           100 * s.share_50, 100 * s.share_80, 100 * s.share_90,
           static_cast<unsigned long long>(s.distinct_rows), s.mean_pooling,
           s.mean_reuse_per_unique_row_in_batch, 100 * s.once_in_batch_fraction,
           static_cast<unsigned long long>(s.lookups));
  return buf;
}

}  // namespace mtier::bench
