// SPDX-License-Identifier: Apache-2.0
// The descriptors the runtime keeps open for its life (the region's memfd,
// userfaultfds, eventfds, store files, io_uring rings, sockets, pidfds).
// A program that closes "all" its descriptors (close_range, closefrom, a
// loop of close - daemonising code, some launchers) must not close these:
// an evicted page would then read as zeros. The preload's close, close_range,
// closefrom, dup2 and dup3 (lib/fd_override.cc) leave the noted ones alone.
// Noted descriptors are moved above a floor at adoption, so that a program
// that closed its standard descriptors and dup2()s onto 0-2 never meets one.
// Lock-free, allocation-free: a bitmap of descriptor numbers below 65536
// (higher ones are never noted).
#pragma once

namespace mtier::sys {

// The lowest number adopt_fd() moves a descriptor to: half the soft
// RLIMIT_NOFILE, at most 512, at least 3.
int runtime_fd_floor();
// Notes fd as the runtime's, first moving it to the lowest free number at
// or above the floor (fcntl F_DUPFD_CLOEXEC; the old number is closed). On
// failure (no number free there) it stays where it is, noted. Returns the
// descriptor to use; a negative fd is returned as it is.
int adopt_fd(int fd);
// Notes fd as the runtime's where it is (a descriptor a library holds, such
// as an io_uring ring's).
void note_fd(int fd);
// Forgets fd and closes it. Returns close's 0 or -errno.
int close_fd(int fd);
// Forgets fd without closing it (closed elsewhere).
void forget_fd(int fd);
bool is_runtime_fd(int fd);
// The smallest noted descriptor >= from, or -1.
int next_runtime_fd(int from);

}  // namespace mtier::sys
