// SPDX-License-Identifier: Apache-2.0
// Thin AF_UNIX SOCK_SEQPACKET layer for the daemon's control socket: each
// call returns an fd, a byte count or 0, or -errno. Every fd it creates or
// receives is O_CLOEXEC (the runtime lives in processes that fork and exec).
// EINTR is retried inside. SEQPACKET keeps message boundaries, so one send
// is one receive; file descriptors travel as SCM_RIGHTS.
#pragma once
#include <sys/types.h>
#include <cstddef>
#include <string>

namespace mtier::sys {

// Most fds unix_send passes with one message.
inline constexpr size_t kMaxSendFds = 4;

// Creates a listening socket bound at `path` (non-blocking, for an epoll
// loop: unix_accept then says -EAGAIN when nobody waits) and chmods it to
// `mode` before listen(), so no client can connect under looser bits.
// If `path` exists: a socket somebody accepts on gives -EADDRINUSE (another
// daemon runs); a socket nobody listens on (ECONNREFUSED, a daemon that
// died) is unlinked and replaced; anything else gives -EEXIST and is left
// alone. The probe connection to a live daemon is closed at once, which it
// sees as a client that left before HELLO. The check-unlink-bind sequence
// is not atomic: two daemons starting together must be kept apart by the
// caller (a lock file). A path that does not fit sun_path (with its NUL) is
// -ENAMETOOLONG, an empty one -EINVAL. Returns the fd.
[[nodiscard]] int unix_listen(const std::string& path, mode_t mode);
// A connected pair of sockets (socketpair), both O_CLOEXEC, blocking.
// 0 or -errno.
[[nodiscard]] int unix_pair(int out[2]);
// Connects a blocking socket to `path`. Returns the fd, or the kernel's
// -errno (-ENOENT: no socket there; -ECONNREFUSED: nobody listens).
[[nodiscard]] int unix_connect(const std::string& path);
// Accepts one connection; the new fd is O_NONBLOCK and O_CLOEXEC.
// Returns the fd, or -EAGAIN when none is pending on a non-blocking listener.
[[nodiscard]] int unix_accept(int listen_fd);
// Sends one message of len bytes (1..) with nfds (<= kMaxSendFds) fds
// attached, MSG_NOSIGNAL (a closed peer is -EPIPE, not SIGPIPE). The fds stay
// the caller's. len 0 is -EINVAL: an empty message would read as "peer
// closed". Returns the bytes sent (all of them: SEQPACKET sends whole
// messages or fails, -EMSGSIZE past the socket's limit), -EAGAIN when a
// non-blocking socket is full.
[[nodiscard]] ssize_t unix_send(int fd, const void* buf, size_t len, const int* fds, size_t nfds);
// Receives one message into buf (cap bytes) and up to max_fds fds into fds
// (count in *nfds); fds passed beyond max_fds are closed, never leaked.
// *truncated is set when the message did not fit: bytes cut off (MSG_TRUNC),
// fds dropped by the kernel (MSG_CTRUNC) or beyond max_fds. The fds it
// returns are the caller's to close, truncated or not. Returns the bytes
// stored (0: the peer closed), -EAGAIN when a non-blocking socket is empty.
// fds, nfds and truncated may be null when max_fds is 0 / not wanted.
[[nodiscard]] ssize_t unix_recv(int fd, void* buf, size_t cap, int* fds, size_t max_fds,
                                size_t* nfds, bool* truncated);
// The peer's credentials at connect time (SO_PEERCRED); any pointer may be null.
[[nodiscard]] int unix_peer_cred(int fd, pid_t* pid, uid_t* uid, gid_t* gid);

}  // namespace mtier::sys
