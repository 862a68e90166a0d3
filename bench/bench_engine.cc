// SPDX-License-Identifier: Apache-2.0
// Probes through the Engine: first touch, sampling MINOR fault, eviction and
// fetch per store, the read-around, and the sampler's cost to a resident workload.
// Each builds one engine over one table and tears both down before returning.
#include <cerrno>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench_probes.h"
#include "engine/engine.h"
#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier::tools::bench {
namespace {

struct EngineTable {
  std::unique_ptr<Engine> engine;
  int id = -1;
  char* base = nullptr;
  uint64_t pages = 0;
  // The table goes before the engine (members are destroyed after this body).
  ~EngineTable() {
    if (engine && id > 0) (void)engine->free_table(id);
  }
};

// Every probe starts from these: a 4 GiB region; a DRAM budget well above the
// table, so that no background eviction runs while a probe times; the sampler
// off, so that its MINOR faults do not land inside timed touches; no store;
// no front-to-back walks and no zero-fill ahead, so that each page the
// toucher reaches in address order is one fault (with them on, a fault
// brings up to 256 pages and the per-page figures measured nothing).
Options base_options(const BenchConfig& c) {
  uint64_t bytes = c.pages * kPageSize;
  Options o;
  o.region_bytes = 4ull << 30;
  o.dram_bytes = 2 * bytes + (64ull << 20);
  o.store_path = "none";
  o.store_bytes = 2 * bytes;
  o.pmem_bytes = 2 * bytes;
  o.scan_rate = 0;
  o.stream_pages = 0;
  o.zero_ahead_pages = 0;
  return o;
}

int open_table(const Options& o, uint64_t pages, EngineTable* t) {
  int err = 0;
  t->engine = Engine::create(o, &err);
  if (!t->engine) return err ? err : -EIO;
  void* addr = nullptr;
  int id = t->engine->create_table("bench", pages * kPageSize, &addr);
  if (id < 0) return id;
  t->id = id;
  t->base = static_cast<char*>(addr);
  t->pages = pages;
  return 0;
}

TableStats stats_of(EngineTable& t) {
  TableStats st{};
  (void)t.engine->table_stats(t.id, &st);
  return st;
}

std::string store_mode(Engine& e) {
  EngineStats st = e.stats();
  return st.stores.empty() ? "none" : st.stores[0].mode;
}

// A figure is only what it claims if every timed page took the path named:
// the engine's own counters say whether it did. The handler bumps a counter
// just after the UFFDIO_COPY that wakes the toucher, so the last page's count
// may trail its touch: wait up to 100 ms for it before calling a figure short.
template <class Count>
void expect(const char* what, Count count, uint64_t want) {
  uint64_t got = count();
  for (int i = 0; i < 100 && got < want; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    got = count();
  }
  if (got == want) return;
  fprintf(stderr, "mtier bench fault: warning: %s: %llu of %llu pages took that path\n", what,
          static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
}

// Times evict_table over a dirty table; GiB/s of the pages written back.
int timed_evict(EngineTable& t, Samples* s, const char* name) {
  uint64_t before = stats_of(t).writebacks;
  auto t0 = Clock::now();
  int rc = t.engine->evict_table(t.id);
  double secs = seconds_since(t0);
  if (rc < 0) return rc;
  uint64_t written = stats_of(t).writebacks - before;
  expect(
      name, [&] { return written; }, t.pages);
  if (s) (*s)[name].push_back(static_cast<double>(written) * kPageSize / secs / kGiB);
  return 0;
}

// Random 8-byte read-modify-writes over the table for `secs` (a stand-in for
// embedding lookups and updates that all hit DRAM). Returns ops/s; *elapsed
// receives the seconds really run.
double random_rw(char* base, uint64_t pages, double secs, double* elapsed) {
  auto* w = reinterpret_cast<uint64_t*>(base);
  uint64_t words = pages * 512, x = 0x9e3779b97f4a7c15ull, ops = 0;
  auto t0 = Clock::now();
  do {
    for (int i = 0; i < 4096; i++) {  // xorshift64: cheap next to a cache miss
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w[x % words] += 1;
    }
    ops += 4096;
  } while ((*elapsed = seconds_since(t0)) < secs);
  return static_cast<double>(ops) / *elapsed;
}

}  // namespace

int probe_file_engine(BenchConfig& c, Samples* s) {
  Options o = base_options(c);
  o.store_path = c.dir;
  EngineTable t;
  int rc = open_table(o, c.pages, &t);
  if (rc < 0) return rc;
  c.file_mode = store_mode(*t.engine);
  // Stores, so the table is dirty for the eviction below.
  add_costs(s, "zero", time_touches(t.base, t.pages, true));
  expect(
      "first touch (zero fill)", [&] { return stats_of(t).zero_fills; }, t.pages);
  expect(
      "first touch: one fault a page", [&] { return stats_of(t).missing_faults; }, t.pages);
  // What the sampler does to a page: its PTE goes, the page stays in the memfd.
  if ((rc = sys::zap(t.base, t.pages * kPageSize)) < 0) return rc;
  add_costs(s, "minor", time_touches(t.base, t.pages, false));
  expect(
      "sampling MINOR fault", [&] { return stats_of(t).minor_faults; }, t.pages);
  if ((rc = timed_evict(t, s, "evict_file")) < 0) return rc;
  add_costs(s, "fetch_file", time_touches(t.base, t.pages, false));
  expect(
      "fetch from the file store", [&] { return stats_of(t).fetches; }, t.pages);
  expect(
      "fetch from the file store: one fault a page",
      [&] { return stats_of(t).missing_faults; }, 2 * t.pages);
  // Dirty every page again and evict once more: the slots are reused, so
  // this is the steady state of a long run (overwrites, not allocations).
  for (uint64_t p = 0; p < t.pages; p++) t.base[p * kPageSize] ^= 1;
  return timed_evict(t, s, "evict_file_again");
}

int probe_pmem_engine(BenchConfig& c, Samples* s) {
  Options o = base_options(c);
  o.pmem_path = c.dir;  // a directory: the store creates its own file there, removed at close
  EngineTable t;
  int rc = open_table(o, c.pages, &t);
  if (rc < 0) return rc;
  c.pmem_mode = store_mode(*t.engine);
  dirty_all(t.base, t.pages);
  if ((rc = timed_evict(t, s, "evict_pmem")) < 0) return rc;
  add_costs(s, "fetch_pmem", time_touches(t.base, t.pages, false));
  expect(
      "fetch from the PMem store", [&] { return stats_of(t).fetches; }, t.pages);
  return 0;
}

int probe_read_around(BenchConfig& c, Samples* s) {
  Options o = base_options(c);
  o.store_path = c.dir;
  o.prefetch_pages = kReadAroundPages;
  EngineTable t;
  int rc = open_table(o, c.pages, &t);
  if (rc < 0) return rc;
  dirty_all(t.base, t.pages);
  if ((rc = timed_evict(t, nullptr, "eviction before the read-around pass")) < 0) return rc;
  auto t0 = Clock::now();
  read_all(t.base, t.pages);
  double secs = seconds_since(t0);
  (*s)["prefetch"].push_back(static_cast<double>(t.pages) * kPageSize / secs / kGiB);
  auto from_store = [&] {
    TableStats st = stats_of(t);
    return st.fetches + st.prefetches;
  };
  expect("read-around pass: pages read from the store", from_store, t.pages);
  (*s)["prefetch_share"].push_back(100.0 * static_cast<double>(stats_of(t).prefetches) /
                                   static_cast<double>(t.pages));
  return 0;
}

int probe_sampler(BenchConfig& c, bool on, Samples* s) {
  Options o = base_options(c);
  o.scan_rate = on ? Options{}.scan_rate : 0;
  o.scan_idle = true;  // the table fits: measure the sampler as if eviction were near
  EngineTable t;
  int rc = open_table(o, c.pages, &t);
  if (rc < 0) return rc;
  dirty_all(t.base, t.pages);
  uint64_t minor0 = stats_of(t).minor_faults;
  double secs = 0;
  double rate = random_rw(t.base, t.pages, kWorkloadSeconds, &secs);
  (*s)[on ? "rw_on" : "rw_off"].push_back(rate / 1e6);
  if (on)
    (*s)["sampled_per_s"].push_back(static_cast<double>(stats_of(t).minor_faults - minor0) / secs);
  return 0;
}

}  // namespace mtier::tools::bench
