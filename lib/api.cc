// SPDX-License-Identifier: Apache-2.0
// The C API: a process-wide engine behind plain functions, no exceptions
// across the boundary (every entry point is noexcept and catches bad_alloc).
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "engine_instance.h"
#include "interposer.h"
#include "mtier.h"
#include "sys/page_size.h"
#include "util/runtime_scope.h"

namespace {

// None in a forked child: the engine it sees is its parent's copy, whose
// threads do not exist there (the child reads the parent's tables through
// the parent's engine: lib/fork_signals.cc).
mtier::Engine* running() {
  return mtier::lib::in_forked_child() ? nullptr : mtier::lib::running_engine();
}

unsigned engine_flags(unsigned flags) {
  return (flags & MTIER_PREFETCH_ASYNC ? mtier::kLookaheadAsync : 0) |
         (flags & MTIER_PREFETCH_WRITE ? mtier::kLookaheadWrite : 0);
}

// The engine whose lookahead serves this process (none in a forked child).
mtier::Engine* looking_ahead() { return running(); }

template <class R, class F>
R guarded_as(F&& f) noexcept {
  mtier::RuntimeScope runtime;  // the preload passes the engine's own calls through
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  } catch (...) {
    return -EIO;
  }
}

template <class F>
int guarded(F&& f) noexcept {
  return guarded_as<int>(std::forward<F>(f));
}

template <class F>
long guarded_long(F&& f) noexcept {
  return guarded_as<long>(std::forward<F>(f));
}

}  // namespace

