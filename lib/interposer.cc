// SPDX-License-Identifier: Apache-2.0
#include "interposer.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "allocators.h"
#include "boundary.h"
#include "engine_instance.h"
#include "interposer_state.h"
#include "log/log.h"
#include "next_alloc.h"
#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier::lib {

std::atomic<uint64_t> g_smallest_candidate{UINT64_MAX};
std::atomic<uintptr_t> g_region_lo{0}, g_region_hi{0};
std::atomic<uintptr_t> g_inherited_lo{0}, g_inherited_hi{0};

namespace {

constexpr uint64_t kMaxTableBytes = 1ull << 47;
bool g_strict = false;  // the strict option: an engine that cannot start ends the program

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

// LD_PRELOAD names this library, or MTIER_INTERPOSE says so; never for a
// setuid/setgid program. getenv does not allocate.
bool wanted() {
  if (getauxval(AT_SECURE)) return false;
  if (const char* force = getenv("MTIER_INTERPOSE")) return strcmp(force, "0") != 0;
  const char* preload = getenv("LD_PRELOAD");
  return preload && strstr(preload, "libmtier");
}

void warn_create_failed(int err) {
  static std::atomic<int> last{0};
  if (last.exchange(err) == err) return;  // once per reason
  MTIER_LOG_WARN("cannot create a table: %s; this allocation uses plain memory", strerror(-err));
}

// A start that will be tried again (engine_instance.h: start_may_retry).
void warn_start_deferred(int err, const char* why) {
  static std::atomic<int> last{0};
  if (last.exchange(err) == err) return;  // once per reason
  MTIER_LOG_WARN("cannot start the engine: %s; this allocation uses plain memory, the next "
                 "managed-size allocation tries again", *why ? why : strerror(-err));
}

// Reads the options and turns the interposer on; may throw (activate()
// contains it).
void activate_throwing() {
  OptionSet set;
  std::string why;
  if (load_options(&set, &why) < 0) {
    MTIER_LOG_ERROR("%s; running with plain allocation", why.c_str());
    return;
  }
  State& st = state();
  st.selection = Selection(set.get());
  st.summary = set.get().stats || set.get().verbose;
  g_strict = set.get().strict;
  if (set.get().verbose) log::set_level(log::Level::kInfo);
  install_fork_handlers();
  if (st.summary) register_exit_summary();
  find_allocators();
  g_smallest_candidate.store(st.selection.smallest());
}

// Under the lock: a new table for the program, or nullptr; `room` bytes of
// address space for it to grow into (at least `bytes`; its pages cost
// nothing until touched). May throw (managed_alloc contains it).
void* alloc_table_locked(size_t bytes, size_t align, size_t room = 0) {
  State& st = state();
  std::string name;
  if (!engine_locked() || !st.selection.take(bytes, &name)) return nullptr;
  uint64_t capacity = round_up((room > bytes ? room : bytes) + (align - kPageSize), kPageSize);
  void* base = nullptr;
  int id = st.engine->create_table(name, capacity, &base);
  if (id < 0) {
    warn_create_failed(id);
    return nullptr;
  }
  Managed m;
  m.base = static_cast<char*>(base);
  m.capacity = capacity;
  m.ptr = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(base), align));
  m.id = id;
  m.requested = bytes;
  if (!st.map.insert(m)) {  // no record, no table: the program gets plain memory
    (void)st.engine->free_table(id);
    warn_create_failed(-ENOMEM);
    return nullptr;
  }
  st.tables_created++;
  st.bytes_created += capacity;
  return m.ptr;
}

}  // namespace

State& state() {
  static State* s = new State();  // never destroyed: frees may come after exit handlers
  return *s;
}

void activate() noexcept {
  if (!wanted()) return;
  RuntimeScope runtime;
  (void)contained("reading the options", "running with plain allocation", activate_throwing);
}

Engine* engine_locked() noexcept {
  State& st = state();
  if (st.child) return nullptr;
  if (st.engine || st.failed) return st.engine;
  log::capture_errors(true);
  int err = 0;
  Engine* e = engine(&err);
  log::capture_errors(false);
  if (!e && start_may_retry(err)) {
    warn_start_deferred(err, log::captured_error());
    return nullptr;
  }
  if (!e) {
    st.failed = true;
    g_smallest_candidate.store(UINT64_MAX);
    const char* why = log::captured_error();
    if (g_strict) {  // exit() would run handlers that take st.mu, held here
      MTIER_LOG_ERROR("%s; strict: stopping (exit status 2)", *why ? why : strerror(-err));
      _exit(2);
    }
    MTIER_LOG_WARN("%s; running with plain allocation", *why ? why : strerror(-err));
    return nullptr;
  }
  st.engine = e;
  g_region_lo.store(reinterpret_cast<uintptr_t>(e->region().base()));
  g_region_hi.store(reinterpret_cast<uintptr_t>(e->region().base() + e->region().bytes()));
  install_segv_handler();
  return e;
}

