// SPDX-License-Identifier: Apache-2.0
#include "ipc/channel.h"
#include "sys/runtime_fds.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "sys/unix_socket.h"

namespace mtier::ipc {
namespace {

static_assert(kMaxFds <= sys::kMaxSendFds);

void close_all(std::vector<int>* fds) {
  for (int f : *fds) (void)sys::close_fd(f);
  fds->clear();
}

}  // namespace

int send_message(int fd, const Message& m, const int* fds, size_t nfds) {
  if (nfds != expected_fds(m.type())) return -EINVAL;
  std::vector<uint8_t> buf;
  int rc = encode(m, &buf);
  if (rc < 0) return rc;
  ssize_t n = sys::unix_send(fd, buf.data(), buf.size(), fds, nfds);
  if (n < 0) return static_cast<int>(n);
  // SEQPACKET sends all or nothing; a short count would be a kernel bug.
  return static_cast<size_t>(n) == buf.size() ? 0 : -EIO;
}

int recv_message(int fd, Message* m, std::vector<int>* fds, std::string* why) {
  fds->clear();
  if (why) why->clear();
  // Exactly the largest legal message: one byte more sets MSG_TRUNC.
  std::vector<uint8_t> buf(kMaxMessageBytes);
  int got[kMaxFds];
  size_t nfds = 0;
  bool truncated = false;
  ssize_t n = sys::unix_recv(fd, buf.data(), buf.size(), got, kMaxFds, &nfds, &truncated);
  if (n < 0) return static_cast<int>(n);
  fds->assign(got, got + nfds);
  if (truncated) {
    close_all(fds);
    if (why)
      why->assign("message longer than " + std::to_string(kMaxMessageBytes) +
                  " bytes or with more than " + std::to_string(kMaxFds) + " fds");
    return -EMSGSIZE;
  }
  if (n == 0) {
    // The peer closed. unix_send refuses empty messages; another client's
    // empty one reads the same, and that client is dropped like a closed one.
    close_all(fds);
    return 0;
  }
  int rc = decode(buf.data(), static_cast<size_t>(n), m, why);
  if (rc < 0) {
    close_all(fds);
    return rc;
  }
  if (fds->size() != expected_fds(m->type())) {
    if (why) {
      char line[96];
      snprintf(line, sizeof line, "%s: carries %zu fds, expected %zu", msg_type_name(m->type()),
               fds->size(), expected_fds(m->type()));
      why->assign(line);
    }
    close_all(fds);
    return -EBADMSG;
  }
  return static_cast<int>(n);
}

}  // namespace mtier::ipc
