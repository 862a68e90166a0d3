// SPDX-License-Identifier: Apache-2.0
#include "server.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ipc/channel.h"
#include "log/log.h"
#include "fuse_child.h"
#include "sd_notify.h"
#include "sys/unix_socket.h"

namespace mtier::daemon {
namespace {

// What `mtier status` (STATUS_REQUEST) gets: 16 slices of each table's heat,
// an extent sampled within the last second active.
constexpr unsigned kStatusHeatBuckets = 16, kStatusWindowMs = 1000;

int epoll_add(int ep, int fd, uint64_t key) {
  struct epoll_event ev {};
  ev.events = EPOLLIN;
  ev.data.u64 = key;
  return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int make_timer(unsigned ms) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd < 0) return -errno;
  struct itimerspec t {};
  t.it_interval.tv_sec = ms / 1000;
  t.it_interval.tv_nsec = (ms % 1000) * 1000000L;
  t.it_value = t.it_interval;
  if (timerfd_settime(fd, 0, &t, nullptr) < 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  return fd;
}

// The directory of the socket: made (0755) if missing, like systemd's
// RuntimeDirectory= does for the service.
int make_parent(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return 0;
  std::string dir = path.substr(0, slash);
  if (mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST) return -errno;
  return 0;
}

}  // namespace

Server::Server(const DaemonConfig& cfg, CliResult cli)
    : cfg_(cfg),
      cli_(std::move(cli)),
      loaded_policy_(cfg.policy),
      loaded_params_(cfg.policy_params) {}

Server::~Server() {
  if (fuse_pid_ > 0) stop_mtierfs(fuse_pid_, cli_.fuse_mount);
  close_all();
  for (int fd : {listen_fd_, epoll_fd_, signal_fd_, timer_fd_})
    if (fd >= 0) close(fd);
  if (listen_fd_ >= 0) unlink(cfg_.socket.c_str());
}

int Server::start(std::string* why) {
  int rc = policy::make_policy(cfg_.policy, cfg_.policy_params, &policy_, why);
  if (rc < 0) return rc;
  detected_ = detect_sources();
  for (const auto& s : detected_)
    MTIER_LOG_INFO("heat source %s: %s", heat_source_name(s.kind),
                   s.available ? "available" : s.reason.c_str());
  source_ = pick_source();
  MTIER_LOG_NOTICE("heat sources in use: %s", sources_in_use().c_str());
  std::string topo_why;
  if (discover_topology(&topology_, &topo_why) < 0) {
    // No NUMA in this kernel: the one node holds all memory.
    topology_ = single_node_topology(0);
    if (!topo_why.empty()) MTIER_LOG_INFO("memory topology: %s", topo_why.c_str());
  }
  MTIER_LOG_INFO("%s", describe(topology_.tiers).c_str());
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Each call's errno is taken where it failed: a later call may change it.
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  int signal_err = errno;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  int epoll_err = errno;
  timer_fd_ = make_timer(cfg_.tick_ms);
  const char* failed = signal_fd_ < 0  ? "signalfd"
                       : epoll_fd_ < 0 ? "epoll_create1"
                       : timer_fd_ < 0 ? "timerfd"
                                       : nullptr;
  if (failed) {
    rc = signal_fd_ < 0 ? -signal_err : epoll_fd_ < 0 ? -epoll_err : timer_fd_;
    *why = std::string("event loop setup: ") + failed + ": " + strerror(-rc);
    return rc;
  }
  setup_fd_limit();
  if ((rc = make_parent(cfg_.socket)) < 0) {
    *why = cfg_.socket + ": cannot make its directory: " + strerror(-rc);
    return rc;
  }
  // The socket is open to every user: each peer is checked by its
  // credentials (a runtime only registers itself), not by file mode.
  listen_fd_ = sys::unix_listen(cfg_.socket, 0666);
  if (listen_fd_ < 0) {
    rc = listen_fd_;
    *why = cfg_.socket + ": " +
           (rc == -EADDRINUSE ? std::string("another mtierd is serving it") : strerror(-rc));
    return rc;
  }
  for (auto [fd, key] : {std::pair{listen_fd_, kListenKey}, std::pair{signal_fd_, kSignalKey},
                         std::pair{timer_fd_, kTimerKey}})
    if ((rc = epoll_add(epoll_fd_, fd, key)) < 0) {
      *why = std::string("epoll: ") + strerror(-rc);
      return rc;
    }
  MTIER_LOG_NOTICE("serving %s: policy %s (%s), node DRAM budget %s, migration limit %llu MiB/s",
                   cfg_.socket.c_str(), policy_->name(), policy_->params_text().c_str(),
                   cfg_.dram_bytes ? (std::to_string(cfg_.dram_bytes >> 20) + " MiB").c_str()
                                   : "none (each process its own)",
                   static_cast<unsigned long long>(cfg_.migrate_rate >> 20));
  if ((rc = start_metrics(why)) < 0) return rc;
  if (!cli_.fuse_mount.empty()) {
    if ((fuse_pid_ = start_mtierfs(cli_.fuse_mount, cfg_.socket, why)) < 0) {
      rc = fuse_pid_;
      fuse_pid_ = 0;
      return rc;
    }
    MTIER_LOG_NOTICE("mtierfs (pid %d) serves %s", static_cast<int>(fuse_pid_),
                     cli_.fuse_mount.c_str());
  }
  return 0;
}

std::string Server::sources_in_use() const {
  return source_ ? heat_source_name(source_->kind) : "none";
}

int Server::run() {
  (void)sd_notify_state("READY=1\nSTATUS=serving");
  struct epoll_event evs[64];
  while (!stopping_) {
    int n = epoll_wait(epoll_fd_, evs, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      MTIER_LOG_ERROR("epoll_wait: %s", strerror(errno));
      return 1;
    }
    for (int i = 0; i < n && !stopping_; i++) {
      uint64_t key = evs[i].data.u64;
      try {
        dispatch(key);
      } catch (const std::bad_alloc&) {
        on_exception(key, "out of memory (std::bad_alloc)");
      } catch (const std::exception& e) {
        on_exception(key, e.what());
      } catch (...) {
        on_exception(key, "an unknown exception");
      }
    }
  }
  (void)sd_notify_state("STOPPING=1");
  MTIER_LOG_NOTICE(
      "stopping: %zu connection(s) closed; registered processes go on with "
      "their local policy",
      clients_.size());
  if (fuse_pid_ > 0) {
    stop_mtierfs(fuse_pid_, cli_.fuse_mount);
    fuse_pid_ = 0;
  }
  close_all();
  return 0;
}

void Server::dispatch(uint64_t key) {
  if (key == kListenKey) {
    accept_clients();
  } else if (key == kSignalKey) {
    on_signal();
  } else if (key == kTimerKey) {
    uint64_t expirations;
    (void)!read(timer_fd_, &expirations, sizeof expirations);
    tick();
  } else {
    auto it = clients_.find(static_cast<int>(key));
    if (it != clients_.end()) serve(*it->second);
  }
}

void Server::on_exception(uint64_t key, const char* what) noexcept {
  const char* event = key == kListenKey   ? "accepting connections"
                      : key == kSignalKey ? "handling a signal"
                      : key == kTimerKey  ? "the policy tick"
                                          : nullptr;
  if (event) {
    MTIER_LOG_ERROR("%s: %s; it is tried again at the next event", event, what);
    return;
  }
  auto it = clients_.find(static_cast<int>(key));
  if (it == clients_.end()) {
    MTIER_LOG_ERROR("serving a connection: %s", what);
    return;
  }
  // Its state may be half-changed: the connection goes (a runtime
  // reconnects and registers again). No string is built here.
  const Client& c = *it->second;
  MTIER_LOG_ERROR("serving connection %u (pid %d): %s; connection closed", c.id,
                  static_cast<int>(c.pid), what);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  clients_.erase(it);
  resume_accept();
}

void Server::on_signal() {
  struct signalfd_siginfo si;
  while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    if (si.ssi_signo == SIGHUP) {
      reload();
    } else {
      MTIER_LOG_NOTICE("%s received", strsignal(static_cast<int>(si.ssi_signo)));
      stopping_ = true;
    }
  }
}

