// SPDX-License-Identifier: Apache-2.0
// Allocation failure inside mtier, at the interposer's boundary (run by
// boundary.test). This program defines its own operator new, which throws
// std::bad_alloc while the main thread's `t_failing` is set: the executable's
// definition wins symbol resolution, so libmtier.so's own allocations (a
// std::string, a map insert, the engine with its std::thread) throw too.
// Only the main thread fails: the runtime's own threads are not under test.
//
//   preload_boundary engine   the first managed-size allocations come while
//                             allocation fails, so the engine cannot start:
//                             malloc, calloc, posix_memalign, mmap of table
//                             sizes still get (plain) memory that keeps its
//                             data; once allocation works again, the next
//                             one is a managed table (the start is retried)
//   preload_boundary tables   the engine runs; while allocation fails, new
//                             table-sized blocks (malloc, calloc,
//                             posix_memalign, realloc of a table, mmap) are
//                             plain memory with correct data, a table can be
//                             freed, munmapped in part and madvised, and
//                             mtier_table_create() returns -ENOMEM; after,
//                             allocations are tables again
//
// PRELOAD_FAIL_AFTER=N lets the first N operator new calls after the flag
// is set succeed: the failure then comes deeper inside the library.
//
// Every mode also runs without the library (a baseline: the same calls on
// plain glibc). Sizes assume MTIER_MIN_BYTES=1M.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>

#include <new>

#include "common.h"

namespace {

__attribute__((tls_model("initial-exec"))) thread_local bool t_failing = false;
unsigned long g_thrown = 0;  // operator new calls refused (main thread only)
// PRELOAD_FAIL_AFTER=N: while failing, the first N calls still succeed (a
// failure deeper inside, e.g. after the engine's threads started).
long g_grace = 0;
bool g_sweep = false;  // PRELOAD_FAIL_AFTER given: a block may be a table or not

}  // namespace

