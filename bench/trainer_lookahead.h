// SPDX-License-Identifier: Apache-2.0
// The sample trainer's lookahead: the rows of the steps ahead named to
// libmtier through its public C API (mtier_prefetch_rows, _wait, _advance),
// as any C++ trainer linking libmtier would. It changes where pages are when
// a step reads them, never what the step computes.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace mtier::tools {

struct LookaheadOptions {
  unsigned depth = 0;  // steps named ahead of the current one (0: no lookahead)
  // MTIER_PREFETCH_ASYNC: name() returns at once and the reads overlap the
  // current step's compute; wait() collects them before the step that needs
  // them. Synchronous: name() returns when the pages are read.
  bool async = true;
};

// What the lookahead did over a run (for the demo's report).
struct LookaheadCounters {
  uint64_t calls = 0;        // mtier_prefetch_rows calls
  uint64_t pages_read = 0;   // pages read from the store ahead of the access
  uint64_t errors = 0;       // calls or waits that returned -errno
  int first_error = 0;       // the first such errno (0: none)
  double wait_seconds = 0;   // time spent waiting on tickets (or in sync calls)
};

// One step's rows, per table, as the trainer reads them: ids[t] holds the
// row numbers of table t (int64_t, as mtier_prefetch_rows takes with
// id_bytes 8), in any order, duplicates allowed.
using StepRows = std::vector<std::vector<int64_t>>;

class LookaheadWindow {
 public:
  // tables[t]: the start of table t; every row is row_bytes long.
  LookaheadWindow(std::vector<const void*> tables, size_t row_bytes, const LookaheadOptions& o);
  ~LookaheadWindow();  // waits for what is still in flight (it reads our tables)
  LookaheadWindow(const LookaheadWindow&) = delete;
  LookaheadWindow& operator=(const LookaheadWindow&) = delete;

  // The trainer now works on `step`: pins of earlier steps are released.
  void advance(uint64_t step);
  // Names step `step`'s rows (a batch number for mtier: the step).
  void name(uint64_t step, const StepRows& rows);
  // Returns when every read named for `step` has completed (async only;
  // a no-op for a step never named or already waited for).
  void wait(uint64_t step);

  const LookaheadCounters& counters() const { return c_; }

 private:
  void count(long rc);
  std::vector<const void*> tables_;
  size_t row_bytes_;
  LookaheadOptions o_;
  std::deque<std::pair<uint64_t, std::vector<long>>> tickets_;  // per named step, in order
  LookaheadCounters c_;
};

}  // namespace mtier::tools
