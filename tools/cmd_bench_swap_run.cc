// SPDX-License-Identifier: Apache-2.0
// mtier bench swap-run: runs a command as the kernel's swap baseline (no
// mtier): in a fresh memory cgroup of a given limit, swap allowed, with a
// swap file of its own on the disk of the benchmark's store (demo_swap.h
// sets both up, as for `mtier demo`). Scripts (scripts/bench-trainer.sh)
// use it to run any program as the swap configuration. The cgroup and the
// swap file are removed when the command ends, also when swap-run is
// interrupted (SIGINT, SIGTERM, SIGHUP: passed on to the command).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cgroup.h"
#include "cli.h"
#include "demo_swap.h"
#include "units.h"

namespace mtier::tools {
namespace {

// Exit statuses of swap-run itself (otherwise the command's); 2: usage.
constexpr int kCannotRunHere = 77;  // no root, no memory cgroup or no swap
constexpr int kSetupFailed = 125;   // as timeout(1) and env(1)
constexpr int kCannotExec = 126;
constexpr int kNotFound = 127;
constexpr unsigned kKillAfterS = 10;  // after a passed-on signal, SIGKILL

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench swap-run --limit SIZE [--dir DIR] [--swap-bytes SIZE]\n"
          "                            -- COMMAND [ARGS...]\n\n"
          "Runs COMMAND as the kernel's swap baseline: in a fresh memory cgroup with a\n"
          "limit of SIZE, swap allowed (cgroup v1: memory.swappiness %d), with a swap file\n"
          "of its own in DIR (or, when none can be made there, the swap already active).\n"
          "Prints one line on stderr describing the cgroup and the swap before COMMAND\n"
          "starts and one with the cgroup's peak usage and OOM kills after it ends.\n"
          "Removes the cgroup and the swap file when COMMAND ends, also when interrupted:\n"
          "SIGINT, SIGTERM and SIGHUP are passed on to COMMAND (SIGKILL %u s later).\n\n"
          "  --limit SIZE       the cgroup's memory limit (K, M, G suffixes; required)\n"
          "  --dir DIR          directory of the swap file, on the disk to swap to\n"
          "                     (default /var/tmp)\n"
          "  --swap-bytes SIZE  size of the swap file (default 1G)\n"
          "  -h, --help         this text\n\n"
          "Exit status: COMMAND's (128+N when it was killed by signal N); 77 when it\n"
          "cannot run here (not root, no memory cgroup, no swap; one line says why);\n"
          "125 when setting up or removing the cgroup or the swap file failed otherwise;\n"
          "126 when COMMAND cannot be executed, 127 when it is not found; 2 for a usage\n"
          "error.\n",
          demo::SwapBaseline::kSwappiness, kKillAfterS);
}

using bench::mib;

volatile sig_atomic_t g_child = 0;   // the command's pid once forked
volatile sig_atomic_t g_signal = 0;  // the last signal received

constexpr int kPassOn[] = {SIGINT, SIGTERM, SIGHUP};

// Passes the signal on to the command; SIGKILL if it still runs later.
void on_signal(int sig) {
  g_signal = sig;
  if (g_child > 0) {
    kill(static_cast<pid_t>(g_child), sig);
    alarm(kKillAfterS);
  }
}

void on_alarm(int) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), SIGKILL);
}

