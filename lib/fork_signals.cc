// Fork and SIGSEGV. A forked child does not inherit the region (the engine
// maps it MADV_DONTFORK and its threads do not exist in the child): the child
// of a process whose engine ran runs with plain allocation (the child of one
// whose engine never started starts its own, as a new process would), and a touch of an inherited managed page kills
// it with SIGSEGV after one line that says why, never with wrong data or a
// hang. Every other SIGSEGV goes to the handler installed before ours.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "engine_instance.h"
#include "interposer.h"
#include "interposer_state.h"
#include "log/log.h"

namespace mtier::lib {
namespace {

struct sigaction g_previous;  // the SIGSEGV disposition before ours

void prepare() { state().mu.lock(); }
void parent() { state().mu.unlock(); }
void child() {
  State& st = state();
  st.forked = true;
  if (!st.engine && no_engine_at_fork()) {
    // No engine ran in the parent: no region, no threads, no tables to
    // inherit. The child is a process of its own and starts its own engine
    // for its own tables - the ranks a launcher forks (torch.multiprocessing
    // with the fork or forkserver start method, a job's launcher under
    // `mtier run`) each get a region, as exec'd (spawned) ranks do.
    st.mu.unlock();
    return;
  }
  st.child = true;
  g_smallest_candidate.store(UINT64_MAX);
  g_inherited_lo.store(g_region_lo.load());
  g_inherited_hi.store(g_region_hi.load());
  g_region_lo.store(0);
  g_region_hi.store(0);
  st.mu.unlock();
}

// Async-signal-safe: the log writes with write(2) from a stack buffer.
void explain_and_die(void* addr) {
  MTIER_LOG_ERROR("process %d touched %p, memory of a managed table, in a child made by fork: "
                  "tables are not inherited across fork (see mtier(7), \"Fork\"); killing it "
                  "with SIGSEGV", static_cast<int>(getpid()), addr);
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
  // flag is written once, before the child runs any code of its own.
  if (state().child && in_inherited(info->si_addr)) return explain_and_die(info->si_addr);
  chain(sig, info, ctx);
}

}  // namespace

void install_fork_handlers() { pthread_atfork(prepare, parent, child); }

void install_segv_handler() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

}  // namespace mtier::lib
