// SPDX-License-Identifier: Apache-2.0
// Engine operations: tables, stats, description.
#include "engine/engine.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "log/log.h"
#include "sys/numa.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier {

int Engine::create_table(const std::string& name, uint64_t bytes, void** addr) {
  std::unique_lock lk(core_->tables.mutex());
  drop_retired_locked();
  int err = 0;
  Table* t = core_->tables.add(name, bytes, &err);
  if (!t) return err;
  // Its pages may have been left PROT_NONE by a previous owner of the range
  // (the preload makes unmapped memory fault as the kernel would).
  if ((err = sys::protect(t->base, t->pages * kPageSize, true)) < 0) {
    core_->tables.remove(t);
    return err;
  }
  if (segment_) {
    int rc = segment_->put_table(static_cast<uint32_t>(t->id), t->first_page, t->pages, t->bytes,
                                 t->name.c_str());
    if (rc < 0 && !directory_full_said_) {
      MTIER_LOG_WARN("table %s: not in the daemon's directory (%s); it follows the local policy",
                     t->name.c_str(), strerror(-rc));
      directory_full_said_ = true;
    }
    if (link_) link_->tables_changed();
  }
  *addr = t->base;
  return t->id;
}

int Engine::grow_table(int id, uint64_t bytes) {
  std::unique_lock lk(core_->tables.mutex());
  Table* t = core_->tables.by_id(id);
  if (!t || t->retired.load()) return -ENOENT;
  uint64_t old_pages = t->pages;
  if (int rc = core_->tables.grow(t, bytes); rc < 0) return rc;
  // The new pages may have been left PROT_NONE by a previous owner of the
  // range, as in create_table.
  if (t->pages > old_pages)
    (void)sys::protect(t->page_addr(old_pages), (t->pages - old_pages) * kPageSize, true);
  if (segment_) {
    (void)segment_->put_table(static_cast<uint32_t>(t->id), t->first_page, t->pages, t->bytes,
                              t->name.c_str());
    if (link_) link_->tables_changed();
  }
  return 0;
}

// Drops pages [first, first+count) of `t`: slots freed, memory punched, PTEs
// and poison markers zapped. Caller holds the registry exclusively, so no
// page is FETCHING (those live only inside a shared-lock batch); each page
// still changes state under its stripe lock and through transition(), as
// the LOCKING contract (page/core.h) says of every page word.
void Engine::drop_pages(Table* t, uint64_t first, uint64_t count) {
  release_holds(t, first, first + count);  // unmapped or freed pages are unlocked
  int64_t resident = 0, slow = 0;
  for (uint64_t p = first; p < first + count; p++) {
    std::lock_guard pl(core_->lock_of(t, p));
    PageWordAtomic& w = core_->word(t, p);
    uint64_t v = w.load(std::memory_order_acquire);
    if (PageWord::has_slot(v)) core_->stores[PageWord::store(v)]->free_slot(PageWord::slot(v));
    if (PageWord::resident(v)) (PageWord::slow(v) ? slow : resident)++;
    if (PageWord::pinned(v)) core_->counters.pinned_pages.fetch_sub(1, std::memory_order_relaxed);
    transition(w, PageEvent::kDiscard, t->id, p);  // the whole word cleared
  }
  (void)sys::zap(t->page_addr(first), count * kPageSize);
  (void)core_->region->punch(core_->region_offset(t, first), count * kPageSize);
  core_->residency.sub(resident);
  core_->slow.sub(slow);
  t->counters.resident_pages.fetch_sub(resident + slow, std::memory_order_relaxed);
  t->counters.slow_pages.fetch_sub(slow, std::memory_order_relaxed);
  core_->residency.notify_progress();
}

int Engine::free_table(int id) {
  // A forked child may still read the table (it existed at the child's
  // fork): it is retired instead - gone for the program, kept for the
  // children with its pages (which the evictor may still move) and its
  // address range, until no child can read it (drop_retired()).
  bool retire = core_->children && core_->children->may_be_inherited(id);
  if (!retire) {
    // An eviction pass holds the registry shared while it writes pages
    // back: told first, it writes none of this table's from then on, so
    // the free waits for the I/O in flight only, not for the table's.
    std::shared_lock shared(core_->tables.mutex());
    if (Table* t = core_->tables.by_id(id)) t->freeing.store(true, std::memory_order_release);
  }
  std::unique_lock lk(core_->tables.mutex());
  Table* t = core_->tables.by_id(id);
  if (!t || t->retired.load()) return -ENOENT;
  if (retire && core_->children->retire(id)) {
    t->retired.store(true, std::memory_order_release);
    if (segment_) {
      (void)segment_->remove_table(static_cast<uint32_t>(id));  // the daemon's view: gone
      if (link_) link_->tables_changed();
    }
    drop_retired_locked();
    return 0;
  }
  t->freeing.store(true, std::memory_order_release);
  remove_locked(t, true);
  drop_retired_locked();
  return 0;
}

