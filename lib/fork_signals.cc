// SPDX-License-Identifier: Apache-2.0
// Fork and SIGSEGV. A forked child of a process whose engine runs reads the
// parent's tables (uffd/child_attach.h): before fork() returns in the child,
// it maps the region's memfd privately at the same address and hands a
// userfaultfd of its own to the parent's fault handler, which brings in the
// pages it reads; its writes stay its own (copy on write). The child
// allocates plainly (it has no engine of its own); the child of a process
// whose engine never started starts its own, as a new process would. A
// child that cannot attach (no userfaultfd, the parent's handler refused
// it) says so once and leaves the region unmapped: a touch of a table then
// kills it with SIGSEGV after one line that says why, never with wrong data
// or a hang. Every other SIGSEGV goes to the handler installed before ours.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "engine_instance.h"
#include "interposer.h"
#include "interposer_state.h"
#include "log/log.h"
#include "sys/vm.h"
#include "uffd/child_attach.h"

namespace mtier::lib {
namespace {

struct sigaction g_previous;  // the SIGSEGV disposition before ours

// Captured in the parent by prepare(); the child reads its copy. A child's
// own children (grandchildren) inherit its mapping and attach the same way.
Engine::ForkPlan g_plan;
// In a child: whether it reads the parent's tables (attached). Read by the
// SIGSEGV handler without the lock: written before the child runs any code
// of its own.
bool g_attached = false;
const char* g_why_not = "";  // why not, for the SIGSEGV line

void prepare() {
  State& st = state();
  st.mu.lock();
  // The engine the interposer or the C API started. A child's engine
  // pointer is its parent's, not to be called: its plan, copied at its own
  // fork, stays in effect for its children.
  Engine* e = running_engine();
  if (e && !st.child) g_plan = e->prepare_fork();
}

void parent() { state().mu.unlock(); }

// In the child, under the lock: attaches to the parent's fault handler or
// unmaps the region. `first`: a child of the process that runs the engine
// (a grandchild instead inherits its parent's private mapping).
void attach(bool first) {
  const Inheritance& in = g_plan.inheritance;
  if (!first && !g_attached) return;  // its parent could not: nothing is mapped
  g_attached = false;
  if (!g_plan.ok) {
    g_why_not = "its parent's engine cannot serve forked children";
    if (!first) (void)sys::unmap(in.base, in.bytes);
    return;
  }
  const char* step = "";
  int rc = attach_to_parent(in, first, &step);
  if (rc == 0) {
    g_attached = true;
    return;
  }
  g_why_not = step;
  // What attach_to_parent mapped, or the mapping a grandchild inherited:
  // unmapped, so that a touch faults instead of reading a hole as zeros.
  (void)sys::unmap(in.base, in.bytes);
  MTIER_LOG_WARN("forked child %d cannot read its parent's tables (%s: %s); a touch of one "
                 "ends it with SIGSEGV", static_cast<int>(getpid()), step, strerror(-rc));
}

void child() {
  State& st = state();
  st.forked = true;
  if (!st.child && no_engine_at_fork()) {
    // No engine ran in the parent: no region, no threads, no tables to
    // inherit. The child is a process of its own and starts its own engine
    // for its own tables - the ranks a launcher forks (torch.multiprocessing
    // with the fork or forkserver start method, a job's launcher under
    // `mtier run`) each get a region, as exec'd (spawned) ranks do.
    st.mu.unlock();
    return;
  }
  bool first = !st.child;
  st.child = true;
  g_smallest_candidate.store(UINT64_MAX);
  if (first) {
    const Inheritance& in = g_plan.inheritance;
    g_inherited_lo.store(reinterpret_cast<uintptr_t>(in.base));
    g_inherited_hi.store(reinterpret_cast<uintptr_t>(in.base + in.bytes));
    g_region_lo.store(0);
    g_region_hi.store(0);
  }
  attach(first);
  st.mu.unlock();
}

// Async-signal-safe: the log writes with write(2) from a stack buffer.
void explain_and_die(void* addr) {
  MTIER_LOG_ERROR("process %d touched %p, memory of a managed table, in a child made by fork "
                  "that cannot read its parent's tables (%s; see mtier(7), \"Fork\"); killing "
                  "it with SIGSEGV", static_cast<int>(getpid()), addr, g_why_not);
  signal(SIGSEGV, SIG_DFL);  // returning re-runs the access: the default action ends the child
}

void chain(int sig, siginfo_t* info, void* ctx) {
  if (g_previous.sa_flags & SA_SIGINFO) return g_previous.sa_sigaction(sig, info, ctx);
  if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    signal(sig, SIG_DFL);  // re-run the access with the default action
    return;
  }
  g_previous.sa_handler(sig);
}

void on_segv(int sig, siginfo_t* info, void* ctx) {
  // st.child is read without the lock: the handler may not block, and the
  // flag is written once, before the child runs any code of its own. An
  // attached child's SIGSEGV in the region is its own doing (a table it
  // freed): chained like any other.
  if (state().child && !g_attached && in_inherited(info->si_addr))
    return explain_and_die(info->si_addr);
  chain(sig, info, ctx);
}

}  // namespace

void install_fork_handlers() {
  static std::once_flag once;  // the interposer's activation and the C API's start both ask
  std::call_once(once, [] { pthread_atfork(prepare, parent, child); });
}

void install_segv_handler() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

}  // namespace mtier::lib
