// SPDX-License-Identifier: Apache-2.0
#include "uffd/child_attach.h"
#include "sys/runtime_fds.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "sys/uffd.h"
#include "sys/unix_socket.h"
#include "sys/vm.h"

namespace mtier {
namespace {

// What the child's userfaultfd needs: MISSING faults on a (private) shmem
// mapping, and the faulting thread's id for a fault that must fail.
constexpr uint64_t kChildFeatures =
    UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_POISON;

// Tells the parent this fork will not be announced (no descriptors).
void announce_failure(const Inheritance& in) {
  ForkHello hello;
  hello.pid = getpid();
  hello.inherited_below = in.inherited_below;
  (void)sys::unix_send(in.socket, &hello, sizeof hello, nullptr, 0);
}

// Sends the announcement with the userfaultfd and waits for the reply.
int announce(const Inheritance& in, int uffd, const char** step) {
  int pair[2];
  if (int rc = sys::unix_pair(pair); rc < 0) {
    *step = "socketpair";
    return rc;
  }
  ForkHello hello;
  hello.pid = getpid();
  hello.inherited_below = in.inherited_below;
  int fds[2] = {uffd, pair[1]};
  ssize_t sent = sys::unix_send(in.socket, &hello, sizeof hello, fds, 2);
  close(pair[1]);
  int rc = 0;
  if (sent < 0) {
    *step = "announcing itself to the parent";
    rc = static_cast<int>(sent);
  } else {
    struct pollfd p = {pair[0], POLLIN, 0};
    int ready;
    while ((ready = poll(&p, 1, kForkReplyTimeoutMs)) < 0 && errno == EINTR) {
    }
    uint8_t answer = kForkRefused;
    ssize_t got = ready > 0 ? sys::unix_recv(pair[0], &answer, 1, nullptr, 0, nullptr, nullptr) : 0;
    if (ready == 0) {
      *step = "waiting for the parent's fault handler";
      rc = -ETIMEDOUT;
    } else if (got != 1 || answer != kForkTaken) {
      *step = "the parent's fault handler refused it";
      rc = -ECONNREFUSED;
    }
  }
  close(pair[0]);
  return rc;
}

}  // namespace

int attach_to_parent(const Inheritance& in, bool map_region, const char** step) {
  *step = "";
  if (map_region) {
    if (int rc = sys::map_private_at(in.memfd, in.base, in.bytes); rc < 0) {
      *step = "mapping the region";
      announce_failure(in);
      return rc;
    }
    (void)sys::dont_dump(in.base, in.bytes);  // as the parent's (region/region.cc)
  }
  uint64_t got = 0;
  int uffd = sys::uffd_open(kChildFeatures, &got);
  if (uffd < 0) {
    *step = "userfaultfd";
    announce_failure(in);
    return uffd;
  }
  int rc = sys::uffd_register(uffd, in.base, in.bytes, UFFDIO_REGISTER_MODE_MISSING);
  if (rc < 0) {
    *step = "registering the region";
    announce_failure(in);
  } else {
    rc = announce(in, uffd, step);
    if (rc < 0) (void)sys::uffd_unregister(uffd, in.base, in.bytes);
  }
  // The parent holds the userfaultfd now (or nobody needs it): this
  // process's copy would only keep it open after the parent let it go.
  (void)sys::close_fd(uffd);
  return rc;
}

}  // namespace mtier
