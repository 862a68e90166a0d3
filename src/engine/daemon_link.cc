// SPDX-License-Identifier: Apache-2.0
#include "engine/daemon_link.h"
#include "sys/runtime_fds.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "engine/engine.h"
#include "ipc/channel.h"
#include "ipc/order_ring.h"
#include "log/log.h"
#include "page/core.h"
#include "sys/text_file.h"
#include "sys/unix_socket.h"
#include "util/runtime_thread.h"

namespace mtier {
namespace {

constexpr int kTickMs = 100;                        // heartbeat and status period
constexpr auto kRetry = std::chrono::seconds(1);    // reconnect period
constexpr int kHandshakeMs = 2000;                  // WELCOME must come within
constexpr uint64_t kDaemonStaleNs = 2'000'000'000;  // hints older than this are ignored

}  // namespace

DaemonLink::DaemonLink(Engine& engine, Core& core, ipc::Segment& segment, JobIdentity job)
    : engine_(engine),
      core_(core),
      segment_(segment),
      path_(core.opts.daemon_socket),
      job_(std::move(job)) {
  state_ = "no daemon at " + path_ + " (local policy)";
}

DaemonLink::~DaemonLink() { stop(); }

int DaemonLink::start() {
  wake_fd_ = sys::adopt_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (wake_fd_ < 0) return -errno;
  // The first try before the thread, quietly: the engine's start line,
  // written after it, says how it went.
  first_try_ = true;
  try_register();
  first_try_ = false;
  running_ = true;
  int rc = start_runtime_thread(&thread_, "daemon link", "the daemon's policy no longer applies",
                                [this] { run(); });
  if (rc < 0) {
    running_ = false;
    (void)sys::close_fd(wake_fd_);
    wake_fd_ = -1;
  }
  return rc;
}

void DaemonLink::stop() {
  if (!running_.exchange(false)) return;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  thread_.join();
  if (fd_ >= 0) {
    (void)ipc::send_message(fd_, ipc::Message{ipc::Bye{}}, nullptr, 0);
    (void)sys::close_fd(fd_);
    fd_ = -1;
  }
  (void)sys::close_fd(wake_fd_);
}

void DaemonLink::tables_changed() {
  tables_dirty_.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

std::string DaemonLink::state() const {
  std::lock_guard<std::mutex> lk(state_mu_);
  return state_;
}

void DaemonLink::run() {
  auto next_try = std::chrono::steady_clock::now() + kRetry;  // start() tried once
  while (running_.load(std::memory_order_acquire)) {
    if (fd_ < 0 && std::chrono::steady_clock::now() >= next_try) {
      try_register();
      next_try = std::chrono::steady_clock::now() + kRetry;
    }
    struct pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd_, POLLIN, 0}};
    int n = poll(fds, fd_ >= 0 ? 2 : 1, kTickMs);
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents) {
      uint64_t v;
      (void)!read(wake_fd_, &v, sizeof v);
    }
    if (!running_.load(std::memory_order_acquire)) break;
    publish_status();
    if (fd_ >= 0 && fds[1].revents) serve_socket();
    if (fd_ >= 0) drain_orders();  // also without a wake-up: one may have been lost
    if (fd_ >= 0 && tables_dirty_.exchange(false)) {
      uint64_t gen = segment_.header()->directory_generation.load(std::memory_order_acquire);
      int rc = ipc::send_message(fd_, ipc::Message{ipc::Tables{gen}}, nullptr, 0);
      if (rc < 0 && rc != -EAGAIN) disconnect(std::string("sending TABLES: ") + strerror(-rc));
    }
    update_hints_active();
  }
  core_.hints_active.store(false, std::memory_order_release);
}

void DaemonLink::try_register() {
  int fd = sys::unix_connect(path_);
  if (fd < 0) {
    if (!absent_said_) {
      // An absent daemon is the normal case without one: said with verbose
      // only (at start by the start line), unless one was registered before
      // (then it went away: warned).
      if (!first_try_)
        MTIER_LOG_INFO("no daemon at %s (%s): local policy (CLOCK); registering when it starts",
                       path_.c_str(), strerror(-fd));
      absent_said_ = true;
    }
    return;
  }
  std::string why;
  int rc = handshake(fd, &why);
  if (rc < 0) {
    (void)sys::close_fd(fd);
    if (!absent_said_) {
      MTIER_LOG_WARN("mtierd at %s refused the registration: %s; local policy (CLOCK)",
                     path_.c_str(), why.c_str());
      absent_said_ = true;
    }
    return;
  }
  fd_ = sys::adopt_fd(fd);
  ring_ = std::make_unique<ipc::OrderRing>(segment_);  // a fresh daemon: a fresh producer
  fd_state_.store(kRegistered, std::memory_order_release);
  registrations_.fetch_add(1, std::memory_order_relaxed);
  tables_dirty_.store(true, std::memory_order_release);
  absent_said_ = false;
  std::string line = state();
  static const std::string kSaid = "registered with mtierd";
  if (ever_registered_) line.replace(0, kSaid.size(), kSaid + " again");
  if (!first_try_) MTIER_LOG_NOTICE("%s", line.c_str());
  ever_registered_ = true;
}

