// SPDX-License-Identifier: Apache-2.0
#include "fuse_child.h"

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mtier::daemon {
namespace {

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

std::string find_mtierfs() {
  std::string dir = self_dir();
  for (const std::string& p : {dir + "/mtierfs", dir + "/../fs/mtierfs",
                               std::string(MTIER_SBINDIR) + "/mtierfs"})
    if (access(p.c_str(), X_OK) == 0) return p;
  return "";
}

int exit_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

}  // namespace

pid_t start_mtierfs(const std::string& mount, const std::string& socket, std::string* why) {
  std::string exe = find_mtierfs();
  if (exe.empty()) {
    *why = "--fuse: no mtierfs next to mtierd or in " MTIER_SBINDIR;
    return -ENOENT;
  }
  pid_t pid = fork();
  if (pid < 0) {
    *why = std::string("--fuse: fork: ") + strerror(errno);
    return -errno;
  }
  if (pid == 0) {
    // The daemon blocks these for its signalfd; mtierfs needs them.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // No allocation between fork and exec: an exception here would unwind
    // into a second copy of the daemon.
    const char* argv[] = {"mtierfs", mount.c_str(), "-f", "--socket", socket.c_str(), nullptr};
    execv(exe.c_str(), const_cast<char* const*>(argv));
    _exit(127);
  }
  return pid;
}

bool mtierfs_exited(pid_t pid, int* status) {
  int st;
  if (waitpid(pid, &st, WNOHANG) != pid) return false;
  *status = exit_status(st);
  return true;
}

void stop_mtierfs(pid_t pid, const std::string& mount) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 50; i++) {
    int status;
    if (mtierfs_exited(pid, &status)) return;
    poll(nullptr, 0, 100);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  pid_t u = fork();
  if (u == 0) {
    execlp("fusermount3", "fusermount3", "-u", "-z", mount.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (u > 0) waitpid(u, nullptr, 0);
}

}  // namespace mtier::daemon