// Under the registry's exclusive lock: drops the table's pages and forgets
// it; `listed`: it is still in the daemon's directory.
void Engine::remove_locked(Table* t, bool listed) {
  drop_pages(t, 0, t->pages);
  core_->freed_totals.add(t->counters);  // its counts stay in the process's totals
  uint64_t first = t->first_page, pages = t->pages;
  int id = t->id;
  core_->tables.remove(t);
  if (segment_) {
    if (listed) (void)segment_->remove_table(static_cast<uint32_t>(id));
    segment_->clear_words(first, pages);  // words and hints; memory returned
    if (link_) link_->tables_changed();
  }
}

// Under the registry's exclusive lock: the retired tables no forked child
// can read any more go for good.
void Engine::drop_retired_locked() {
  if (!core_->children || core_->children->retired() == 0) return;
  core_->children->take_unreachable([&](int32_t id) {
    if (Table* t = core_->tables.by_id(id)) remove_locked(t, false);
  });
}

void Engine::drop_retired() {
  std::unique_lock lk(core_->tables.mutex());
  drop_retired_locked();
}

Engine::ForkPlan Engine::prepare_fork() {
  ForkPlan plan;
  if (!core_->children) return plan;
  int32_t below = core_->tables.next_id();
  core_->children->fork_begins(below);
  plan.ok = true;
  plan.inheritance = Inheritance{core_->region->base(), core_->region->bytes(),
                                 core_->region->memfd(), core_->children->child_socket(), below};
  return plan;
}

size_t Engine::forked_children() const {
  return core_->children ? core_->children->count() : 0;
}

size_t Engine::retired_tables() const {
  return core_->children ? core_->children->retired() : 0;
}

int Engine::discard(void* addr, uint64_t len) {
  auto a = reinterpret_cast<uintptr_t>(addr);
  if ((a | len) & (kPageSize - 1)) return -EINVAL;
  std::unique_lock lk(core_->tables.mutex());
  Table* t = core_->tables.find(addr);
  if (!t) return -ENOENT;
  uint64_t first = t->page_of(addr);
  if (first + len / kPageSize > t->pages) return -EINVAL;
  if (len) drop_pages(t, first, len / kPageSize);
  return 0;
}

int Engine::page_node(const void* addr) {
  std::shared_lock lk(core_->tables.mutex());
  Table* t = core_->tables.find(addr);
  if (!t) return -ENOENT;
  uint64_t page = t->page_of(addr);
  std::lock_guard pl(core_->lock_of(t, page));
  if (!PageWord::resident(core_->word(t, page).load())) return -ENOENT;
  char* alias = core_->alias_of(t, page);
  int status = -ENOENT;
  const void* a = alias;
  int rc = sys::populate_read(alias, kPageSize);
  if (rc == 0 && sys::move_pages(0, 1, &a, nullptr, &status, 0) < 0) status = -EIO;
  (void)sys::zap(alias, kPageSize);
  return rc < 0 ? rc : status;
}

int Engine::find_table(const void* addr) {
  std::shared_lock lk(core_->tables.mutex());
  Table* t = core_->tables.find(addr);
  return t && !t->retired.load() ? t->id : -ENOENT;
}

int Engine::table_stats(int id, TableStats* out) {
  std::shared_lock lk(core_->tables.mutex());
  Table* t = core_->tables.by_id(id);
  if (!t) return -ENOENT;
  const TableCounters& c = t->counters;
  auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  *out = TableStats{t->id, t->name, t->bytes, t->pages,
                    static_cast<uint64_t>(c.resident_pages.load()),
                    static_cast<uint64_t>(c.slow_pages.load()), 0,
                    r(c.missing_faults), r(c.minor_faults), r(c.wp_faults), r(c.zero_fills),
                    r(c.fetches), r(c.prefetches), r(c.evictions), r(c.writebacks),
                    r(c.evict_cancels), r(c.errors), r(c.demotions), r(c.promotions), 0};
  for (uint64_t p = 0; p < t->pages; p++) {
    uint64_t v = t->words[p].load(std::memory_order_relaxed);
    out->stored_pages += PageWord::has_slot(v);
    out->heat += PageWord::heat(v);
  }
  return 0;
}

