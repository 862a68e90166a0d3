// SPDX-License-Identifier: Apache-2.0
// The malloc family under LD_PRELOAD=libmtier.so (run by alloc.test):
//
//   preload_alloc align    every allocator of a managed size returns memory
//                          with the requested alignment, in a managed table,
//                          whose usable bytes keep data across eviction;
//                          calloc reads zero; small sizes stay unmanaged;
//                          posix_memalign rejects bad alignments (EINVAL)
//   preload_alloc realloc  across the threshold both ways, grow, shrink,
//                          realloc(p, 0), realloc(NULL, n), failure
//   preload_alloc free     free gives the memory back at once (mtier_stats,
//                          smaps_rollup Rss); no growth over many cycles
//   preload_alloc foreign  pointers glibc handed out (__libc_malloc) can be
//                          freed, realloc'ed, sized through the interposer
//   preload_alloc threshold  glibc's mmap threshold adapts to a freed table
//                          as it would to its own chunk (up to 32 MiB), so a
//                          later 768 KiB request comes from its heap; with
//                          MALLOC_MMAP_THRESHOLD_ set it stays mmapped
//
// Sizes assume MTIER_MIN_BYTES=1M and a DRAM budget of a few MiB.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>

#include <new>
#include <string>
#include <vector>

#include "common.h"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_memalign(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
}

