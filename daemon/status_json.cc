// The answer to STATUS_REQUEST: the daemon (policy, sources, budgets) and
// each registered process it may show the asker (root: all; another user:
// that user's), with its tables' residency per tier and heat. The format is
// documented in docs/protocol.md.
#include <unistd.h>

#include <cerrno>

#include "server.h"
#include "uffd/page_state.h"
#include "util/json.h"

namespace mtier::daemon {
namespace {

constexpr unsigned kHeatBuckets = 16;

struct Residency {
  uint64_t dram = 0, slow = 0, store = 0, untouched = 0;
};

Residency residency_of(const Client& c, const ipc::TableEntry& t) {
  Residency r;
  const std::atomic<uint64_t>* w = c.segment->words() + t.first_page;
  for (uint64_t p = 0; p < t.pages; p++) {
    uint64_t v = w[p].load(std::memory_order_relaxed);
    if (PageWord::resident(v))
      (PageWord::slow(v) ? r.slow : r.dram)++;
    else if (PageWord::has_slot(v))
      r.store++;
    else
      r.untouched++;
  }
  return r;
}

void write_process(json::Writer& j, const Client& c, bool stale) {
  const ipc::SegmentHeader* h = c.segment->header();
  j.begin_object()
      .integer("pid", c.pid)
      .uint("uid", c.uid)
      .str("name", c.name)
      .uint("weight", c.weight)
      .boolean("stale", stale)
      .uint("dram_budget_bytes", h->dram_budget_pages.load() * 4096)
      .uint("dram_assigned_bytes", c.budget_sent * 4096)
      .uint("dram_resident_bytes", h->dram_resident_pages.load() * 4096)
      .uint("slow_budget_bytes", h->slow_budget_pages.load() * 4096)
      .uint("slow_resident_bytes", h->slow_resident_pages.load() * 4096)
      .boolean("heat_source", c.source != nullptr)
      .uint("samples", c.samples)
      .uint("unattributed_samples", c.unattributed)
      .uint("orders_sent", c.orders_sent)
      .uint("orders_dropped", c.orders_dropped)
      .uint("pages_ordered", c.pages_moved)
      .begin_array("tables");
  for (const auto& t : c.tables) {
    Residency r = residency_of(c, t);
    const policy::HeatModel::Table* heat = c.heat->find(static_cast<int>(t.id));
    j.begin_object()
        .uint("id", t.id)
        .str("name", t.name)
        .uint("bytes", t.bytes)
        .uint("pages", t.pages)
        .uint("dram_pages", r.dram)
        .uint("slow_pages", r.slow)
        .uint("store_pages", r.store)
        .uint("untouched_pages", r.untouched)
        .num("heat", heat ? heat->total_heat : 0)
        .num("samples_per_s", heat ? heat->samples_per_s : 0)
        .begin_array("heat_map");
    // kHeatBuckets equal slices of the table, each its extents' heat summed.
    for (unsigned b = 0; heat && b < kHeatBuckets; b++) {
      size_t n = heat->heat.size(), lo = n * b / kHeatBuckets, hi = n * (b + 1) / kHeatBuckets;
      double sum = 0;
      for (size_t e = lo; e < hi; e++) sum += heat->heat[e];
      j.num(nullptr, sum);
    }
    j.end_array().end_object();
  }
  j.end_array().end_object();
}

}  // namespace

std::string Server::status_json(const Client& asker, pid_t pid, int* status) {
  *status = 0;
  json::Writer j;
  j.begin_object()
      .begin_object("daemon")
      .integer("pid", getpid())
      .str("socket", cfg_.socket)
      .str("policy", policy_->name())
      .str("policy_params", policy_->params_text())
      .str("heat_source", sources_in_use())
      .begin_array("sources");
  for (const auto& s : detected_)
    j.begin_object()
        .str("name", heat_source_name(s.kind))
        .boolean("available", s.available)
        .str("reason", s.available ? "" : s.reason)
        .end_object();
  j.end_array()
      .uint("dram_bytes", cfg_.dram_bytes)
      .uint("slow_bytes", cfg_.slow_bytes)
      .uint("migrate_rate", cfg_.migrate_rate)
      .uint("tick_ms", cfg_.tick_ms)
      .end_object()
      .begin_array("processes");
  bool found = pid == 0;
  for (const auto& [fd, c] : clients_) {
    if (!c->is_runtime() || (pid && c->pid != pid)) continue;
    if (asker.uid != 0 && c->uid != asker.uid) {
      if (pid) *status = -EPERM;  // asked by pid: say it is not the asker's
      continue;
    }
    found = true;
    write_process(j, *c, !c->segment->runtime_alive(uint64_t{cfg_.stale_ms} * 1000000));
  }
  j.end_array().end_object();
  if (*status < 0) return "pid " + std::to_string(pid) + " belongs to another user";
  if (!found) {
    *status = -ESRCH;
    return "pid " + std::to_string(pid) + " is not registered with mtierd";
  }
  return j.text();
}

}  // namespace mtier::daemon
