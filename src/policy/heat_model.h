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
    double total_heat = 0;            // sum of heat (recomputed exactly by cool())
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
  // Policy::cool_period_s()).
  void cool();
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
};

}  // namespace mtier::policy
