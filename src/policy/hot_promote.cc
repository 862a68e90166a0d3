// SPDX-License-Identifier: Apache-2.0
// hot-promote: HeMem's policy. An extent is hot once its heat (decayed
// sample count) reaches hot_threshold and stays hot until it falls below
// hot_threshold * cold_ratio (hysteresis, so a page near the threshold does
// not bounce between tiers every tick). Hot pages are the keep set, hottest
// first up to the budget: those in the slow tier or a store come into DRAM,
// and cold DRAM pages make room. The heat model's cooling (every
// cool_period_s) is what lets a hot page cool down.
#include <map>
#include <utility>

#include "policy/plan_common.h"

namespace mtier::policy::detail {

namespace {

enum { kHotThreshold, kColdRatio };

class HotPromotePolicy final : public KeepSetPolicy {
 public:
  HotPromotePolicy() : KeepSetPolicy(hot_promote_info()) {}

 protected:
  // Drops the hot bits of tables no longer shown.
  void begin_plan(const NodeView& node, const Plan&) override {
    for (auto& [key, s] : state_) s.live = false;
    for (const ProcessView& proc : node.procs) {
      for (const TableView& tv : proc.tables) {
        auto it = state_.find({proc.client, tv.id});
        if (it != state_.end()) it->second.live = true;
      }
    }
    std::erase_if(state_, [](const auto& kv) { return !kv.second.live; });
  }

  void choose_keep(const NodeView& node, size_t p, uint64_t budget) override {
    const ProcessView& proc = node.procs[p];
    double on = param(kHotThreshold), off = on * param(kColdRatio);
    scratch_.clear();
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t) {
      const TableView& tv = proc.tables[t];
      if (!usable(tv)) continue;
      // The hot bits are the whole table's; a window's extent e is the
      // table's extent `first + e`.
      uint64_t pages = whole_pages(tv), n = extent_count(tv);
      uint64_t all = pages / tv.extent_pages + (pages % tv.extent_pages != 0);
      uint64_t first = tv.first_page / tv.extent_pages;
      if (first > all || n > all - first) continue;  // not a window of it
      TableState& s = state_[{proc.client, tv.id}];
      if (s.pages != pages || s.extent_pages != tv.extent_pages || s.hot.size() != all) {
        s.pages = pages;  // a new table, or one resized: nothing is hot yet
        s.extent_pages = tv.extent_pages;
        s.hot.assign(all, 0);
      }
      s.live = true;
      for (uint64_t e = 0; e < n; ++e) {
        double h = tv.heat[e];
        uint8_t& hot = s.hot[first + e];
        hot = hot ? h >= off : h >= on;
        if (hot)
          scratch_.push_back({key_heat_recency(tv.heat[e], tv.last_seen[e]), where_of(t, e)});
      }
    }
    keep_hottest(proc, &scratch_, budget);
  }

  uint64_t order_key(const ProcessView& proc, size_t t, uint64_t e) const override {
    const TableView& tv = proc.tables[t];
    return key_heat_recency(tv.heat[e], tv.last_seen[e]);
  }

 private:
  struct TableState {
    uint64_t pages = 0;
    uint32_t extent_pages = 0;
    std::vector<uint8_t> hot;  // per extent
    bool live = false;
  };
  std::map<std::pair<uint32_t, int>, TableState> state_;  // by (client, table id)
};

}  // namespace

const PolicyInfo& hot_promote_info() {
  static const PolicyInfo info{
      "hot-promote",
      "HeMem-like: pages whose decayed sample count passes a threshold are hot and brought "
      "into DRAM; cold pages make room",
      with_common_tunables({
          {"hot_threshold", 8, 0.5, 1e6, false,
           "heat (decayed samples) at which an extent becomes hot"},
          {"cold_ratio", 0.5, 0, 1, false,
           "a hot extent stays hot until its heat falls below hot_threshold * cold_ratio"},
      })};
  return info;
}

std::unique_ptr<Policy> new_hot_promote_policy() { return std::make_unique<HotPromotePolicy>(); }

}  // namespace mtier::policy::detail
