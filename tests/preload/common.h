// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the preload test programs (tests/preload/*.cc).
//
// The programs do not link libmtier: the API is looked up with
// dlsym(RTLD_DEFAULT, ...) so that the same binary runs under
// LD_PRELOAD=libmtier.so (the symbols come from the preloaded library) and
// without it (a baseline run on plain glibc and the plain kernel, where the
// managed-ness checks are skipped).
//
// Environment read here (not MTIER_* options, so the library ignores them):
//   PRELOAD_EXPECT=unmanaged  the library is loaded but must not manage
//                             anything (no userfaultfd, a bad option): every
//                             "is managed" check becomes "is not managed".
//
// Every check prints one "ok:" line; the first failed check prints
// "FAIL: <file>:<line>: <what was expected, what was found>" and exits 1.
#pragma once

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mtier.h"

namespace pt {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;
inline const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// ---- reporting ------------------------------------------------------------

[[noreturn]] inline void vfail(const char* file, int line, const char* fmt, va_list ap) {
  printf("FAIL: %s:%d: ", file, line);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  _exit(1);
}

[[noreturn]] __attribute__((format(printf, 3, 4))) inline void fail_at(const char* file, int line,
                                                                       const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(file, line, fmt, ap);
}

__attribute__((format(printf, 1, 2))) inline void ok(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("ok: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

__attribute__((format(printf, 1, 2))) inline void note(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("note: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

// CHECK(cond, "expected ..., found ...", args): fails with the message.
#define CHECK(cond, ...)                                                \
  do {                                                                  \
    if (!(cond)) ::pt::fail_at(__FILE__, __LINE__, __VA_ARGS__);         \
  } while (0)

// A watchdog: a hang (a fault nobody resolves) fails the test instead of
// stalling `make check`.
inline void on_alarm(int) {
  static const char msg[] = "FAIL: timeout: the program hung (watchdog alarm)\n";
  ssize_t r = write(1, msg, sizeof msg - 1);
  (void)r;
  _exit(1);
}
inline void watchdog(unsigned seconds) {
  signal(SIGALRM, on_alarm);
  alarm(seconds);
}

// ---- the mtier API, looked up at run time ----------------------------------

struct Api {
  decltype(&::mtier_table_find) table_find = nullptr;
  decltype(&::mtier_table_stats) table_stats = nullptr;
  decltype(&::mtier_stats) stats = nullptr;
  decltype(&::mtier_table_evict) table_evict = nullptr;
  decltype(&::mtier_prefetch_ranges) prefetch_ranges = nullptr;
};

inline const Api& api() {
  static const Api a = [] {
    Api x;
    x.table_find = reinterpret_cast<decltype(x.table_find)>(dlsym(RTLD_DEFAULT, "mtier_table_find"));
    x.table_stats =
        reinterpret_cast<decltype(x.table_stats)>(dlsym(RTLD_DEFAULT, "mtier_table_stats"));
    x.stats = reinterpret_cast<decltype(x.stats)>(dlsym(RTLD_DEFAULT, "mtier_stats"));
    x.table_evict =
        reinterpret_cast<decltype(x.table_evict)>(dlsym(RTLD_DEFAULT, "mtier_table_evict"));
    x.prefetch_ranges =
        reinterpret_cast<decltype(x.prefetch_ranges)>(dlsym(RTLD_DEFAULT, "mtier_prefetch_ranges"));
    return x;
  }();
  return a;
}

inline bool have_api() { return api().table_find != nullptr; }

inline bool expect_unmanaged_mode() {
  const char* e = getenv("PRELOAD_EXPECT");
  return e && strcmp(e, "unmanaged") == 0;
}

// Managed-ness is asserted (and eviction statistics are looked at) only
// when the API is there and the library is expected to manage.
inline bool managing() { return have_api() && !expect_unmanaged_mode(); }

// Call first in main: says how the program runs; a preloaded libmtier
// without its API is a failure (the checks would be skipped silently).
inline void start(const char* prog) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* pre = getenv("LD_PRELOAD");
  bool preloaded = pre && strstr(pre, "libmtier");
  if (preloaded && !have_api())
    fail_at(__FILE__, __LINE__,
            "libmtier is in LD_PRELOAD but dlsym(RTLD_DEFAULT, \"mtier_table_find\") found nothing");
  printf("%s: %s\n", prog,
         !have_api()               ? "no mtier API (baseline run): managed-ness checks skipped"
         : expect_unmanaged_mode() ? "mtier loaded, expected NOT to manage anything"
                                   : "mtier loaded: managed-size allocations must be tables");
  fflush(stdout);
}

inline int find(const void* p) { return have_api() ? api().table_find(p) : -ENOENT; }

// [p, p+len) lies in one managed table (or, with PRELOAD_EXPECT=unmanaged,
// in none). Returns the table id (0 when not checked).
// (The address is passed as an integer: a pointer to memory not yet written
// would draw GCC's -Wmaybe-uninitialized at -O0/-Os.)
inline int expect_managed_at(const char* file, int line, uintptr_t addr, size_t len,
                             const char* what) {
  const void* p = reinterpret_cast<const void*>(addr);
  if (!have_api()) return 0;
  int id = api().table_find(p);
  if (expect_unmanaged_mode()) {
    if (id >= 0)
      fail_at(file, line, "%s: expected NOT managed (library must not manage), found table %d", what,
              id);
    ok("%s %p not managed (as expected in this mode)", what, p);
    return 0;
  }
  if (id <= 0) fail_at(file, line, "%s: expected a managed table at %p, mtier_table_find = %d", what, p, id);
  int id2 = api().table_find(static_cast<const char*>(p) + len - 1);
  if (id2 != id)
    fail_at(file, line, "%s: expected the last byte (%p + %zu - 1) in table %d too, found %d", what,
            p, len, id, id2);
  ok("%s %p (%zu bytes) is managed: table %d", what, p, len, id);
  return id;
}
#define EXPECT_MANAGED(p, len, what) \
  ::pt::expect_managed_at(__FILE__, __LINE__, (uintptr_t)(p), (len), (what))

inline void expect_unmanaged_at(const char* file, int line, uintptr_t addr, const char* what) {
  const void* p = reinterpret_cast<const void*>(addr);
  if (!have_api()) return;
  int id = api().table_find(p);
  if (id >= 0) fail_at(file, line, "%s: expected NOT managed, mtier_table_find(%p) = %d", what, p, id);
  ok("%s %p is not managed (mtier_table_find = %d)", what, p, id);
}
#define EXPECT_UNMANAGED(p, what) ::pt::expect_unmanaged_at(__FILE__, __LINE__, (uintptr_t)(p), (what))

inline bool table_stats(int id, struct mtier_table_stats* st) {
  if (!have_api() || !api().table_stats || id <= 0) return false;
  memset(st, 0, sizeof *st);
  return api().table_stats(id, st) == 0;
}

inline bool engine_stats(struct mtier_stats* st) {
  if (!have_api() || !api().stats) return false;
  memset(st, 0, sizeof *st);
  return api().stats(st) == 0;
}

// ---- sizes -------------------------------------------------------------------

// "4096", "520K", "3M", "1G" (binary). Returns false if malformed.
inline bool parse_size(const char* s, uint64_t* out) {
  if (!s || !*s) return false;
  char* end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return false;
  switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
  }
  if (*end) return false;
  *out = v;
  return true;
}
inline uint64_t parse_size_or(const char* s, uint64_t dflt) {
  uint64_t v;
  return parse_size(s, &v) ? v : dflt;
}

// ---- data patterns ----------------------------------------------------------

// The 8-byte word at byte offset off (rounded down to 8) of a buffer filled
// with `seed`: every word, hence every page, differs from every other, and
// from other seeds; no word is zero.
inline uint64_t pat(uint64_t seed, uint64_t off) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (off >> 3) * 0xBF58476D1CE4E5B9ull + 0x1234567ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return x | 1;
}
// The byte at offset off (offsets are relative to the buffer's start).
inline unsigned char pat_byte(uint64_t seed, uint64_t off) {
  return static_cast<unsigned char>(pat(seed, off) >> ((off & 7) * 8));
}

// Fills [p, p+len).
inline void fill(void* p, size_t len, uint64_t seed) {
  auto* b = static_cast<unsigned char*>(p);
  size_t i = 0;
  if ((reinterpret_cast<uintptr_t>(b) & 7) == 0) {
    auto* w = reinterpret_cast<uint64_t*>(b);
    for (; i + 8 <= len; i += 8) w[i / 8] = pat(seed, i);
  }
  for (; i < len; i++) b[i] = pat_byte(seed, i);
}

// [off, off+len) of a buffer `base` filled with `seed`: the offset of the
// first byte that differs, or SIZE_MAX.
inline size_t mismatch_range(const void* base, size_t off, size_t len, uint64_t seed) {
  auto* b = static_cast<const unsigned char*>(base);
  size_t i = off, end = off + len;
  if ((reinterpret_cast<uintptr_t>(b) & 7) == 0) {
    for (; i < end && (i & 7); i++)
      if (b[i] != pat_byte(seed, i)) return i;
    auto* w = reinterpret_cast<const uint64_t*>(b);
    for (; i + 8 <= end; i += 8)
      if (w[i / 8] != pat(seed, i)) break;
  }
  for (; i < end; i++)
    if (b[i] != pat_byte(seed, i)) return i;
  return SIZE_MAX;
}
inline size_t mismatch(const void* p, size_t len, uint64_t seed) {
  return mismatch_range(p, 0, len, seed);
}

inline size_t first_nonzero(const void* p, size_t len) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < len; i++)
    if (b[i]) return i;
  return SIZE_MAX;
}

