// SPDX-License-Identifier: Apache-2.0
// lru: keeps the most recently sampled pages in DRAM (the last_seen tick of
// their extent); ties go to the hotter extent.
#include "policy/plan_common.h"

namespace mtier::policy::detail {

namespace {

class LruPolicy final : public SampledKeepPolicy {
 public:
  LruPolicy() : SampledKeepPolicy(lru_info()) {}

 protected:
  bool sampled(const TableView& tv, uint64_t e) const override { return tv.last_seen[e] > 0; }
  uint64_t key(const TableView& tv, uint64_t e) const override {
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
