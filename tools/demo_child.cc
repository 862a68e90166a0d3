// SPDX-License-Identifier: Apache-2.0
#include "demo_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "cgroup.h"

namespace mtier::tools::demo {
namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  for (int sig : kSignals) sigaction(sig, &sa, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

ChildOutcome run_in_child(const std::function<int(int, ChildProgress*)>& body,
                          bench::MemoryCgroup* cg, unsigned timeout_s) {
  ChildOutcome out;
  // One shared page: the child's progress survives its kill.
  void* shared = mmap(nullptr, sizeof(ChildProgress), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    out.failure = std::string("mmap: ") + strerror(errno);
    return out;
  }
  auto* progress = new (shared) ChildProgress();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    out.failure = std::string("pipe: ") + strerror(errno);
    munmap(shared, sizeof(ChildProgress));
    return out;
  }
  fflush(stdout);  // nothing buffered is written twice
  fflush(stderr);
  double start = monotonic_seconds();
  pid_t pid = fork();
  if (pid < 0) {
    out.failure = std::string("fork: ") + strerror(errno);
    close(fds[0]);
    close(fds[1]);
    munmap(shared, sizeof(ChildProgress));
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    for (int sig : kSignals) sigaction(sig, &sa, nullptr);
    std::string why;
    if (cg && cg->add_pid(getpid(), &why) < 0) {
      dprintf(2, "mtier demo: joining the cgroup: %s\n", why.c_str());
      _exit(1);
    }
    // _exit: no atexit handlers or static destructors of the parent's state.
    _exit(body(fds[1], progress));
  }
  close(fds[1]);
  double deadline = start + timeout_s;
  pollfd p{fds[0], POLLIN, 0};
  for (;;) {
    double left = deadline - monotonic_seconds();
    if (left <= 0 || interrupted()) {
      (left <= 0 ? out.timed_out : out.interrupted) = true;
      kill(pid, SIGKILL);
      break;
    }
    int n = poll(&p, 1, static_cast<int>(left < 1 ? left * 1000 + 1 : 1000));
    if (n < 0 && errno != EINTR) {
      out.failure = std::string("poll: ") + strerror(errno);
      kill(pid, SIGKILL);
      break;
    }
    if (n <= 0) continue;
    char buf[65536];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child is done (or failed)
    out.output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  // The pipe closed: the child is ending. Should it hang in _exit, the
  // deadline still holds.
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (w == 0 && !out.timed_out && !out.interrupted && out.failure.empty() &&
        (monotonic_seconds() > deadline || interrupted())) {
      (interrupted() ? out.interrupted : out.timed_out) = true;
      kill(pid, SIGKILL);
    }
    if (w == 0) usleep(2000);
  }
  out.elapsed = monotonic_seconds() - start;
  out.progress = *progress;
  munmap(shared, sizeof(ChildProgress));
  if (!out.failure.empty()) return out;
  if (out.interrupted) {
    out.failure = "interrupted";
  } else if (out.timed_out) {
    out.failure = "timed out after " + std::to_string(timeout_s) + " s";
  } else if (WIFSIGNALED(status)) {
    bool oom = WTERMSIG(status) == SIGKILL && cg && cg->oom_kills() > 0;
    out.failure = oom ? "OOM-killed in its cgroup" : std::string("killed by ") + strsignal(WTERMSIG(status));
  } else if (WEXITSTATUS(status) != 0) {
    out.failure = "exit " + std::to_string(WEXITSTATUS(status)) + " (its reason is above)";
  } else {
    out.ok = true;
  }
  return out;
}

}  // namespace mtier::tools::demo
