// SPDX-License-Identifier: Apache-2.0
// The offline oracle: a page-granularity simulation of a lookup trace that
// gives, for a cache of C pages, the hit ratio of Belady's MIN (the best any
// replacement policy can do on that trace) and of exact LRU. The suite prints
// them beside each measured configuration so that a result reads against
// what was possible, not only against another heuristic.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "trace.h"
#include "workload.h"

namespace mtier::bench {

// Layout assumed by the oracle and by the replayer: tables placed one after
// another, each starting on a page boundary; row r of table t occupies bytes
// [base_t + r*row_bytes_t, base_t + (r+1)*row_bytes_t), row_bytes_t = dim*4.
// The first table starts at 0. total_pages covers every table (the last one
// rounded up to a whole page).
struct TableLayout {
  std::vector<uint64_t> base;  // byte offset of each table, a multiple of page_size
  uint64_t total_pages = 0;
  uint64_t page_size = 0;
};
// page_size must be > 0; 0 gives a layout with every base 0 and no pages.
TableLayout layout_tables(const WorkloadSpec& spec, uint64_t page_size);

// The page references of the trace's forward lookups in trace order (batch
// by batch, table by table, bag by bag, lookup by lookup); a row that
// straddles pages references each of its pages in address order. Page
// numbers are global (base/page_size + ...). The trace must be consistent
// (as generate() and read_trace() guarantee: offsets of tables*batch+1
// entries, row ids inside their table) and `layout` made from its spec.
// A row of 0 bytes (dim 0) references no page.
std::vector<uint64_t> page_references(const Trace& t, const TableLayout& layout);

struct OracleResult {
  uint64_t capacity_pages = 0, references = 0, distinct_pages = 0;  // distinct = compulsory misses
  uint64_t min_hits = 0, lru_hits = 0;
  double min_hit_ratio() const;  // hits / references, 0 if none
  double lru_hit_ratio() const;
  uint64_t min_misses() const { return references - min_hits; }
  uint64_t lru_misses() const { return references - lru_hits; }
};

// How far simulate() is, for a progress line: references stepped through
// over all its passes (numbering, next use, LRU, MIN at each capacity that
// needs it) of their total. Called at each pass's end and every 2^20
// references within one, on the calling thread; done ends equal to total.
using OracleProgress = std::function<void(uint64_t done, uint64_t total)>;

// Simulates MIN and LRU for each capacity (pages, >= 1; 0 gives no hits)
// over the same reference string, computing the next-use index once.
// Results in the order of `capacities`. Both are stack algorithms, so hits
// never decrease with capacity, MIN hits >= LRU hits, and at a capacity >=
// distinct_pages both are references - distinct_pages.
// Cost: O(n log n) for LRU (all capacities in one pass, by stack distance)
// plus O(n log C) per capacity for MIN; memory O(n).
std::vector<OracleResult> simulate(const std::vector<uint64_t>& refs,
                                   const std::vector<uint64_t>& capacities,
                                   const OracleProgress& progress = {});

// MIN's misses over `refs` for a cache of `capacity` pages that starts
// holding exactly `resident` (distinct pages, at most `capacity` of them:
// no choice to make before the first reference). simulate() over an
// initialisation lets MIN pick, with the future in view, which pages the
// initialisation leaves behind - a start no real run gets. From the start
// every configuration of the suite has (the pages its set-up wrote last),
// this is the fewest misses any policy could make. -1 if `resident` has a
// repeated page or more than `capacity` pages.
// Cost: MIN's alone (no LRU pass), over a copy of both strings.
int64_t min_misses_from(std::span<const uint64_t> resident, std::span<const uint64_t> refs,
                        uint64_t capacity);

namespace detail {
// simulate() with 64-bit reference indices and page ids whatever the
// length; simulate() uses 32-bit ones below 2^32 - 1 references. Exposed so
// that the tests cover the wide path without a 4G-reference string.
std::vector<OracleResult> simulate_wide(const std::vector<uint64_t>& refs,
                                        const std::vector<uint64_t>& capacities);
}  // namespace detail

}  // namespace mtier::bench