// HELLO, REGISTER (with the segment's fd), then WELCOME or ERROR.
int DaemonLink::handshake(int fd, std::string* why) {
  ipc::Hello hello{ipc::Role::kRuntime, static_cast<uint32_t>(getpid()),
                   std::string(program_invocation_short_name).substr(0, ipc::kMaxNameBytes)};
  ipc::Register reg{segment_.bytes(), core_.opts.daemon_weight, job_.name, job_.rank, job_.world};
  int seg_fd = segment_.fd();
  int rc = ipc::send_message(fd, ipc::Message{hello}, nullptr, 0);
  if (rc == 0) rc = ipc::send_message(fd, ipc::Message{reg}, &seg_fd, 1);
  if (rc < 0) {
    *why = std::string("send: ") + strerror(-rc);
    return rc;
  }
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, kHandshakeMs) <= 0) {
    *why = "no answer within 2 s";
    return -ETIMEDOUT;
  }
  ipc::Message m;
  std::vector<int> fds;
  rc = ipc::recv_message(fd, &m, &fds, why);
  if (rc <= 0) {
    // A reset (the daemon closed before reading) comes with no reason.
    if (rc == 0) *why = "closed the connection";
    else if (why->empty()) *why = sys::error_text(-rc);
    return rc < 0 ? rc : -ECONNRESET;
  }
  if (auto* e = std::get_if<ipc::Error>(&m.body)) {
    *why = e->message.empty() ? "ERROR " + sys::error_text(-e->code) : e->message;
    return e->code;
  }
  auto* w = std::get_if<ipc::Welcome>(&m.body);
  if (!w) {
    *why = std::string("expected WELCOME, got ") + ipc::msg_type_name(m.type());
    return -EPROTO;
  }
  std::lock_guard<std::mutex> lk(state_mu_);
  state_ = "registered with mtierd (pid " + std::to_string(w->daemon_pid) + ", policy " +
           w->policy + ", heat sources: " + w->sources + ")";
  if (!job_.name.empty()) {
    state_ += ", job " + job_.name + " (from " + job_.source + ")";
    if (job_.rank >= 0) state_ += " rank " + std::to_string(job_.rank);
  }
  return 0;
}

void DaemonLink::disconnect(const std::string& why) {
  if (fd_ >= 0) (void)sys::close_fd(fd_);
  fd_ = -1;
  fd_state_.store(kNone, std::memory_order_release);
  core_.hints_active.store(false, std::memory_order_release);
  // The daemon's share no longer holds: back to the configured budgets.
  engine_.set_budget_pages(0, 0);
  engine_.set_budget_pages(1, 0);
  MTIER_LOG_WARN("mtierd went away (%s): local policy (CLOCK) until it returns", why.c_str());
  std::lock_guard<std::mutex> lk(state_mu_);
  state_ = "no daemon at " + path_ + " (local policy; it went away: " + why + ")";
}

void DaemonLink::serve_socket() {
  ipc::Message m;
  std::vector<int> fds;
  std::string why;
  int rc = ipc::recv_message(fd_, &m, &fds, &why);
  if (rc == -EAGAIN) return;
  if (rc == 0) return disconnect("connection closed");
  if (rc < 0) return disconnect(why.empty() ? strerror(-rc) : why);
  switch (m.type()) {
    case ipc::MsgType::kOrders:
      return;  // the ring is drained after every wake-up
    case ipc::MsgType::kBye:
      return disconnect("it said goodbye");
    case ipc::MsgType::kError:
      MTIER_LOG_WARN("mtierd: %s", std::get<ipc::Error>(m.body).message.c_str());
      return;
    default:
      MTIER_LOG_WARN("mtierd sent an unexpected %s; ignored", ipc::msg_type_name(m.type()));
  }
}

void DaemonLink::drain_orders() {
  ipc::Order batch[64];
  for (;;) {
    size_t n = ring_->pop(batch, 64);
    for (size_t i = 0; i < n; i++) apply(batch[i]);
    if (n < 64) break;
  }
  if (ring_->corrupt()) disconnect("its order ring is corrupt");
}

