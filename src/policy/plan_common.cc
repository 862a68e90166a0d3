// SPDX-License-Identifier: Apache-2.0
// The plan() skeleton every policy shares: budgets, keep set, moves, ranges,
// rate limit (see plan_common.h for the order of the moves and why).
#include "policy/plan_common.h"

#include <bit>
#include <cstring>

#include "policy/fair_share.h"
#include "policy/rate_limit.h"

namespace mtier::policy::detail {

namespace {

enum MoveClass { kSlowOver, kDramOver, kDramRoom, kComeIn };

uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Appends a one-page move, extending the last move when it continues it.
void emit(std::vector<Move>* v, uint32_t client, int table_id, uint64_t page, Move::Op op) {
  if (!v->empty()) {
    Move& m = v->back();
    if (m.client == client && m.table_id == table_id && m.op == op &&
        m.first_page + m.count == page && m.count < UINT32_MAX) {
      ++m.count;
      return;
    }
  }
  v->push_back({client, table_id, page, 1, op});
}

// Pages of extent `where` of `proc` for which pred(table, page) holds.
template <class Pred>
uint64_t count_pages(const ProcessView& proc, uint64_t where, Pred pred) {
  const TableView& t = proc.tables[table_of(where)];
  uint64_t e = extent_of(where), n = 0;
  for (uint64_t pg = extent_first(t, e), end = extent_end(t, e); pg < end; ++pg) n += pred(t, pg);
  return n;
}

// Calls fn(table, page, i) for the first `quota` pages (i = 0, 1, ...), in
// the order of c[0..r) and ascending within an extent, for which pred holds.
template <class Pred, class Fn>
void walk(const ProcessView& proc, const std::vector<Cand>& c, size_t r, uint64_t quota, Pred pred,
          Fn fn) {
  uint64_t i = 0;
  for (size_t k = 0; k < r && i < quota; ++k) {
    const TableView& t = proc.tables[table_of(c[k].where)];
    uint64_t e = extent_of(c[k].where);
    for (uint64_t pg = extent_first(t, e), end = extent_end(t, e); pg < end && i < quota; ++pg)
      if (pred(t, pg)) fn(t, pg, i++);
  }
}

// What a page may need, by keep bit and place, without branches (the scan
// over every page is the hot loop of plan()).
enum Kind : uint8_t { kStays, kIn, kOutDram, kOutSlow, kKinds };
constexpr Kind kKindTable[2][4] = {
    // kDram      kSlow     kStore   kUntouched
    {kOutDram, kOutSlow, kStays, kStays},  // not in the keep set
    {kStays, kIn, kIn, kStays},            // in the keep set
};
inline Kind kind_of(const TableView& t, uint64_t pg) {
  return kKindTable[t.hints[pg] != kHintNone][static_cast<uint8_t>(t.place[pg]) & 3];
}

// The page kinds moves are made of (function objects, so they inline).
struct LeavesDram {
  bool operator()(const TableView& t, uint64_t pg) const {
    return t.hints[pg] == kHintNone && t.place[pg] == Place::kDram;
  }
};
struct LeavesSlow {
  bool operator()(const TableView& t, uint64_t pg) const {
    return t.hints[pg] == kHintNone && t.place[pg] == Place::kSlow;
  }
};
struct ComesIn {
  bool operator()(const TableView& t, uint64_t pg) const {
    return t.hints[pg] != kHintNone && (t.place[pg] == Place::kSlow || t.place[pg] == Place::kStore);
  }
};

}  // namespace

uint32_t heat_bits(float heat) { return heat > 0 ? std::bit_cast<uint32_t>(heat) : 0; }

uint64_t fraction_of(uint64_t pages, double fraction) {
  if (!(fraction > 0)) return 0;
  if (fraction >= 1) return pages;
  return std::min(pages, static_cast<uint64_t>(static_cast<long double>(pages) * fraction));
}

bool usable(const TableView& t) {
  if (t.extent_pages == 0) return false;
  if (t.pages == 0) return true;
  return t.place && t.heat && t.last_seen && t.hints &&
         extent_count(t) < (uint64_t{1} << kExtentBits);
}

void KeepSetPolicy::begin_plan(const NodeView& node, const Plan& plan) {
  (void)node;
  (void)plan;
}

uint64_t KeepSetPolicy::keep_hottest(const ProcessView& proc, std::vector<Cand>* cands,
                                     uint64_t limit) {
  if (proc.view_share < 1) limit = fraction_of(limit, proc.view_share);
  if (limit == 0 || cands->empty()) return 0;
  auto size = [&](const Cand& c) {
    const TableView& t = proc.tables[table_of(c.where)];
    uint64_t e = extent_of(c.where);
    return extent_end(t, e) - extent_first(t, e);
  };
  // Unordered but for the last (the extent the limit may cut): hints need
  // the set, not its order.
  size_t r = select_front(cands, limit, HotterFirst(), size);
  uint64_t marked = 0;
  for (size_t k = 0; k < r && marked < limit; ++k) {
    const TableView& t = proc.tables[table_of((*cands)[k].where)];
    uint64_t e = extent_of((*cands)[k].where);
    uint64_t first = extent_first(t, e);
    uint64_t n = std::min(extent_end(t, e) - first, limit - marked);
    memset(t.hints + first, kHintKeep, n);
    marked += n;
  }
  return marked;
}

void KeepSetPolicy::plan(const NodeView& node, Plan* out) {
  out->moves.clear();
  assign_budgets(node, out);
  begin_plan(node, *out);
  for (auto& c : class_) c.clear();
  size_t n = node.procs.size();
  size_t start = n ? node.now_tick % n : 0;
  for (size_t k = 0; k < n; ++k) {
    size_t p = (start + k) % n;
    const ProcessView& proc = node.procs[p];
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t)
      if (usable(proc.tables[t]) && proc.tables[t].pages > 0)
        memset(proc.tables[t].hints, kHintNone, proc.tables[t].pages);
    choose_keep(node, p, out->dram_budget_pages[p]);
    plan_process(node, p, *out);
  }
  for (auto& c : class_) out->moves.insert(out->moves.end(), c.begin(), c.end());
  merge_moves(&out->moves);
  limit_moves(&out->moves, node.migrate_pages_per_tick);
}

