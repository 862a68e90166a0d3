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
  for (Table& t : tables_) {
    double sum = 0;
    for (float& h : t.heat) {
      h *= 0.5f;
      sum += h;
    }
    t.total_heat = sum;  // exact again: no drift from the incremental updates
  }
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
