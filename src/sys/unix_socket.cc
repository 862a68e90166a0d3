// SPDX-License-Identifier: Apache-2.0
#include "sys/unix_socket.h"
#include "sys/runtime_fds.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mtier::sys {
namespace {

// The kernel's cap on fds in one SCM_RIGHTS message (SCM_MAX_FD): a receive
// buffer this big gets every fd a peer sent, so those past max_fds can be
// closed here instead of being dropped unseen.
constexpr size_t kKernelMaxFds = 253;

int make_addr(const std::string& path, sockaddr_un* a) {
  if (path.empty() || path.find('\0') != std::string::npos) return -EINVAL;
  if (path.size() >= sizeof(a->sun_path)) return -ENAMETOOLONG;
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  memcpy(a->sun_path, path.data(), path.size());
  return 0;
}

int new_socket(bool nonblock) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
  return fd >= 0 ? fd : -errno;
}

int connect_retry(int fd, const sockaddr_un& a) {
  // An AF_UNIX connect interrupted while waiting for backlog room leaves the
  // socket unconnected, so it can simply be retried.
  while (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    if (errno != EINTR) return -errno;
  return 0;
}

// Something is at a.sun_path (bind said EADDRINUSE). Returns 0 if it was a
// stale socket, now unlinked (or it vanished meanwhile): bind again.
int clear_stale(const sockaddr_un& a) {
  struct stat st;
  if (lstat(a.sun_path, &st) != 0) return errno == ENOENT ? 0 : -errno;
  if (!S_ISSOCK(st.st_mode)) return -EEXIST;
  // Non-blocking: a live daemon with a full backlog says EAGAIN, not a hang.
  int probe = new_socket(true);
  if (probe < 0) return probe;
  int rc = connect_retry(probe, a);
  close_fd(probe);
  switch (rc) {
    case 0:
    case -EAGAIN:      // listening, backlog full
    case -EPROTOTYPE:  // a live socket of another type
      return -EADDRINUSE;
    case -ECONNREFUSED:  // bound by a process that is gone (or not listening)
      if (unlink(a.sun_path) != 0 && errno != ENOENT) return -errno;
      return 0;
    case -ENOENT:
      return 0;
    default:
      return rc;
  }
}

}  // namespace

int unix_listen(const std::string& path, mode_t mode) {
  sockaddr_un a;
  int rc = make_addr(path, &a);
  if (rc < 0) return rc;
  int fd = new_socket(true);
  if (fd < 0) return fd;
  for (int attempt = 0;; attempt++) {
    if (bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) break;
    rc = -errno;
    if (rc == -EADDRINUSE && attempt == 0) rc = clear_stale(a);
    if (rc < 0) {
      close_fd(fd);
      return rc;
    }
  }
  // chmod before listen(): until listen() every connect is refused, so no
  // client ever reaches the socket under the umask's bits.
  if (chmod(a.sun_path, mode) != 0 || listen(fd, SOMAXCONN) != 0) {
    rc = -errno;
    unlink(a.sun_path);
    close_fd(fd);
    return rc;
  }
  return fd;
}

int unix_pair(int out[2]) {
  return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, out) == 0 ? 0 : -errno;
}

int unix_connect(const std::string& path) {
  sockaddr_un a;
  int rc = make_addr(path, &a);
  if (rc < 0) return rc;
  int fd = new_socket(false);
  if (fd < 0) return fd;
  rc = connect_retry(fd, a);
  if (rc < 0) {
    close_fd(fd);
    return rc;
  }
  return fd;
}

int unix_accept(int listen_fd) {
  for (;;) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return fd;
    if (errno != EINTR) return -errno;
  }
}

ssize_t unix_send(int fd, const void* buf, size_t len, const int* fds, size_t nfds) {
  if (len == 0 || nfds > kMaxSendFds || (nfds > 0 && !fds)) return -EINVAL;
  iovec iov = {const_cast<void*>(buf), len};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxSendFds)];
  if (nfds > 0) {
    memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  for (;;) {
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

ssize_t unix_recv(int fd, void* buf, size_t cap, int* fds, size_t max_fds, size_t* nfds,
                  bool* truncated) {
  if (nfds) *nfds = 0;
  if (truncated) *truncated = false;
  // cap 0 would make every message look like "peer closed".
  if (cap == 0 || (max_fds > 0 && (!fds || !nfds))) return -EINVAL;
  iovec iov = {buf, cap};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kKernelMaxFds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  for (;;) {
    n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n >= 0) break;
    if (errno != EINTR) return -errno;
  }
  bool cut = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  size_t kept = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const unsigned char* data = CMSG_DATA(c);
    for (size_t i = 0; i < count; i++) {
      int got;
      memcpy(&got, data + i * sizeof(int), sizeof got);
      if (kept < max_fds) {
        fds[kept++] = got;
      } else {
        close_fd(got);
        cut = true;
      }
    }
  }
  if (nfds) *nfds = kept;
  if (truncated) *truncated = cut;
  return n;
}

int unix_peer_cred(int fd, pid_t* pid, uid_t* uid, gid_t* gid) {
  ucred cred = {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -errno;
  if (pid) *pid = cred.pid;
  if (uid) *uid = cred.uid;
  if (gid) *gid = cred.gid;
  return 0;
}

}  // namespace mtier::sys
