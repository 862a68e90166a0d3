// SPDX-License-Identifier: Apache-2.0
// MTIER_STATS=1 / MTIER_VERBOSE=1: a summary at exit, from the engine's
// figures and those of the tables freed before: two or three lines (the
// run, its faults and moves, the lookahead).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "boundary.h"
#include "engine_instance.h"
#include "interposer_state.h"
#include "log/log.h"
#include "sys/page_size.h"
#include "util/runtime_scope.h"

namespace mtier::lib {
namespace {

double mib(uint64_t b) { return static_cast<double>(b) / (1 << 20); }
unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

double g_start_s = 0;  // when the summary was asked for: the process's start

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Share of the faults served without reading a store (first touches, the
// sampler's MINOR faults, first writes), in percent.
double hit_ratio(const CounterTotals& t) {
  uint64_t faults = t.missing_faults + t.minor_faults + t.wp_faults;
  if (faults == 0) return 100;
  return 100.0 * static_cast<double>(faults - std::min(t.fetches, faults)) /
         static_cast<double>(faults);
}

// "; slow tier budget B MiB, peak resident P MiB".
std::string slow_text(const EngineStats& e) {
  char buf[96];
  snprintf(buf, sizeof buf, "; slow tier budget %.1f MiB, peak resident %.1f MiB",
           mib(e.slow_budget_bytes), mib(e.slow_peak_bytes));
  return buf;
}

void print_summary_locked() {
  State& st = state();
  // The parent reports; a forked child only if it started an engine of its own.
  // The process's engine: the interposer's, or the one the C API started
  // (a program with tables of its own, mtier_table_create).
  Engine* engine = st.engine ? st.engine : running_engine();
  if (st.child || (st.forked && !engine)) return;
  if (log::level() < log::Level::kNotice) log::set_level(log::Level::kNotice);
  // Every line names the process: under a launcher (torch.multiprocessing.spawn,
  // a job of ranks) several processes print their summaries at once.
  const int pid = static_cast<int>(getpid());
  if (!engine) {
    MTIER_LOG_NOTICE(
        "summary (pid %d): no managed tables (no allocation was selected: min_bytes %.1f MiB%s)",
        pid, mib(st.selection.min_bytes()), st.failed ? "; the engine could not start" : "");
    return;
  }
  // The engine's totals, freed tables included: the same counts mtierd
  // reads from the shared segment (DaemonLink::publish_status).
  const CounterTotals t = engine->counter_totals();
  EngineStats e = engine->stats();
  uint64_t store_used = 0;
  for (auto& s : e.stores) store_used += s.used_bytes;
  MTIER_LOG_NOTICE(
      "summary (pid %d): tables %llu created (%.1f MiB), %zu live; %.1f s elapsed; DRAM budget "
      "%.1f MiB, peak resident %.1f MiB%s; store used %.1f MiB now",
      pid, ull(st.tables_created), mib(st.bytes_created), st.map.size(), now_s() - g_start_s,
      mib(e.budget_bytes), mib(e.peak_resident_bytes),
      e.slow_budget_bytes ? slow_text(e).c_str() : "", mib(store_used));
  MTIER_LOG_NOTICE(
      "summary (pid %d): faults %llu (missing %llu, minor %llu, wp %llu), hit ratio %.1f%% "
      "(faults that read no store); fetches %llu, prefetches %llu (%.1f MiB fetched); "
      "evictions %llu (%.1f MiB, written back %llu), demotions %llu; errors %llu (store errors "
      "%llu, evictions refused by a full store %llu), over-budget faults %llu",
      pid, ull(t.missing_faults + t.minor_faults + t.wp_faults), ull(t.missing_faults),
      ull(t.minor_faults), ull(t.wp_faults), hit_ratio(t), ull(t.fetches), ull(t.prefetches),
      mib((t.fetches + t.prefetches) * kPageSize), ull(t.evictions), mib(t.evictions * kPageSize),
      ull(t.writebacks), ull(t.demotions), ull(e.store_errors + e.store_full),
      ull(e.store_errors), ull(e.store_full), ull(e.budget_overruns));
  if (e.child_faults)
    MTIER_LOG_NOTICE("summary (pid %d): forked children's faults served %llu", pid,
                     ull(e.child_faults));
  if (e.prefetch_calls) {
    uint64_t in_time = e.prefetch_hits + e.prefetch_reads - std::min(e.prefetch_late, e.prefetch_reads);
    MTIER_LOG_NOTICE(
        "summary (pid %d): lookahead %llu calls named %llu pages, %.1f%% of them in DRAM in time: "
        "%llu read ahead (%llu of them late: the access waited for the read), %llu resident "
        "already; %llu not pinned (window full), %llu pinned at exit",
        pid, ull(e.prefetch_calls), ull(e.prefetch_pages),
        e.prefetch_pages ? 100.0 * static_cast<double>(in_time) / static_cast<double>(e.prefetch_pages) : 0.0,
        ull(e.prefetch_reads), ull(e.prefetch_late), ull(e.prefetch_hits),
        ull(e.window_overflows), ull(e.pinned_pages));
  }
}

// An exit handler: nothing may leave it (boundary.h).
void print_summary() noexcept {
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  (void)contained("the exit summary", "it is cut short", print_summary_locked);
}

}  // namespace

void register_exit_summary() {
  g_start_s = now_s();
  // The start line (Engine::create) and the summary are notices.
  if (log::level() < log::Level::kNotice) log::set_level(log::Level::kNotice);
  atexit(print_summary);
}

}  // namespace mtier::lib
