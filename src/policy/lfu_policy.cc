// lfu: keeps the most frequently sampled pages in DRAM. Frequency is the
// heat model's decayed sample count (halved every cool period), so old
// popularity fades; ties go to the more recently sampled extent.
#include "policy/plan_common.h"

namespace mtier::policy::detail {

namespace {

enum { kKeepFraction };

class LfuPolicy final : public KeepSetPolicy {
 public:
  LfuPolicy() : KeepSetPolicy(lfu_info()) {}

 protected:
  // Keep set: the hottest sampled extents (heat > 0), up to keep_fraction
  // of the budget; the rest of the budget is room for pages nobody sampled
  // yet (new faults), which the evictor handles.
  void choose_keep(const NodeView& node, size_t p, uint64_t budget) override {
    const ProcessView& proc = node.procs[p];
    scratch_.clear();
    for (size_t t = 0; t < proc.tables.size() && t < kMaxTables; ++t) {
      const TableView& tv = proc.tables[t];
      if (!usable(tv)) continue;
      for (uint64_t e = 0, n = extent_count(tv); e < n; ++e)
        if (tv.heat[e] > 0)
          scratch_.push_back({key_heat_recency(tv.heat[e], tv.last_seen[e]), where_of(t, e)});
    }
    keep_hottest(proc, &scratch_, fraction_of(budget, param(kKeepFraction)));
  }

  uint64_t order_key(const ProcessView& proc, size_t t, uint64_t e) const override {
    const TableView& tv = proc.tables[t];
    return key_heat_recency(tv.heat[e], tv.last_seen[e]);
  }
};

}  // namespace

const PolicyInfo& lfu_info() {
  static const PolicyInfo info{
      "lfu",
      "keeps the most frequently sampled pages (decayed counts) in DRAM",
      with_common_tunables({
          {"keep_fraction", 0.9, 0.1, 1, false,
           "share of the DRAM budget given to the keep set (the rest is room for new pages)"},
      })};
  return info;
}

std::unique_ptr<Policy> new_lfu_policy() { return std::make_unique<LfuPolicy>(); }

}  // namespace mtier::policy::detail
