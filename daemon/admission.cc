// SPDX-License-Identifier: Apache-2.0
// Who mtierd takes on: connection caps (all users, one user), the accept
// pause when the daemon is out of file descriptors, and the checks of a
// registration's region (the peer really maps it; its user's regions stay
// under a cap), so that no local user can make the daemon spin, hold
// every descriptor, or size its tables by a number it made up.
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

#include "ipc/channel.h"
#include "log/log.h"
#include "peer_region.h"
#include "server.h"
#include "sys/fd_limit.h"
#include "sys/page_size.h"
#include "sys/text_file.h"
#include "sys/vm.h"

namespace mtier::daemon {
namespace {

// File descriptors the daemon keeps for itself beyond one a connection:
// its own fds, a received segment fd, /proc reads, perf events.
constexpr uint64_t kSpareFds = 64;
// Refusals are logged at most once a second (with a count of the others).
constexpr uint64_t kRefusalLogNs = 1000000000ull;

std::string gib(uint64_t bytes) {
  return std::to_string(bytes >> 30) + "." + std::to_string(((bytes >> 20) & 1023) * 10 / 1024) +
         " GiB";
}

}  // namespace

void Server::setup_fd_limit() {
  uint64_t now = 0;
  // One descriptor a connection, and a perf event per thread of each
  // registered process besides: the cap plus room, as far as the hard limit goes.
  if (int rc = sys::raise_fd_limit(uint64_t{cfg_.max_connections} * 2 + kSpareFds, &now); rc < 0)
    MTIER_LOG_WARN("cannot raise the open file limit: %s", sys::error_text(-rc).c_str());
  if (now < uint64_t{cfg_.max_connections} + kSpareFds)
    MTIER_LOG_WARN(
        "open file limit %llu is below max_connections (%u) plus %llu: past it, new "
        "connections wait until one closes (raise LimitNOFILE)",
        static_cast<unsigned long long>(now), cfg_.max_connections,
        static_cast<unsigned long long>(kSpareFds));
}

std::string Server::over_connection_caps(uid_t uid) const {
  if (clients_.size() >= cfg_.max_connections)
    return "mtierd serves its maximum of " + std::to_string(cfg_.max_connections) +
           " connections (max_connections)";
  if (uid == 0 || uid == geteuid()) return "";
  unsigned mine = 0;
  for (const auto& [fd, c] : clients_) mine += c->uid == uid;
  if (mine < cfg_.max_connections_per_user) return "";
  return "user " + std::to_string(uid) + " has " + std::to_string(mine) +
         " connections open, the most one user may (max_connections_per_user)";
}

void Server::refuse_connection(int fd, pid_t pid, const std::string& why) {
  ipc::Error e{-EAGAIN, why.substr(0, ipc::kMaxErrorBytes)};
  (void)ipc::send_message(fd, ipc::Message{e}, nullptr, 0);
  close(fd);
  uint64_t now = ipc::monotonic_ns();
  if (last_refusal_log_ns_ && now - last_refusal_log_ns_ < kRefusalLogNs) {
    refusals_unlogged_++;
    return;
  }
  std::string more = refusals_unlogged_
                         ? " (and " + std::to_string(refusals_unlogged_) + " more since the last line)"
                         : "";
  MTIER_LOG_WARN("connection from pid %d refused: %s%s", static_cast<int>(pid), why.c_str(),
                 more.c_str());
  last_refusal_log_ns_ = now;
  refusals_unlogged_ = 0;
}

void Server::pause_accept(int err) {
  if (accept_paused_) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  accept_paused_ = true;
  if (fds_short_) return;  // said already: each tick tries again
  fds_short_ = true;
  MTIER_LOG_WARN(
      "accept: %s with %zu connections open: new connections wait until one closes "
      "(tried again each tick)",
      sys::error_text(-err).c_str(), clients_.size());
}

void Server::accepted() {
  if (!fds_short_) return;
  fds_short_ = false;
  MTIER_LOG_NOTICE("accepting connections again (%zu open)", clients_.size());
}

void Server::resume_accept() {
  if (!accept_paused_) return;
  struct epoll_event ev {};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenKey;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev) == 0) accept_paused_ = false;
}

uint64_t Server::region_cap() const {
  if (cfg_.max_region_bytes_per_user) return cfg_.max_region_bytes_per_user;
  uint64_t ram = sys::physical_memory();
  return ram ? ram * 32 : ipc::kMaxRegionPages * kPageSize;
}

int Server::admit_region(const Client& c, const ipc::Segment& s, std::string* why) const {
  uint64_t bytes = s.region_pages() * kPageSize;
  uint64_t used = 0;
  for (const auto& [fd, other] : clients_)
    if (other.get() != &c && other->is_runtime() && other->uid == c.uid)
      used += other->segment->region_pages() * kPageSize;
  uint64_t cap = region_cap();
  if (bytes > cap || used > cap - bytes) {
    *why = "a region of " + gib(bytes) + " with " + gib(used) + " registered by user " +
           std::to_string(c.uid) + " is more than max_region_bytes_per_user (" + gib(cap) + ")";
    return -ENOSPC;
  }
  std::string maps_why;
  if (int rc = peer_maps_region(c.pid, s.layout().region_base, bytes, &maps_why); rc < 0) {
    *why = "the region it claims is not mapped in it: " + maps_why;
    return rc == -EINVAL ? -EINVAL : rc;
  }
  return 0;
}

}  // namespace mtier::daemon
