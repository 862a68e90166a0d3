// SPDX-License-Identifier: Apache-2.0
// mtierfs' view of mtierd: the status document fetched at most once per
// max_age (200 ms in mtierfs), so that `cat` of a whole tree costs one
// request, and the control requests that writes send. One connection per
// request (src/client/daemon_client.h), so a restarted daemon is simply
// found by the next request. Thread-safe: FUSE calls in from several
// threads, and concurrent readers of a stale document wait for one fetch,
// not one each.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ipc/wire.h"
#include "util/json.h"

namespace mtier::fs {

// One fetched document.
struct Snapshot {
  json::Json doc;
  std::chrono::system_clock::time_point when;  // wall time of the fetch (the files' times)
};

// Sends one request and waits for the REPLY: tools::daemon_request's
// contract (0 with *reply, or -errno with *why).
using Requester = std::function<int(const ipc::Message&, ipc::Reply*, std::string*)>;
using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

class DaemonCache {
 public:
  // `now` is for tests; by default the steady clock.
  DaemonCache(Requester request, std::chrono::milliseconds max_age, SteadyClock now = nullptr);

  // The document of STATUS_REQUEST 0 (every process mtierfs' user may
  // see), at most max_age old; a failure is also remembered for max_age.
  // Returns 0 with *out, or with *why:
  // -ENOTCONN no daemon answers; -EOPNOTSUPP the daemon does not speak the
  // request; -EIO it answered with an error or with text that is not JSON.
  [[nodiscard]] int status(std::shared_ptr<const Snapshot>* out, std::string* why);
  // The HEAT_REQUEST document of one process (fs_tree.h's kHeatmapBuckets
  // slices per table), cached per pid like status(). Errors as status(),
  // and -ENOENT when the daemon does not know the pid (any more).
  [[nodiscard]] int heat(uint32_t pid, std::shared_ptr<const Snapshot>* out, std::string* why);
  // Sends a control request (POLICY_SET, BUDGET_SET, PIN_SET) and forgets
  // the cached documents, so the next read shows its effect. Returns 0 with
  // *reply (whatever reply->status says), or -ENOTCONN / -EOPNOTSUPP with *why.
  [[nodiscard]] int control(const ipc::Message& m, ipc::Reply* reply, std::string* why);
  // Whether the last request reached a daemon.
  bool connected() const;

 private:
  // A fetch's outcome: a document, or an error (rc < 0, why), kept as long
  // as a document so that a tree read while the daemon is away (or hangs
  // until the request times out) costs one attempt, not one per file.
  struct Entry {
    std::shared_ptr<const Snapshot> snap;
    int rc = 0;
    std::string why;
    std::chrono::steady_clock::time_point fetched;
    bool valid = false;
  };
  // One request with mu_ held: transport errors mapped (see status()), the
  // connected state updated and its changes logged once each.
  int request_locked(const ipc::Message& m, ipc::Reply* reply, std::string* why);
  int fetch_locked(const ipc::Message& m, Entry* e, std::string* why);
  bool fresh(const Entry& e) const;

  Requester request_;
  std::chrono::milliseconds max_age_;
  SteadyClock now_;
  mutable std::mutex mu_;
  bool connected_ = true;  // so that a daemon absent at start is logged too
  Entry status_;
  std::map<uint32_t, Entry> heat_;
};

// What a failed request means to a reader or writer: the daemon rejected
// the message itself (ENOMSG, EBADMSG, EPROTO, EPROTONOSUPPORT: an older
// mtierd without BUDGET_SET or PIN_SET) -> -EOPNOTSUPP; any other failure
// (no socket, nobody listening, no answer, connection reset) -> -ENOTCONN.
int map_transport_error(int rc);
// A control REPLY's negative status as the writer's errno: -EPERM ->
// -EACCES, -ESRCH (the process went away) -> -ENOENT, others unchanged
// (-EINVAL stays -EINVAL).
int map_reply_status(int status);

}  // namespace mtier::fs