void KeepSetPolicy::plan_process(const NodeView& node, size_t p, const Plan& plan) {
  const ProcessView& proc = node.procs[p];
  in_.clear();
  out_dram_.clear();
  out_slow_.clear();
  uint64_t in_total = 0, dram_out_total = 0, slow_out_total = 0;
  for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t) {
    const TableView& tv = proc.tables[t];
    if (!usable(tv)) continue;
    for (uint64_t e = 0, ne = extent_count(tv); e < ne; ++e) {
      uint64_t n[kKinds] = {};
      for (uint64_t pg = extent_first(tv, e), end = extent_end(tv, e); pg < end; ++pg)
        ++n[kind_of(tv, pg)];
      if (n[kIn] + n[kOutDram] + n[kOutSlow] == 0) continue;
      Cand c{order_key(proc, t, e), where_of(t, e)};
      if (n[kIn]) in_.push_back(c);
      if (n[kOutDram]) out_dram_.push_back(c);
      if (n[kOutSlow]) out_slow_.push_back(c);
      in_total += n[kIn];
      dram_out_total += n[kOutDram];
      slow_out_total += n[kOutSlow];
    }
  }
  double fill = proc.dram_fill > 0 && proc.dram_fill < 1 ? proc.dram_fill : 1.0;
  uint64_t budget = fraction_of(plan.dram_budget_pages[p], fill);
  uint64_t slow_budget = plan.slow_budget_pages[p];
  uint64_t resident = proc.dram_resident_pages, slow_resident = proc.slow_resident_pages;
  // The counts below are clamped by the candidates, so a view whose
  // resident counts disagree with its place arrays still gets valid moves.
  uint64_t slow_evict = std::min(slow_out_total, sat_sub(slow_resident, slow_budget));
  uint64_t dram_out = std::min(dram_out_total, sat_sub(resident + in_total, budget));
  uint64_t over = std::min(dram_out, sat_sub(resident, budget));
  uint64_t slow_room = sat_sub(slow_budget, sat_sub(slow_resident, slow_evict));
  uint64_t demote = std::min(dram_out, slow_room);
  uint64_t come_in = std::min(in_total, sat_sub(budget, sat_sub(resident, dram_out)));

  // Emit only what a rate limit can let through: the list is cut to
  // `cap` pages in all, so no class of one process can contribute more.
  uint64_t cap = node.migrate_pages_per_tick ? node.migrate_pages_per_tick : UINT64_MAX;
  uint32_t client = proc.client;
  if (slow_evict) {
    uint64_t quota = std::min(slow_evict, cap);
    auto cnt = [&](const Cand& c) { return count_pages(proc, c.where, LeavesSlow()); };
    size_t r = order_front(&out_slow_, quota, ColderFirst(), cnt);
    walk(proc, out_slow_, r, quota, LeavesSlow(), [&](const TableView& t, uint64_t pg, uint64_t) {
      emit(&class_[kSlowOver], client, t.id, pg, Move::kEvict);
    });
  }
  if (dram_out) {
    // Coldest first: the coldest leave for a store, the warmest `demote`
    // of them for the slow tier. Pages past `over` make room.
    uint64_t evict = dram_out - demote;
    uint64_t quota = std::min(dram_out, cap);
    auto cnt = [&](const Cand& c) { return count_pages(proc, c.where, LeavesDram()); };
    size_t r = order_front(&out_dram_, quota, ColderFirst(), cnt);
    walk(proc, out_dram_, r, quota, LeavesDram(),
         [&](const TableView& t, uint64_t pg, uint64_t i) {
           emit(&class_[i < over ? kDramOver : kDramRoom], client, t.id, pg,
                i < evict ? Move::kEvict : Move::kDemote);
         });
  }
  if (come_in) {
    uint64_t quota = std::min(come_in, cap);
    auto cnt = [&](const Cand& c) { return count_pages(proc, c.where, ComesIn()); };
    size_t r = order_front(&in_, quota, HotterFirst(), cnt);
    walk(proc, in_, r, quota, ComesIn(), [&](const TableView& t, uint64_t pg, uint64_t) {
      Move::Op op = t.place[pg] == Place::kSlow ? Move::kPromote : Move::kPrefetch;
      emit(&class_[kComeIn], client, t.id, pg, op);
    });
  }
}

void SampledKeepPolicy::choose_keep(const NodeView& node, size_t p, uint64_t budget) {
  const ProcessView& proc = node.procs[p];
  scratch_.clear();
  for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t) {
    const TableView& tv = proc.tables[t];
    if (!usable(tv)) continue;
    for (uint64_t e = 0, n = extent_count(tv); e < n; ++e)
      if (sampled(tv, e)) scratch_.push_back({key(tv, e), where_of(t, e)});
  }
  keep_hottest(proc, &scratch_, fraction_of(budget, param(0)));
}

}  // namespace mtier::policy::detail
