// SPDX-License-Identifier: Apache-2.0
// static: MTrainS's placement. Each table's bandwidth demand is its sample
// rate times bytes_per_access; its density is demand per byte of table.
// The densest tables get DRAM as whole tables while they fit, then the next
// one gets the rest of the budget as its hottest pages; that assignment is
// the keep set. It is re-evaluated only every period_s (and at once for a
// process that is new or whose tables changed): in between the last
// assignment stands and only budgets and the rate limit act on it, so
// placement does not churn with short-term noise.
// A table shown as a window (policy.h) counts by its whole size; when it is
// the one that gets the rest of the budget, its keep set is the hottest
// pages of each window as it is shown, that window's share of the rest.
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "policy/plan_common.h"
#include "sys/page_size.h"

namespace mtier::policy::detail {

namespace {

enum { kBytesPerAccess, kPeriod };

constexpr double kPageBytes = kPageSize;

class StaticPolicy final : public KeepSetPolicy {
 public:
  StaticPolicy() : KeepSetPolicy(static_info()) {}

 protected:
  void begin_plan(const NodeView& node, const Plan&) override {
    double now = node.now_tick * node.tick_seconds;
    evaluate_all_ = !evaluated_ || now < last_eval_s_ || now - last_eval_s_ >= param(kPeriod);
    if (evaluate_all_) {
      evaluated_ = true;
      last_eval_s_ = now;
    }
    for (auto& [client, s] : state_) s.live = false;
    for (const ProcessView& proc : node.procs) {
      auto it = state_.find(proc.client);
      if (it != state_.end()) it->second.live = true;
    }
    std::erase_if(state_, [](const auto& kv) { return !kv.second.live; });
  }

  void choose_keep(const NodeView& node, size_t p, uint64_t budget) override {
    const ProcessView& proc = node.procs[p];
    ClientState& s = state_[proc.client];
    s.live = true;
    std::vector<std::pair<int, uint64_t>> shape;
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t)
      if (usable(proc.tables[t]))
        shape.emplace_back(proc.tables[t].id, whole_pages(proc.tables[t]));
    if (evaluate_all_ || !s.evaluated || shape != s.shape) {
      s.shape = std::move(shape);
      evaluate(proc, budget, &s);
    }
    apply(proc, s, budget);
  }

  // Denser tables first, then hotter pages.
  uint64_t order_key(const ProcessView& proc, size_t t, uint64_t e) const override {
    const TableView& tv = proc.tables[t];
    return static_cast<uint64_t>(priority_[t]) << 32 | heat_bits(tv.heat[e]);
  }

 private:
  struct Entry {
    int table_id;
    bool whole;
    std::vector<uint64_t> extents;  // a partial table's hottest extents, hottest first
    uint64_t pages;                 // a partial table's assigned pages
  };
  struct ClientState {
    std::vector<std::pair<int, uint64_t>> shape;  // (id, pages) of its tables when evaluated
    std::vector<int> ranked;                      // table ids by density, densest first
    std::vector<Entry> entries;                   // the assignment, in rank order
    bool evaluated = false;
    bool live = false;
  };