// SIGHUP: the file and the command line again; the policy is remade if its
// name or parameters changed. Sockets, sources and the tick keep their
// settings until a restart. A bad file changes nothing.
void Server::reload() {
  DaemonConfig next;
  std::string why;
  if (load_config(cli_, &next, &why) < 0) {
    MTIER_LOG_ERROR("SIGHUP: %s; the configuration in effect is kept", why.c_str());
    return;
  }
  // Against what the configuration said when last read: a policy set at
  // run time (mtier policy set) stays unless the file changed it.
  if (next.policy != loaded_policy_ || next.policy_params != loaded_params_) {
    std::unique_ptr<policy::Policy> p;
    if (policy::make_policy(next.policy, next.policy_params, &p, &why) < 0) {
      MTIER_LOG_ERROR("SIGHUP: %s; the configuration in effect is kept", why.c_str());
      return;
    }
    policy_ = std::move(p);
  }
  loaded_policy_ = next.policy;
  loaded_params_ = next.policy_params;
  next.policy = policy_->name();
  next.policy_params = policy_->params_text();
  next.socket = cfg_.socket;
  next.tick_ms = cfg_.tick_ms;
  next.sources = cfg_.sources;
  bool metrics_moved = next.metrics_address != cfg_.metrics_address;
  cfg_ = next;
  log::set_level(cfg_.log_level);
  if (metrics_moved && start_metrics(&why) < 0)
    MTIER_LOG_ERROR("SIGHUP: metrics_address: %s; no metrics endpoint", why.c_str());
  MTIER_LOG_NOTICE("SIGHUP: configuration re-read: policy %s (%s)", policy_->name(),
                   policy_->params_text().c_str());
}