namespace {

using pt::KiB;
using pt::MiB;
using pt::kPage;

// The threshold the script runs with (for the just-below / at checks).
uint64_t min_bytes() { return pt::parse_size_or(getenv("MTIER_MIN_BYTES"), 64 * MiB); }

struct Block {
  std::string what;
  void* p;
  size_t size;     // requested
  size_t align;    // guaranteed
  size_t usable;   // malloc_usable_size (all of it is written)
  uint64_t seed;
  int id;          // table (0: not checked)
};

// The checks every managed block gets right after allocation.
Block take(const char* what, void* p, size_t size, size_t align, bool zeroed, uint64_t seed) {
  CHECK(p != nullptr, "%s: expected memory, found NULL (errno %d)", what, errno);
  CHECK(reinterpret_cast<uintptr_t>(p) % align == 0,
        "%s: expected alignment %zu, found pointer %p (address %% %zu = %zu)", what, align, p,
        align, size_t(reinterpret_cast<uintptr_t>(p) % align));
  pt::ok("%s = %p: aligned to %zu", what, p, align);
  Block b{what, p, size, align, malloc_usable_size(p), seed, 0};
  CHECK(b.usable >= size, "%s: expected malloc_usable_size >= %zu, found %zu", what, size, b.usable);
  pt::ok("%s: malloc_usable_size %zu >= %zu", what, b.usable, size);
  b.id = EXPECT_MANAGED(p, b.usable, what);
  if (zeroed) EXPECT_ZERO(p, b.usable, (b.what + " (fresh: zero)").c_str());
  pt::fill(p, b.usable, seed);  // every usable byte must be writable
  EXPECT_DATA(p, b.usable, seed, (b.what + " just written").c_str());
  return b;
}

void test_align() {
  std::vector<Block> blocks;
  uint64_t seed = 100;
  auto add = [&](const char* what, void* p, size_t size, size_t align, bool zeroed = false) {
    blocks.push_back(take(what, p, size, align, zeroed, seed++));
  };
  void* p;

  add("malloc(3M+100)", malloc(3 * MiB + 100), 3 * MiB + 100, alignof(max_align_t));
  add("calloc(3, 1M)", calloc(3, MiB), 3 * MiB, alignof(max_align_t), true);
  add("calloc(1, 2M+7)", calloc(1, 2 * MiB + 7), 2 * MiB + 7, alignof(max_align_t), true);
  for (size_t align : {size_t(64), size_t(4096), size_t(2 * MiB)}) {
    static char what[3][64];
    char* w = what[align == 64 ? 0 : align == 4096 ? 1 : 2];
    snprintf(w, 64, "posix_memalign(%zu, 2M)", align);
    p = nullptr;
    int rc = posix_memalign(&p, align, 2 * MiB);
    CHECK(rc == 0, "%s: expected 0, found %d", w, rc);
    add(w, p, 2 * MiB, align);
  }
  add("aligned_alloc(4096, 2M)", aligned_alloc(4096, 2 * MiB), 2 * MiB, 4096);
  add("aligned_alloc(1M, 3M)", aligned_alloc(MiB, 3 * MiB), 3 * MiB, MiB);
  add("memalign(256, 2M+1)", memalign(256, 2 * MiB + 1), 2 * MiB + 1, 256);
  add("memalign(4M, 2M)", memalign(4 * MiB, 2 * MiB), 2 * MiB, 4 * MiB);
  add("valloc(2M+5)", valloc(2 * MiB + 5), 2 * MiB + 5, kPage);
  // pvalloc rounds the size up to whole pages.
  add("pvalloc(2M+5)", pvalloc(2 * MiB + 5), 2 * MiB + kPage, kPage);
  // C++ operator new goes through malloc / aligned_alloc (extra).
  add("operator new(2M)", ::operator new(2 * MiB), 2 * MiB, alignof(max_align_t));
  add("operator new(2M, align 4096)", ::operator new(2 * MiB, std::align_val_t(4096)), 2 * MiB,
      4096);
  // The threshold is inclusive: MTIER_MIN_BYTES itself is managed.
  if (min_bytes() == MiB) add("malloc(1M) (= MTIER_MIN_BYTES)", malloc(MiB), MiB, 16);

  // The blocks total ~35 MiB against a budget of a few: writing them already
  // evicted most; churn pushes out the rest, then every byte is read back.
  pt::churn("after writing the managed blocks");
  for (auto& b : blocks) pt::expect_evicted(b.id, b.what.c_str());
  for (auto& b : blocks) EXPECT_DATA(b.p, b.usable, b.seed, (b.what + " after eviction").c_str());
  for (auto& b : blocks) pt::expect_fetched(b.id, b.what.c_str());

  // Small sizes are plain glibc memory.
  struct Small { const char* what; void* p; size_t size; };
  std::vector<Small> small;
  small.push_back({"malloc(100)", malloc(100), 100});
  small.push_back({"malloc(512K)", malloc(512 * KiB), 512 * KiB});
  small.push_back({"calloc(10, 100)", calloc(10, 100), 1000});
  p = nullptr;
  CHECK(posix_memalign(&p, 4096, 64 * KiB) == 0, "posix_memalign(4096, 64K) expected 0");
  small.push_back({"posix_memalign(4096, 64K)", p, 64 * KiB});
  small.push_back({"aligned_alloc(64, 4096)", aligned_alloc(64, 4096), 4096});
  if (min_bytes() == MiB) small.push_back({"malloc(1M-1)", malloc(MiB - 1), MiB - 1});
  for (auto& s : small) {
    CHECK(s.p, "%s: expected memory, found NULL", s.what);
    EXPECT_UNMANAGED(s.p, s.what);
    pt::fill(s.p, s.size, seed);
    EXPECT_DATA(s.p, s.size, seed, s.what);
    seed++;
  }

  // Bad alignments: EINVAL, as glibc.
  for (size_t size : {size_t(100), size_t(2 * MiB)})
    for (size_t align : {size_t(3), size_t(24), size_t(0)}) {
      p = nullptr;
      int rc = posix_memalign(&p, align, size);
      CHECK(rc == EINVAL, "posix_memalign(%zu, %zu): expected EINVAL (%d), found %d", align, size,
            EINVAL, rc);
      pt::ok("posix_memalign(align %zu, %zu) = EINVAL", align, size);
    }

  // Impossible sizes fail with ENOMEM instead of crashing (extra: C/glibc).
  errno = 0;
  p = malloc(size_t(1) << 62);
  CHECK(p == nullptr && errno == ENOMEM, "malloc(2^62): expected NULL/ENOMEM, found %p errno %d", p,
        errno);
  pt::ok("malloc(2^62) = NULL, ENOMEM");
  errno = 0;
  volatile size_t huge = SIZE_MAX / 2;  // hidden from the compiler's size checks
  p = calloc(huge, 4);  // the product overflows
  CHECK(p == nullptr && errno == ENOMEM,
        "calloc(SIZE_MAX/2, 4) (overflow): expected NULL/ENOMEM, found %p errno %d", p, errno);
  pt::ok("calloc(SIZE_MAX/2, 4) = NULL, ENOMEM");

  // Everything frees; the tables are gone afterwards.
  for (auto& s : small) free(s.p);
  std::vector<std::pair<void*, std::string>> freed;
  for (auto& b : blocks) {
    if (b.what.rfind("operator new(2M, align", 0) == 0)
      ::operator delete(b.p, std::align_val_t(4096));
    else if (b.what.rfind("operator new", 0) == 0)
      ::operator delete(b.p);
    else
      free(b.p);
    freed.emplace_back(b.p, b.what);
  }
  if (pt::managing())
    for (auto& f : freed) {
      int id = pt::find(f.first);
      CHECK(id < 0, "%s: expected no table after free, mtier_table_find = %d", f.second.c_str(), id);
    }
  pt::ok("all blocks freed%s", pt::managing() ? ", their tables are gone" : "");

  // calloc of memory that held data (a freed table's range reused) is zero.
  for (int i = 0; i < 3; i++) {
    void* a = malloc(3 * MiB);
    CHECK(a, "malloc(3M) for reuse: NULL");
    pt::fill(a, 3 * MiB, 7);
    free(a);
    void* c = calloc(1, 3 * MiB);
    CHECK(c, "calloc(1, 3M): NULL");
    EXPECT_MANAGED(c, 3 * MiB, "calloc(1, 3M) after freeing a written 3M block");
    EXPECT_ZERO(c, 3 * MiB, "calloc(1, 3M) after freeing a written 3M block");
    free(c);
  }
}

void test_realloc() {
  struct mtier_stats st0, st;
  bool stats = pt::managing() && pt::engine_stats(&st0);
  (void)stats;

  // small -> managed (crossing the threshold)
  char* s = static_cast<char*>(malloc(1000));
  CHECK(s, "malloc(1000): NULL");
  EXPECT_UNMANAGED(s, "malloc(1000)");
  pt::fill(s, 1000, 1);
  char* m = static_cast<char*>(realloc(s, 4 * MiB));
  CHECK(m, "realloc(small, 4M): expected memory, found NULL");
  EXPECT_DATA(m, 1000, 1, "realloc(small 1000, 4M): the 1000 bytes");
  int id = EXPECT_MANAGED(m, 4 * MiB, "realloc(small 1000, 4M)");
  pt::fill(m, 4 * MiB, 2);
  pt::churn("before growing");
  pt::expect_evicted(id, "4M block");

  // managed -> bigger managed (the source was evicted: the copy fetches it)
  char* g = static_cast<char*>(realloc(m, 8 * MiB));
  CHECK(g, "realloc(4M, 8M): expected memory, found NULL");
  int gid = EXPECT_MANAGED(g, 8 * MiB, "realloc(4M managed, 8M)");
  EXPECT_DATA(g, 4 * MiB, 2, "realloc(4M managed, 8M): the first 4M");
  pt::fill(g + 4 * MiB, 4 * MiB, 3);
  pt::churn("after growing");
  EXPECT_DATA(g, 4 * MiB, 2, "grown block, first 4M, after eviction");
  EXPECT_DATA(g + 4 * MiB, 4 * MiB, 3, "grown block, second 4M, after eviction");
  pt::expect_fetched(gid, "grown block");

  // managed -> smaller managed (extra)
  char* h = static_cast<char*>(realloc(g, 3 * MiB));
  CHECK(h, "realloc(8M, 3M): expected memory, found NULL");
  EXPECT_MANAGED(h, 3 * MiB, "realloc(8M managed, 3M)");
  EXPECT_DATA(h, 3 * MiB, 2, "realloc(8M managed, 3M): the first 3M");

  // same size (extra)
  char* same = static_cast<char*>(realloc(h, 3 * MiB));
  CHECK(same, "realloc(3M, 3M): NULL");
  EXPECT_DATA(same, 3 * MiB, 2, "realloc(3M, 3M)");
  h = same;

  // managed -> small: prefix kept, result plain, old table gone
  struct mtier_stats before;
  bool have_before = pt::managing() && pt::engine_stats(&before);
  pt::churn("before shrinking below the threshold");
  volatile uintptr_t h_addr = reinterpret_cast<uintptr_t>(h);
  char* k = static_cast<char*>(realloc(h, 100 * KiB));
  CHECK(k, "realloc(3M, 100K): expected memory, found NULL");
  EXPECT_UNMANAGED(k, "realloc(3M managed, 100K)");
  EXPECT_DATA(k, 100 * KiB, 2, "realloc(3M managed, 100K): the first 100K");
  if (pt::managing()) {
    int old = pt::find(reinterpret_cast<void*>(h_addr));
    CHECK(old < 0, "realloc(3M managed, 100K): expected the old table gone, mtier_table_find(old) = %d",
          old);
    if (have_before && pt::engine_stats(&st)) {
      CHECK(st.tables + 1 == before.tables,
            "realloc(managed, small): expected tables %llu -> %llu, found %llu",
            (unsigned long long)before.tables, (unsigned long long)before.tables - 1,
            (unsigned long long)st.tables);
    }
    pt::ok("realloc(managed, small): the old table is gone");
  }
  free(k);

  // realloc(NULL, n) is malloc(n)
  char* n1 = static_cast<char*>(realloc(nullptr, 4 * MiB));
  CHECK(n1, "realloc(NULL, 4M): NULL");
  int n1id = EXPECT_MANAGED(n1, 4 * MiB, "realloc(NULL, 4M)");
  pt::fill(n1, 4 * MiB, 4);
  char* n2 = static_cast<char*>(realloc(nullptr, 100));
  CHECK(n2, "realloc(NULL, 100): NULL");
  EXPECT_UNMANAGED(n2, "realloc(NULL, 100)");
  void* n0 = realloc(nullptr, 0);
  CHECK(n0, "realloc(NULL, 0): expected a unique pointer (glibc), found NULL");
  pt::ok("realloc(NULL, 0) = %p (like malloc(0))", n0);
  free(n0);

  // A failing realloc leaves the block intact (extra: C/glibc).
  errno = 0;
  void* big = realloc(n1, size_t(1) << 62);
  CHECK(big == nullptr && errno == ENOMEM, "realloc(4M, 2^62): expected NULL/ENOMEM, found %p errno %d",
        big, errno);
  EXPECT_DATA(n1, 4 * MiB, 4, "realloc(4M, 2^62) failed: the block is intact");

  // realloc(p, 0) frees and returns NULL (glibc 2.36)
  struct mtier_stats b0;
  bool hb = pt::managing() && pt::engine_stats(&b0);
  volatile uintptr_t n1_addr = reinterpret_cast<uintptr_t>(n1);
  void* z = realloc(n1, 0);
  CHECK(z == nullptr, "realloc(managed, 0): expected NULL (glibc frees), found %p", z);
  if (pt::managing()) {
    int after = pt::find(reinterpret_cast<void*>(n1_addr));
    CHECK(after < 0, "realloc(managed table %d, 0): expected the table freed, mtier_table_find = %d",
          n1id, after);
    if (hb && pt::engine_stats(&st))
      CHECK(st.tables + 1 == b0.tables, "realloc(managed, 0): expected tables %llu -> %llu, found %llu",
            (unsigned long long)b0.tables, (unsigned long long)b0.tables - 1,
            (unsigned long long)st.tables);
  }
  pt::ok("realloc(managed, 0) = NULL and the table is freed");
  z = realloc(n2, 0);
  CHECK(z == nullptr, "realloc(small, 0): expected NULL (glibc frees), found %p", z);
  pt::ok("realloc(small, 0) = NULL");

  // realloc of an aligned managed block (extra)
  void* a = nullptr;
  CHECK(posix_memalign(&a, 4096, 2 * MiB) == 0, "posix_memalign(4096, 2M) expected 0");
  pt::fill(a, 2 * MiB, 5);
  void* a2 = realloc(a, 5 * MiB);
  CHECK(a2, "realloc(posix_memalign'd 2M, 5M): NULL");
  EXPECT_MANAGED(a2, 5 * MiB, "realloc(posix_memalign'd 2M, 5M)");
  EXPECT_DATA(a2, 2 * MiB, 5, "realloc(posix_memalign'd 2M, 5M): the first 2M");
  free(a2);

  if (pt::managing() && pt::engine_stats(&st))
    CHECK(st.tables == st0.tables, "after the realloc tests: expected %llu tables, found %llu",
          (unsigned long long)st0.tables, (unsigned long long)st.tables);
  pt::ok("realloc: done");
}

void test_free() {
  if (!pt::managing()) {
    pt::note("free: no mtier statistics in this run; only the Rss check runs");
  }
  constexpr size_t kSize = 3 * MiB;  // fits in a 4 MiB budget: no eviction
  struct mtier_stats s0{}, s1{}, s2{};
  bool st = pt::managing() && pt::engine_stats(&s0);
  uint64_t r0 = pt::rss_bytes();
  char* a = static_cast<char*>(malloc(kSize));
  CHECK(a, "malloc(3M): NULL");
  int id = EXPECT_MANAGED(a, kSize, "malloc(3M)");
  pt::fill(a, kSize, 9);
  if (st) st = pt::engine_stats(&s1);
  uint64_t r1 = pt::rss_bytes();
  free(a);
  if (st) st = pt::engine_stats(&s2);
  uint64_t r2 = pt::rss_bytes();
  if (st) {
    pt::note("mtier resident: %llu KiB before malloc, %llu KiB written, %llu KiB after free",
             (unsigned long long)s0.resident_bytes / 1024, (unsigned long long)s1.resident_bytes / 1024,
             (unsigned long long)s2.resident_bytes / 1024);
    CHECK(s1.resident_bytes >= s0.resident_bytes + 2 * MiB,
          "malloc(3M) written: expected resident_bytes to grow by >= 2 MiB, found %llu -> %llu",
          (unsigned long long)s0.resident_bytes, (unsigned long long)s1.resident_bytes);
    CHECK(s2.resident_bytes + 2 * MiB <= s1.resident_bytes,
          "free(3M table %d): expected resident_bytes to drop by >= 2 MiB at once, found %llu -> %llu",
          id, (unsigned long long)s1.resident_bytes, (unsigned long long)s2.resident_bytes);
    pt::ok("free: mtier resident_bytes dropped at once (%llu -> %llu KiB)",
           (unsigned long long)s1.resident_bytes / 1024, (unsigned long long)s2.resident_bytes / 1024);
  }
  pt::note("Rss: %lu KiB before malloc, %lu KiB written, %lu KiB after free", r0 / 1024, r1 / 1024,
           r2 / 1024);
  CHECK(r1 >= r0 + 2 * MiB, "malloc(3M) written: expected Rss to grow by >= 2 MiB, found %lu -> %lu KiB",
        r0 / 1024, r1 / 1024);
  CHECK(r2 + 2 * MiB <= r1, "free(3M): expected Rss to drop by >= 2 MiB at once, found %lu -> %lu KiB",
        r1 / 1024, r2 / 1024);
  pt::ok("free: Rss dropped at once (%lu -> %lu KiB)", r1 / 1024, r2 / 1024);

  // A table in the store gives its store space back too (extra: the API's
  // "memory and store space go back at once").
  if (pt::managing()) {
    char* e = static_cast<char*>(malloc(8 * MiB));
    CHECK(e, "malloc(8M): NULL");
    pt::fill(e, 8 * MiB, 10);
    pt::churn("to put an 8M table in the store");
    struct mtier_stats b{}, c{};
    pt::engine_stats(&b);
    free(e);
    pt::engine_stats(&c);
    pt::note("store used: %llu KiB before free(8M), %llu KiB after",
             (unsigned long long)b.store_used_bytes / 1024, (unsigned long long)c.store_used_bytes / 1024);
    CHECK(c.store_used_bytes + 2 * MiB <= b.store_used_bytes,
          "free(8M table in the store): expected store_used_bytes to drop by >= 2 MiB, found %llu -> %llu",
          (unsigned long long)b.store_used_bytes, (unsigned long long)c.store_used_bytes);
    pt::ok("free: store space went back (%llu -> %llu KiB)", (unsigned long long)b.store_used_bytes / 1024,
           (unsigned long long)c.store_used_bytes / 1024);
  }

  // Many cycles: nothing accumulates.
  uint64_t rb = pt::rss_bytes();
  for (int i = 0; i < 40; i++) {
    char* x = static_cast<char*>(i % 2 ? calloc(1, kSize) : malloc(kSize));
    CHECK(x, "cycle %d: NULL", i);
    for (size_t o = 0; o < kSize; o += kPage) x[o] = 1;
    free(x);
  }
  uint64_t ra = pt::rss_bytes();
  // (Only for tables: glibc raises its mmap threshold after the first free
  // and keeps later 3M chunks on its heap.)
  CHECK(!pt::managing() || ra < rb + 2 * MiB, "40 x malloc/free(3M): expected Rss back near %lu KiB, found %lu KiB",
        rb / 1024, ra / 1024);
  if (st && pt::engine_stats(&s1)) {
    CHECK(s1.tables == s0.tables && s1.resident_bytes <= s0.resident_bytes + kPage * 16,
          "40 x malloc/free(3M): expected tables %llu and resident %llu KiB as before, found %llu "
          "tables, %llu KiB",
          (unsigned long long)s0.tables, (unsigned long long)s0.resident_bytes / 1024,
          (unsigned long long)s1.tables, (unsigned long long)s1.resident_bytes / 1024);
  }
  pt::ok("40 x malloc/free(3M): nothing left behind (Rss %lu -> %lu KiB)", rb / 1024, ra / 1024);
  free(nullptr);
  pt::ok("free(NULL)");
}

void test_foreign() {
  // glibc's own entry points hand out chunks the interposer never saw.
  char* a = static_cast<char*>(__libc_malloc(1000));
  CHECK(a, "__libc_malloc(1000): NULL");
  pt::fill(a, 1000, 20);
  CHECK(malloc_usable_size(a) >= 1000, "malloc_usable_size(__libc_malloc(1000)): expected >= 1000, found %zu",
        malloc_usable_size(a));
  free(a);
  pt::ok("free(__libc_malloc(1000))");

  char* b = static_cast<char*>(__libc_malloc(4 * MiB));  // a glibc mmap chunk
  CHECK(b, "__libc_malloc(4M): NULL");
  EXPECT_UNMANAGED(b, "__libc_malloc(4M)");
  pt::fill(b, 4 * MiB, 21);
  CHECK(malloc_usable_size(b) >= 4 * MiB, "malloc_usable_size(__libc_malloc(4M)): expected >= 4M, found %zu",
        malloc_usable_size(b));
  pt::ok("malloc_usable_size(__libc_malloc(4M)) = %zu", malloc_usable_size(b));
  char* b2 = static_cast<char*>(realloc(b, 8 * MiB));
  CHECK(b2, "realloc(__libc_malloc(4M), 8M): NULL");
  EXPECT_DATA(b2, 4 * MiB, 21, "realloc(__libc_malloc(4M), 8M): the first 4M");
  pt::note("realloc(__libc_malloc(4M), 8M) is %s", pt::find(b2) > 0 ? "managed" : "not managed");
  free(b2);
  pt::ok("free(realloc(__libc_malloc(4M), 8M))");

  char* c = static_cast<char*>(__libc_realloc(nullptr, 3000));
  CHECK(c, "__libc_realloc(NULL, 3000): NULL");
  char* c2 = static_cast<char*>(realloc(c, 200));
  CHECK(c2, "realloc(__libc_realloc'd, 200): NULL");
  free(c2);
  pt::ok("realloc + free of a __libc_realloc chunk");

  void* d = __libc_memalign(4096, 2 * MiB);
  CHECK(d, "__libc_memalign(4096, 2M): NULL");
  EXPECT_UNMANAGED(d, "__libc_memalign(4096, 2M)");
  pt::fill(d, 2 * MiB, 22);
  EXPECT_DATA(d, 2 * MiB, 22, "__libc_memalign(4096, 2M)");
  free(d);
  pt::ok("free(__libc_memalign(4096, 2M))");

  void* e = __libc_calloc(1, 5 * MiB);
  CHECK(e, "__libc_calloc(1, 5M): NULL");
  free(e);
  pt::ok("free(__libc_calloc(1, 5M))");

  char* f = strdup("a string glibc allocated");
  CHECK(f, "strdup: NULL");
  free(f);
  pt::ok("free(strdup(...))");

  // A managed block's pointer and a glibc chunk mixed in one sequence.
  void* m = malloc(2 * MiB);
  void* g = __libc_malloc(64);
  CHECK(m && g, "malloc(2M) / __libc_malloc(64): NULL");
  EXPECT_MANAGED(m, 2 * MiB, "malloc(2M)");
  free(g);
  free(m);
  pt::ok("interleaved frees of managed and glibc chunks");
}

// glibc's mmapped chunks in use (mallinfo2().hblks).
size_t mmapped_chunks() { return mallinfo2().hblks; }

// Whether malloc(n) came as an mmapped chunk of glibc. The block stays
// allocated (in `keep`): its free would itself move the threshold.
bool mmapped_malloc(size_t n, std::vector<void*>* keep) {
  size_t before = mmapped_chunks();
  void* p = malloc(n);
  CHECK(p, "malloc(%zu): NULL", n);
  EXPECT_UNMANAGED(p, "a request below MTIER_MIN_BYTES");
  pt::fill(p, n, 30);
  keep->push_back(p);
  return mmapped_chunks() == before + 1;
}

// malloc(n) (a table under mtier), written (its first MiB) and freed.
void malloc_write_free(size_t n, const char* what) {
  void* t = malloc(n);
  CHECK(t, "%s: NULL", what);
  if (pt::managing()) EXPECT_MANAGED(t, n, what);
  pt::fill(t, n < MiB ? n : MiB, 31);  // (a 40M table would go through the store)
  free(t);
}

void test_threshold() {
  constexpr size_t kProbe = 768 * KiB;  // above glibc's initial 128 KiB, below min_bytes
  CHECK(min_bytes() > kProbe && min_bytes() <= 2 * MiB,
        "threshold: expected MTIER_MIN_BYTES in (768K, 2M], found %llu",
        (unsigned long long)min_bytes());
  const char* fixed = getenv("MALLOC_MMAP_THRESHOLD_");
  std::vector<void*> keep;
  CHECK(mmapped_malloc(kProbe, &keep), "malloc(768K) at start: expected an mmapped chunk "
        "(glibc's initial threshold is 128 KiB), found it on the heap");
  pt::ok("malloc(768K) at start: mmapped");

  malloc_write_free(40 * MiB, "malloc(40M)");  // above 32 MiB glibc does not adapt
  CHECK(mmapped_malloc(kProbe, &keep), "malloc(768K) after free(malloc(40M)): expected an "
        "mmapped chunk (glibc adapts only to chunks up to 32 MiB), found it on the heap");
  pt::ok("malloc(768K) after free(malloc(40M)): still mmapped");

  malloc_write_free(2 * MiB, "malloc(2M)");
  bool mapped = mmapped_malloc(kProbe, &keep);
  if (fixed) {
    CHECK(mapped, "malloc(768K) after free(malloc(2M)) with MALLOC_MMAP_THRESHOLD_=%s: expected "
          "an mmapped chunk (the threshold is fixed), found it on the heap", fixed);
    pt::ok("malloc(768K) after free(malloc(2M)): mmapped (MALLOC_MMAP_THRESHOLD_ fixes it)");
  } else {
    CHECK(!mapped, "malloc(768K) after free(malloc(2M)): expected it from glibc's heap (the "
          "free raises glibc's mmap threshold to 2 MiB), found an mmapped chunk");
    pt::ok("malloc(768K) after free(malloc(2M)): from the heap (threshold raised)");
  }
  for (void* k : keep) free(k);
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::start("preload_alloc");
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "align")
    test_align();
  else if (mode == "realloc")
    test_realloc();
  else if (mode == "free")
    test_free();
  else if (mode == "foreign")
    test_foreign();
  else if (mode == "threshold")
    test_threshold();
  else {
    fprintf(stderr, "usage: preload_alloc align|realloc|free|foreign|threshold\n");
    return 2;
  }
  printf("PASS: preload_alloc %s\n", mode.c_str());
  return 0;
}