  void evaluate(const ProcessView& proc, uint64_t budget, ClientState* s) {
    struct Ranked {
      double density;
      int id;
      size_t index;
    };
    std::vector<Ranked> ranked;
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t) {
      const TableView& tv = proc.tables[t];
      if (!usable(tv) || whole_pages(tv) == 0) continue;
      double demand = tv.samples_per_s * param(kBytesPerAccess);  // bytes/s
      double density = demand / (static_cast<double>(whole_pages(tv)) * kPageBytes);
      if (density > 0) ranked.push_back({density, tv.id, t});  // no demand, no DRAM
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      return a.density != b.density ? a.density > b.density
                                    : (a.id != b.id ? a.id < b.id : a.index < b.index);
    });
    s->ranked.clear();
    s->entries.clear();
    s->evaluated = true;
    uint64_t left = budget;
    for (const Ranked& r : ranked) {
      s->ranked.push_back(r.id);
      if (left == 0) continue;
      const TableView& tv = proc.tables[r.index];
      if (whole_pages(tv) <= left) {
        s->entries.push_back({tv.id, true, {}, whole_pages(tv)});
        left -= whole_pages(tv);
        continue;
      }
      Entry partial{tv.id, false, {}, left};
      hottest_extents(proc, r.index, left, &partial.extents);
      s->entries.push_back(std::move(partial));
      left = 0;
    }
  }

  // The extents of table t, hottest first, that hold its `pages` hottest
  // pages (of the view: a window's; extent numbers of the whole table).
  void hottest_extents(const ProcessView& proc, size_t t, uint64_t pages,
                       std::vector<uint64_t>* out) {
    const TableView& tv = proc.tables[t];
    scratch_.clear();
    for (uint64_t e = 0, n = extent_count(tv); e < n; ++e)
      scratch_.push_back({key_heat_recency(tv.heat[e], tv.last_seen[e]), where_of(t, e)});
    auto size = [&](const Cand& c) {
      return extent_end(tv, extent_of(c.where)) - extent_first(tv, extent_of(c.where));
    };
    size_t r = order_front(&scratch_, pages, HotterFirst(), size);
    out->clear();
    uint64_t first = tv.first_page / tv.extent_pages;
    for (size_t k = 0; k < r; ++k) out->push_back(first + extent_of(scratch_[k].where));
  }

  // Marks the assignment as the keep set, cut to the budget, and sets the
  // table priorities for order_key().
  void apply(const ProcessView& proc, const ClientState& s, uint64_t budget) {
    std::unordered_map<int, size_t> index;
    priority_.assign(proc.tables.size(), 0);
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t)
      if (usable(proc.tables[t])) index.emplace(proc.tables[t].id, t);
    for (size_t k = 0; k < s.ranked.size(); ++k) {
      auto it = index.find(s.ranked[k]);
      if (it != index.end()) priority_[it->second] = static_cast<uint32_t>(s.ranked.size() - k);
    }
    uint64_t left = budget;
    std::vector<uint64_t> cut;
    for (const Entry& en : s.entries) {
      auto it = index.find(en.table_id);
      if (left == 0) break;
      if (it == index.end()) continue;
      const TableView& tv = proc.tables[it->second];
      const std::vector<uint64_t>* extents = &en.extents;
      uint64_t want = en.pages;
      uint64_t whole = whole_pages(tv);
      if (en.whole && whole <= left) {
        memset(tv.hints, kHintKeep, tv.pages);
        left -= whole;
        continue;
      }
      bool window = tv.pages < whole;
      if (en.whole || window) {
        // The budget shrank below the assignment, or a window of the table
        // is shown: its hottest pages (the window's share of them).
        want = std::min(en.whole ? left : want, left);
        if (window)
          want = fraction_of(want, static_cast<double>(tv.pages) / static_cast<double>(whole));
        hottest_extents(proc, it->second, want, &cut);
        extents = &cut;
      }
      uint64_t n = std::min(want, left);
      uint64_t base = tv.first_page / tv.extent_pages;  // extents are the whole table's
      for (uint64_t e0 : *extents) {
        if (n == 0) break;
        if (e0 < base || e0 - base >= extent_count(tv)) continue;
        uint64_t e = e0 - base;
        uint64_t first = extent_first(tv, e);
        uint64_t m = std::min(extent_end(tv, e) - first, n);
        memset(tv.hints + first, kHintKeep, m);
        n -= m;
        left -= m;
      }
      break;  // a partial table is the last one
    }
  }

  std::map<uint32_t, ClientState> state_;  // by client
  std::vector<uint32_t> priority_;  // per table index of the process being planned
  bool evaluated_ = false, evaluate_all_ = false;
  double last_eval_s_ = 0;
};

}  // namespace

const PolicyInfo& static_info() {
  static const PolicyInfo info{
      "static",
      "MTrainS-like: whole tables in DRAM by access density (bandwidth demand per byte), "
      "re-evaluated every period_s",
      with_common_tunables({
          {"bytes_per_access", 128, 1, 1 << 20, true,
           "bytes one sampled access reads, for a table's bandwidth demand"},
          {"period_s", 10, 0, 86400, false,
           "seconds between re-evaluations of the assignment (0 = every plan)"},
      })};
  return info;
}

std::unique_ptr<Policy> new_static_policy() { return std::make_unique<StaticPolicy>(); }

}  // namespace mtier::policy::detail
