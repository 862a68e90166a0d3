// SPDX-License-Identifier: Apache-2.0
// generate(): the trace a WorkloadSpec describes. Every table draws from its
// own mt19937_64 stream (seeded from spec.seed and the table's index) with
// distributions written here, so a trace depends only on the spec, not on
// the standard library's distributions or on the other tables.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "permutation.h"
#include "trace.h"
#include "zipf.h"

namespace mtier::bench {
namespace {

// Uniform in [0, n) by multiply-high (n <= 2^32 here, so the bias is nil).
uint64_t below(std::mt19937_64& rng, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// Poisson(mean) by inversion with one uniform; means above 256 are split
// into a sum of Poissons so that exp(-mean) stays far from underflow.
uint64_t poisson(std::mt19937_64& rng, double mean) {
  uint64_t k = 0;
  for (; mean > 256; mean -= 256) k += poisson(rng, 256);
  double u = u01(rng), p = std::exp(-mean), cdf = p;
  uint64_t i = 0;
  while (u >= cdf && p > 0) {
    p *= mean / double(++i);
    cdf += p;
  }
  return k + i;
}

class TableStream {
 public:
  TableStream(const WorkloadSpec& spec, unsigned t)
      : table_(spec.tables[t]), reuse_(spec.reuse), fixed_(spec.pooling_dist == "fixed"),
        rng_(mix64(mix64(spec.seed) + t)), zipf_(table_.rows, table_.zipf),
        perm_(table_.rows, mix64(mix64(spec.seed ^ 0x7065726dull) + t)) {}

  // Lookups in the next bag: round(pooling) when fixed, else 1 + Poisson(
  // pooling - 1): at least 1, and the mean is still the table's pooling.
  uint64_t bag_size() {
    if (fixed_) return std::max<uint64_t>(1, std::llround(table_.pooling));
    return 1 + poisson(rng_, std::max(0.0, table_.pooling - 1));
  }

  uint32_t row() {
    if (reuse_ > 0 && !prev_.empty() && u01(rng_) < reuse_) return prev_[below(rng_, prev_.size())];
    return static_cast<uint32_t>(perm_(zipf_.sample(rng_)));
  }

  // Remembers the distinct rows of this table's bags in the batch just made.
  void end_batch(const uint32_t* begin, const uint32_t* end) {
    if (reuse_ <= 0) return;
    prev_.assign(begin, end);
    std::sort(prev_.begin(), prev_.end());
    prev_.erase(std::unique(prev_.begin(), prev_.end()), prev_.end());
  }

 private:
  TableSpec table_;
  double reuse_;
  bool fixed_;
  std::mt19937_64 rng_;
  ZipfSampler zipf_;
  Permutation perm_;
  std::vector<uint32_t> prev_;  // sorted distinct rows of the previous batch
};

[[noreturn]] void die(const std::string& why) {
  fprintf(stderr, "mtier bench: generate: %s\n", why.c_str());
  abort();
}

}  // namespace

// A spec check_spec() rejects is a caller's bug: callers check first.
Trace generate(const WorkloadSpec& spec) {
  std::string err;
  if (check_spec(spec, &err) < 0) die("bad workload spec: " + err);
  Trace trace;
  trace.spec = spec;
  std::vector<TableStream> streams;
  streams.reserve(spec.tables.size());
  for (unsigned t = 0; t < spec.tables.size(); t++) streams.emplace_back(spec, t);
  size_t bags = spec.tables.size() * size_t(spec.batch);
  trace.batches.resize(spec.batches);
  for (auto& batch : trace.batches) {
    batch.offsets.reserve(bags + 1);
    batch.rows.reserve(spec.lookups_per_batch_estimate() * 11 / 10);
    batch.offsets.push_back(0);
    for (auto& stream : streams) {
      size_t first = batch.rows.size();
      for (uint32_t s = 0; s < spec.batch; s++) {
        for (uint64_t n = stream.bag_size(); n > 0; n--) batch.rows.push_back(stream.row());
        if (batch.rows.size() > UINT32_MAX) die("a batch has 2^32 lookups or more");
        batch.offsets.push_back(static_cast<uint32_t>(batch.rows.size()));
      }
      stream.end_batch(batch.rows.data() + first, batch.rows.data() + batch.rows.size());
    }
  }
  return trace;
}

}  // namespace mtier::bench