void release_locked(const Managed* m) noexcept {
  State& st = state();
  if (st.child) {
    // A forked child's copy of a parent's table: its own pages go and the
    // range faults with SIGSEGV, as unmapped memory would; the range stays
    // reserved, so nothing of the child's lands among the parent's tables.
    (void)sys::map_anonymous_at(m->base, m->capacity, false);
  } else {
    if (!m->unmapped.empty()) (void)sys::protect(m->base, m->capacity, true);
    (void)contained("freeing a table", "its address range stays reserved",
                    [&] { (void)st.engine->free_table(m->id); });
    // Freed memory faults with SIGSEGV, as unmapped memory would, instead of
    // reaching the fault handler as an access outside every table (SIGBUS).
    (void)sys::protect(m->base, m->capacity, false);
  }
  st.map.erase(m);
}

void* managed_alloc(size_t bytes, size_t align, size_t room) noexcept {
  if (align < kPageSize) align = kPageSize;
  if (bytes > kMaxTableBytes || align > kMaxTableBytes) return nullptr;
  if (room > kMaxTableBytes) room = 0;
  RuntimeScope runtime;  // also for the exception's own allocation and free
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  void* p = nullptr;
  (void)contained("creating a table", "this allocation uses plain memory",
                  [&] { p = alloc_table_locked(bytes, align, room); });
  return p;
}

namespace {

// Under the lock: m grown in place to hold n bytes from its pointer - into
// the address range right after it, taking half as much again as asked
// where it can (the next growth then costs nothing). Whether it did.
bool grow_in_place_locked(Managed* m, size_t n) {
  State& st = state();
  uint64_t offset = static_cast<uint64_t>(m->ptr - m->base);
  uint64_t need = round_up(offset + n, kPageSize);
  uint64_t roomy = round_up(offset + n + n / 2, kPageSize);
  for (uint64_t cap : {roomy, need}) {
    int rc = -ENOSPC;
    (void)contained("growing a table", "it moves instead",
                    [&] { rc = st.engine->grow_table(m->id, cap); });
    if (rc == 0) {
      m->capacity = cap;
      return true;
    }
  }
  return false;
}

}  // namespace

void populate(void* p, size_t len) noexcept {
  Engine* e = running_engine();
  if (!e) return;
  uint64_t budget = 0;
  (void)contained("populating a table", "its pages come at first touch",
                  [&] { budget = e->stats().budget_bytes; });
  uint64_t n = len < budget ? len : budget;
  n &= ~(static_cast<uint64_t>(kPageSize) - 1);
  if (n) (void)sys::populate_write(p, n);  // served by the fault handler, within the budget
}

size_t managed_free(void* p) noexcept {
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  Managed* m = st.map.find(p);
  if (!m || m->ptr != p) {
    MTIER_LOG_ERROR("free(%p): not a pointer mtier handed out; ignored", p);
    return 0;
  }
  size_t requested = m->requested;
  release_locked(m);
  return requested;
}

size_t managed_usable_size(const void* p) noexcept {
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  Managed* m = st.map.find(p);
  return m ? m->usable(p) : 0;
}

void* managed_realloc(void* p, size_t n) noexcept {
  size_t usable = managed_usable_size(p);
  if (usable == 0) {
    MTIER_LOG_ERROR("realloc(%p): not a pointer mtier handed out", p);
    errno = EINVAL;
    return nullptr;
  }
  if (n == 0) {  // glibc: realloc(p, 0) frees p (as free() does) and returns NULL
    echo_free(managed_free(p));
    return nullptr;
  }
  State& st = state();
  bool child = in_forked_child();
  if (n <= usable && st.selection.by_size(n) && !child) return p;
  if (!child && st.selection.by_size(n)) {
    // Growing (a buffer appended to, a list that grows): in place where the
    // range after it is free, so that no copy is made.
    RuntimeScope runtime;
    std::lock_guard<std::mutex> lk(st.mu);
    Managed* m = st.map.find(p);
    if (m && m->ptr == p && grow_in_place_locked(m, n)) {
      m->requested = n;
      return p;
    }
  }
  // Moved: a managed size gets twice its bytes of room, to grow in place
  // next time; the interposed malloc decides otherwise.
  void* q = !child && st.selection.by_size(n) ? managed_alloc(n, 0, 2 * n) : nullptr;
  if (!q) q = malloc(n);
  if (!q) return nullptr;
  memcpy(q, p, n < usable ? n : usable);
  managed_free(p);
  return q;
}

bool inherited_record(const void* p, bool forget) noexcept {
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  Managed* m = st.map.find(p);
  if (!m || m->ptr != p) return false;
  if (forget) release_locked(m);
  return true;
}

bool in_forked_child() noexcept {
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  return st.child;
}

// Runs before the program's constructors (and after libc's): resolves the
// next allocator and reads the options.
__attribute__((constructor)) void mtier_preload_init() {
  (void)next();
  activate();
}

}  // namespace mtier::lib
