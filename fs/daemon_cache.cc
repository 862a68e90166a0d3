// SPDX-License-Identifier: Apache-2.0
#include "daemon_cache.h"

#include <cerrno>
#include <cstring>
#include <iterator>

#include "fs_log.h"
#include "fs_tree.h"

namespace mtier::fs {

int map_transport_error(int rc) {
  switch (-rc) {
    case ENOMSG:
    case EBADMSG:
    case EPROTO:
    case EPROTONOSUPPORT:
      return -EOPNOTSUPP;
    default:
      return -ENOTCONN;
  }
}

int map_reply_status(int status) {
  if (status == -EPERM) return -EACCES;
  if (status == -ESRCH) return -ENOENT;
  return status;
}

DaemonCache::DaemonCache(Requester request, std::chrono::milliseconds max_age, SteadyClock now)
    : request_(std::move(request)), max_age_(max_age), now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::steady_clock::now(); };
}

bool DaemonCache::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return connected_;
}

bool DaemonCache::fresh(const Entry& e) const { return e.valid && now_() - e.fetched < max_age_; }

int DaemonCache::request_locked(const ipc::Message& m, ipc::Reply* reply, std::string* why) {
  why->clear();
  int rc = request_(m, reply, why);
  if (rc < 0) rc = map_transport_error(rc);
  bool up = rc != -ENOTCONN;
  if (up != connected_) {
    // Once per transition, not per request: a reader polling a mount whose
    // daemon is gone must not flood the log.
    if (up)
      log_line(log::Level::kNotice, "mtierd answers again");
    else
      log_line(log::Level::kWarning, "%s; reads and writes fail with ENOTCONN until it answers",
               why->c_str());
    connected_ = up;
  }
  return rc;
}

int DaemonCache::fetch_locked(const ipc::Message& m, Entry* e, std::string* why) {
  ipc::Reply reply;
  auto snap = std::make_shared<Snapshot>();
  int rc = request_locked(m, &reply, why);
  if (rc == 0 && reply.status < 0) {
    *why = "mtierd: " + reply.message;
    rc = reply.status == -ESRCH ? -ENOENT : -EIO;
  } else if (rc == 0 && json::parse(reply.message, &snap->doc, why) < 0) {
    *why = "mtierd's status does not parse (" + *why + ")";
    rc = -EIO;
  }
  snap->when = std::chrono::system_clock::now();
  *e = Entry{rc == 0 ? std::move(snap) : nullptr, rc, *why, now_(), true};
  return rc;
}

int DaemonCache::status(std::shared_ptr<const Snapshot>* out, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fresh(status_)) (void)fetch_locked(ipc::Message{ipc::StatusRequest{0, ""}}, &status_, why);
  *why = status_.why;
  *out = status_.snap;
  return status_.rc;
}

int DaemonCache::heat(uint32_t pid, std::shared_ptr<const Snapshot>* out, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  // Entries of processes nobody reads any more go: pids are not reused often,
  // but a long-lived mount sees many processes come and go.
  for (auto it = heat_.begin(); it != heat_.end();)
    it = now_() - it->second.fetched > 10 * max_age_ ? heat_.erase(it) : std::next(it);
  Entry& e = heat_[pid];
  if (!fresh(e)) {
    ipc::HeatRequest req{pid, kHeatmapBuckets, kHeatmapWindowMs, ""};
    if (int rc = fetch_locked(ipc::Message{req}, &e, why); rc < 0) {
      heat_.erase(pid);  // only documents are kept per pid
      return rc;
    }
  }
  *out = e.snap;
  return 0;
}

int DaemonCache::control(const ipc::Message& m, ipc::Reply* reply, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  int rc = request_locked(m, reply, why);
  status_ = Entry{};
  heat_.clear();
  return rc;
}

}  // namespace mtier::fs
