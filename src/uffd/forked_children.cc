// SPDX-License-Identifier: Apache-2.0
#include "uffd/forked_children.h"
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "log/log.h"
#include "sys/unix_socket.h"
#include "sys/vm.h"
#include "uffd/fork_hello.h"

namespace mtier {
namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

void close_fd(int& fd) {
  if (fd >= 0) (void)sys::close_fd(fd);
  fd = -1;
}

void reply(int fd, uint8_t answer) { (void)sys::unix_send(fd, &answer, 1, nullptr, 0); }

}  // namespace

ForkedChildren::~ForkedChildren() {
  for (size_t i = 0; i < count(); i++) {
    close_fd(children_[i].uffd);
    close_fd(children_[i].pidfd);
  }
  close_fd(listen_end_);
  close_fd(child_end_);
}

int ForkedChildren::open() {
  int fds[2];
  if (int rc = sys::unix_pair(fds); rc < 0) return rc;
  if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
    int err = -errno;
    (void)sys::close_fd(fds[0]);
    (void)sys::close_fd(fds[1]);
    return err;
  }
  listen_end_ = sys::adopt_fd(fds[0]);
  child_end_ = sys::adopt_fd(fds[1]);
  return 0;
}

void ForkedChildren::fork_begins(int32_t next_table_id) {
  int32_t cur = pending_below_.load(std::memory_order_relaxed);
  while (cur < next_table_id &&
         !pending_below_.compare_exchange_weak(cur, next_table_id, std::memory_order_acq_rel)) {
  }
  pending_since_.store(now_ns(), std::memory_order_relaxed);
  pending_forks_.fetch_add(1, std::memory_order_acq_rel);
}

int32_t ForkedChildren::below() const {
  int32_t live = live_below_.load(std::memory_order_acquire);
  if (pending_forks_.load(std::memory_order_acquire) <= 0) return live;
  // A fork never announced (its child died first, or fork() failed after
  // the prepare handler ran) stops counting after the timeout.
  if (now_ns() - pending_since_.load(std::memory_order_relaxed) > kAnnounceTimeoutNs) return live;
  return std::max(live, pending_below_.load(std::memory_order_acquire));
}

bool ForkedChildren::may_be_inherited(int32_t table_id) const { return table_id < below(); }

void ForkedChildren::refresh_live_below() {
  int32_t m = 0;
  for (size_t i = 0; i < count(); i++) m = std::max(m, children_[i].inherited_below);
  live_below_.store(m, std::memory_order_release);
}

int ForkedChildren::accept() {
  ForkHello hello;
  int fds[2] = {-1, -1};
  size_t nfds = 0;
  bool truncated = false;
  ssize_t n = sys::unix_recv(listen_end_, &hello, sizeof hello, fds, 2, &nfds, &truncated);
  if (n < 0) return static_cast<int>(n);
  if (n == 0) return -EAGAIN;  // not reached: this process keeps the other end open
  // One announcement less in flight, whatever it says - counted when this
  // returns, after a child it adds counts among the live ones: in between,
  // a table it may read would look unreachable and go.
  struct Announced {
    ForkedChildren& c;
    ~Announced() {
      if (c.pending_forks_.fetch_sub(1, std::memory_order_acq_rel) <= 1) {
        c.pending_forks_.store(0, std::memory_order_release);
        c.pending_below_.store(0, std::memory_order_release);
      }
    }
  } announced{*this};
  int uffd = nfds > 0 ? sys::adopt_fd(fds[0]) : -1, answer_fd = nfds > 1 ? fds[1] : -1;
  bool valid = !truncated && n == static_cast<ssize_t>(sizeof hello) &&
               hello.magic == kForkHelloMagic && hello.version == kForkHelloVersion;
  auto refuse = [&](const char* why, int err) {
    if (why)
      MTIER_LOG_WARN("forked child %d: %s%s%s; it cannot read its parent's tables", hello.pid, why,
                     err ? ": " : "", err ? strerror(-err) : "");
    if (answer_fd >= 0) reply(answer_fd, kForkRefused);
    close_fd(uffd);
    close_fd(answer_fd);
    return 0;
  };
  if (!valid) return refuse("an announcement this runtime does not understand", 0);
  if (nfds < 2) return refuse(nullptr, 0);  // the child could not attach, and said why itself
  if (count() == kMaxChildren) return refuse("too many forked children read the tables", 0);
  int pidfd = sys::pidfd_of(hello.pid);
  // ESRCH: the child is gone already (killed before its announcement was
  // read): nobody to tell.
  if (pidfd < 0) return refuse(pidfd == -ESRCH ? nullptr : "pidfd_open", pidfd);
  children_[count()] = Child{hello.pid, uffd, pidfd, hello.inherited_below, 0};
  count_.fetch_add(1, std::memory_order_release);
  refresh_live_below();
  reply(answer_fd, kForkTaken);
  close_fd(answer_fd);
  MTIER_LOG_DEBUG("forked child %d reads the tables below id %d", hello.pid, hello.inherited_below);
  return 1;
}

void ForkedChildren::reap(size_t i) {
  close_fd(children_[i].uffd);
  close_fd(children_[i].pidfd);
  size_t last = count() - 1;
  children_[i] = children_[last];
  children_[last] = Child{};
  count_.store(last, std::memory_order_release);
  refresh_live_below();
}

bool ForkedChildren::retire(int32_t table_id) {
  std::lock_guard<std::mutex> lk(retired_mu_);
  try {
    retired_.push_back(table_id);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

size_t ForkedChildren::retired() const {
  std::lock_guard<std::mutex> lk(retired_mu_);
  return retired_.size();
}

}  // namespace mtier