int Engine::table_map(int id, size_t buckets, std::vector<ExtentInfo>* out) {
  std::shared_lock lk(core_->tables.mutex());
  Table* t = core_->tables.by_id(id);
  if (!t) return -ENOENT;
  if (buckets == 0) return -EINVAL;
  uint64_t per = std::max<uint64_t>(1, t->pages / buckets);
  out->clear();
  for (uint64_t first = 0; first < t->pages && out->size() < buckets; first += per) {
    uint64_t n = out->size() + 1 == buckets ? t->pages - first : std::min(per, t->pages - first);
    ExtentInfo e{first, n, 0, 0, 0, 0};
    for (uint64_t p = first; p < first + n; p++) {
      uint64_t v = t->words[p].load(std::memory_order_relaxed);
      e.resident_pages += PageWord::resident(v);
      e.stored_pages += PageWord::has_slot(v);
      e.heat += PageWord::heat(v);
      e.slow_pages += PageWord::resident(v) && PageWord::slow(v);
    }
    out->push_back(e);
  }
  return static_cast<int>(out->size());
}

int Engine::evict_table(int id) { return evictor_->evict_range(id, 0, UINT64_MAX, false, true); }

EngineStats Engine::stats() {
  std::shared_lock lk(core_->tables.mutex());
  const Residency& r = core_->residency;
  const EngineCounters& c = core_->counters;
  EngineStats s{r.budget_pages() * kPageSize, r.high_pages() * kPageSize, r.low_pages() * kPageSize,
                static_cast<uint64_t>(std::max<int64_t>(r.resident(), 0)) * kPageSize, r.peak() * kPageSize,
                core_->region->bytes(), core_->tables.ordered().size(),
                c.wild_faults.load(), c.store_full.load(), c.store_errors.load(),
                c.sampled_pages.load(), r.overruns(), core_->slow.budget_pages() * kPageSize,
                static_cast<uint64_t>(std::max<int64_t>(core_->slow.resident(), 0)) * kPageSize,
                c.demote_failures.load(), core_->slow.peak() * kPageSize,
                c.prefetch_calls.load(), c.prefetch_reads.load(), c.prefetch_hits.load(),
                static_cast<uint64_t>(std::max<int64_t>(c.pinned_pages.load(), 0)),
                c.window_overflows.load(), c.prefetch_pages.load(), c.prefetch_late.load(),
                c.child_faults.load(),
                static_cast<uint64_t>(std::max<int64_t>(c.held_pages.load(), 0)), {}};
  for (auto& st : core_->stores)
    s.stores.push_back({st->kind(), st->path(), st->mode(), st->capacity_slots() * kPageSize,
                        st->used_slots() * kPageSize});
  return s;
}

CounterTotals Engine::counter_totals() {
  std::shared_lock lk(core_->tables.mutex());
  CounterTotals t = core_->freed_totals;
  for (Table* tb : core_->tables.ordered()) t.add(tb->counters);
  return t;
}

std::string Engine::describe() const {
  char buf[1024];  // the budget's reason names a cgroup file
  const Options& o = core_->opts;
  snprintf(buf, sizeof buf, "tiers: dram budget %.1f MiB (%s; evict at %u%%, down to %u%%)",
           o.dram_bytes / 1048576.0, core_->budget_from.c_str(), o.high_watermark,
           o.low_watermark);
  std::string out = buf;
  if (o.dram_node >= 0) {
    snprintf(buf, sizeof buf, " on node %d", o.dram_node);
    out += buf;
  }
  if (core_->has_slow_tier()) {
    snprintf(buf, sizeof buf, "; slow memory node %d budget %.1f MiB (cold DRAM pages demoted there)",
             o.slow_node, o.slow_bytes / 1048576.0);
    out += buf;
  }
  for (auto& st : core_->stores) {
    snprintf(buf, sizeof buf, "; %s store %s (%s, %.1f MiB)", st->kind(), st->path().c_str(),
             st->mode().c_str(), st->capacity_slots() * kPageSize / 1048576.0);
    out += buf;
  }
  if (core_->stores.empty()) out += "; no store (pages cannot leave DRAM)";
  snprintf(buf, sizeof buf,
           "; heat source: PTE sampler + MINOR faults (%llu pages/s); dirty tracking: %s; "
           "SIGBUS on store errors via %s",
           static_cast<unsigned long long>(o.scan_rate),
           core_->continue_wp ? "WP faults"
                              : "WP faults, sampled pages count as dirty (no CONTINUE_MODE_WP)",
           (core_->uffd_features & UFFD_FEATURE_POISON) ? "UFFDIO_POISON" : "tgkill");
  out += buf;
  if (link_) out += "; daemon: " + link_->state();
  else out += segment_ ? "; daemon: off (daemon_socket=none)" : "; daemon: off (no shared segment)";
  return out;
}

}  // namespace mtier
