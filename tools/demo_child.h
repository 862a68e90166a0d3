// SPDX-License-Identifier: Apache-2.0
// `mtier demo` runs each configuration in a child process of its own: a
// fresh engine per mtier run (its statistics, peak residency and heat map
// are that run's), and the kernel's swap baseline inside a memory cgroup,
// which only a process that joins it before touching its tables is charged
// to. The parent never starts mtier, so it is single-threaded when it forks.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

namespace mtier::bench {
class MemoryCgroup;
}

namespace mtier::tools::demo {

// Where the child's training stands, in memory shared with the parent, so
// that a run killed at its timeout still says how far it got.
struct ChildProgress {
  uint64_t steps_done = 0;
  double train_start = 0;  // CLOCK_MONOTONIC seconds when training began (0: not yet)
};

struct ChildOutcome {
  bool ok = false;          // exited 0 and wrote its result
  std::string failure;      // why not: "timed out after 300 s", "OOM-killed in its cgroup", ...
  bool timed_out = false;
  bool interrupted = false; // SIGINT/SIGTERM/SIGHUP reached the demo
  std::string output;       // every byte the child wrote to its result fd
  ChildProgress progress;   // as the child left it
  double elapsed = 0;       // seconds from fork to the child's end, or to its kill
};

// Runs `body` in a forked child: the child restores the default signal
// actions, joins `cg` (when not null; a failure ends the child with the
// reason), then calls body(result_fd, progress) and _exits with its return
// value. The child's stderr is the demo's (progress lines); its result goes
// through the pipe. The child is killed (SIGKILL) after `timeout_s` or when
// the demo is interrupted. Never throws; a fork or pipe failure is a
// failure of the run.
ChildOutcome run_in_child(const std::function<int(int fd, ChildProgress* progress)>& body,
                          bench::MemoryCgroup* cg, unsigned timeout_s);

// SIGINT, SIGTERM and SIGHUP set a flag instead of ending the demo, so that
// it kills the run in progress and removes its cgroup and swap file first.
void catch_interrupts();
bool interrupted();

// CLOCK_MONOTONIC in seconds: comparable between the parent and its child.
double monotonic_seconds();

}  // namespace mtier::tools::demo
