// SPDX-License-Identifier: Apache-2.0
#include "record/snapshot_json.h"

#include "util/json.h"

namespace mtier::record {
namespace {

json::Json table_json(const TableSnap& t) {
  json::Json j = json::table_head({.pid = -1, .id = t.id, .name = t.name, .bytes = t.bytes});
  j["pages"] = t.pages;
  j["dram_pages"] = t.dram_pages;
  j["slow_pages"] = t.slow_pages;
  j["store_pages"] = t.store_pages;
  j["untouched_pages"] = t.untouched_pages;
  j["active_bytes"] = t.active_bytes;
  j["heat"] = json::number(t.heat);
  j["samples_per_second"] = json::number(t.samples_per_s);
  json::Json& moves = j["moves"] = json::Json::object();
  for (unsigned m = 0; m < kMoveKinds; m++) moves[move_name(m)] = t.moves[m];
  json::Json& heat = j["heat_map"] = json::Json::array();
  for (float h : t.heat_map) heat.push_back(json::number(h));
  j["place"] = t.place;
  return j;
}

}  // namespace

std::string snapshot_json(const Snapshot& s) {
  json::Json procs = json::Json::array();
  for (const ProcessSnap& p : s.procs) {
    json::Json tables = json::Json::array();
    for (const TableSnap& t : p.tables) tables.push_back(table_json(t));
    procs.push_back({{"pid", p.pid},
                     {"name", p.name},
                     {"job", p.job.empty() ? json::Json(nullptr) : json::Json(p.job)},
                     {"rank", p.rank < 0 ? json::Json(nullptr) : json::Json(p.rank)},
                     {"dram_budget_bytes", p.dram_budget_bytes},
                     {"dram_resident_bytes", p.dram_resident_bytes},
                     {"slow_budget_bytes", p.slow_budget_bytes},
                     {"slow_resident_bytes", p.slow_resident_bytes},
                     {"missing_faults", p.missing_faults},
                     {"evictions", p.evictions},
                     {"fetches", p.fetches},
                     {"tables", std::move(tables)}});
  }
  return json::dump({{"unix_seconds", static_cast<double>(s.unix_ms) / 1000},
                     {"processes", std::move(procs)}});
}

}  // namespace mtier::record
