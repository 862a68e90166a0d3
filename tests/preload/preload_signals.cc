// SPDX-License-Identifier: Apache-2.0
// The program's own SIGSEGV and SIGBUS handlers under LD_PRELOAD=libmtier.so
// (run by signals.test):
//
//   preload_signals before  handlers installed (sigaction, SA_SIGINFO) before
//                           the first managed allocation, which starts the
//                           engine and its SIGSEGV handler: that handler must
//                           chain, so a NULL read and raise(SIGBUS) still
//                           reach the program's handlers (siglongjmp out)
//   preload_signals after   (extra) handlers installed after the engine runs:
//                           they replace the library's; managed memory keeps
//                           working (faults are userfaultfd's, not signals)
#include <signal.h>

#include <string>

#include "common.h"

namespace {

using pt::MiB;

sigjmp_buf g_jb;
volatile sig_atomic_t g_armed = 0;
volatile sig_atomic_t g_segv_runs = 0, g_bus_runs = 0;
void* volatile g_addr = nullptr;
volatile int g_code = 0;

void on_segv(int sig, siginfo_t* si, void*) {
  if (sig == SIGSEGV) g_segv_runs = g_segv_runs + 1;
  g_addr = si->si_addr;
  g_code = si->si_code;
  if (g_armed) {
    g_armed = 0;
    siglongjmp(g_jb, 1);
  }
  signal(sig, SIG_DFL);
}
void on_bus(int sig, siginfo_t* si, void*) {
  if (sig == SIGBUS) g_bus_runs = g_bus_runs + 1;
  g_code = si->si_code;
  if (g_armed) {
    g_armed = 0;
    siglongjmp(g_jb, 1);
  }
  signal(sig, SIG_DFL);
}

void install() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;
  sa.sa_sigaction = on_segv;
  CHECK(sigaction(SIGSEGV, &sa, nullptr) == 0, "sigaction(SIGSEGV): errno %d", errno);
  sa.sa_sigaction = on_bus;
  CHECK(sigaction(SIGBUS, &sa, nullptr) == 0, "sigaction(SIGBUS): errno %d", errno);
  pt::ok("own SIGSEGV and SIGBUS handlers installed (SA_SIGINFO)");
}

// A managed allocation whose data goes to the store and comes back.
void managed_round(uint64_t seed) {
  char* p = static_cast<char*>(malloc(8 * MiB));
  CHECK(p, "malloc(8M): NULL");
  int id = EXPECT_MANAGED(p, 8 * MiB, "malloc(8M)");
  pt::fill(p, 8 * MiB, seed);
  pt::churn("managed round");
  pt::expect_evicted(id, "malloc(8M)");
  EXPECT_DATA(p, 8 * MiB, seed, "malloc(8M) after eviction");
  pt::expect_fetched(id, "malloc(8M)");
  free(p);
}

void null_read(int round) {
  int before = g_segv_runs;
  if (sigsetjmp(g_jb, 1) == 0) {
    g_armed = 1;
    volatile char* null = nullptr;
    (void)*null;
    g_armed = 0;
    pt::fail_at(__FILE__, __LINE__, "round %d: a NULL read did not fault", round);
  }
  CHECK(g_segv_runs == before + 1, "round %d: NULL read: expected the program's SIGSEGV handler to run once, "
        "it ran %d times", round, g_segv_runs - before);
  CHECK(g_addr == nullptr, "round %d: NULL read: expected si_addr NULL, found %p", round, g_addr);
  pt::ok("round %d: a NULL read reached the program's SIGSEGV handler (si_addr NULL, si_code %d)", round,
         g_code);
}

void raise_bus(int round) {
  int before = g_bus_runs;
  if (sigsetjmp(g_jb, 1) == 0) {
    g_armed = 1;
    raise(SIGBUS);
    g_armed = 0;
    pt::fail_at(__FILE__, __LINE__, "round %d: raise(SIGBUS) returned (handler did not siglongjmp)", round);
  }
  CHECK(g_bus_runs == before + 1, "round %d: raise(SIGBUS): expected the program's SIGBUS handler to run "
        "once, it ran %d times", round, g_bus_runs - before);
  CHECK(g_code == SI_TKILL || g_code == SI_USER, "round %d: raise(SIGBUS): expected si_code SI_TKILL, found %d",
        round, g_code);
  pt::ok("round %d: raise(SIGBUS) reached the program's SIGBUS handler", round);
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::start("preload_signals");
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "before") {
    install();
    managed_round(1);  // starts the engine (its SIGSEGV handler goes on top)
    for (int round = 1; round <= 3; round++) {
      null_read(round);
      raise_bus(round);
      managed_round(10 + round);  // the engine still works after each
    }
  } else if (mode == "after") {
    managed_round(1);
    install();
    for (int round = 1; round <= 2; round++) {
      null_read(round);
      raise_bus(round);
      managed_round(10 + round);
    }
  } else {
    fprintf(stderr, "usage: preload_signals before|after\n");
    return 2;
  }
  printf("PASS: preload_signals %s\n", mode.c_str());
  return 0;
}