void* operator new(size_t n) {
  if (t_failing && g_grace > 0) {
    g_grace--;
  } else if (t_failing) {
    g_thrown++;
    throw std::bad_alloc();
  }
  if (void* p = malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return ::operator new(n); }
// Not inlined: GCC would pair these free() calls with operator new at a
// call site and warn (-Wmismatched-new-delete), though they match.
__attribute__((noinline)) void operator delete(void* p) noexcept { free(p); }
__attribute__((noinline)) void operator delete[](void* p) noexcept { free(p); }
__attribute__((noinline)) void operator delete(void* p, size_t) noexcept { free(p); }
__attribute__((noinline)) void operator delete[](void* p, size_t) noexcept { free(p); }

namespace {

using pt::KiB;
using pt::MiB;

constexpr size_t kTable = 2 * MiB;  // above MTIER_MIN_BYTES=1M

void set_failing(bool on, const char* why) {
  const char* after = getenv("PRELOAD_FAIL_AFTER");
  g_sweep = after != nullptr;
  if (on) g_grace = after ? atol(after) : 0;
  t_failing = on;
  pt::note("allocation %s (%s)", on ? "fails from here" : "works again", why);
}

// While allocation fails, the library must have tried (and been refused):
// otherwise the test shows nothing.
void expect_refused(const char* what) {
  if (!pt::have_api() || g_sweep) return;
  CHECK(g_thrown > 0, "%s: expected the library to have hit the failing operator new, found 0 "
        "refusals (is operator new interposed?)", what);
  pt::ok("%s: the library's operator new was refused %lu times so far", what, g_thrown);
}

// A block that must be plain memory (from glibc) that keeps its data.
struct Plain {
  const char* what;
  void* p;
  size_t size;
  uint64_t seed;
  bool mapped;  // from mmap: munmap, else free
};

Plain plain(const char* what, void* p, size_t size, uint64_t seed, bool mapped = false,
            bool zeroed = false) {
  CHECK(p && p != MAP_FAILED, "%s: expected memory, found %p (errno %d)", what, p, errno);
  if (!g_sweep)
    EXPECT_UNMANAGED(p, what);
  else
    pt::note("%s: %s", what, pt::find(p) > 0 ? "a table (the failure came later)" : "plain memory");
  if (zeroed) EXPECT_ZERO(p, size, what);
  pt::fill(p, size, seed);
  EXPECT_DATA(p, size, seed, what);
  return Plain{what, p, size, seed, mapped};
}

void release(const Plain& b) {
  EXPECT_DATA(b.p, b.size, b.seed, b.what);  // still intact at the end
  if (b.mapped)
    CHECK(munmap(b.p, b.size) == 0, "%s: munmap: errno %d", b.what, errno);
  else
    free(b.p);
}

// A managed table (when the library manages) with data that reads back.
int table(const char* what, void* p, size_t size, uint64_t seed) {
  CHECK(p && p != MAP_FAILED, "%s: expected memory, found %p (errno %d)", what, p, errno);
  int id = EXPECT_MANAGED(p, size, what);
  pt::fill(p, size, seed);
  EXPECT_DATA(p, size, seed, what);
  return id;
}

void* map_anon(size_t n) {
  return mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

// The allocators of table sizes while allocation fails: plain memory.
void allocate_plain(Plain* out, uint64_t seed) {
  void* q = nullptr;
  out[0] = plain("malloc(2M)", malloc(kTable), kTable, seed);
  out[1] = plain("calloc(1, 2M)", calloc(1, kTable), kTable, seed + 1, false, true);
  int rc = posix_memalign(&q, 64, kTable);
  CHECK(rc == 0, "posix_memalign(64, 2M): expected 0, found %d", rc);
  CHECK(reinterpret_cast<uintptr_t>(q) % 64 == 0, "posix_memalign(64, 2M): %p not aligned", q);
  out[2] = plain("posix_memalign(64, 2M)", q, kTable, seed + 2);
  out[3] = plain("mmap(2M)", map_anon(kTable), kTable, seed + 3, true);
}

void test_engine() {
  set_failing(true, "before the first managed-size allocation: the engine cannot start");
  Plain blocks[4];
  allocate_plain(blocks, 10);
  expect_refused("engine start");
  set_failing(false, "the next managed-size allocation starts the engine");

  char* t = static_cast<char*>(malloc(3 * MiB));
  table("malloc(3M) after allocation works again", t, 3 * MiB, 20);
  void* a = nullptr;
  CHECK(posix_memalign(&a, 4096, kTable) == 0, "posix_memalign(4096, 2M): expected 0");
  table("posix_memalign(4096, 2M) after allocation works again", a, kTable, 21);
  for (const Plain& b : blocks) release(b);
  EXPECT_DATA(t, 3 * MiB, 20, "malloc(3M) at the end");
  EXPECT_DATA(a, kTable, 21, "posix_memalign(4096, 2M) at the end");
  volatile uintptr_t t_at = reinterpret_cast<uintptr_t>(t), a_at = reinterpret_cast<uintptr_t>(a);
  free(t);
  free(a);
  if (pt::managing()) {
    CHECK(pt::find(reinterpret_cast<void*>(t_at)) < 0 && pt::find(reinterpret_cast<void*>(a_at)) < 0,
          "expected no tables after free");
    pt::ok("the tables are gone after free");
  }
}

using TableCreate = int (*)(const char*, size_t, void**);
using TableFree = int (*)(int);

void test_tables() {
  // The engine starts normally: these are tables.
  char* m = static_cast<char*>(malloc(3 * MiB));
  int m_id = table("malloc(3M)", m, 3 * MiB, 30);
  char* r = static_cast<char*>(malloc(kTable));
  table("malloc(2M) to realloc", r, kTable, 31);
  char* u = static_cast<char*>(map_anon(4 * MiB));
  table("mmap(4M) to munmap in part", u, 4 * MiB, 32);
  char* d = static_cast<char*>(map_anon(kTable));
  table("mmap(2M) to madvise", d, kTable, 33);
  struct mtier_stats st;
  uint64_t tables_before = pt::engine_stats(&st) ? st.tables : 0;

  set_failing(true, "the engine runs");
  Plain blocks[5];
  allocate_plain(blocks, 40);
  expect_refused("a new table");

  // realloc of a table to a bigger size: the new block is plain, the bytes
  // move, the table is freed.
  char* r2 = static_cast<char*>(realloc(r, 3 * MiB));
  CHECK(r2, "realloc(table, 3M): expected memory, found NULL (errno %d)", errno);
  EXPECT_DATA(r2, kTable, 31, "realloc(table 2M, 3M): the old bytes");
  EXPECT_UNMANAGED(r2, "realloc(table 2M, 3M)");
  pt::fill(r2, 3 * MiB, 34);
  blocks[4] = Plain{"realloc(table 2M, 3M)", r2, 3 * MiB, 34, false};

  // munmap of the middle of a table: done (the rest keeps its data), or
  // refused with ENOMEM (then all of it does).
  errno = 0;
  int rc = munmap(u + MiB, MiB);
  CHECK(rc == 0 || (rc == -1 && errno == ENOMEM),
        "munmap(middle 1M of a table): expected 0 or -1/ENOMEM, found %d errno %d", rc, errno);
  pt::ok("munmap(middle 1M of a table) = %d%s", rc, rc ? " (ENOMEM)" : "");
  EXPECT_DATA_RANGE(u, 0, MiB, 32, "the table's first 1M after munmap of its middle");
  EXPECT_DATA_RANGE(u, 2 * MiB, 2 * MiB, 32, "the table's last 2M after munmap of its middle");
  if (rc != 0) EXPECT_DATA_RANGE(u, MiB, MiB, 32, "the middle the refused munmap left");

  // madvise(DONTNEED) of a page: discarded (reads zero) or refused (EAGAIN).
  errno = 0;
  rc = madvise(d + 64 * KiB, 4 * KiB, MADV_DONTNEED);
  CHECK(rc == 0 || (rc == -1 && errno == EAGAIN),
        "madvise(DONTNEED) of a table page: expected 0 or -1/EAGAIN, found %d errno %d", rc, errno);
  pt::ok("madvise(DONTNEED) of a table page = %d", rc);
  if (rc == 0) EXPECT_ZERO(d + 64 * KiB, 4 * KiB, "the discarded page");
  EXPECT_DATA_RANGE(d, 0, 64 * KiB, 33, "the table before the discarded page");
  EXPECT_DATA_RANGE(d, 68 * KiB, kTable - 68 * KiB, 33, "the table after the discarded page");

  // The C API says -ENOMEM (or creates the table: it may not need memory).
  int api_id = 0;
  if (auto create = reinterpret_cast<TableCreate>(dlsym(RTLD_DEFAULT, "mtier_table_create"))) {
    void* addr = nullptr;
    int id = create("boundary", kTable, &addr);
    CHECK(id == -ENOMEM || id > 0, "mtier_table_create while allocation fails: expected -ENOMEM "
          "(%d) or a table, found %d", -ENOMEM, id);
    pt::ok("mtier_table_create while allocation fails = %d", id);
    api_id = id;
  }

  // free of a table while allocation fails: the table goes.
  volatile uintptr_t m_at = reinterpret_cast<uintptr_t>(m);  // volatile: no use-after-free warning
  free(m);
  if (pt::managing()) {
    CHECK(pt::find(reinterpret_cast<void*>(m_at)) < 0, "free(table %d) while allocation fails: the table is still there", m_id);
    pt::ok("free(table %d) while allocation fails: the table is gone", m_id);
  }
  set_failing(false, "tables again");
  if (api_id > 0) {
    auto table_free = reinterpret_cast<TableFree>(dlsym(RTLD_DEFAULT, "mtier_table_free"));
    CHECK(table_free && table_free(api_id) == 0, "mtier_table_free(%d) failed", api_id);
  }

  char* t = static_cast<char*>(malloc(3 * MiB));
  table("malloc(3M) after allocation works again", t, 3 * MiB, 50);
  char* t2 = static_cast<char*>(map_anon(kTable));
  table("mmap(2M) after allocation works again", t2, kTable, 51);
  if (pt::managing() && pt::engine_stats(&st)) {
    // m and r were freed, t and t2 added; nothing made while failing stayed.
    CHECK(st.tables <= tables_before, "expected at most %llu tables, found %llu",
          (unsigned long long)tables_before, (unsigned long long)st.tables);
    pt::ok("%llu tables live (%llu before allocation failed)", (unsigned long long)st.tables,
           (unsigned long long)tables_before);
  }
  for (const Plain& b : blocks) release(b);
  EXPECT_DATA(t, 3 * MiB, 50, "malloc(3M) at the end");
  EXPECT_DATA(t2, kTable, 51, "mmap(2M) at the end");
  free(t);
  CHECK(munmap(t2, kTable) == 0, "munmap(mmap 2M): errno %d", errno);
  CHECK(munmap(u, 4 * MiB) == 0, "munmap(the 4M table): errno %d", errno);
  CHECK(munmap(d, kTable) == 0, "munmap(the 2M table): errno %d", errno);
  pt::ok("everything freed");
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::start("preload_boundary");
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "engine") == 0) {
    test_engine();
  } else if (strcmp(mode, "tables") == 0) {
    test_tables();
  } else {
    fprintf(stderr, "usage: preload_boundary engine|tables\n");
    return 2;
  }
  printf("PASS: preload_boundary %s\n", mode);
  return 0;
}
