// SPDX-License-Identifier: Apache-2.0
// A small DLRM-style sample trainer in C++: embedding-bag forward (sum of
// pooled rows per table) and an SGD update of the rows it used, over tables
// with per-table Zipf skew and hashed (scattered) row ids. Deterministic for
// a seed, single-threaded, so two runs over different memory give
// bit-identical losses. The default workload is `mtier demo`'s.
//
// A step's row ids are drawn before the step computes (in the order the
// model has always drawn them), so the steps ahead are known: with a
// lookahead they are named to libmtier (see trainer_lookahead.h), which
// changes where the rows are when the step reads them, never the results.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trainer_lookahead.h"

namespace mtier::tools {

struct TableSpec {
  uint64_t rows;
  double zipf;  // exponent of the row popularity
};

struct Workload {
  std::vector<TableSpec> tables;
  unsigned dim = 64;     // floats per row
  unsigned pooling = 16; // rows summed per bag
  unsigned batch = 128;  // bags per step, per table
  unsigned steps = 200;
  uint64_t seed = 42;
  uint64_t table_bytes() const;
  std::string describe() const;
};

Workload default_workload();

// Gives a table's memory: malloc for all-DRAM, mtier_table_create under mtier.
using TableAllocator = std::function<float*(unsigned table, uint64_t bytes)>;

struct TrainResult {
  std::vector<double> losses;  // one per step
  std::vector<double> step_end;  // seconds from the first step's start to each step's end
  uint64_t weights_hash = 0;   // FNV-1a over every table's bytes at the end
  double seconds = 0;          // training steps only (not init)
  double steps_per_second() const { return seconds > 0 ? losses.size() / seconds : 0; }
  // Steps/s over the second half of the run: the warm-up (the first fetch
  // of every hot page) left out, as a long training run would see it.
  double steady_steps_per_second() const;
  LookaheadCounters lookahead;  // all zero without a lookahead
};

// Initialises every table deterministically and trains. `progress` (may be
// empty) is called after each step. With lookahead.depth = K > 0, before
// step i the trainer calls mtier_prefetch_advance(i) and names steps up to
// i+K (step i+K itself, the earlier ones already named), each table's rows
// through mtier_prefetch_rows with batch = the step; asynchronously, it waits
// for step i's tickets just before step i computes. Only for tables that
// live in mtier (elsewhere the calls are no-ops).
TrainResult train(const Workload& w, const TableAllocator& alloc,
                  const std::function<void(unsigned step)>& progress = {},
                  const LookaheadOptions& lookahead = {});

}  // namespace mtier::tools
