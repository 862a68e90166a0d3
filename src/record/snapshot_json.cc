#include "record/snapshot_json.h"

#include "util/json.h"
#include "util/table_json.h"

namespace mtier::record {
namespace {

void write_table(json::Writer& j, const TableSnap& t) {
  json::begin_table(j, {.pid = -1, .id = t.id, .name = t.name, .bytes = t.bytes})
      .uint("pages", t.pages)
      .uint("dram_pages", t.dram_pages)
      .uint("slow_pages", t.slow_pages)
      .uint("store_pages", t.store_pages)
      .uint("untouched_pages", t.untouched_pages)
      .uint("active_bytes", t.active_bytes)
      .num("heat", t.heat)
      .num("samples_per_s", t.samples_per_s)
      .begin_object("moves");
  for (unsigned m = 0; m < kMoveKinds; m++) j.uint(move_name(m), t.moves[m]);
  j.end_object().begin_array("heat_map");
  for (float h : t.heat_map) j.num(nullptr, h);
  j.end_array().str("place", t.place).end_object();
}

}  // namespace

std::string snapshot_json(const Snapshot& s) {
  json::Writer j;
  j.begin_object().uint("unix_ms", s.unix_ms).begin_array("processes");
  for (const ProcessSnap& p : s.procs) {
    j.begin_object().integer("pid", p.pid).str("name", p.name);
    if (p.job.empty())
      j.null("job");
    else
      j.str("job", p.job);
    if (p.rank < 0)
      j.null("rank");
    else
      j.integer("rank", p.rank);
    j.uint("dram_budget_bytes", p.dram_budget_bytes)
        .uint("dram_resident_bytes", p.dram_resident_bytes)
        .uint("slow_budget_bytes", p.slow_budget_bytes)
        .uint("slow_resident_bytes", p.slow_resident_bytes)
        .uint("missing_faults", p.missing_faults)
        .uint("evictions", p.evictions)
        .uint("fetches", p.fetches)
        .begin_array("tables");
    for (const TableSnap& t : p.tables) write_table(j, t);
    j.end_array().end_object();
  }
  j.end_array().end_object();
  return j.text();
}

}  // namespace mtier::record