// At most kAcceptBatch connections an event, so that a flood of them
// cannot keep the loop from the others.
void Server::accept_clients() {
  constexpr int kAcceptBatch = 64;
  for (int i = 0; i < kAcceptBatch; i++) {
    int fd = sys::unix_accept(listen_fd_);
    if (fd == -EMFILE || fd == -ENFILE) return pause_accept(fd);
    if (fd < 0) {
      if (fd != -EAGAIN && fd != -ECONNABORTED) MTIER_LOG_WARN("accept: %s", strerror(-fd));
      return;
    }
    accepted();
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->id = next_id_++;
    if (int rc = sys::unix_peer_cred(fd, &c->pid, &c->uid, &c->gid); rc < 0) {
      MTIER_LOG_WARN("a connection without peer credentials (%s): closed", strerror(-rc));
      close(fd);
      continue;
    }
    if (std::string why = over_connection_caps(c->uid); !why.empty()) {
      refuse_connection(fd, c->pid, why);
      continue;
    }
    if (epoll_add(epoll_fd_, fd, static_cast<uint64_t>(fd)) < 0) {
      close(fd);
      continue;
    }
    c->name = "?";
    clients_[fd] = std::move(c);
  }
}

void Server::serve(Client& c) {
  ipc::Message m;
  std::vector<int> fds;
  std::string why;
  int rc = ipc::recv_message(c.fd, &m, &fds, &why);
  if (rc == -EAGAIN) return;
  if (rc == 0) return drop(c, "");
  if (rc < 0) {
    // A malformed, truncated or oversized message: logged, answered, and
    // the connection closed; the other clients never notice.
    MTIER_LOG_WARN("%s: bad message (%s): connection closed", c.label().c_str(),
                   why.empty() ? strerror(-rc) : why.c_str());
    return refuse(c, rc, "bad message: " + (why.empty() ? std::string(strerror(-rc)) : why));
  }
  auto expect = [&](bool ok) {
    if (!ok)
      refuse(c, -EPROTO, std::string("unexpected ") + ipc::msg_type_name(m.type()) + " here");
    return ok;
  };
  switch (m.type()) {
    case ipc::MsgType::kHello:
      if (expect(c.phase == Client::Phase::kNew)) on_hello(c, std::get<ipc::Hello>(m.body));
      break;
    case ipc::MsgType::kRegister:
      if (expect(c.phase == Client::Phase::kHello && c.role == ipc::Role::kRuntime))
        on_register(c, std::get<ipc::Register>(m.body), fds);
      break;
    case ipc::MsgType::kTables:
      if (expect(c.is_runtime())) sync_directory(c);
      break;
    case ipc::MsgType::kPolicySet:
      if (expect(c.phase == Client::Phase::kHello && c.role == ipc::Role::kControl))
        on_policy_set(c, std::get<ipc::PolicySet>(m.body));
      break;
    case ipc::MsgType::kStatusRequest:
      if (expect(c.phase == Client::Phase::kHello && c.role == ipc::Role::kControl))
        on_status(c, std::get<ipc::StatusRequest>(m.body));
      break;
    case ipc::MsgType::kHeatRequest:
      if (expect(c.phase == Client::Phase::kHello && c.role == ipc::Role::kControl))
        on_heat(c, std::get<ipc::HeatRequest>(m.body));
      break;
    case ipc::MsgType::kBudgetSet:
      if (expect(c.phase == Client::Phase::kHello && c.role == ipc::Role::kControl))
        on_budget_set(c, std::get<ipc::BudgetSet>(m.body));
      break;
    case ipc::MsgType::kPinSet:
      if (expect(c.phase == Client::Phase::kHello && c.role == ipc::Role::kControl))
        on_pin_set(c, std::get<ipc::PinSet>(m.body));
      break;
    case ipc::MsgType::kBye:
      drop(c, "");
      break;
    default:
      expect(false);
  }
  for (int fd : fds) close(fd);  // any fd a handler did not take
}

