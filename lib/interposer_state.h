// SPDX-License-Identifier: Apache-2.0
// The interposer's shared state, for its own files only (interposer.cc,
// region_calls.cc, fork_signals.cc, exit_summary.cc).
#pragma once
#include <mutex>

#include "engine/engine.h"
#include "managed_map.h"
#include "selection.h"

namespace mtier::lib {

struct State {
  std::mutex mu;              // guards everything below
  Selection selection;
  ManagedMap map;
  Engine* engine = nullptr;   // once started
  bool failed = false;        // the engine cannot start (for good): plain allocation
  bool child = false;         // a forked child of a process with an engine: plain allocation
  bool forked = false;        // made by fork (with or without an engine in the parent)
  bool summary = false;       // print the summary at exit
  uint64_t tables_created = 0, bytes_created = 0;
};

State& state();

// Under state().mu: the engine, started if needed; nullptr when it cannot run
// (now: out of memory, tried again next time; or for good: st.failed).
Engine* engine_locked() noexcept;
// Under state().mu: frees the table of m and forgets m. Needs no memory.
void release_locked(const Managed* m) noexcept;

// Installs the SIGSEGV handler that explains a forked child's touch of the
// region and chains to the handler installed before it.
void install_segv_handler();
void install_fork_handlers();
void register_exit_summary();

}  // namespace mtier::lib
