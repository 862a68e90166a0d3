// lru: keeps the most recently sampled pages in DRAM (the last_seen tick of
// their extent); ties go to the hotter extent.
#include "policy/plan_common.h"

namespace mtier::policy::detail {

namespace {

enum { kKeepFraction };

class LruPolicy final : public KeepSetPolicy {
 public:
  LruPolicy() : KeepSetPolicy(lru_info()) {}

 protected:
  // Keep set: the most recently sampled extents (last_seen > 0), up to
  // keep_fraction of the budget.
  void choose_keep(const NodeView& node, size_t p, uint64_t budget) override {
    const ProcessView& proc = node.procs[p];
    scratch_.clear();
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t) {
      const TableView& tv = proc.tables[t];
      if (!usable(tv)) continue;
      for (uint64_t e = 0, n = extent_count(tv); e < n; ++e)
        if (tv.last_seen[e] > 0)
          scratch_.push_back({key_recency_heat(tv.last_seen[e], tv.heat[e]), where_of(t, e)});
    }
    keep_hottest(proc, &scratch_, fraction_of(budget, param(kKeepFraction)));
  }

  uint64_t order_key(const ProcessView& proc, size_t t, uint64_t e) const override {
    const TableView& tv = proc.tables[t];
    return key_recency_heat(tv.last_seen[e], tv.heat[e]);
  }
};

}  // namespace

const PolicyInfo& lru_info() {
  static const PolicyInfo info{
      "lru",
      "keeps the most recently sampled pages in DRAM",
      with_common_tunables({
          {"keep_fraction", 0.9, 0.1, 1, false,
           "share of the DRAM budget given to the keep set (the rest is room for new pages)"},
      })};
  return info;
}

std::unique_ptr<Policy> new_lru_policy() { return std::make_unique<LruPolicy>(); }

}  // namespace mtier::policy::detail