// [base+off, base+off+len) holds what fill(base, ..., seed) wrote there.
#define EXPECT_DATA_RANGE(base, off, len, seed, what)                                            \
  do {                                                                                           \
    const unsigned char* b_ = (const unsigned char*)(base);                                      \
    size_t at_ = ::pt::mismatch_range(b_, (off), (len), (seed));                                 \
    if (at_ != SIZE_MAX)                                                                         \
      ::pt::fail_at(__FILE__, __LINE__,                                                          \
                    "%s: data lost: byte %zu (page %zu) of buffer %p: expected 0x%02x, found 0x%02x" \
                    " (%s)",                                                                     \
                    (what), at_, at_ / ::pt::kPage, (const void*)b_,                             \
                    (unsigned)::pt::pat_byte((seed), at_), (unsigned)b_[at_],                    \
                    b_[at_] == 0 && ::pt::first_nonzero(b_ + (at_ & ~(::pt::kPage - 1)), ::pt::kPage) == SIZE_MAX \
                        ? "the whole page reads zero" : "wrong data");                           \
    ::pt::ok("%s: %zu bytes intact", (what), (size_t)(len));                                     \
  } while (0)
#define EXPECT_DATA(p, len, seed, what) EXPECT_DATA_RANGE((p), 0, (len), (seed), (what))

