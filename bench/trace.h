// SPDX-License-Identifier: Apache-2.0
// An embedding lookup trace: for each batch, one bag per (table, sample),
// each bag a list of row ids. Generated from a WorkloadSpec (deterministic
// for its seed), written to and read from a versioned binary file so that
// every configuration of the suite replays exactly the same accesses.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "workload.h"

namespace mtier::bench {

struct TraceBatch {
  // Bag b of table t (b < batch) is rows[offsets[t * batch + b] ..
  // offsets[t * batch + b + 1]); offsets has tables * batch + 1 entries,
  // starts at 0 and never decreases.
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> rows;
};

struct Trace {
  WorkloadSpec spec;
  std::vector<TraceBatch> batches;
  uint64_t lookups() const;  // sum of rows.size() over batches
};

// Generates the trace the spec describes.
Trace generate(const WorkloadSpec& spec);

// Writes the trace; returns 0 or -errno, with a reason in *err.
int write_trace(const Trace& t, const std::string& path, std::string* err);
// Reads a trace written by write_trace. A file that is not a trace, of
// another version, truncated, or inconsistent (a row id out of its table,
// offsets that decrease) gives -EINVAL (-errno for I/O) and a reason.
int read_trace(const std::string& path, Trace* t, std::string* err);

}  // namespace mtier::bench
