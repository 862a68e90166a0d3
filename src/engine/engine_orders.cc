// SPDX-License-Identifier: Apache-2.0
// Migration orders from outside the engine (the daemon's policies, through
// the daemon link): evict a range out of DRAM, fetch a range into it (a fetch order), set
// the DRAM budget. Each is validated against the tables (the daemon is
// another process) and clipped to its table.
#include <cerrno>
#include <mutex>
#include <shared_mutex>
#include "engine/engine.h"

namespace mtier {

int Engine::evict_range(int table_id, uint64_t first, uint64_t count, bool one_tier) {
  return evictor_->evict_range(table_id, first, count, one_tier);
}

int Engine::table_first_page(int table_id, uint64_t* first) {
  std::shared_lock lk(core_->tables.mutex());
  Table* t = core_->tables.by_id(table_id);
  if (!t) return -ENOENT;
  *first = t->first_page;
  return 0;
}

long Engine::promote_range(int table_id, uint64_t first, uint64_t count) {
  return evictor_->promote_range(table_id, first, count);
}

int Engine::fetch_order(int table_id, uint64_t first, uint64_t count) {
  return handler_->queue_fetch_order(table_id, first, count);
}

void Engine::set_budget_pages(int tier, uint64_t pages, uint64_t ceiling) {
  (tier == 0 ? core_->residency : core_->slow).set_budget_pages(pages, ceiling);
}

}  // namespace mtier
