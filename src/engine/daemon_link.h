// SPDX-License-Identifier: Apache-2.0
// The engine's link to the node daemon mtierd: a thread that registers the
// process (its shared segment: page words, table directory, hints, order
// ring) over the daemon's unix socket, carries out the daemon's orders, and
// keeps the heartbeat and status words of the segment current.
//
// The trainer never depends on the daemon: every call here is non-blocking
// for the engine's other threads, the local policy (CLOCK) runs whenever no
// daemon is registered, and a daemon that is absent, killed or restarted is
// retried every second and registered with again when it comes back. Each
// change of state is said once on stderr: "mtierd went away ...",
// "registered with mtierd again"; the first try, made in start(), is said
// by the engine's start line (describe(), start_line()).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/job_identity.h"
#include "ipc/order_ring.h"
#include "ipc/segment.h"

namespace mtier {

class Engine;
struct Core;

class DaemonLink {
 public:
  // `job`: read by the caller on the thread that made the engine (see
  // job_identity.h); sent with every registration.
  DaemonLink(Engine& engine, Core& core, ipc::Segment& segment, JobIdentity job);
  ~DaemonLink();
  // Starts the thread (which connects when it can). 0 or -errno.
  [[nodiscard]] int start();
  void stop();
  // The segment's table directory changed: tell the daemon (asynchronously).
  void tables_changed();

  // One line for describe() and the exit summary: "registered with mtierd
  // (pid N, policy P)", "no daemon at PATH (local policy)", "off".
  std::string state() const;
  bool registered() const { return fd_state_.load() == kRegistered; }
  // Orders carried out / refused (invalid or failed) since start.
  uint64_t orders_done() const { return done_.load(); }
  uint64_t orders_refused() const { return refused_.load(); }
  // Times the link registered (a restarted daemon adds one).
  uint64_t registrations() const { return registrations_.load(); }

 private:
  enum FdState { kNone, kRegistered };

  void run();
  void try_register();
  int handshake(int fd, std::string* why);
  void disconnect(const std::string& why);
  void serve_socket();
  void drain_orders();
  void apply(const ipc::Order& o);
  void publish_status();
  void update_hints_active();

  Engine& engine_;
  Core& core_;
  ipc::Segment& segment_;
  std::string path_;
  const JobIdentity job_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  int wake_fd_ = -1;  // eventfd: stop or tables changed
  int fd_ = -1;       // the socket, only touched by the thread
  std::atomic<int> fd_state_{kNone};
  std::atomic<bool> tables_dirty_{true};
  bool ever_registered_ = false;
  bool first_try_ = false;  // in start(): the start line says the outcome
  bool absent_said_ = false;
  mutable std::mutex state_mu_;
  std::string state_;
  std::unique_ptr<ipc::OrderRing> ring_;  // consumer side, per registration
  std::atomic<uint64_t> done_{0}, refused_{0}, registrations_{0};
};

}  // namespace mtier
