// SPDX-License-Identifier: Apache-2.0
// Whole protocol messages over a connected SOCK_SEQPACKET socket
// (src/sys/unix_socket.h): encode + send, receive + decode, and the fd
// bookkeeping in between, so no caller can leak a passed fd. Each message
// carries exactly expected_fds(type) fds; both sides check it.
#pragma once
#include <sys/types.h>
#include <cstddef>
#include <string>
#include <vector>

#include "ipc/wire.h"

namespace mtier::ipc {

// Encodes m and sends it with fds attached (the fds stay the caller's).
// Returns 0, -EINVAL (encode refused m, or nfds != expected_fds(m.type())),
// or the send's -errno (-EAGAIN on a full non-blocking socket, -EPIPE when
// the peer is gone).
[[nodiscard]] int send_message(int fd, const Message& m, const int* fds, size_t nfds);

// Receives and decodes one message. Returns its size in bytes (> 0) with *m
// filled and *fds holding exactly expected_fds(m->type()) fds, now the
// caller's; or 0 when the peer closed; or -errno: -EAGAIN (non-blocking,
// nothing waiting), -EMSGSIZE (bigger than kMaxMessageBytes, or more fds
// than kMaxFds), decode()'s errors as they are, -EBADMSG for a message with
// the wrong number of fds, or the receive's -errno. On any error every fd
// that came with the message is closed and *fds is empty; *why (if not
// null) says what was wrong with a received message, for the log.
[[nodiscard]] int recv_message(int fd, Message* m, std::vector<int>* fds, std::string* why);

}  // namespace mtier::ipc
