// SPDX-License-Identifier: Apache-2.0
// mtierd --fuse MOUNTPOINT: mtierfs(8) run as a child of the daemon, so one
// unit serves both. mtierfs is a separate program (it links libfuse3; the
// daemon does not) talking to the daemon over its socket like any control
// client.
#pragma once
#include <sys/types.h>

#include <string>

namespace mtier::daemon {

// Starts `mtierfs MOUNTPOINT -f --socket SOCKET`, found next to this
// program, in ../fs/ (the build tree) or in the configured sbindir. Returns
// its pid, or -errno with *why (no mtierfs found, fork failed).
pid_t start_mtierfs(const std::string& mount, const std::string& socket, std::string* why);

// Whether the child has exited; if so *status is its exit status (128 + N
// for signal N) and it is reaped.
bool mtierfs_exited(pid_t pid, int* status);

// SIGTERM (mtierfs unmounts and exits on it), up to 5 s, then SIGKILL and a
// lazy `fusermount3 -u -z MOUNTPOINT`. Reaps the child.
void stop_mtierfs(pid_t pid, const std::string& mount);

}  // namespace mtier::daemon
