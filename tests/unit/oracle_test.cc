// SPDX-License-Identifier: Apache-2.0
// Unit tests for bench/oracle: MIN and LRU on hand-made reference strings
// (the working is written beside each), against a naive simulation on many
// random small strings, the page layout and reference order of a hand-built
// trace, and a large string for consistency between capacities; MIN counted
// in bytes moved (min_traffic) on hand-made allocation sequences.
#include "oracle.h"
#include "min_traffic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <list>
#include <random>
#include <utility>
#include <unordered_map>
#include <vector>

#include "trace.h"
#include "workload.h"

namespace mtier::bench {
namespace {

// Both results for one capacity.
OracleResult run1(const std::vector<uint64_t>& refs, uint64_t cap) {
  std::vector<OracleResult> r = simulate(refs, {cap});
  EXPECT_EQ(r.size(), 1u);
  return r.empty() ? OracleResult{} : r[0];
}

// Naive MIN: on a miss with a full cache, scan forward from each resident
// page for its next use and evict the farthest (never used again first).
uint64_t naive_min(const std::vector<uint64_t>& refs, uint64_t cap) {
  if (cap == 0) return 0;
  std::vector<uint64_t> cache;
  uint64_t hits = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (std::find(cache.begin(), cache.end(), refs[i]) != cache.end()) {
      ++hits;
      continue;
    }
    if (cache.size() == cap) {
      size_t victim = 0, farthest = 0;
      for (size_t c = 0; c < cache.size(); ++c) {
        size_t nu = i + 1;
        while (nu < refs.size() && refs[nu] != cache[c]) ++nu;
        if (nu > farthest) farthest = nu, victim = c;
      }
      cache.erase(cache.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    cache.push_back(refs[i]);
  }
  return hits;
}

// Naive LRU: a list, most recent first.
uint64_t naive_lru(const std::vector<uint64_t>& refs, uint64_t cap) {
  if (cap == 0) return 0;
  std::list<uint64_t> stack;
  uint64_t hits = 0;
  for (uint64_t p : refs) {
    auto it = std::find(stack.begin(), stack.end(), p);
    if (it != stack.end()) {
      ++hits;
      stack.erase(it);
    } else if (stack.size() == cap) {
      stack.pop_back();
    }
    stack.push_front(p);
  }
  return hits;
}

// Silberschatz's string with 3 frames. LRU (cache most recent first):
//   7 m [7]      0 m [0 7]    1 m [1 0 7]  2 m [2 1 0]  0 h [0 2 1]
//   3 m [3 0 2]  0 h [0 3 2]  4 m [4 0 3]  2 m [2 4 0]  3 m [3 2 4]
//   0 m [0 3 2]  3 h [3 0 2]  2 h [2 3 0]  1 m [1 2 3]  2 h [2 1 3]
//   0 m [0 2 1]  1 h [1 0 2]  7 m [7 1 0]  0 h [0 7 1]  1 h [1 0 7]
//   12 misses, 8 hits.
// MIN (next uses at each eviction, positions 1-based):
//   7 0 1 m; 2 m: 7@18 0@5 1@14 -> evict 7 {2 0 1}; 0 h;
//   3 m: 2@9 0@7 1@14 -> evict 1 {2 0 3}; 0 h;
//   4 m: 2@9 0@11 3@10 -> evict 0 {2 4 3}; 2 h; 3 h;
//   0 m: 2@13 4@never 3@12 -> evict 4 {2 0 3}; 3 h; 2 h;
//   1 m: 2@15 0@16 3@never -> evict 3 {2 0 1}; 2 h; 0 h; 1 h;
//   7 m: 2@never 0@19 1@20 -> evict 2 {7 0 1}; 0 h; 1 h.
//   9 misses, 11 hits.
TEST(Oracle, TextbookString) {
  const std::vector<uint64_t> refs = {7, 0, 1, 2, 0, 3, 0, 4, 2, 3,
                                      0, 3, 2, 1, 2, 0, 1, 7, 0, 1};
  OracleResult r = run1(refs, 3);
  EXPECT_EQ(r.capacity_pages, 3u);
  EXPECT_EQ(r.references, 20u);
  EXPECT_EQ(r.distinct_pages, 6u);
  EXPECT_EQ(r.min_hits, 11u);
  EXPECT_EQ(r.lru_hits, 8u);
  EXPECT_DOUBLE_EQ(r.min_hit_ratio(), 11.0 / 20.0);
  EXPECT_DOUBLE_EQ(r.lru_hit_ratio(), 8.0 / 20.0);
}

// From a given cache. Starting with {7 0 1} is where the textbook run
// stands after its first three misses: 9 - 3. Pages never referenced are
// MIN's first victims, so starting with them is a cold start. A start that
// repeats a page or exceeds the capacity is refused.
TEST(Oracle, MinMissesFromAResidentStart) {
  const std::vector<uint64_t> refs = {7, 0, 1, 2, 0, 3, 0, 4, 2, 3,
                                      0, 3, 2, 1, 2, 0, 1, 7, 0, 1};
  auto start = [](std::initializer_list<uint64_t> pages) { return std::vector<uint64_t>(pages); };
  EXPECT_EQ(min_misses_from(start({7, 0, 1}), refs, 3), 6);
  EXPECT_EQ(min_misses_from(start({1, 7, 0}), refs, 3), 6);
  EXPECT_EQ(min_misses_from(start({}), refs, 3), 9);
  EXPECT_EQ(min_misses_from(start({100, 101, 102}), refs, 3), 9);
  // {4 5 6}: 7 m (evict 5), 0 m (6), 1 m (7), 2 m (1), 0 h, 3 m (2), 0 h,
  // 4 h: the held 4 saves the cold start's miss on it; then as the
  // textbook run from {0 3 2}: 2 m, 1 m, 7 m. 8 misses.
  EXPECT_EQ(min_misses_from(start({4, 5, 6}), refs, 3), 8);
  EXPECT_EQ(min_misses_from(start({7, 7}), refs, 3), -1);
  EXPECT_EQ(min_misses_from(start({7, 0, 1, 2}), refs, 3), -1);
  EXPECT_EQ(min_misses_from(start({}), refs, 0), 20);
}

// From random starts, the same as the naive MIN over the start followed by
// the string (the start all fits: its pages are misses and evict nothing,
// so the naive run reaches the string holding exactly the start).
TEST(Oracle, MinMissesFromMatchesNaive) {
  std::mt19937_64 rng(4242);
  for (int iter = 0; iter < 2000; ++iter) {
    const uint64_t pages = 1 + rng() % 10, cap = 1 + rng() % 6;
    std::vector<uint64_t> refs(rng() % 40);
    for (uint64_t& p : refs) p = rng() % pages;
    std::vector<uint64_t> start;
    for (uint64_t p = 0; p < pages + 2 && start.size() < cap; ++p)
      if (rng() % 2) start.push_back(p);
    std::shuffle(start.begin(), start.end(), rng);
    std::vector<uint64_t> all = start;
    all.insert(all.end(), refs.begin(), refs.end());
    const int64_t want = static_cast<int64_t>(all.size() - naive_min(all, cap) - start.size());
    ASSERT_EQ(min_misses_from(start, refs, cap), want) << "iter " << iter << " cap " << cap;
  }
}

// 1 2 3 4 three times, 3 frames. LRU always evicts the page needed next:
// 0 hits. MIN (positions 1-based; page k is used at k, k+4, k+8):
//   1 2 3 m; 4 m: 1@5 2@6 3@7 -> evict 3; 1 h; 2 h;
//   3 m: 1@9 2@10 4@8 -> evict 2; 4 h; 1 h;
//   2 m: 1@never 3@11 4@12 -> evict 1; 3 h; 4 h.
//   6 misses, 6 hits.
TEST(Oracle, CyclicScan) {
  std::vector<uint64_t> refs;
  for (int rep = 0; rep < 3; ++rep)
    for (uint64_t p = 1; p <= 4; ++p) refs.push_back(p);
  OracleResult r = run1(refs, 3);
  EXPECT_EQ(r.distinct_pages, 4u);
  EXPECT_EQ(r.lru_hits, 0u);
  EXPECT_EQ(r.min_hits, 6u);
}

// With one frame every policy must load each missing page, so both hit
// exactly on immediate repeats: 1 1 | 2 2 2 | 1 | 3 3 -> 1 + 2 + 0 + 1 = 4.
TEST(Oracle, CapacityOne) {
  const std::vector<uint64_t> refs = {1, 1, 2, 2, 2, 1, 3, 3};
  OracleResult r = run1(refs, 1);
  EXPECT_EQ(r.min_hits, 4u);
  EXPECT_EQ(r.lru_hits, 4u);
}

// Nothing is evicted: every reference but the first to each page hits.
TEST(Oracle, CapacityAtLeastDistinct) {
  const std::vector<uint64_t> refs = {5, 9, 5, 1ull << 40, 9, 5, 1ull << 40, ~0ull};
  std::vector<OracleResult> r = simulate(refs, {4, 5, 1000});
  ASSERT_EQ(r.size(), 3u);
  for (const OracleResult& x : r) {
    EXPECT_EQ(x.distinct_pages, 4u);
    EXPECT_EQ(x.min_hits, 4u);  // 8 references - 4 distinct
    EXPECT_EQ(x.lru_hits, 4u);
    EXPECT_DOUBLE_EQ(x.min_hit_ratio(), 0.5);
    EXPECT_DOUBLE_EQ(x.lru_hit_ratio(), 0.5);
  }
  EXPECT_EQ(r[0].capacity_pages, 4u);
  EXPECT_EQ(r[2].capacity_pages, 1000u);
}

TEST(Oracle, EmptyString) {
  std::vector<OracleResult> r = simulate({}, {1, 8});
  ASSERT_EQ(r.size(), 2u);
  for (const OracleResult& x : r) {
    EXPECT_EQ(x.references, 0u);
    EXPECT_EQ(x.distinct_pages, 0u);
    EXPECT_EQ(x.min_hits, 0u);
    EXPECT_EQ(x.lru_hits, 0u);
    EXPECT_EQ(x.min_hit_ratio(), 0.0);
    EXPECT_EQ(x.lru_hit_ratio(), 0.0);
  }
  EXPECT_TRUE(simulate({1, 2}, {}).empty());
}

// The progress callback: references counted over every pass (numbering,
// next use, LRU, a MIN pass per capacity below the distinct pages), never
// going back, ending at the total; the results are those without it.
TEST(Oracle, ProgressCountsEveryPass) {
  std::vector<uint64_t> refs((size_t{1} << 21) + 5);
  for (size_t i = 0; i < refs.size(); i++) refs[i] = (i * 7) % 11;
  const std::vector<uint64_t> caps = {1, 3, 11, 100};  // 11 distinct: two MIN passes
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  std::vector<OracleResult> with = simulate(refs, caps, [&](uint64_t done, uint64_t total) {
    calls.emplace_back(done, total);
  });
  std::vector<OracleResult> without = simulate(refs, caps);
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); i++) {
    EXPECT_EQ(with[i].min_hits, without[i].min_hits);
    EXPECT_EQ(with[i].lru_hits, without[i].lru_hits);
  }
  const uint64_t total = 5 * refs.size();
  ASSERT_GT(calls.size(), 5u);  // chunks within the passes, not only their ends
  for (size_t i = 0; i < calls.size(); i++) {
    EXPECT_EQ(calls[i].second, total);
    if (i) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
  EXPECT_EQ(calls.back().first, total);
}

// Capacity 0 is outside the contract's >= 1 but defined: no hits.
TEST(Oracle, CapacityZero) {
  OracleResult r = run1({1, 1, 1}, 0);
  EXPECT_EQ(r.min_hits, 0u);
  EXPECT_EQ(r.lru_hits, 0u);
}

// Many random small strings against the naive simulations, on both the
// 32-bit and the 64-bit path.
TEST(Oracle, MatchesNaive) {
  std::mt19937_64 rng(12345);
  std::vector<uint64_t> caps;
  for (uint64_t c = 1; c <= 8; ++c) caps.push_back(c);
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t len = rng() % 41;
    const uint64_t pages = 1 + rng() % 8;
    std::vector<uint64_t> refs(len);
    // Spread page numbers so the dense renumbering is exercised.
    for (uint64_t& p : refs) p = (rng() % pages) * 0x10001ull + 7;
    const std::vector<OracleResult> narrow = simulate(refs, caps);
    const std::vector<OracleResult> wide = detail::simulate_wide(refs, caps);
    ASSERT_EQ(narrow.size(), caps.size());
    ASSERT_EQ(wide.size(), caps.size());
    for (size_t k = 0; k < caps.size(); ++k) {
      const uint64_t want_min = naive_min(refs, caps[k]);
      const uint64_t want_lru = naive_lru(refs, caps[k]);
      ASSERT_EQ(narrow[k].min_hits, want_min) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(narrow[k].lru_hits, want_lru) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(wide[k].min_hits, want_min) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(wide[k].lru_hits, want_lru) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(narrow[k].references, len);
      ASSERT_EQ(narrow[k].distinct_pages, wide[k].distinct_pages);
    }
  }
}

// Strings long enough that the LRU timeline (2 x distinct + 1024 slots)
// fills and is repacked several times; dense page numbers (the direct
// renumbering) and spread ones (the hash table) alternate.
TEST(Oracle, MatchesNaiveLong) {
  std::mt19937_64 rng(999);
  for (int iter = 0; iter < 12; ++iter) {
    const size_t len = 3000 + rng() % 1000;
    const uint64_t pages = 2 + rng() % 40;
    const uint64_t spread = iter % 2 ? 0x100000001ull : 1;
    std::vector<uint64_t> refs(len);
    // Half the references go to a quarter of the pages, so hits are common.
    for (uint64_t& p : refs) p = (rng() % 2 ? rng() % (pages / 4 + 1) : rng() % pages) * spread;
    std::vector<uint64_t> caps = {1, 2, 3, pages / 4 + 1, pages / 2, pages - 1, pages};
    const std::vector<OracleResult> narrow = simulate(refs, caps);
    const std::vector<OracleResult> wide = detail::simulate_wide(refs, caps);
    for (size_t k = 0; k < caps.size(); ++k) {
      const uint64_t want_min = naive_min(refs, caps[k]);
      const uint64_t want_lru = naive_lru(refs, caps[k]);
      ASSERT_EQ(narrow[k].min_hits, want_min) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(narrow[k].lru_hits, want_lru) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(wide[k].min_hits, want_min) << "iter " << iter << " cap " << caps[k];
      ASSERT_EQ(wide[k].lru_hits, want_lru) << "iter " << iter << " cap " << caps[k];
    }
  }
}

// Three tables on 4 KiB pages:
//   t0: 5 rows x 4000 B = 20000 B at 0: pages 0..4 (ends in page 4).
//   t1: 3 rows x 64 B at 20480 (page 5; 20000 rounded up).
//   t2: 2 rows x 8192 B at 24576 (page 6): row 0 = pages 6,7, row 1 = 8,9.
//   total 10 pages.
// Rows of t0 straddle: row r is [4000r, 4000r + 4000): row 0 -> page 0,
// 1 -> 0,1; 2 -> 1,2; 3 -> 2,3; 4 -> 3,4.
WorkloadSpec three_tables() {
  WorkloadSpec s;
  s.name = "custom";
  s.tables.resize(3);
  s.tables[0].rows = 5, s.tables[0].dim = 1000;
  s.tables[1].rows = 3, s.tables[1].dim = 16;
  s.tables[2].rows = 2, s.tables[2].dim = 2048;
  s.batch = 2;
  s.batches = 2;
  return s;
}

TEST(OracleLayout, TablesStartOnPageBoundaries) {
  TableLayout l = layout_tables(three_tables(), 4096);
  EXPECT_EQ(l.page_size, 4096u);
  ASSERT_EQ(l.base.size(), 3u);
  EXPECT_EQ(l.base[0], 0u);
  EXPECT_EQ(l.base[1], 20480u);
  EXPECT_EQ(l.base[2], 24576u);
  EXPECT_EQ(l.total_pages, 10u);

  // Huge pages: every table starts a new 2 MiB page.
  TableLayout h = layout_tables(three_tables(), 2u << 20);
  ASSERT_EQ(h.base.size(), 3u);
  EXPECT_EQ(h.base[0], 0u);
  EXPECT_EQ(h.base[1], 2u << 20);
  EXPECT_EQ(h.base[2], 4u << 20);
  EXPECT_EQ(h.total_pages, 3u);

  // An exact fit leaves no gap: 1 row of 1024 fp32 is one page.
  WorkloadSpec exact;
  exact.tables.resize(2);
  exact.tables[0].rows = 1, exact.tables[0].dim = 1024;
  exact.tables[1].rows = 1, exact.tables[1].dim = 1;
  TableLayout e = layout_tables(exact, 4096);
  ASSERT_EQ(e.base.size(), 2u);
  EXPECT_EQ(e.base[1], 4096u);
  EXPECT_EQ(e.total_pages, 2u);

  EXPECT_EQ(layout_tables(WorkloadSpec{}, 4096).total_pages, 0u);
}

TEST(OracleLayout, PageReferencesInTraceOrder) {
  Trace t;
  t.spec = three_tables();
  // Batch 0: t0 bags {1} {4, 0}; t1 bags {2} {}; t2 bags {1, 0} {1}.
  TraceBatch b0;
  b0.rows = {1, 4, 0, /*t1*/ 2, /*t2*/ 1, 0, 1};
  b0.offsets = {0, 1, 3, 4, 4, 6, 7};
  // Batch 1: t0 bags {} {2}; t1 bags {0} {0, 1}; t2 bags {} {}.
  TraceBatch b1;
  b1.rows = {2, /*t1*/ 0, 0, 1};
  b1.offsets = {0, 0, 1, 2, 4, 4, 4};
  t.batches = {b0, b1};

  TableLayout l = layout_tables(t.spec, 4096);
  const std::vector<uint64_t> want = {
      0, 1,        // b0 t0 row 1
      3, 4,        // b0 t0 row 4
      0,           // b0 t0 row 0
      5,           // b0 t1 row 2
      8, 9,        // b0 t2 row 1
      6, 7,        // b0 t2 row 0
      8, 9,        // b0 t2 row 1
      1, 2,        // b1 t0 row 2
      5, 5, 5,     // b1 t1 rows 0, 0, 1
  };
  EXPECT_EQ(page_references(t, l), want);

  // With 64-byte "pages" t1's rows are one page each and t0's row 1
  // ([4000, 8000)) is pages 62..124.
  TableLayout small = layout_tables(t.spec, 64);
  EXPECT_EQ(small.base[1], 20032u);  // 20000 rounded up to 64
  const std::vector<uint64_t> refs = page_references(t, small);
  ASSERT_GE(refs.size(), 63u);
  for (uint64_t i = 0; i < 63; ++i) EXPECT_EQ(refs[i], 62 + i);
  EXPECT_EQ(refs.back(), 20032u / 64 + 1);  // b1 t1 row 1
}

// A large Zipf-ish string: MIN >= LRU, hits never fall with capacity, and
// asking capacities together or one at a time gives the same answer.
TEST(Oracle, LargeRandom) {
  const size_t n = 1000000;
  const uint64_t pages = 50000;
  std::mt19937_64 rng(7);
  // Page = pages^u^2-ish: skewed towards small numbers without a Zipf
  // sampler; then scattered so neighbours are not hot together.
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<uint64_t> refs(n);
  for (uint64_t& p : refs) {
    const double x = u(rng);
    const uint64_t rank = static_cast<uint64_t>(static_cast<double>(pages) * x * x * x);
    p = (rank * 2654435761u) % (pages * 4);
  }
  const std::vector<uint64_t> caps = {1, 64, 1000, 5000, 20000, 100000};
  const std::vector<OracleResult> r = simulate(refs, caps);
  ASSERT_EQ(r.size(), caps.size());
  for (size_t k = 0; k < caps.size(); ++k) {
    EXPECT_EQ(r[k].references, n);
    EXPECT_GE(r[k].min_hits, r[k].lru_hits) << "capacity " << caps[k];
    EXPECT_LE(r[k].min_hits, n - r[k].distinct_pages);
    if (k > 0) {
      EXPECT_GE(r[k].min_hits, r[k - 1].min_hits);
      EXPECT_GE(r[k].lru_hits, r[k - 1].lru_hits);
    }
  }
  EXPECT_GT(r[3].lru_hits, 0u);
  EXPECT_GT(r[3].min_hits, r[3].lru_hits);  // strictly better on a skewed string
  EXPECT_EQ(r.back().min_hits, n - r.back().distinct_pages);  // 100000 > distinct
  EXPECT_EQ(r.back().lru_hits, r.back().min_hits);
  // Exact LRU by a list and a hash map, independent of stack distances.
  for (size_t k : {1u, 2u, 4u}) {
    std::list<uint64_t> stack;
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
    uint64_t hits = 0;
    for (uint64_t p : refs) {
      auto it = where.find(p);
      if (it != where.end()) {
        ++hits;
        stack.erase(it->second);
      } else if (stack.size() == caps[k]) {
        where.erase(stack.back());
        stack.pop_back();
      }
      stack.push_front(p);
      where[p] = stack.begin();
    }
    EXPECT_EQ(r[k].lru_hits, hits) << "capacity " << caps[k];
  }
  const OracleResult one = run1(refs, 1000);
  EXPECT_EQ(one.min_hits, r[2].min_hits);
  EXPECT_EQ(one.lru_hits, r[2].lru_hits);
}

// Everything fits: first touches only, nothing moved.
TEST(MinTraffic, EverythingFits) {
  std::vector<PageRef> refs = {{0, true}, {1, true}, {0, false}, {1, false}};
  Traffic t = min_traffic(refs, 2);
  EXPECT_EQ(t.references, 4u);
  EXPECT_EQ(t.zero_fills, 2u);
  EXPECT_EQ(t.reads, 0u);
  EXPECT_EQ(t.writes, 0u);
}

// w0 w1 w2 r0, 2 pages: at w2 page 1 (never used again) goes, for free.
TEST(MinTraffic, PagesWithoutFutureGoFree) {
  std::vector<PageRef> refs = {{0, true}, {1, true}, {2, true}, {0, false}};
  Traffic t = min_traffic(refs, 2);
  EXPECT_EQ(t.reads, 0u);
  EXPECT_EQ(t.writes, 0u);
}

// w0 w1 r0 r1 r0, 1 page: w1 writes 0 out; r0 reads it and writes 1 out;
// r1 reads 1 back and drops 0 unwritten (clean: its copy is in the store);
// r0 reads it again.
TEST(MinTraffic, DirtyPagesWrittenOnceCleanOnesDropped) {
  std::vector<PageRef> refs = {{0, true}, {1, true}, {0, false}, {1, false}, {0, false}};
  Traffic t = min_traffic(refs, 1);
  EXPECT_EQ(t.zero_fills, 2u);
  EXPECT_EQ(t.writes, 2u);
  EXPECT_EQ(t.reads, 3u);
}

// The reference pattern's shape: per table of n pages, A (n writes), B (2n
// writes), C from B (2n reads, n writes), D from C (n reads, n writes), then
// D read once; every page a fresh id.
TEST(MinTraffic, DlrmReferenceRefs) {
  std::vector<PageRef> refs = dlrm_reference_refs(2, 3 * 4096, 4096);
  EXPECT_EQ(refs.size(), 2u * (3 + 6 + 9 + 6) + 2u * 3);
  uint64_t pages = 0;
  for (const PageRef& r : refs) pages = std::max(pages, r.page + 1);
  EXPECT_EQ(pages, 2u * 5 * 3);
  // With room for everything nothing moves; with one page, every page read
  // again after its write (B, C, D) is written once and read once.
  Traffic all = min_traffic(refs, pages);
  EXPECT_EQ(all.reads + all.writes, 0u);
  Traffic one = min_traffic(refs, 1);
  EXPECT_EQ(one.zero_fills, pages);
  EXPECT_EQ(one.writes, 2u * 4 * 3);
  EXPECT_EQ(one.reads, 2u * 4 * 3);
}

}  // namespace
}  // namespace mtier::bench