void Server::refuse(Client& c, int code, const std::string& why) {
  ipc::Error e{code < 0 && code >= -ipc::kMaxErrno ? code : -EPROTO,
               why.substr(0, ipc::kMaxErrorBytes)};
  (void)ipc::send_message(c.fd, ipc::Message{e}, nullptr, 0);
  drop(c, why);
}

void Server::drop(Client& c, const std::string& why) {
  if (c.is_runtime())
    MTIER_LOG_NOTICE("%s unregistered%s%s", c.label().c_str(), why.empty() ? "" : ": ",
                     why.c_str());
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  clients_.erase(c.fd);  // c is gone from here on
  resume_accept();
}

void Server::close_all() {
  while (!clients_.empty()) {
    Client& c = *clients_.begin()->second;
    (void)ipc::send_message(c.fd, ipc::Message{ipc::Bye{}}, nullptr, 0);
    drop(c, "mtierd is stopping");
  }
}

void Server::on_hello(Client& c, const ipc::Hello& m) {
  c.role = m.role;
  c.name = m.name.empty() ? "?" : m.name;
  c.phase = Client::Phase::kHello;
  if (m.role == ipc::Role::kControl) {
    ipc::Welcome w{c.id, static_cast<uint32_t>(getpid()), policy_->name(), sources_in_use()};
    (void)ipc::send_message(c.fd, ipc::Message{w}, nullptr, 0);
  }
}

