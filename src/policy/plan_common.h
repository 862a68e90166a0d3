// SPDX-License-Identifier: Apache-2.0
// What every policy in src/policy shares (private to this directory): the
// tunables and their parsing (TunedPolicy), and the plan() skeleton
// (KeepSetPolicy): budgets by fair share, then the policy's keep set per
// process written as hints, then the moves that realize it, merged into
// ranges and cut to the rate limit. A policy supplies only choose_keep()
// and order_key().
//
// Moves of one plan, in priority order (within a class, processes in view
// order rotated by now_tick, so a rate limit starves none of them):
//   0. slow-tier pages outside the keep set, coldest first, while the slow
//      tier is over the process's slow budget: kEvict;
//   1. DRAM pages outside the keep set, coldest first, while the process is
//      over its DRAM budget: kEvict, or kDemote for the warmest of them that
//      fit in the slow tier's room;
//   2. likewise, to make room for the keep-set pages to come in;
//   3. keep-set pages in the slow tier or a store, hottest first: kPromote,
//      kPrefetch (as many as fit in the budget).
// The DRAM budget in all of this is the part of the process's budget its
// evictor lets it fill (ProcessView::dram_fill).
// Every prefix of the list keeps each process's DRAM at most max(resident,
// budget) and its slow tier at most max(slow resident, slow budget): pages
// only come in after all the room they need was made, and demotes only use
// room the slow tier has before anything is promoted.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace mtier::policy::detail {

// An extent as a candidate for the keep set or a move. `key`: larger is
// hotter (the policy's order); `where`: table index << 40 | extent index,
// unique per candidate list, also the tie-break (lower first) so every order
// is total and plans are deterministic.
struct Cand {
  uint64_t key;
  uint64_t where;
};
constexpr unsigned kExtentBits = 40;
constexpr size_t kMaxTables = size_t{1} << (64 - kExtentBits);  // tables past this are skipped
inline uint64_t where_of(size_t table, uint64_t extent) {
  return static_cast<uint64_t>(table) << kExtentBits | extent;
}
inline size_t table_of(uint64_t where) { return static_cast<size_t>(where >> kExtentBits); }
inline uint64_t extent_of(uint64_t where) { return where & ((uint64_t{1} << kExtentBits) - 1); }

struct HotterFirst {
  bool operator()(const Cand& a, const Cand& b) const {
    return a.key != b.key ? a.key > b.key : a.where < b.where;
  }
};
struct ColderFirst {
  bool operator()(const Cand& a, const Cand& b) const {
    return a.key != b.key ? a.key < b.key : a.where < b.where;
  }
};

// Order keys. A non-negative float's bits order like its value; a heat that
// is not > 0 (or NaN) counts as 0.
uint32_t heat_bits(float heat);
inline uint64_t key_heat_recency(float heat, uint32_t last_seen) {
  return static_cast<uint64_t>(heat_bits(heat)) << 32 | last_seen;
}
inline uint64_t key_recency_heat(uint32_t last_seen, float heat) {
  return static_cast<uint64_t>(last_seen) << 32 | heat_bits(heat);
}

// A table plan() works on: arrays present, extent_pages >= 1, fewer than
// 2^40 extents.
bool usable(const TableView& t);
inline uint64_t extent_count(const TableView& t) {
  return t.pages / t.extent_pages + (t.pages % t.extent_pages != 0);
}
inline uint64_t extent_first(const TableView& t, uint64_t e) { return e * t.extent_pages; }
inline uint64_t extent_end(const TableView& t, uint64_t e) {
  return std::min(t.pages, (e + 1) * t.extent_pages);
}

// Reorders *c so that its first r elements are the first r in `cmp` order,
// where r is the smallest length whose counts (count(cand)) add up to at
// least `pages` (r = all of *c if they never do; 0 for pages 0). Among
// them only c[r-1] has a place: it is the last in `cmp` order (the one a
// limit cuts). Expected O(n) comparisons and count() calls: halving
// quickselect on the counts.
template <class Cmp, class Count>
size_t select_front(std::vector<Cand>* c, uint64_t pages, Cmp cmp, Count count) {
  if (pages == 0) return 0;
  auto at = [&](size_t i) { return c->begin() + static_cast<std::ptrdiff_t>(i); };
  // [0, lo) are the lo first of all, their counts add up to got < pages;
  // [lo, hi) are the next ones; the answer is in (lo, hi] unless the counts
  // never reach pages.
  size_t lo = 0, hi = c->size();
  uint64_t got = 0;
  while (hi - lo > 16) {
    size_t mid = lo + (hi - lo) / 2;
    std::nth_element(at(lo), at(mid), at(hi), cmp);
    uint64_t s = 0;
    for (size_t i = lo; i < mid; ++i) s += count((*c)[i]);
    if (got + s >= pages) {
      hi = mid;
    } else {
      got += s;
      lo = mid;
    }
  }
  std::sort(at(lo), at(hi), cmp);  // [lo, hi) are the next ones after [0, lo)
  while (lo < hi) {
    got += count((*c)[lo++]);
    if (got >= pages) return lo;
  }
  // Only when [0, hi) falls short: then hi is c->size() (halving never
  // lowers hi below an answer).
  return lo;
}

