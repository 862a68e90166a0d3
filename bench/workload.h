// SPDX-License-Identifier: Apache-2.0
// The workload of the benchmark suite: a spec of embedding tables and of the
// lookups a trainer makes into them (pooling, per-table skew, reuse between
// batches), and the built-in presets whose statistics follow the facts in
// docs/architecture.md (Meta's dlrm_datasets locality statistics, Criteo's table mix).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mtier::bench {

struct TableSpec {
  uint64_t rows = 0;
  uint32_t dim = 64;      // fp32 values per row
  double zipf = 1.0;      // exponent of row popularity (0: uniform)
  double pooling = 16;    // mean lookups per bag
  uint64_t bytes() const { return rows * dim * sizeof(float); }
};

struct WorkloadSpec {
  std::string name;                // preset name, or "custom"
  std::vector<TableSpec> tables;
  uint32_t batch = 128;            // samples per batch: one bag per table each
  uint32_t batches = 100;          // batches in the trace
  // Bag sizes: "fixed" (every bag has round(pooling) lookups) or "poisson"
  // (Poisson with the table's mean, at least 1).
  std::string pooling_dist = "poisson";
  // Fraction of a batch's lookups into a table that repeat a row id that
  // the same table's previous batch used (temporal locality between
  // batches, beyond what the skew gives).
  double reuse = 0.0;
  uint64_t seed = 42;

  uint64_t table_bytes() const;
  uint64_t lookups_per_batch_estimate() const;
  // One line for printing beside results: tables (count, rows, dims, bytes),
  // pooling, skew per table, batch, batches, reuse, seed.
  std::string describe() const;
};

// The targets a preset is built to match, checked by the generator's
// statistics test (tests/unit/workload_test.cc). A target of 0 is unchecked.
struct LocalityTargets {
  double share_50 = 0, share_80 = 0, share_90 = 0;  // fractions of touched rows
  double mean_pooling = 0;
  double tolerance = 0.25;  // relative
};

struct Preset {
  const char* name;
  const char* what;  // one line for --help
  WorkloadSpec spec;
  LocalityTargets targets;
};

// The built-in presets (at least "meta2022", "meta2021", "criteo-kaggle",
// "uniform" and "tiny"); names are unique.
const std::vector<Preset>& presets();
// nullptr when no preset has that name.
const Preset* find_preset(const std::string& name);

// Scales every table's rows so that the tables hold about `bytes` in all,
// keeping the proportions between tables (each table keeps >= 1 row).
void scale_to_bytes(WorkloadSpec* spec, uint64_t bytes);

// Checks that generate() can make the spec's trace: tables with 1..2^32 rows
// (row ids are uint32), dims >= 1, finite skews >= 0, pooling in [1, 1e6],
// a known pooling_dist, reuse in [0, 1], batch >= 1, and a batch's lookups
// well below 2^32 (offsets are uint32). Returns 0, or -EINVAL and *err.
int check_spec(const WorkloadSpec& spec, std::string* err);

}  // namespace mtier::bench
