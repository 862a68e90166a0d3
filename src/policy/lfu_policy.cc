// SPDX-License-Identifier: Apache-2.0
// lfu: keeps the most frequently sampled pages in DRAM. Frequency is the
// heat model's decayed sample count (halved every cool period), so old
// popularity fades; ties go to the more recently sampled extent.
#include "policy/plan_common.h"

namespace mtier::policy::detail {

namespace {

class LfuPolicy final : public SampledKeepPolicy {
 public:
  LfuPolicy() : SampledKeepPolicy(lfu_info()) {}

 protected:
  bool sampled(const TableView& tv, uint64_t e) const override { return tv.heat[e] > 0; }
  uint64_t key(const TableView& tv, uint64_t e) const override {
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