#define EXPECT_ZERO(p, len, what)                                                              \
  do {                                                                                         \
    size_t at_ = ::pt::first_nonzero((p), (len));                                              \
    if (at_ != SIZE_MAX)                                                                       \
      ::pt::fail_at(__FILE__, __LINE__, "%s: expected zeros, byte %zu (page %zu) is 0x%02x", \
                    (what), at_, at_ / ::pt::kPage, (unsigned)((const unsigned char*)(p))[at_]); \
    ::pt::ok("%s: %zu bytes read zero", (what), (size_t)(len));                                \
  } while (0)

// ---- eviction ------------------------------------------------------------------

// The DRAM budget the test runs under (the engine's, else MTIER_DRAM_BYTES).
inline uint64_t budget() {
  struct mtier_stats st;
  if (engine_stats(&st) && st.budget_bytes) return st.budget_bytes;
  return parse_size_or(getenv("MTIER_DRAM_BYTES"), 4 * MiB);
}

// Touches (writes one word per page of) a fresh allocation of three times
// the DRAM budget (12 MiB at least), then frees it: every managed page
// written before is pushed out of DRAM to the store by newer pages.
inline void churn(const char* why) {
  size_t n = 3 * budget();
  if (n < 12 * MiB) n = 12 * MiB;
  auto* c = static_cast<volatile char*>(malloc(n));
  CHECK(c, "churn: malloc(%zu) expected memory, found NULL (errno %d)", n, errno);
  for (size_t i = 0; i < n; i += kPage) c[i] = static_cast<char>(i >> 12 | 1);
  free(const_cast<char*>(c));
  struct mtier_stats st;
  if (managing() && engine_stats(&st))
    ok("churned %zu MiB (%s): resident %llu KiB of budget %llu KiB, store used %llu KiB", n / MiB,
       why, (unsigned long long)st.resident_bytes / 1024, (unsigned long long)st.budget_bytes / 1024,
       (unsigned long long)st.store_used_bytes / 1024);
  else
    ok("churned %zu MiB (%s)", n / MiB, why);
}