extern "C" {

int mtier_init(const char* options) {
  return guarded([&] {
    return mtier::lib::start_engine_explicitly(options);
  });
}

int mtier_table_create(const char* name, size_t bytes, void** addr) {
  return guarded([&] {
    if (!addr) return -EINVAL;
    int err = 0;
    if (mtier::lib::in_forked_child()) return -ENODEV;  // no engine of its own
    mtier::Engine* e = mtier::lib::engine(&err);
    return e ? e->create_table(name ? name : "", bytes, addr) : (err ? err : -ENODEV);
  });
}

int mtier_table_free(int id) {
  return guarded([&] { return running() ? running()->free_table(id) : -ENOENT; });
}

int mtier_table_find(const void* addr) {
  return guarded([&] { return running() ? running()->find_table(addr) : -ENOENT; });
}

int mtier_table_evict(int id) {
  return guarded([&] { return running() ? running()->evict_table(id) : -ENOENT; });
}

int mtier_discard(void* addr, size_t len) {
  return guarded([&] { return running() ? running()->discard(addr, len) : -ENOENT; });
}

int mtier_table_stats(int id, struct mtier_table_stats* st) {
  return guarded([&] {
    if (!st) return -EINVAL;
    if (!running()) return -ENOENT;
    mtier::TableStats s;
    int rc = running()->table_stats(id, &s);
    if (rc < 0) return rc;
    memset(st, 0, sizeof *st);
    st->id = s.id;
    snprintf(st->name, sizeof st->name, "%s", s.name.c_str());
    st->bytes = s.bytes;
    st->resident_bytes = s.resident_pages * mtier::kPageSize;
    st->stored_bytes = s.stored_pages * mtier::kPageSize;
    st->missing_faults = s.missing_faults;
    st->minor_faults = s.minor_faults;
    st->wp_faults = s.wp_faults;
    st->zero_fills = s.zero_fills;
    st->fetches = s.fetches;
    st->prefetches = s.prefetches;
    st->evictions = s.evictions;
    st->writebacks = s.writebacks;
    st->evict_cancels = s.evict_cancels;
    st->errors = s.errors;
    st->heat = s.heat;
    st->slow_bytes = s.slow_pages * mtier::kPageSize;
    st->demotions = s.demotions;
    return 0;
  });
}

int mtier_table_map(int id, struct mtier_extent* out, size_t nr) {
  return guarded([&] {
    if (!out && nr) return -EINVAL;
    if (!running()) return -ENOENT;
    std::vector<mtier::ExtentInfo> v;
    int n = running()->table_map(id, nr, &v);
    constexpr uint64_t kPage = mtier::kPageSize;
    for (int i = 0; i < n; i++)
      out[i] = {v[i].first_page * kPage, v[i].pages * kPage, v[i].resident_pages * kPage,
                v[i].stored_pages * kPage, v[i].heat, v[i].slow_pages * kPage};
    return n;
  });
}

int mtier_stats(struct mtier_stats* st) {
  return guarded([&] {
    if (!st) return -EINVAL;
    if (!running()) return -ENODEV;
    mtier::EngineStats s = running()->stats();
    memset(st, 0, sizeof *st);
    st->budget_bytes = s.budget_bytes;
    st->resident_bytes = s.resident_bytes;
    st->peak_resident_bytes = s.peak_resident_bytes;
    st->tables = s.tables;
    for (auto& x : s.stores) {
      st->store_capacity_bytes += x.capacity_bytes;
      st->store_used_bytes += x.used_bytes;
    }
    st->store_full = s.store_full;
    st->store_errors = s.store_errors;
    st->budget_overruns = s.budget_overruns;
    st->slow_budget_bytes = s.slow_budget_bytes;
    st->slow_resident_bytes = s.slow_resident_bytes;
    st->prefetch_calls = s.prefetch_calls;
    st->prefetch_reads = s.prefetch_reads;
    st->prefetch_hits = s.prefetch_hits;
    st->pinned_pages = s.pinned_pages;
    st->window_overflows = s.window_overflows;
    st->prefetch_pages = s.prefetch_pages;
    st->prefetch_late = s.prefetch_late;
    return 0;
  });
}

long mtier_prefetch_rows(const void* table, size_t row_bytes, const void* ids, size_t n,
                         int id_bytes, uint64_t batch, unsigned flags) {
  return guarded_long([&]() -> long {
    if ((id_bytes != 4 && id_bytes != 8) || row_bytes == 0) return -EINVAL;
    mtier::Engine* e = looking_ahead();
    if (!e) return 0;  // nothing is managed: nothing to fetch
    return e->lookahead_rows(table, row_bytes, ids, n, id_bytes, batch, engine_flags(flags));
  });
}

long mtier_prefetch_ranges(const struct mtier_range* ranges, size_t n, uint64_t batch,
                           unsigned flags) {
  static_assert(sizeof(mtier_range) == sizeof(mtier::LookaheadRange));
  return guarded_long([&]() -> long {
    if (n && !ranges) return -EINVAL;
    mtier::Engine* e = looking_ahead();
    if (!e) return 0;
    return e->lookahead_ranges(reinterpret_cast<const mtier::LookaheadRange*>(ranges), n, batch,
                              engine_flags(flags));
  });
}

long mtier_prefetch_wait(long ticket, int timeout_ms) {
  return guarded_long([&]() -> long {
    mtier::Engine* e = looking_ahead();
    return e ? e->lookahead_wait(ticket, timeout_ms) : -EINVAL;
  });
}

int mtier_prefetch_useful(void) {
  return guarded([&] {
    mtier::Engine* e = looking_ahead();
    return e && e->lookahead_useful() ? 1 : 0;
  });
}

int mtier_prefetch_advance(uint64_t batch) {
  return guarded([&] {
    mtier::Engine* e = looking_ahead();
    return e ? e->lookahead_advance(batch) : -ENODEV;
  });
}

int mtier_describe(char* buf, size_t len) {
  return guarded([&] {
    if (!running()) return -ENODEV;
    if (!buf || !len) return -EINVAL;
    std::string d = running()->describe();
    snprintf(buf, len, "%s", d.c_str());
    return static_cast<int>(std::min(d.size(), len - 1));
  });
}

}  // extern "C"
