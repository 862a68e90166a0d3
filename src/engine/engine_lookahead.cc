// SPDX-License-Identifier: Apache-2.0
// The lookahead's entry: named rows and ranges turned into the pages of
// managed tables (deduplicated), handed to the Lookahead (src/lookahead/).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "engine/engine.h"
#include "log/log.h"

namespace mtier {
namespace {

// Appends the pages of [a, a+len) that lie in tables, clipped to each.
// Registry held shared by the caller.
void add_range(TableRegistry& tables, uintptr_t a, size_t len, std::vector<LookaheadKey>* out) {
  uintptr_t end = a + len;
  if (len == 0 || end < a) return;
  while (a < end) {
    Table* t = tables.find(reinterpret_cast<void*>(a));
    if (!t) return;  // unmanaged: no-op (tables are whole extents: nothing further in this one)
    uint64_t first = t->page_of(reinterpret_cast<void*>(a));
    uintptr_t table_end = reinterpret_cast<uintptr_t>(t->page_addr(0)) + t->pages * kPageSize;
    uintptr_t stop = std::min(end, table_end);
    uint64_t last = t->page_of(reinterpret_cast<void*>(stop - 1));
    for (uint64_t p = first; p <= last; p++) out->push_back({t->id, p});
    a = stop;
  }
}

}  // namespace

Lookahead* Engine::lookahead_worker(int* err) {
  std::lock_guard lk(lookahead_mu_);
  if (!lookahead_) {
    auto p = std::make_unique<Lookahead>(*core_);
    if (int rc = p->start(); rc < 0) {
      *err = rc;
      MTIER_LOG_ERROR("lookahead: its worker could not start: %s", strerror(-rc));
      return nullptr;
    }
    lookahead_ = std::move(p);
    MTIER_LOG_INFO("lookahead: worker started (reads at queue depth %u, pins up to %u%% of "
                   "the DRAM budget)",
                   core_->opts.queue_depth, core_->opts.pin_limit_pct);
  }
  return lookahead_.get();
}

long Engine::submit_lookahead(std::vector<LookaheadKey>&& keys, uint64_t batch, unsigned flags) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  int err = 0;
  Lookahead* p = lookahead_worker(&err);
  if (!p) return err;
  if (uint64_t b = deferred_advance_.exchange(0); b) {
    if (long r = p->advance(b); r < 0) return r;
  }
  long ticket = p->submit(std::move(keys), batch, flags & kLookaheadWrite);
  if (ticket < 0 || (flags & kLookaheadAsync)) return ticket;
  return p->wait(ticket, -1);
}

// Whether the lookahead can bring anything in. Not while every table fits in
// the DRAM budget and no page is held below DRAM (no slow tier, no store
// slot in use): every page is then resident or never written, and none is
// evicted, so naming pages (building the keys, pinning each under its
// lock, a round trip through the lookahead's thread) would only cost the
// caller. Measured with the PyTorch trainer and a budget of twice its
// tables: the pre-hook's synchronous hints made its median step 30-100%
// slower than with no integration (12-18 ms against 8-9 ms). Checked at
// every call: a budget that shrinks (mtierd's share) makes them useful again.
bool Engine::lookahead_can_help() const {
  const Core& c = *core_;
  if (c.has_slow_tier() || c.tables.table_pages() > c.residency.budget_pages()) return true;
  for (const auto& s : c.stores)
    if (s->used_slots() > 0) return true;
  return false;
}

long Engine::lookahead_ranges(const LookaheadRange* ranges, size_t n, uint64_t batch,
                             unsigned flags) {
  if (n && !ranges) return -EINVAL;
  if (!lookahead_can_help()) return 0;
  std::vector<LookaheadKey> keys;
  {
    std::shared_lock lk(core_->tables.mutex());
    for (size_t i = 0; i < n; i++)
      add_range(core_->tables, reinterpret_cast<uintptr_t>(ranges[i].addr), ranges[i].len, &keys);
  }
  return submit_lookahead(std::move(keys), batch, flags);
}

long Engine::lookahead_rows(const void* base, size_t row_bytes, const void* ids, size_t n,
                           int id_bytes, uint64_t batch, unsigned flags) {
  if ((id_bytes != 4 && id_bytes != 8) || row_bytes == 0 || (n && !ids)) return -EINVAL;
  if (!lookahead_can_help()) return 0;
  std::vector<LookaheadKey> keys;
  keys.reserve(n);
  {
    std::shared_lock lk(core_->tables.mutex());
    auto b = reinterpret_cast<uintptr_t>(base);
    for (size_t i = 0; i < n; i++) {
      int64_t id = id_bytes == 4 ? static_cast<const int32_t*>(ids)[i]
                                 : static_cast<const int64_t*>(ids)[i];
      if (id < 0) continue;
      unsigned __int128 off = static_cast<unsigned __int128>(id) * row_bytes;
      if (off + row_bytes > UINTPTR_MAX - b) continue;  // past the address space
      add_range(core_->tables, b + static_cast<uintptr_t>(off), row_bytes, &keys);
    }
  }
  return submit_lookahead(std::move(keys), batch, flags);
}

long Engine::lookahead_wait(long ticket, int timeout_ms) {
  Lookahead* p;
  {
    std::lock_guard lk(lookahead_mu_);
    p = lookahead_.get();
  }
  return p ? p->wait(ticket, timeout_ms) : -EINVAL;
}

bool Engine::lookahead_useful() const {
  return lookahead_can_help() || core_->counters.pinned_pages.load(std::memory_order_relaxed) > 0;
}

// Measured with the PyTorch trainer and a budget of twice its tables: an
// advance a step woke the lookahead's thread for nothing (and started it).
// A recorded advance goes before the next read ahead served; should a
// read still queued pin pages after it was recorded (the budget grew
// meanwhile), they stay pinned until then: within the pin limit, so the
// evictor still has victims.
int Engine::lookahead_advance(uint64_t batch) {
  if (!lookahead_useful()) {
    deferred_advance_.store(batch, std::memory_order_relaxed);
    return 0;
  }
  deferred_advance_.store(0, std::memory_order_relaxed);  // this advance goes past it
  int err = 0;
  Lookahead* p = lookahead_worker(&err);
  if (!p) return err;
  long ticket = p->advance(batch);
  return ticket < 0 ? static_cast<int>(ticket) : 0;
}

}  // namespace mtier
