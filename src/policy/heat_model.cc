// SPDX-License-Identifier: Apache-2.0
// Heat per extent, cooling and per-table sample rates (see heat_model.h).
#include "policy/heat_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace mtier::policy {

namespace {

constexpr uint64_t kMaxExtents = 1ull << 40;  // plan_common.h packs extent indexes in 40 bits

}  // namespace

HeatModel::HeatModel(uint32_t extent_pages, double ewma_alpha)
    : extent_pages_(extent_pages == 0 ? 1 : extent_pages),
      alpha_(ewma_alpha > 0 && ewma_alpha <= 1 ? ewma_alpha : 0.25) {}

int HeatModel::add_table(int id, uint64_t pages) {
  if (pages == 0) return -EINVAL;
  uint64_t extents = pages / extent_pages_ + (pages % extent_pages_ != 0);
  if (extents >= kMaxExtents) return -EINVAL;
  auto it = std::lower_bound(tables_.begin(), tables_.end(), id,
                             [](const Table& t, int v) { return t.id < v; });
  if (it != tables_.end() && it->id == id) return -EEXIST;
  Table t;
  t.id = id;
  t.pages = pages;
  t.heat.assign(extents, 0.0f);
  t.last_seen.assign(extents, 0);
  tables_.insert(it, std::move(t));
  return 0;
}

int HeatModel::remove_table(int id) {
  auto it = std::lower_bound(tables_.begin(), tables_.end(), id,
                             [](const Table& t, int v) { return t.id < v; });
  if (it == tables_.end() || it->id != id) return -ENOENT;
  tables_.erase(it);
  return 0;
}

HeatModel::Table* HeatModel::find_mut(int id) {
  auto it = std::lower_bound(tables_.begin(), tables_.end(), id,
                             [](const Table& t, int v) { return t.id < v; });
  return it != tables_.end() && it->id == id ? &*it : nullptr;
}

const HeatModel::Table* HeatModel::find(int id) const {
  return const_cast<HeatModel*>(this)->find_mut(id);
}

void HeatModel::record(int table_id, uint64_t page, float weight) {
  if (!(weight > 0) || !std::isfinite(weight)) {
    ++ignored_.bad_weight;
    return;
  }
  Table* t = find_mut(table_id);
  if (!t) {
    ++ignored_.unknown_table;
    return;
  }
  if (page >= t->pages) {
    ++ignored_.page_out_of_range;
    return;
  }
  uint64_t e = page / extent_pages_;
  float before = t->heat[e];
  float after = std::min(before + weight, kMaxHeat);
  t->heat[e] = after;
  t->total_heat += static_cast<double>(after) - before;
  t->last_seen[e] = now_;
  t->interval_samples += weight;
}

void HeatModel::cool() {
  request_cool();
  (void)cool_step(UINT64_MAX);
}

uint64_t HeatModel::cool_step(uint64_t max_extents) {
  uint64_t done = 0;
  while (done < max_extents) {
    if (pass_cools_ == 0) {
      if (cools_wanted_ == 0) break;
      pass_cools_ = cools_wanted_;  // a new pass
      cools_wanted_ = 0;
      pass_table_ = INT64_MIN;
      pass_extent_ = 0;
    }
    auto it = std::lower_bound(tables_.begin(), tables_.end(), pass_table_,
                               [](const Table& t, int64_t v) { return t.id < v; });
    if (it == tables_.end()) {
      pass_cools_ = 0;  // the pass is over
      continue;
    }
    if (it->id != pass_table_) {
      pass_table_ = it->id;
      pass_extent_ = 0;
    }
    Table& t = *it;
    // 2^-k, k halvings at once (0 past 150: below the smallest float).
    float f = std::ldexp(1.0f, -static_cast<int>(std::min<uint32_t>(pass_cools_, 200)));
    uint64_t from = std::min<uint64_t>(pass_extent_, t.heat.size());
    uint64_t to = from + std::min<uint64_t>(t.heat.size() - from, max_extents - done);
    double before = 0, sum = 0;
    for (uint64_t e = from; e < to; e++) {
      before += t.heat[e];
      t.heat[e] *= f;
      sum += t.heat[e];
    }
    if (from == 0 && to == t.heat.size())
      t.total_heat = sum;  // exact again: no drift from the incremental updates
    else
      t.total_heat = std::max(0.0, t.total_heat + sum - before);
    done += to - from;
    pass_extent_ = to;
    if (to == t.heat.size()) {
      pass_table_ = int64_t{t.id} + 1;
      pass_extent_ = 0;
    }
  }
  return done;
}

void HeatModel::tick(uint32_t now_tick, double interval_s) {
  now_ = now_tick == 0 ? 1 : now_tick;
  bool timed = interval_s > 0 && std::isfinite(interval_s);
  for (Table& t : tables_) {
    if (timed) {
      double rate = t.interval_samples / interval_s;
      t.samples_per_s = t.have_rate ? alpha_ * rate + (1 - alpha_) * t.samples_per_s : rate;
      t.have_rate = true;
    }
    t.last_interval_samples = t.interval_samples;
    t.interval_samples = 0;
  }
}

int HeatModel::fill_view(int id, TableView* view) const {
  const Table* t = find(id);
  if (!t) return -ENOENT;
  view->id = t->id;
  view->pages = t->pages;
  view->extent_pages = extent_pages_;
  view->heat = t->heat.data();
  view->last_seen = t->last_seen.data();
  view->samples_per_s = t->samples_per_s;
  return 0;
}

}  // namespace mtier::policy