void set_handlers(void (*pass_on)(int), void (*alarm_handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = pass_on;
  for (int sig : kPassOn) sigaction(sig, &sa, nullptr);
  sa.sa_handler = alarm_handler;
  sigaction(SIGALRM, &sa, nullptr);
}

// What the child reports through the close-on-exec pipe when it fails
// before COMMAND runs (nothing when the exec succeeds).
struct ChildFailure {
  int joining;  // 1: joining the cgroup, 0: the exec
  int error;    // errno, positive
};

// Forks COMMAND into `cg`; its wait status, or -1 with *err when it did
// not start (*status_if_not: the exit status to use then).
int run_command(char** command, bench::MemoryCgroup* cg, int* status_if_not, std::string* err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    *err = std::string("pipe: ") + strerror(errno);
    *status_if_not = kSetupFailed;
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    *err = std::string("fork: ") + strerror(errno);
    *status_if_not = kSetupFailed;
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    set_handlers(SIG_DFL, SIG_DFL);
    std::string why;
    ChildFailure f{1, 0};
    int rc = cg->add_pid(getpid(), &why);
    if (rc == 0) {
      execvp(command[0], command);
      f = {0, errno};
    } else {
      f.error = -rc;
    }
    ssize_t n = write(fds[1], &f, sizeof f);
    (void)n;
    _exit(kSetupFailed);
  }
  g_child = pid;
  if (g_signal) on_signal(g_signal);  // arrived while forking
  close(fds[1]);
  ChildFailure f{};
  ssize_t got;
  do {
    got = read(fds[0], &f, sizeof f);
  } while (got < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  alarm(0);
  g_child = 0;
  if (got == static_cast<ssize_t>(sizeof f)) {
    if (f.joining) {
      *err = std::string("joining the cgroup: ") + strerror(f.error);
      *status_if_not = kSetupFailed;
    } else {
      *err = std::string(command[0]) + ": " + strerror(f.error);
      *status_if_not = f.error == ENOENT ? kNotFound : kCannotExec;
    }
    return -1;
  }
  return status;
}

}  // namespace

int bench_swap_run(int argc, char** argv) {
  const cli::Command cmd("bench swap-run");
  uint64_t limit = 0, swap_bytes = 1ull << 30;
  std::string dir = "/var/tmp";
  cli::Parser p(cmd, usage);
  p.size("--limit", &limit, 1u << 20).text("--dir", &dir).size("--swap-bytes", &swap_bytes, 1u << 20);
  // The options end at COMMAND, whose own options are its own.
  int first = argc;
  if (int rc = p.parse_until_operand(argc, argv, &first); rc >= 0) return rc;
  if (!limit) return cmd.usage_error("--limit SIZE is required");
  if (first >= argc) return cmd.usage_error("no COMMAND after the options");
  char** command = argv + first;

  set_handlers(on_signal, on_alarm);  // before the swap file: it is removed whatever comes
  demo::SwapBaseline sb;
  sb.prepare_file(dir + "/mtier-swap-run-" + std::to_string(getpid()) + ".swap", swap_bytes);
  if (!sb.skipped().empty()) {
    fprintf(stderr, "mtier bench swap-run: cannot run here: %s\n", sb.skipped().c_str());
    return kCannotRunHere;
  }
  int rc = kSetupFailed;
  std::string why;
  bench::MemoryCgroup cg;
  if (g_signal) {
    why = std::string("interrupted (") + strsignal(g_signal) + ") before COMMAND started";
    rc = 128 + g_signal;
  } else if (sb.make_cgroup("swap-run", limit, &cg, &why) < 0) {
    fprintf(stderr, "mtier bench swap-run: cannot run here: the cgroup: %s\n", why.c_str());
    why.clear();
    rc = kCannotRunHere;
  } else {
    fprintf(stderr, "mtier bench swap-run: %s; cgroup %s, limit %s, swap allowed\n",
            sb.environment().c_str(), cg.path().c_str(), mib(limit).c_str());
    int status = run_command(command, &cg, &rc, &why);
    if (status >= 0) {
      why.clear();
      rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      int64_t peak = cg.peak_bytes(), ooms = cg.oom_kills();
      fprintf(stderr, "mtier bench swap-run: cgroup peak %s, OOM kills %s\n",
              peak < 0 ? "unknown" : mib(static_cast<uint64_t>(peak)).c_str(),
              ooms < 0 ? "unknown" : std::to_string(ooms).c_str());
    }
  }
  if (!why.empty()) fprintf(stderr, "mtier bench swap-run: %s\n", why.c_str());
  // No command left to pass a signal on to; none may cut swapoff short.
  sigset_t block;
  sigemptyset(&block);
  for (int sig : kPassOn) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, nullptr);
  if (cg.destroy(&why) < 0) {
    fprintf(stderr, "mtier bench swap-run: removing the cgroup: %s\n", why.c_str());
    rc = kSetupFailed;
  }
  if (sb.teardown(&why) < 0) {
    fprintf(stderr, "mtier bench swap-run: removing the swap file: %s\n", why.c_str());
    rc = kSetupFailed;
  }
  return rc;
}

}  // namespace mtier::tools
