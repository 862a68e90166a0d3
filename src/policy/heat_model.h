// SPDX-License-Identifier: Apache-2.0
// The daemon's heat model of one process: per table, a heat and a last-seen
// tick per extent of E pages, fed by access samples and cooled HeMem-style
// (every heat halved once per cool period), plus per-table sample rates.
// Table ids and pages come from another process, so anything unknown or out
// of range is ignored and counted, never trusted. Not thread-safe: the
// daemon's one tiering thread owns it.
#pragma once
#include <cstdint>
#include <vector>

#include "policy/policy.h"

namespace mtier::policy {

class HeatModel {
 public:
  struct Table {
    int id = 0;
    uint64_t pages = 0;
    std::vector<float> heat;          // per extent
    std::vector<uint32_t> last_seen;  // per extent; 0 = never sampled
    double total_heat = 0;            // sum of heat (recomputed exactly by a cooling pass
                                      // that visits the whole table in one step)
    double interval_samples = 0;      // sample weight recorded in the current interval
    double last_interval_samples = 0; // ... in the last completed one
    double samples_per_s = 0;         // EWMA over completed intervals
    bool have_rate = false;           // samples_per_s holds at least one interval
  };
  struct Ignored {
    uint64_t unknown_table = 0;
    uint64_t page_out_of_range = 0;
    uint64_t bad_weight = 0;  // not finite, or <= 0
  };

  // No heat reaches this: a sample adding to it is clamped (halving inf
  // would keep it inf).
  static constexpr float kMaxHeat = 1e30f;

  // `extent_pages` (E) 0 means 1. `ewma_alpha`: the weight of the newest
  // interval in samples_per_s, clamped to (0, 1]; invalid means 0.25.
  explicit HeatModel(uint32_t extent_pages = 1, double ewma_alpha = 0.25);

  // Returns 0, -EEXIST if the id is taken, -EINVAL if pages is 0 or so large
  // that the table has 2^40 extents or more.
  [[nodiscard]] int add_table(int id, uint64_t pages);
  // Returns 0 or -ENOENT.
  [[nodiscard]] int remove_table(int id);

  // Adds `weight` to the heat of the page's extent (and to the table's
  // interval samples) and sets its last_seen to now(). Ignored (and counted)
  // for an unknown table, a page out of range or a bad weight.
  void record(int table_id, uint64_t page, float weight = 1.0f);
  // Halves every heat (HeMem's cooling; the daemon calls it every
  // Policy::cool_period_s()): request_cool() and a cool_step() with no
  // limit.
  void cool();
  // Cooling in bounded steps, for tables too large to halve in one tick:
  // request_cool() asks for one more halving of every heat; cool_step()
  // carries out the halvings asked for on at most `max_extents` extents,
  // continuing a pass over every table's extents (in id order) from where
  // the last call stopped, and returns the extents it visited. A pass
  // applies all the halvings asked for before it began; those asked for
  // during it wait for the next pass, so no heat misses a halving, some
  // get theirs a few steps late. Tables added during a pass get its
  // halvings too (from a heat of 0, no change).
  void request_cool() { cools_wanted_++; }
  uint64_t cool_step(uint64_t max_extents);
  // Halvings asked for and not yet applied to every extent.
  bool cooling() const { return pass_cools_ > 0 || cools_wanted_ > 0; }
  // Advances time to `now_tick` (0 is taken as 1) and closes the sampling
  // interval, which lasted `interval_s` seconds: per table, the interval's
  // samples move to last_interval_samples and the EWMA takes in their rate.
  // interval_s <= 0 (or not finite) closes the interval without a rate.
  void tick(uint32_t now_tick, double interval_s);

  uint32_t now() const { return now_; }
  uint32_t extent_pages() const { return extent_pages_; }
  size_t table_count() const { return tables_.size(); }
  // The table `id`, or nullptr. Valid until the next add/remove_table.
  const Table* find(int id) const;
  // Fills the heat fields of *view (id, pages, extent_pages, heat,
  // last_seen, samples_per_s); place, hints and name are the caller's.
  // Returns 0 or -ENOENT.
  [[nodiscard]] int fill_view(int id, TableView* view) const;
  const Ignored& ignored() const { return ignored_; }

 private:
  Table* find_mut(int id);

  uint32_t extent_pages_;
  double alpha_;
  uint32_t now_ = 1;
  std::vector<Table> tables_;  // sorted by id
  Ignored ignored_;
  uint32_t cools_wanted_ = 0;  // halvings asked for, no pass applying them yet
  uint32_t pass_cools_ = 0;    // halvings the pass in progress applies; 0: none in progress
  int64_t pass_table_ = 0;     // the pass continues at the first table with id >= this,
  uint64_t pass_extent_ = 0;   // at this extent when that table's id is pass_table_
};

}  // namespace mtier::policy
