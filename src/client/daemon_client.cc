// SPDX-License-Identifier: Apache-2.0
#include "client/daemon_client.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "ipc/channel.h"
#include "sys/unix_socket.h"

namespace mtier::tools {
namespace {

// 15 s: a daemon that answers late (a status over tables of 2^26 pages and
// more, written all over, on a loaded machine: the first of such took over
// 5 s in CI) is not a dead one.
constexpr int kTimeoutMs = 15000;

// One message within the timeout: >0 bytes, or -errno with *why.
int receive(int fd, ipc::Message* m, std::string* why) {
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, kTimeoutMs) <= 0) {
    *why = "mtierd did not answer within 15 s";
    return -ETIMEDOUT;
  }
  std::vector<int> fds;
  int rc = ipc::recv_message(fd, m, &fds, why);
  if (rc == 0) {
    *why = "mtierd closed the connection";
    return -ECONNRESET;
  }
  if (rc < 0 && why->empty()) *why = strerror(-rc);
  return rc;
}

}  // namespace

std::string daemon_socket_path(const char* given) {
  if (given) return given;
  const char* env = getenv("MTIER_DAEMON_SOCKET");
  return env && *env ? env : "/run/mtier/mtierd.sock";
}

int daemon_request(const std::string& path, const ipc::Message& request, ipc::Reply* reply,
                   std::string* why) {
  int fd = sys::unix_connect(path);
  if (fd < 0) {
    *why = "no mtierd at " + path + " (" + strerror(-fd) + "; is it running?)";
    return fd;
  }
  ipc::Hello hello{ipc::Role::kControl, static_cast<uint32_t>(getpid()), "mtier"};
  int rc = ipc::send_message(fd, ipc::Message{hello}, nullptr, 0);
  ipc::Message m;
  if (rc == 0 && (rc = receive(fd, &m, why)) > 0) {
    if (auto* e = std::get_if<ipc::Error>(&m.body)) {
      *why = "mtierd: " + e->message;
      rc = e->code;
    } else if ((rc = ipc::send_message(fd, request, nullptr, 0)) == 0 &&
               (rc = receive(fd, &m, why)) > 0) {
      if (auto* r = std::get_if<ipc::Reply>(&m.body)) {
        *reply = *r;
        rc = 0;
      } else if (auto* e = std::get_if<ipc::Error>(&m.body)) {
        *why = "mtierd: " + e->message;
        rc = e->code;
      } else {
        *why = std::string("mtierd sent an unexpected ") + ipc::msg_type_name(m.type());
        rc = -EPROTO;
      }
    }
  }
  if (rc < 0 && why->empty()) *why = std::string("talking to mtierd: ") + strerror(-rc);
  if (rc == 0) (void)ipc::send_message(fd, ipc::Message{ipc::Bye{}}, nullptr, 0);
  close(fd);
  return rc;
}

}  // namespace mtier::tools
