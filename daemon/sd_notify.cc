// SPDX-License-Identifier: Apache-2.0
// sd_notify(3)'s protocol: one datagram on an AF_UNIX socket, no credentials
// or fds passed.
#include "sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace mtier::daemon {

int sd_notify_state(const char* state) {
  const char* path = getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return 0;
  if (state == nullptr || state[0] == '\0') return -EINVAL;
  if (path[0] != '/' && path[0] != '@') return -EINVAL;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = strlen(path);
  // A path needs its NUL inside sun_path; an abstract name has none and its
  // '@' becomes the leading NUL.
  if (len > sizeof addr.sun_path - (path[0] == '/' ? 1 : 0)) return -EINVAL;
  memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';
  socklen_t addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);

  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  size_t n = strlen(state);
  ssize_t sent;
  do {
    sent = sendto(fd, state, n, MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr), addr_len);
  } while (sent < 0 && errno == EINTR);
  int rc = sent < 0 ? -errno : static_cast<size_t>(sent) == n ? 1 : -EMSGSIZE;
  close(fd);
  return rc;
}

}  // namespace mtier::daemon
