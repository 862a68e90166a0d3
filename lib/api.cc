// The C API: a process-wide engine behind plain functions, no exceptions
// across the boundary (every entry point is noexcept and catches bad_alloc).
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "config/options.h"
#include "engine/engine.h"
#include "log/log.h"
#include "mtier.h"

extern char** environ;

namespace {

std::mutex g_init_mu;
mtier::Engine* g_engine = nullptr;  // never destroyed: faults may come until exit

int start_engine(const char* extra) {
  mtier::OptionSet set;
  std::string why;
  if (set.load_all(environ, &why) < 0 ||
      (extra && set.load_text(extra, mtier::OptionSource::kApi, &why) < 0)) {
    MTIER_LOG_ERROR("%s", why.c_str());
    return -EINVAL;
  }
  if (set.get().verbose) {
    // One log line per option: a log line is capped at a fixed buffer.
    mtier::log::set_level(mtier::log::Level::kInfo);
    MTIER_LOG_INFO("options in effect:");
    std::string all = set.describe();
    for (size_t at = 0, nl; at < all.size(); at = nl + 1) {
      nl = all.find('\n', at);
      if (nl == std::string::npos) nl = all.size();
      MTIER_LOG_INFO("  %s", all.substr(at, nl - at).c_str());
    }
  }
  int err = 0;
  auto e = mtier::Engine::create(set.get(), &err);
  if (!e) return err ? err : -EIO;
  g_engine = e.release();
  return 0;
}

int g_init_error = 0;  // why the implicit start failed; not retried

// The engine, started on first use. *err receives the start's error.
mtier::Engine* engine(int* err) {
  std::lock_guard<std::mutex> lk(g_init_mu);
  if (!g_engine && !g_init_error) g_init_error = start_engine(nullptr);
  *err = g_init_error;
  return g_engine;
}

template <class F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  } catch (...) {
    return -EIO;
  }
}

}  // namespace

extern "C" {

int mtier_init(const char* options) {
  return guarded([&] {
    std::lock_guard<std::mutex> lk(g_init_mu);
    return g_engine ? -EALREADY : start_engine(options);
  });
}

int mtier_table_create(const char* name, size_t bytes, void** addr) {
  return guarded([&] {
    if (!addr) return -EINVAL;
    int err = 0;
    mtier::Engine* e = engine(&err);
    return e ? e->create_table(name ? name : "", bytes, addr) : (err ? err : -ENODEV);
  });
}

int mtier_table_free(int id) {
  return guarded([&] { return g_engine ? g_engine->free_table(id) : -ENOENT; });
}

int mtier_table_find(const void* addr) {
  return guarded([&] { return g_engine ? g_engine->find_table(addr) : -ENOENT; });
}

int mtier_table_evict(int id) {
  return guarded([&] { return g_engine ? g_engine->evict_table(id) : -ENOENT; });
}

int mtier_discard(void* addr, size_t len) {
  return guarded([&] { return g_engine ? g_engine->discard(addr, len) : -ENOENT; });
}

int mtier_table_stats(int id, struct mtier_table_stats* st) {
  return guarded([&] {
    if (!st) return -EINVAL;
    if (!g_engine) return -ENOENT;
    mtier::TableStats s;
    int rc = g_engine->table_stats(id, &s);
    if (rc < 0) return rc;
    memset(st, 0, sizeof *st);
    st->id = s.id;
    snprintf(st->name, sizeof st->name, "%s", s.name.c_str());
    st->bytes = s.bytes;
    st->resident_bytes = s.resident_pages * 4096;
    st->stored_bytes = s.stored_pages * 4096;
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
    st->slow_bytes = s.slow_pages * 4096;
    st->demotions = s.demotions;
    return 0;
  });
}

int mtier_table_map(int id, struct mtier_extent* out, size_t nr) {
  return guarded([&] {
    if (!out && nr) return -EINVAL;
    if (!g_engine) return -ENOENT;
    std::vector<mtier::ExtentInfo> v;
    int n = g_engine->table_map(id, nr, &v);
    for (int i = 0; i < n; i++)
      out[i] = {v[i].first_page * 4096, v[i].pages * 4096, v[i].resident_pages * 4096,
                v[i].stored_pages * 4096, v[i].heat, v[i].slow_pages * 4096};
    return n;
  });
}

int mtier_stats(struct mtier_stats* st) {
  return guarded([&] {
    if (!st) return -EINVAL;
    if (!g_engine) return -ENODEV;
    mtier::EngineStats s = g_engine->stats();
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
    return 0;
  });
}

int mtier_describe(char* buf, size_t len) {
  return guarded([&] {
    if (!g_engine) return -ENODEV;
    if (!buf || !len) return -EINVAL;
    std::string d = g_engine->describe();
    snprintf(buf, len, "%s", d.c_str());
    return static_cast<int>(std::min(d.size(), len - 1));
  });
}

}  // extern "C"
