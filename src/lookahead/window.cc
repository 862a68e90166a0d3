// SPDX-License-Identifier: Apache-2.0
#include "lookahead/window.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

namespace mtier {

uint64_t PinWindow::limit() const {
  return core_.residency.budget_pages() * core_.opts.pin_limit_pct / 100;
}

PinWindow::BatchPins& PinWindow::pins_of(uint64_t batch) {
  auto it = std::lower_bound(batches_.begin(), batches_.end(), batch,
                             [](const BatchPins& b, uint64_t x) { return b.batch < x; });
  if (it == batches_.end() || it->batch != batch) it = batches_.insert(it, BatchPins{batch, {}});
  return *it;
}

void PinWindow::reserve(uint64_t batch, size_t n) {
  BatchPins& b = pins_of(batch);
  b.pages.reserve(b.pages.size() + n);
}

bool PinWindow::pin(Table* t, uint64_t page, uint64_t batch) {
  PageWordAtomic& w = core_.word(t, page);
  auto& pinned = core_.counters.pinned_pages;
  bool was = PageWord::pinned(w.load(std::memory_order_acquire));
  if (!was && pinned.load(std::memory_order_relaxed) >= static_cast<int64_t>(limit())) return false;
  if (mtier::pin(w, batch)) pinned.fetch_add(1, std::memory_order_relaxed);
  // Within reserve()'s capacity: no allocation under the locks.
  pins_of(batch).pages.push_back({t->id, page});
  return true;
}

void PinWindow::advance(uint64_t batch) {
  current_ = std::max(current_, batch);
  advanced_ = true;
  std::shared_lock tables(core_.tables.mutex());
  while (!batches_.empty() && batches_.front().batch < batch) {
    const BatchPins& b = batches_.front();
    Table* t = nullptr;
    for (const Key& k : b.pages) {
      if (!t || t->id != k.table_id) t = core_.tables.by_id(k.table_id);
      if (!t || k.page >= t->pages) continue;  // freed meanwhile: its pins went with it
      std::lock_guard lk(core_.lock_of(t, k.page));
      if (unpin(core_.word(t, k.page), b.batch))
        core_.counters.pinned_pages.fetch_sub(1, std::memory_order_relaxed);
    }
    batches_.pop_front();
  }
}

}  // namespace mtier