// Every order is checked here: the daemon is another process. Ranges come
// in region pages; the engine takes them relative to the table (ids are
// never reused, so a table freed meanwhile is just not found).
void DaemonLink::apply(const ipc::Order& o) {
  int rc = -EINVAL;
  int id = static_cast<int>(o.table_id);
  uint64_t base = 0;
  auto op = static_cast<ipc::OrderOp>(o.op);
  if (op != ipc::OrderOp::kSetBudget) {
    rc = engine_.table_first_page(id, &base);
    if (rc == 0 && (o.first_page < base || o.count == 0 || o.tier > 1)) rc = -EINVAL;
    if (rc < 0) {
      (rc == -ENOENT ? done_ : refused_).fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  uint64_t page = o.first_page - base;
  switch (op) {
    case ipc::OrderOp::kEvict:  // tier 1: down one tier; 0: out of memory
      rc = engine_.evict_range(id, page, o.count, o.tier == 1);
      break;
    case ipc::OrderOp::kPrefetch:
      rc = engine_.fetch_order(id, page, o.count);
      break;
    case ipc::OrderOp::kMove: {
      // Down to the slow tier is an eviction that stops there; up to DRAM
      // a promotion (as many as DRAM's high watermark leaves room for).
      long moved = o.tier == 1 ? engine_.evict_range(id, page, o.count, true)
                               : engine_.promote_range(id, page, o.count);
      rc = moved < 0 ? static_cast<int>(moved) : 0;
      break;
    }
    case ipc::OrderOp::kSetBudget:
      if (o.tier <= 1 && o.table_id == 0) {
        // 0: the configured one. A job's rank takes more than its own
        // DRAM budget when the daemon gives it (its share of the job's).
        engine_.set_budget_pages(o.tier, o.first_page,
                                 o.tier == 0 && !job_.name.empty() ? UINT64_MAX : 0);
        rc = 0;
      }
      break;
  }
  (rc < 0 && rc != -ENOENT ? refused_ : done_).fetch_add(1, std::memory_order_relaxed);
}

// The configured budget (what the daemon shares out) and the residency, in
// pages; cheap enough for every tick (no table walk).
void DaemonLink::publish_status() {
  ipc::SegmentHeader* h = segment_.header();
  auto pages = [](int64_t n) { return static_cast<uint64_t>(std::max<int64_t>(n, 0)); };
  h->dram_budget_pages.store(core_.residency.own_budget_pages(), std::memory_order_relaxed);
  h->dram_low_pages.store(core_.residency.own_low_pages(), std::memory_order_relaxed);
  h->dram_high_pages.store(core_.residency.own_high_pages(), std::memory_order_relaxed);
  h->dram_resident_pages.store(pages(core_.residency.resident()), std::memory_order_relaxed);
  h->slow_budget_pages.store(core_.slow.own_budget_pages(), std::memory_order_relaxed);
  h->slow_resident_pages.store(pages(core_.slow.resident()), std::memory_order_relaxed);
  const EngineCounters& c = core_.counters;
  h->prefetch_pages.store(c.prefetch_pages.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h->prefetch_reads.store(c.prefetch_reads.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h->prefetch_hits.store(c.prefetch_hits.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h->prefetch_late.store(c.prefetch_late.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h->pinned_pages.store(pages(c.pinned_pages.load(std::memory_order_relaxed)), std::memory_order_relaxed);
  h->store_errors.store(c.store_errors.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h->store_full.store(c.store_full.load(std::memory_order_relaxed), std::memory_order_relaxed);
  // The exit summary's counters, freed tables included (Engine::counter_totals).
  const CounterTotals t = engine_.counter_totals();
  auto put = [](std::atomic<uint64_t>& f, uint64_t v) { f.store(v, std::memory_order_relaxed); };
  put(h->missing_faults, t.missing_faults);
  put(h->minor_faults, t.minor_faults);
  put(h->evictions, t.evictions);
  put(h->fetches, t.fetches);
  put(h->page_size, kPageSize);
  put(h->wp_faults, t.wp_faults);
  put(h->zero_fills, t.zero_fills);
  put(h->prefetches, t.prefetches);
  put(h->writebacks, t.writebacks);
  put(h->demotions, t.demotions);
  put(h->promotions, t.promotions);
  put(h->evict_cancels, t.evict_cancels);
  put(h->budget_overruns, core_.residency.overruns());
  put(h->child_faults, c.child_faults.load(std::memory_order_relaxed));
  put(h->held_pages, pages(c.held_pages.load(std::memory_order_relaxed)));
  segment_.stamp_runtime_heartbeat();
}

void DaemonLink::update_hints_active() {
  core_.hints_active.store(fd_ >= 0 && segment_.daemon_alive(kDaemonStaleNs),
                           std::memory_order_release);
}

}  // namespace mtier
