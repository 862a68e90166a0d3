// MTIER_STATS=1 / MTIER_VERBOSE=1: a summary at exit, from the engine's
// figures and those of the tables freed before.
#include <unistd.h>

#include <cstdlib>

#include "boundary.h"
#include "interposer_state.h"
#include "log/log.h"
#include "util/runtime_scope.h"

namespace mtier::lib {
namespace {

double mib(uint64_t b) { return static_cast<double>(b) / (1 << 20); }

void print_summary_locked() {
  State& st = state();
  // The parent reports; a forked child only if it started an engine of its own.
  if (st.child || (st.forked && !st.engine)) return;
  if (log::level() < log::Level::kNotice) log::set_level(log::Level::kNotice);
  // Every line names the process: under a launcher (torch.multiprocessing.spawn,
  // a job of ranks) several processes print their summaries at once.
  const int pid = static_cast<int>(getpid());
  if (!st.engine) {
    MTIER_LOG_NOTICE(
        "summary (pid %d): no managed tables (no allocation was selected: min_bytes %.1f MiB%s)",
        pid, mib(st.selection.min_bytes()), st.failed ? "; the engine could not start" : "");
    return;
  }
  Totals t = st.freed;
  char* const end = reinterpret_cast<char*>(UINTPTR_MAX);
  for (Managed* m = st.map.first_overlapping(nullptr, end); m;
       m = st.map.first_overlapping(m->end(), end)) {
    TableStats s;
    if (st.engine->table_stats(m->id, &s) == 0) t.add(s);
  }
  EngineStats e = st.engine->stats();
  uint64_t store_used = 0;
  for (auto& s : e.stores) store_used += s.used_bytes;
  MTIER_LOG_NOTICE("summary (pid %d): tables %llu created (%.1f MiB), %zu live", pid,
                   static_cast<unsigned long long>(st.tables_created), mib(st.bytes_created),
                   st.map.size());
  MTIER_LOG_NOTICE(
      "summary (pid %d): DRAM budget %.1f MiB, peak resident %.1f MiB; slow tier budget "
      "%.1f MiB, peak resident %.1f MiB; store used %.1f MiB now",
      pid, mib(e.budget_bytes), mib(e.peak_resident_bytes), mib(e.slow_budget_bytes),
      mib(e.slow_peak_bytes), mib(store_used));
  MTIER_LOG_NOTICE(
      "summary (pid %d): faults missing %llu, minor %llu, wp %llu; fetches %llu, prefetches "
      "%llu; migrations: evictions %llu (written back %llu), demotions %llu; "
      "errors %llu (store errors %llu, evictions refused by a full store %llu), "
      "over-budget faults %llu",
      pid, static_cast<unsigned long long>(t.missing_faults),
      static_cast<unsigned long long>(t.minor_faults), static_cast<unsigned long long>(t.wp_faults),
      static_cast<unsigned long long>(t.fetches), static_cast<unsigned long long>(t.prefetches),
      static_cast<unsigned long long>(t.evictions), static_cast<unsigned long long>(t.writebacks),
      static_cast<unsigned long long>(t.demotions),
      static_cast<unsigned long long>(e.store_errors + e.store_full),
      static_cast<unsigned long long>(e.store_errors),
      static_cast<unsigned long long>(e.store_full),
      static_cast<unsigned long long>(e.budget_overruns));
  if (e.child_faults)
    MTIER_LOG_NOTICE("summary (pid %d): forked children's faults served %llu", pid,
                     static_cast<unsigned long long>(e.child_faults));
  if (e.prefetch_calls)
    MTIER_LOG_NOTICE(
        "summary (pid %d): lookahead %llu calls named %llu pages: %llu read ahead (%llu "
        "of them late: the access waited for the read), %llu resident already; "
        "%llu not pinned (window full), %llu pinned at exit",
        pid, static_cast<unsigned long long>(e.prefetch_calls),
        static_cast<unsigned long long>(e.prefetch_pages),
        static_cast<unsigned long long>(e.prefetch_reads),
        static_cast<unsigned long long>(e.prefetch_late),
        static_cast<unsigned long long>(e.prefetch_hits),
        static_cast<unsigned long long>(e.window_overflows),
        static_cast<unsigned long long>(e.pinned_pages));
}

// An exit handler: nothing may leave it (boundary.h).
void print_summary() noexcept {
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  (void)contained("the exit summary", "it is cut short", print_summary_locked);
}

}  // namespace

void register_exit_summary() { atexit(print_summary); }

}  // namespace mtier::lib
