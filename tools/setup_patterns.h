// SPDX-License-Identifier: Apache-2.0
// The set-up patterns `mtier bench setup` runs in its children: how a DLRM
// trainer initialises its tables, through an allocator given by the caller
// (malloc for all-DRAM and swap, mtier tables for mtier), with the values a
// function of the index only, so that every configuration must end with the
// same checksum.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace mtier::tools::setup {

enum class Pattern {
  kFloat64,        // per table: a float64 temporary written, read into the table, freed
  kDlrmReference,  // the public DLRM reference trainer's: ~5 table sizes through the allocator
};

// "float64" or "dlrm-reference"; false for another name.
bool parse_pattern(const std::string& name, Pattern* out);
const char* pattern_name(Pattern p);

struct Allocator {
  std::function<void*(const char* name, uint64_t bytes)> alloc;  // nullptr: failed (said on stderr)
  std::function<void(void*)> release;
};

struct Result {
  double setup_s = 0, readback_s = 0;
  double setup_cpu_s = 0;  // CPU seconds of all the process's threads during the set-up
  uint64_t checksum = 0;
};

// Runs pattern `p` over `tables` tables of `table_bytes` in all (each a
// multiple of 4 bytes), then reads every table once. Returns 0, or 1 when an
// allocation failed.
int run(Pattern p, unsigned tables, uint64_t table_bytes, const Allocator& a, Result* out);

// CPU seconds (user + system) of every thread this process has had, from
// /proc/self/stat; -1 when unreadable.
double process_cpu_seconds();

}  // namespace mtier::tools::setup