// select_front(), then the first r sorted: O(n + r log r).
template <class Cmp, class Count>
size_t order_front(std::vector<Cand>* c, uint64_t pages, Cmp cmp, Count count) {
  size_t r = select_front(c, pages, cmp, count);
  std::sort(c->begin(), c->begin() + static_cast<std::ptrdiff_t>(r), cmp);
  return r;
}

// floor(pages * fraction) for fraction in [0, 1].
uint64_t fraction_of(uint64_t pages, double fraction);

// Common tunables, appended to every policy's own.
std::vector<Tunable> with_common_tunables(std::vector<Tunable> own);

// A policy with tunables from its PolicyInfo: configure(), params_text(),
// and values by index (the index in info.tunables).
class TunedPolicy : public Policy {
 public:
  explicit TunedPolicy(const PolicyInfo& info);
  const char* name() const override { return info_.name; }
  [[nodiscard]] int configure(const std::string& params, std::string* why) override;
  std::string params_text() const override;
  double cool_period_s() const override;

 protected:
  double param(size_t index) const { return values_[index]; }

 private:
  const PolicyInfo& info_;
  std::vector<double> values_;
};

class KeepSetPolicy : public TunedPolicy {
 public:
  using TunedPolicy::TunedPolicy;
  void plan(const NodeView& node, Plan* out) final;

 protected:
  // Called once per plan(), after the budgets, before any choose_keep().
  virtual void begin_plan(const NodeView& node, const Plan& plan);
  // Writes the keep set of process `p` as hints (nonzero = keep), at most
  // `budget` pages; the hints of its usable tables are all 0 on entry.
  virtual void choose_keep(const NodeView& node, size_t p, uint64_t budget) = 0;
  // The order of extent `e` of table `t` (an index into proc.tables) of
  // process `p`, larger = hotter: keep-set pages come in hottest first,
  // other pages leave coldest first. Called after choose_keep(p), before
  // the next process's choose_keep().
  virtual uint64_t order_key(const ProcessView& proc, size_t t, uint64_t e) const = 0;

  // Helper for choose_keep(): marks kHintKeep on the pages of the hottest
  // (HotterFirst) extents of *cands (extents of `proc`), up to `limit` pages;
  // the extent at the limit gets its first pages; `limit` is first cut to
  // proc.view_share of it. Reorders *cands. Returns the pages marked.
  static uint64_t keep_hottest(const ProcessView& proc, std::vector<Cand>* cands, uint64_t limit);
  std::vector<Cand> scratch_;  // for choose_keep(), reused across plans

 private:
  void plan_process(const NodeView& node, size_t p, const Plan& plan);

  std::vector<Cand> in_, out_dram_, out_slow_;
  std::vector<Move> class_[4];
};

// lfu and lru: the keep set is the sampled extents with the largest key(),
// up to the keep_fraction (tunable 0) of the budget; the rest of the budget
// is room for pages nobody sampled yet (new faults), which the evictor
// handles. The same key orders the moves.
class SampledKeepPolicy : public KeepSetPolicy {
 public:
  using KeepSetPolicy::KeepSetPolicy;

 protected:
  // Whether extent e of tv was sampled (only those are candidates), and its
  // rank (larger = keep first).
  virtual bool sampled(const TableView& tv, uint64_t e) const = 0;
  virtual uint64_t key(const TableView& tv, uint64_t e) const = 0;

  void choose_keep(const NodeView& node, size_t p, uint64_t budget) final;
  uint64_t order_key(const ProcessView& proc, size_t t, uint64_t e) const final {
    return key(proc.tables[t], e);
  }
};

// The policies, one file each.
const PolicyInfo& lfu_info();
std::unique_ptr<Policy> new_lfu_policy();
const PolicyInfo& lru_info();
std::unique_ptr<Policy> new_lru_policy();
const PolicyInfo& hot_promote_info();
std::unique_ptr<Policy> new_hot_promote_policy();
const PolicyInfo& static_info();
std::unique_ptr<Policy> new_static_policy();

}  // namespace mtier::policy::detail