// The segment comes from the peer itself; its identity is the socket's
// (SO_PEERCRED), so a process can only register its own tables.
void Server::on_register(Client& c, const ipc::Register& m, std::vector<int>& fds) {
  for (auto& [fd, other] : clients_)
    if (other.get() != &c && other->is_runtime() && other->pid == c.pid)
      return refuse(c, -EEXIST, "pid " + std::to_string(c.pid) + " is registered already");
  std::string why;
  int rc = ipc::Segment::attach(fds[0], m.segment_bytes, &c.segment, &why);
  if (rc < 0) {
    MTIER_LOG_WARN("%s: segment refused: %s", c.label().c_str(), why.c_str());
    return refuse(c, rc, "segment refused: " + why);
  }
  if ((rc = admit_region(c, *c.segment, &why)) < 0) {
    c.segment.reset();
    MTIER_LOG_WARN("%s: registration refused: %s", c.label().c_str(), why.c_str());
    return refuse(c, rc, "registration refused: " + why);
  }
  c.ring = std::make_unique<ipc::OrderRing>(*c.segment);
  c.heat = std::make_unique<policy::HeatModel>(cfg_.heat_granularity);
  c.weight = m.weight;
  c.job = m.job;
  c.rank = m.rank;
  c.world = m.world;
  c.phase = Client::Phase::kRegistered;
  c.segment->stamp_daemon_heartbeat();
  sync_directory(c);
  open_heat_source(c);
  ipc::Welcome w{c.id, static_cast<uint32_t>(getpid()), policy_->name(),
                 c.source ? sources_in_use() : "none"};
  (void)ipc::send_message(c.fd, ipc::Message{w}, nullptr, 0);
  std::string job = c.job.empty() ? "" : ", job " + c.job + (c.rank >= 0 ? " rank " + std::to_string(c.rank) : "") +
                                         (c.world > 0 ? " of " + std::to_string(c.world) : "");
  for (const auto& [fd, other] : clients_)
    if (other.get() != &c && other->is_runtime() && other->phase == Client::Phase::kRegistered &&
        !c.job.empty() && other->job == c.job && other->uid == c.uid &&
        ((c.rank >= 0 && other->rank == c.rank) || (c.world > 0 && other->world > 0 && other->world != c.world)))
      MTIER_LOG_WARN("%s: job %s has rank %d (pid %d, WORLD_SIZE %d) already, this one says rank %d of %d: "
                     "two jobs under one name (a stale run with the same MASTER_ADDR:MASTER_PORT?); "
                     "set MTIER_JOB to tell them apart",
                     c.label().c_str(), c.job.c_str(), other->rank, static_cast<int>(other->pid), other->world,
                     c.rank, c.world);
  MTIER_LOG_NOTICE("%s registered: %zu table(s), weight %u%s, heat source %s", c.label().c_str(),
                   c.tables.size(), c.weight, job.c_str(), c.source ? sources_in_use().c_str() : "none");
}

// Node-wide: root or the daemon's own user only.
void Server::on_policy_set(Client& c, const ipc::PolicySet& m) {
  ipc::Reply r;
  if (c.uid != 0 && c.uid != geteuid()) {
    r = {-EPERM, "changing the policy takes root or mtierd's user"};
  } else {
    std::unique_ptr<policy::Policy> p;
    std::string why;
    if (policy::make_policy(m.name, m.params, &p, &why) < 0) {
      r = {-EINVAL, why};
    } else {
      policy_ = std::move(p);
      cfg_.policy = m.name;
      cfg_.policy_params = policy_->params_text();
      r = {0, std::string("policy ") + policy_->name() + " " + policy_->params_text()};
      MTIER_LOG_NOTICE("%s set the policy: %s %s", c.label().c_str(), policy_->name(),
                       policy_->params_text().c_str());
    }
  }
  r.message = r.message.substr(0, ipc::kMaxReplyBytes);
  (void)ipc::send_message(c.fd, ipc::Message{r}, nullptr, 0);
}

void Server::on_status(Client& c, const ipc::StatusRequest& m) {
  reply_status(c, static_cast<pid_t>(m.pid), m.job, kStatusHeatBuckets, kStatusWindowMs);
}

void Server::on_heat(Client& c, const ipc::HeatRequest& m) {
  reply_status(c, static_cast<pid_t>(m.pid), m.job, m.buckets, m.window_ms);
}

void Server::reply_status(Client& c, pid_t pid, const std::string& job, unsigned buckets,
                          unsigned window_ms) {
  int status = 0;
  std::string json = status_json(c, pid, job, buckets, window_ms, &status);
  // Many tables at many slices do not fit one message: fewer slices do.
  while (status == 0 && json.size() > ipc::kMaxReplyBytes && buckets > 1) {
    buckets /= 2;
    json = status_json(c, pid, job, buckets, window_ms, &status);
  }
  ipc::Reply r{status, json};
  if (json.size() > ipc::kMaxReplyBytes) {
    r.status = -EMSGSIZE;
    r.message = "the status of " + std::to_string(clients_.size()) +
                " connections does not fit one reply; ask for one pid";
  }
  (void)ipc::send_message(c.fd, ipc::Message{r}, nullptr, 0);
}

}  // namespace mtier::daemon
