// SPDX-License-Identifier: Apache-2.0
#include "record/daemon_snapshot.h"

#include <cerrno>
#include <chrono>
#include <cmath>

#include "client/daemon_client.h"
#include "util/json.h"

namespace mtier::record {
namespace {

// A JSON number as a count: missing, negative or not finite reads as 0
// (the daemon writes every key; this only keeps garbage out of recordings).
uint64_t count(const json::Json& v, const char* key) {
  const json::Json& m = json::at(v, key);
  if (m.is_number_unsigned()) return m.get<uint64_t>();  // exact, above 2^53 too
  double n = json::num(v, key);
  return std::isfinite(n) && n > 0 ? static_cast<uint64_t>(n) : 0;
}

double number(const json::Json& v, const char* key) {
  double n = json::num(v, key);
  return std::isfinite(n) ? n : 0;
}

int table_from(const json::Json& t, TableSnap* out, std::string* why) {
  out->id = static_cast<uint32_t>(count(t, "id"));
  out->name = json::str(t, "name");
  out->bytes = count(t, "bytes");
  out->pages = count(t, "pages");
  out->dram_pages = count(t, "dram_pages");
  out->slow_pages = count(t, "slow_pages");
  out->store_pages = count(t, "store_pages");
  out->untouched_pages = count(t, "untouched_pages");
  out->active_bytes = count(t, "active_bytes");
  out->heat = number(t, "heat");
  out->samples_per_s = number(t, "samples_per_second");
  const json::Json& moves = json::at(t, "moves");
  for (unsigned m = 0; m < kMoveKinds; m++) out->moves[m] = count(moves, move_name(m));
  for (const auto& h : json::items(json::at(t, "heat_map")))
    out->heat_map.push_back(h.is_number() ? static_cast<float>(h.get<double>()) : 0.0f);
  out->place = json::str(t, "place");
  if (out->place.size() != out->heat_map.size()) {
    *why = "table '" + out->name + "': place marks do not match its heat map";
    return -EBADMSG;
  }
  if (out->heat_map.empty()) {
    // No heat model yet (a table just made): one cold slice.
    out->heat_map.push_back(0.0f);
    out->place = std::string(1, kPlaceUntouched);
  }
  if (out->pages == 0) {
    *why = "table '" + out->name + "' has no pages";
    return -EBADMSG;
  }
  return 0;
}

}  // namespace

int snapshot_from_status(const std::string& text, Snapshot* out, std::string* why) {
  json::Json v;
  if (json::parse(text, &v, why) < 0) {
    *why = "mtierd's reply does not parse (" + *why + ")";
    return -EBADMSG;
  }
  if (!json::at(v, "processes").is_array()) {
    *why = "mtierd's reply has no process list";
    return -EBADMSG;
  }
  out->procs.clear();
  for (const auto& p : json::items(json::at(v, "processes"))) {
    ProcessSnap ps;
    ps.pid = static_cast<int32_t>(count(p, "pid"));
    ps.name = json::str(p, "name");
    ps.job = json::str(p, "job");
    ps.rank = json::at(p, "rank").is_number() ? static_cast<int32_t>(json::num(p, "rank")) : -1;
    ps.dram_budget_bytes = count(p, "dram_budget_bytes");
    ps.dram_resident_bytes = count(p, "dram_resident_bytes");
    ps.slow_budget_bytes = count(p, "slow_budget_bytes");
    ps.slow_resident_bytes = count(p, "slow_resident_bytes");
    ps.missing_faults = count(p, "missing_faults");
    ps.evictions = count(p, "evictions");
    ps.fetches = count(p, "fetches");
    for (const auto& t : json::items(json::at(p, "tables"))) {
      TableSnap ts;
      if (int rc = table_from(t, &ts, why); rc < 0) return rc;
      ps.tables.push_back(std::move(ts));
    }
    out->procs.push_back(std::move(ps));
  }
  return 0;
}

int fetch_snapshot(const std::string& socket_path, int32_t pid, unsigned buckets,
                   unsigned window_ms, Snapshot* out, std::string* why, const std::string& job) {
  ipc::HeatRequest req{static_cast<uint32_t>(pid), buckets, window_ms, job};
  ipc::Reply reply;
  if (int rc = tools::daemon_request(socket_path, ipc::Message{req}, &reply, why); rc < 0)
    return rc;
  if (reply.status < 0) {
    *why = reply.message;
    return reply.status;
  }
  if (int rc = snapshot_from_status(reply.message, out, why); rc < 0) return rc;
  out->unix_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
  return 0;
}

}  // namespace mtier::record