// churn() three times over: every page not held in DRAM leaves it.
inline void churn_thrice(const char* why) {
  for (int i = 0; i < 3; i++) churn(why);
}

// Pages of [p, p+len) (page-aligned) in memory, by mincore: a page mtier
// evicted is not (its memory is punched), one it held is.
inline size_t pages_in_memory(const char* p, size_t len) {
  size_t n = 0;
  unsigned char v[256];
  for (size_t off = 0; off < len; off += sizeof v * kPage) {
    size_t chunk = len - off < sizeof v * kPage ? len - off : sizeof v * kPage;
    CHECK(mincore(const_cast<char*>(p + off), chunk, v) == 0, "mincore: errno %d", errno);
    for (size_t i = 0; i < (chunk + kPage - 1) / kPage; i++) n += v[i] & 1;
  }
  return n;
}

// After churn(): the table really went to the store (writebacks).
inline void expect_evicted(int id, const char* what) {
  struct mtier_table_stats st;
  if (!managing() || !table_stats(id, &st)) return;
  if (st.writebacks == 0)
    fail_at(__FILE__, __LINE__,
            "%s (table %d): expected pages written to the store after touching 3x the budget, "
            "found writebacks=0 evictions=%llu resident=%llu",
            what, id, (unsigned long long)st.evictions, (unsigned long long)st.resident_bytes);
  ok("%s (table %d) went to the store: %llu evictions, %llu writebacks", what, id,
     (unsigned long long)st.evictions, (unsigned long long)st.writebacks);
}
// ... and, once read, really came back (fetches).
inline void expect_fetched(int id, const char* what) {
  struct mtier_table_stats st;
  if (!managing() || !table_stats(id, &st)) return;
  if (st.fetches == 0)
    fail_at(__FILE__, __LINE__,
            "%s (table %d): expected pages fetched back from the store, found fetches=0 "
            "(writebacks=%llu)",
            what, id, (unsigned long long)st.writebacks);
  ok("%s (table %d) came back from the store: %llu fetches", what, id,
     (unsigned long long)st.fetches);
}

// ---- faults ----------------------------------------------------------------------

// probe(addr, write) returns 0 when the access worked, else the signal that
// it raised (SIGSEGV expected for unmapped memory). install_probe() must run
// before the first managed allocation so that the library's own SIGSEGV
// handler, installed when its engine starts, chains to this one.
inline sigjmp_buf g_probe_jb;
inline volatile sig_atomic_t g_probe_armed = 0;
inline volatile sig_atomic_t g_probe_sig = 0;

inline void probe_handler(int sig, siginfo_t*, void*) {
  if (g_probe_armed) {
    g_probe_armed = 0;
    g_probe_sig = sig;
    siglongjmp(g_probe_jb, 1);
  }
  // Not ours: die of it.
  signal(sig, SIG_DFL);
  raise(sig);
}

inline void install_probe() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = probe_handler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
}

inline int probe(void* addr, bool write) {
  g_probe_sig = 0;
  if (sigsetjmp(g_probe_jb, 1) == 0) {
    g_probe_armed = 1;
    if (write)
      *static_cast<volatile char*>(addr) = 1;
    else
      (void)*static_cast<volatile char*>(addr);
    g_probe_armed = 0;
    return 0;
  }
  return g_probe_sig;
}

inline const char* signame(int sig) {
  return sig == 0 ? "no fault" : sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "another signal";
}

#define EXPECT_SEGV(addr, what)                                                                  \
  do {                                                                                           \
    for (int w_ = 0; w_ < 2; w_++) {                                                             \
      int s_ = ::pt::probe((addr), w_ == 1);                                                     \
      if (s_ != SIGSEGV)                                                                         \
        ::pt::fail_at(__FILE__, __LINE__, "%s: a %s of %p: expected SIGSEGV, found %s", (what), \
                      w_ ? "write" : "read", (void*)(addr), ::pt::signame(s_));                  \
    }                                                                                            \
    ::pt::ok("%s: read and write of %p raise SIGSEGV", (what), (void*)(addr));                   \
  } while (0)

// ---- /proc ---------------------------------------------------------------------

// Rss of the whole process in bytes (/proc/self/smaps_rollup), or 0.
inline uint64_t rss_bytes() {
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Rss: %lu kB", &kb) == 1) break;
  fclose(f);
  return kb * 1024;
}

}  // namespace pt
