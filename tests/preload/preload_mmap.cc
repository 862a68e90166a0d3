// SPDX-License-Identifier: Apache-2.0
// Anonymous mmap, munmap, madvise and mremap under LD_PRELOAD=libmtier.so
// (run by mmap.test):
//
//   preload_mmap kinds    MAP_PRIVATE|MAP_ANONYMOUS read/write of a managed
//                         size is managed; MAP_SHARED, MAP_FIXED, PROT_NONE,
//                         file mappings, small sizes are not; all work
//   preload_mmap munmap   unmapping head, middle and tail page ranges: they
//                         fault (SIGSEGV), the rest keeps its data; unmapping
//                         the rest frees the table
//   preload_mmap madvise  MADV_DONTNEED reads back zeros (also for pages in
//                         the store, and stays zero), neighbours keep their
//                         data; other advice returns 0 and changes nothing
//   preload_mmap mremap   grow (MAYMOVE) keeps data, grown part zero; shrink
//                         keeps the head, the tail faults; grow in place
//                         succeeds or fails with ENOMEM leaving it intact
//
// The SIGSEGV/SIGBUS probe handler is installed before the first managed
// allocation, so the library's own handler (installed when its engine starts)
// must chain to it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common.h"

namespace {

using pt::KiB;
using pt::MiB;
using pt::kPage;

constexpr int kRW = PROT_READ | PROT_WRITE;
constexpr int kAnon = MAP_PRIVATE | MAP_ANONYMOUS;

char* map_anon(size_t len, const char* what) {
  void* p = mmap(nullptr, len, kRW, kAnon, -1, 0);
  CHECK(p != MAP_FAILED, "%s: mmap(NULL, %zu, RW, PRIVATE|ANON) expected a mapping, found errno %d", what,
        len, errno);
  return static_cast<char*>(p);
}

void unmap(void* p, size_t len, const char* what) {
  int rc = munmap(p, len);
  CHECK(rc == 0, "%s: munmap(%p, %zu): expected 0, found %d errno %d", what, p, len, rc, errno);
  pt::ok("%s: munmap(%p, %zu) = 0", what, p, len);
}

uint64_t tables_now() {
  struct mtier_stats st;
  return pt::managing() && pt::engine_stats(&st) ? st.tables : 0;
}

void expect_tables(uint64_t want, const char* what) {
  if (!pt::managing()) return;
  uint64_t n = tables_now();
  CHECK(n == want, "%s: expected %llu tables, found %llu", what, (unsigned long long)want,
        (unsigned long long)n);
  pt::ok("%s: %llu tables", what, (unsigned long long)n);
}

void test_kinds() {
  uint64_t t0 = tables_now();
  // The managed kind.
  char* a = map_anon(4 * MiB, "anon 4M");
  int id = EXPECT_MANAGED(a, 4 * MiB, "mmap(NULL, 4M, RW, PRIVATE|ANON)");
  EXPECT_ZERO(a, 4 * MiB, "fresh anon 4M mapping");
  pt::fill(a, 4 * MiB, 1);
  char* b = map_anon(8 * MiB, "anon 8M");
  EXPECT_MANAGED(b, 8 * MiB, "mmap(NULL, 8M, RW, PRIVATE|ANON)");
  pt::fill(b, 8 * MiB, 2);
  pt::churn("after writing two anonymous mappings");
  pt::expect_evicted(id, "anon 4M");
  EXPECT_DATA(a, 4 * MiB, 1, "anon 4M after eviction");
  EXPECT_DATA(b, 8 * MiB, 2, "anon 8M after eviction");
  pt::expect_fetched(id, "anon 4M");
  expect_tables(t0 + 2, "two managed mappings");

  // Not managed, each working.
  struct Case {
    const char* what;
    size_t len;
    int prot, flags;
    bool fixed;
  };
  std::vector<Case> cases = {
      {"mmap(4M, RW, SHARED|ANON)", 4 * MiB, kRW, MAP_SHARED | MAP_ANONYMOUS, false},
      {"mmap(fixed addr, 4M, RW, PRIVATE|ANON|FIXED)", 4 * MiB, kRW, kAnon | MAP_FIXED, true},
      {"mmap(4M, PROT_NONE, PRIVATE|ANON)", 4 * MiB, PROT_NONE, kAnon, false},
      {"mmap(64K, RW, PRIVATE|ANON)", 64 * KiB, kRW, kAnon, false},
      {"mmap(4M, PROT_READ, PRIVATE|ANON)", 4 * MiB, PROT_READ, kAnon, false},
  };
  uint64_t seed = 10;
  for (auto& c : cases) {
    void* hint = nullptr;
    void* reserve = nullptr;
    if (c.fixed) {  // a reservation (PROT_NONE: not managed) to map over
      reserve = mmap(nullptr, c.len, PROT_NONE, kAnon, -1, 0);
      CHECK(reserve != MAP_FAILED, "reservation for MAP_FIXED: errno %d", errno);
      hint = reserve;
    }
    void* p = mmap(hint, c.len, c.prot, c.flags, -1, 0);
    CHECK(p != MAP_FAILED, "%s: expected a mapping, found errno %d", c.what, errno);
    if (c.fixed) CHECK(p == hint, "%s: expected %p, found %p", c.what, hint, p);
    EXPECT_UNMANAGED(p, c.what);
    if (c.prot == kRW) {
      EXPECT_ZERO(p, c.len, c.what);
      pt::fill(p, c.len, seed);
      EXPECT_DATA(p, c.len, seed, c.what);
    } else if (c.prot == PROT_READ) {
      EXPECT_ZERO(p, c.len, c.what);
      CHECK(pt::probe(p, true) == SIGSEGV, "%s: expected a write to fault (SIGSEGV)", c.what);
      pt::ok("%s: a write faults", c.what);
    } else {
      CHECK(pt::probe(p, false) == SIGSEGV, "%s: expected a read to fault (SIGSEGV)", c.what);
      pt::ok("%s: a read faults", c.what);
      // mprotect makes it ordinary memory (still unmanaged).
      CHECK(mprotect(p, c.len, kRW) == 0, "%s: mprotect RW: errno %d", c.what, errno);
      pt::fill(p, c.len, seed);
      EXPECT_DATA(p, c.len, seed, (std::string(c.what) + " after mprotect RW").c_str());
    }
    unmap(p, c.len, c.what);
    seed++;
  }

  // A file mapping (extra).
  std::string path = std::string(getenv("MTIER_TEST_TMP") ? getenv("MTIER_TEST_TMP") : "/tmp") +
                     "/preload_mmap.file";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0, "open %s: errno %d", path.c_str(), errno);
  CHECK(ftruncate(fd, 4 * MiB) == 0, "ftruncate: errno %d", errno);
  void* f = mmap(nullptr, 4 * MiB, kRW, MAP_PRIVATE, fd, 0);
  CHECK(f != MAP_FAILED, "mmap(file, 4M, RW, PRIVATE): errno %d", errno);
  EXPECT_UNMANAGED(f, "mmap(file, 4M, RW, PRIVATE)");
  pt::fill(f, 4 * MiB, 30);
  EXPECT_DATA(f, 4 * MiB, 30, "private file mapping");
  unmap(f, 4 * MiB, "file mapping");
  close(fd);
  unlink(path.c_str());

  unmap(a, 4 * MiB, "anon 4M");
  unmap(b, 8 * MiB, "anon 8M");
  if (pt::managing()) {
    CHECK(pt::find(a) < 0 && pt::find(b) < 0, "after munmap: expected no tables at %p / %p, found %d / %d",
          a, b, pt::find(a), pt::find(b));
    pt::ok("after munmap the tables are gone");
  }
  expect_tables(t0, "after unmapping both");
}

void test_munmap() {
  constexpr size_t kPages = 1024;  // 4 MiB
  uint64_t t0 = tables_now();
  char* m = map_anon(kPages * kPage, "anon 4M");
  int id = EXPECT_MANAGED(m, kPages * kPage, "mmap(NULL, 4M, RW, PRIVATE|ANON)");
  pt::fill(m, kPages * kPage, 5);
  pt::churn("before the partial munmaps");
  pt::expect_evicted(id, "anon 4M");

  auto page = [&](size_t i) { return m + i * kPage; };
  // Head [0, 4), middle [500, 510) (length not a page multiple: the kernel
  // rounds it up), tail [1020, 1024).
  unmap(page(0), 4 * kPage, "head pages 0-3");
  unmap(page(500), 10 * kPage - 100, "middle pages 500-509 (length 10 pages - 100 bytes)");
  unmap(page(1020), 4 * kPage, "tail pages 1020-1023");
  // An unaligned address is EINVAL and unmaps nothing (extra: kernel rule).
  errno = 0;
  int rc = munmap(page(700) + 8, kPage);
  CHECK(rc == -1 && errno == EINVAL, "munmap(unaligned address): expected -1/EINVAL, found %d errno %d",
        rc, errno);
  pt::ok("munmap(unaligned) = EINVAL");

  for (size_t i : {0, 3, 500, 505, 509, 1020, 1023}) {
    std::string what = "unmapped page " + std::to_string(i);
    EXPECT_SEGV(page(i), what.c_str());
  }
  // What stays keeps its data; read now, and after another round of eviction.
  for (int round = 0; round < 2; round++) {
    const char* when = round ? "after eviction" : "right after the munmaps";
    EXPECT_DATA_RANGE(m, 4 * kPage, 496 * kPage, 5, (std::string("pages 4-499 ") + when).c_str());
    EXPECT_DATA_RANGE(m, 510 * kPage, 510 * kPage, 5, (std::string("pages 510-1019 ") + when).c_str());
    if (round == 0) pt::churn("after the partial munmaps");
  }
  if (pt::managing()) {
    for (size_t i : {4, 499, 510, 1019}) {
      int t = pt::find(page(i));
      CHECK(t == id, "page %zu: expected still in table %d, found %d", i, id, t);
    }
    pt::ok("the remaining pages are still table %d", id);
  }
  // Writes to what remains still work (and survive eviction).
  pt::fill(page(4), 496 * kPage, 6);
  pt::churn("after rewriting pages 4-499");
  EXPECT_DATA(page(4), 496 * kPage, 6, "pages 4-499 rewritten, after eviction");

  // Unmapping the rest frees the table.
  unmap(page(4), 496 * kPage, "pages 4-499");
  unmap(page(510), 510 * kPage, "pages 510-1019");
  for (size_t i : {4, 499, 510, 1019}) {
    std::string what = "unmapped page " + std::to_string(i);
    EXPECT_SEGV(page(i), what.c_str());
  }
  if (pt::managing()) {
    for (size_t i : {4, 300, 510, 1019}) {
      int t = pt::find(page(i));
      CHECK(t < 0, "all of the mapping unmapped: expected page %zu in no table, found %d", i, t);
    }
    pt::ok("all unmapped: table %d is gone", id);
  }
  expect_tables(t0, "after unmapping all pieces");

  // One munmap of a whole mapping, and one of a mapping plus a neighbour
  // page range that is not mapped (the kernel accepts it).
  char* w = map_anon(3 * MiB, "anon 3M");
  EXPECT_MANAGED(w, 3 * MiB, "anon 3M");
  pt::fill(w, 3 * MiB, 7);
  unmap(w, 3 * MiB, "whole 3M mapping");
  EXPECT_SEGV(w, "unmapped 3M mapping");
  if (pt::managing()) CHECK(pt::find(w) < 0, "whole munmap: expected no table, found %d", pt::find(w));
  expect_tables(t0, "after the whole munmap");

  // Unmapping a managed mapping twice / an already unmapped range is 0.
  CHECK(munmap(w, 3 * MiB) == 0, "munmap of an unmapped range: expected 0, errno %d", errno);
  pt::ok("munmap of an already unmapped range = 0");

  // New mappings still work after all that.
  char* n = map_anon(4 * MiB, "anon 4M again");
  EXPECT_MANAGED(n, 4 * MiB, "anon 4M again");
  EXPECT_ZERO(n, 4 * MiB, "anon 4M again, fresh");
  pt::fill(n, 4 * MiB, 8);
  pt::churn("the new mapping");
  EXPECT_DATA(n, 4 * MiB, 8, "anon 4M again, after eviction");
  unmap(n, 4 * MiB, "anon 4M again");
}

void test_madvise() {
  constexpr size_t kPages = 2048;  // 8 MiB: twice the budget
  char* m = map_anon(kPages * kPage, "anon 8M");
  int id = EXPECT_MANAGED(m, kPages * kPage, "anon 8M");
  auto page = [&](size_t i) { return m + i * kPage; };
  pt::fill(m, kPages * kPage, 1);
  pt::churn("to put pages 10-19 in the store");
  pt::expect_evicted(id, "anon 8M");
  {
    unsigned char vec[10];
    CHECK(mincore(page(10), 10 * kPage, vec) == 0, "mincore: errno %d", errno);
    int resident = 0;
    for (unsigned char v : vec) resident += v & 1;
    if (pt::managing()) {
      CHECK(resident == 0, "pages 10-19 after churn: expected none resident (in the store), mincore says %d",
            resident);
      pt::ok("pages 10-19 are in the store (mincore: not resident)");
    }
  }
  CHECK(madvise(page(10), 10 * kPage, MADV_DONTNEED) == 0, "madvise(pages 10-19, DONTNEED): errno %d", errno);
  pt::ok("madvise(pages 10-19 in the store, MADV_DONTNEED) = 0");
  EXPECT_ZERO(page(10), 10 * kPage, "pages 10-19 after DONTNEED (were in the store)");
  EXPECT_DATA_RANGE(m, 9 * kPage, kPage, 1, "page 9 (neighbour)");
  EXPECT_DATA_RANGE(m, 20 * kPage, kPage, 1, "page 20 (neighbour)");
  // They stay zero when evicted and fetched again (no stale store copy).
  pt::churn("after DONTNEED");
  EXPECT_ZERO(page(10), 10 * kPage, "pages 10-19 after DONTNEED and another eviction");
  EXPECT_DATA_RANGE(m, 0, 10 * kPage, 1, "pages 0-9");
  EXPECT_DATA_RANGE(m, 20 * kPage, (kPages - 20) * kPage, 1, "pages 20-2047");
  // New data there survives eviction.
  pt::fill(page(10), 10 * kPage, 2);
  pt::churn("after rewriting pages 10-19");
  EXPECT_DATA(page(10), 10 * kPage, 2, "pages 10-19 rewritten, after eviction");

  // Resident pages: written just now, dropped at once.
  pt::fill(page(100), 10 * kPage, 3);
  CHECK(madvise(page(100), 10 * kPage, MADV_DONTNEED) == 0, "madvise(resident pages 100-109, DONTNEED): errno %d",
        errno);
  EXPECT_ZERO(page(100), 10 * kPage, "resident pages 100-109 after DONTNEED");
  EXPECT_DATA_RANGE(m, 99 * kPage, kPage, 1, "page 99 (neighbour)");
  EXPECT_DATA_RANGE(m, 110 * kPage, kPage, 1, "page 110 (neighbour)");
  // A length that is not a page multiple covers the partial page (kernel rounds up).
  CHECK(madvise(page(200), 2 * kPage + 1, MADV_DONTNEED) == 0, "madvise(pages 200.., 2 pages + 1): errno %d",
        errno);
  EXPECT_ZERO(page(200), 3 * kPage, "pages 200-202 after DONTNEED of 2 pages + 1 byte");
  EXPECT_DATA_RANGE(m, 203 * kPage, kPage, 1, "page 203 (neighbour)");

  // Other advice: 0, nothing changes.
  struct Adv {
    int advice;
    const char* name;
  };
  for (Adv a : {Adv{MADV_HUGEPAGE, "MADV_HUGEPAGE"}, Adv{MADV_RANDOM, "MADV_RANDOM"},
                Adv{MADV_WILLNEED, "MADV_WILLNEED"}, Adv{MADV_SEQUENTIAL, "MADV_SEQUENTIAL"},
                Adv{MADV_NORMAL, "MADV_NORMAL"}, Adv{MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE"}}) {
    int rc = madvise(page(300), 100 * kPage, a.advice);
    CHECK(rc == 0, "madvise(managed pages 300-399, %s): expected 0, found %d errno %d", a.name, rc, errno);
    rc = madvise(m, kPages * kPage, a.advice);
    CHECK(rc == 0, "madvise(whole managed mapping, %s): expected 0, found %d errno %d", a.name, rc, errno);
    pt::ok("madvise(%s) = 0", a.name);
  }
  pt::churn("after the other advice");
  EXPECT_DATA_RANGE(m, 0, 10 * kPage, 1, "pages 0-9 after other advice");
  EXPECT_DATA(page(10), 10 * kPage, 2, "pages 10-19 after other advice");
  EXPECT_DATA_RANGE(m, 20 * kPage, 80 * kPage, 1, "pages 20-99 after other advice");
  EXPECT_ZERO(page(100), 10 * kPage, "pages 100-109 after other advice");
  EXPECT_DATA_RANGE(m, 110 * kPage, 90 * kPage, 1, "pages 110-199 after other advice");
  EXPECT_ZERO(page(200), 3 * kPage, "pages 200-202 after other advice");
  EXPECT_DATA_RANGE(m, 203 * kPage, (kPages - 203) * kPage, 1, "pages 203-2047 after other advice");

  // DONTNEED of the whole mapping: all zero, residency released (extra).
  struct mtier_stats s1{}, s2{};
  bool st = pt::managing() && pt::engine_stats(&s1);
  CHECK(madvise(m, kPages * kPage, MADV_DONTNEED) == 0, "madvise(whole, DONTNEED): errno %d", errno);
  if (st && pt::engine_stats(&s2))
    pt::note("resident %llu KiB before DONTNEED of the whole mapping, %llu KiB after",
             (unsigned long long)s1.resident_bytes / 1024, (unsigned long long)s2.resident_bytes / 1024);
  EXPECT_ZERO(m, kPages * kPage, "whole mapping after DONTNEED");
  unmap(m, kPages * kPage, "anon 8M");

  // A malloc'd managed block: DONTNEED on whole pages inside it.
  char* b = static_cast<char*>(malloc(4 * MiB));
  CHECK(b, "malloc(4M): NULL");
  EXPECT_MANAGED(b, 4 * MiB, "malloc(4M)");
  pt::fill(b, 4 * MiB, 4);
  char* lo = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(b) + kPage - 1) & ~(kPage - 1)) + 8 * kPage;
  size_t off = lo - b;
  CHECK(madvise(lo, 4 * kPage, MADV_DONTNEED) == 0, "madvise(malloc'd managed, DONTNEED): errno %d", errno);
  EXPECT_ZERO(lo, 4 * kPage, "malloc'd block: 4 pages after DONTNEED");
  EXPECT_DATA_RANGE(b, 0, off, 4, "malloc'd block before the dropped pages");
  EXPECT_DATA_RANGE(b, off + 4 * kPage, 4 * MiB - off - 4 * kPage, 4, "malloc'd block after the dropped pages");
  free(b);
}

// Grows [p, p+len) in place without MREMAP_MAYMOVE: either it works (data
// kept, the new part zero) or fails with ENOMEM and leaves it as it was.
// Returns the length the mapping has afterwards.
size_t grow_in_place(char* p, size_t len, size_t to, uint64_t seed, const char* what) {
  void* r = mremap(p, len, to, 0);
  if (r == MAP_FAILED) {
    CHECK(errno == ENOMEM, "%s: mremap(%zuK -> %zuK, no MAYMOVE) failed: expected ENOMEM, found errno %d", what,
          len / KiB, to / KiB, errno);
    pt::ok("%s: mremap(%zuK -> %zuK, no MAYMOVE) failed with ENOMEM", what, len / KiB, to / KiB);
    EXPECT_DATA(p, len, seed, (std::string(what) + ": after the failed grow").c_str());
    return len;
  }
  CHECK(r == p, "%s: mremap(%zuK -> %zuK, no MAYMOVE): expected %p (in place), found %p", what, len / KiB, to / KiB,
        p, r);
  pt::ok("%s: mremap(%zuK -> %zuK, no MAYMOVE) grew in place", what, len / KiB, to / KiB);
  EXPECT_DATA(p, len, seed, (std::string(what) + ": grown in place, the old part").c_str());
  EXPECT_ZERO(p + len, to - len, (std::string(what) + ": grown in place, the new part").c_str());
  return to;
}

void test_mremap() {
  uint64_t t0 = tables_now();

  // Grow with MREMAP_MAYMOVE.
  char* m = map_anon(4 * MiB, "anon 4M");
  EXPECT_MANAGED(m, 4 * MiB, "anon 4M");
  pt::fill(m, 4 * MiB, 1);
  pt::churn("before mremap");
  void* r = mremap(m, 4 * MiB, 8 * MiB, MREMAP_MAYMOVE);
  CHECK(r != MAP_FAILED, "mremap(4M -> 8M, MAYMOVE): expected a mapping, found errno %d", errno);
  char* g = static_cast<char*>(r);
  pt::ok("mremap(4M -> 8M, MAYMOVE) = %p (%s)", g, g == m ? "in place" : "moved");
  EXPECT_DATA(g, 4 * MiB, 1, "grown mapping: the old 4M");
  EXPECT_ZERO(g + 4 * MiB, 4 * MiB, "grown mapping: the new 4M");
  pt::note("the grown mapping is %s", pt::find(g) > 0 ? "managed" : "not managed");
  if (g != m) {
    EXPECT_SEGV(m + (g > m ? 0 : 4 * MiB - kPage), "the old place of a moved mapping");
    if (pt::managing()) {
      int old_id = pt::find(m);
      CHECK(old_id < 0, "mremap moved the mapping from %p to %p: expected the old table freed, "
            "mtier_table_find(old) = %d (tables now %llu)", m, g, old_id, (unsigned long long)tables_now());
      pt::ok("the old table is gone after the move");
    }
  }
  pt::fill(g + 4 * MiB, 4 * MiB, 2);
  pt::churn("after growing");
  EXPECT_DATA(g, 4 * MiB, 1, "grown mapping: the old 4M, after eviction");
  EXPECT_DATA(g + 4 * MiB, 4 * MiB, 2, "grown mapping: the new 4M, after eviction");
  unmap(g, 8 * MiB, "the grown mapping");
  expect_tables(t0, "after unmapping the grown mapping");

  // Shrink a managed 8M mapping to 2M.
  char* s = map_anon(8 * MiB, "anon 8M");
  int sid = EXPECT_MANAGED(s, 8 * MiB, "anon 8M");
  pt::fill(s, 8 * MiB, 3);
  r = mremap(s, 8 * MiB, 2 * MiB, 0);
  CHECK(r == s, "mremap(8M -> 2M): expected %p, found %p (errno %d)", s, r, errno);
  EXPECT_DATA(s, 2 * MiB, 3, "shrunk mapping: the head 2M");
  for (size_t off : {2 * MiB, 4 * MiB, 6 * MiB, 8 * MiB - kPage}) {
    std::string what = "shrunk mapping: the cut tail at +" + std::to_string(off / KiB) + "K";
    EXPECT_SEGV(s + off, what.c_str());
  }
  if (pt::managing()) {
    int id = pt::find(s);
    CHECK(id == sid, "shrunk mapping: expected still table %d, found %d", sid, id);
  }
  pt::churn("after shrinking");
  EXPECT_DATA(s, 2 * MiB, 3, "shrunk mapping: the head 2M, after eviction");

  // Grow it in place again (2M -> 3M, no MAYMOVE).
  size_t len = grow_in_place(s, 2 * MiB, 3 * MiB, 3, "shrunk mapping");
  pt::fill(s, len, 4);
  pt::churn("after the in-place grow");
  EXPECT_DATA(s, len, 4, "shrunk-and-grown mapping rewritten, after eviction");
  unmap(s, len, "the shrunk-and-grown mapping");
  if (pt::managing()) CHECK(pt::find(s) < 0, "after munmap: expected no table at %p, found %d", s, pt::find(s));

  // Grow a fresh managed 2M mapping in place (no MAYMOVE).
  char* f = map_anon(2 * MiB, "anon 2M");
  EXPECT_MANAGED(f, 2 * MiB, "anon 2M");
  pt::fill(f, 2 * MiB, 5);
  pt::churn("before growing a fresh mapping in place");
  len = grow_in_place(f, 2 * MiB, 3 * MiB, 5, "fresh 2M mapping");
  pt::fill(f, len, 6);
  pt::churn("after growing a fresh mapping in place");
  EXPECT_DATA(f, len, 6, "fresh mapping rewritten, after eviction");
  unmap(f, len, "the fresh mapping");
  expect_tables(t0, "after the mremap tests");

  // A mapping grown with MAYMOVE from a tiny size (extra).
  char* t = map_anon(64 * KiB, "anon 64K");
  pt::fill(t, 64 * KiB, 7);
  r = mremap(t, 64 * KiB, 4 * MiB, MREMAP_MAYMOVE);
  CHECK(r != MAP_FAILED, "mremap(64K -> 4M, MAYMOVE): errno %d", errno);
  EXPECT_DATA(r, 64 * KiB, 7, "64K grown to 4M: the 64K");
  EXPECT_ZERO(static_cast<char*>(r) + 64 * KiB, 4 * MiB - 64 * KiB, "64K grown to 4M: the rest");
  unmap(r, 4 * MiB, "64K grown to 4M");
}

// MAP_POPULATE: the pages are in memory when mmap returns (the kernel's
// count, mincore), as many as the DRAM budget holds under mtier; the map
// reads zeros and keeps what is written.
void test_populate() {
  const size_t len = 8 * MiB;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                 -1, 0);
  CHECK(m != MAP_FAILED, "mmap(8M, MAP_POPULATE): errno %d", errno);
  char* p = static_cast<char*>(m);
  std::vector<unsigned char> vec(len / kPage);
  CHECK(mincore(p, len, vec.data()) == 0, "mincore: errno %d", errno);
  size_t in = 0;
  for (unsigned char v : vec) in += v & 1;
  size_t want = len / kPage;
  if (pt::managing()) {
    EXPECT_MANAGED(p, len, "mmap(8M, MAP_POPULATE)");
    size_t budget = pt::budget() / kPage;
    want = budget < want ? budget : want;
    // The fault handler places the pages within the budget, a walk's
    // window running ahead of the populate: the evictor, making room for
    // them from its high watermark, may have taken a batch back below its
    // low one by the time mmap returns (768 of 1024 seen in CI). Without
    // MAP_POPULATE none would be in memory.
    CHECK(in >= want / 2 && in <= want,
          "mmap(8M, MAP_POPULATE) under a %zu-page budget: expected between %zu and %zu pages "
          "in memory when it returned, found %zu", budget, want / 2, want, in);
  } else {
    CHECK(in == want, "mmap(8M, MAP_POPULATE): expected all %zu pages in memory, found %zu",
          want, in);
  }
  pt::ok("mmap(8M, MAP_POPULATE): %zu of %zu pages in memory when it returned", in, len / kPage);
  EXPECT_ZERO(p, len, "mmap(8M, MAP_POPULATE)");
  pt::fill(p, len, 11);
  EXPECT_DATA(p, len, 11, "mmap(8M, MAP_POPULATE) written");
  unmap(p, len, "mmap(8M, MAP_POPULATE)");
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::install_probe();  // before any managed allocation: the library must chain
  pt::start("preload_mmap");
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "kinds")
    test_kinds();
  else if (mode == "munmap")
    test_munmap();
  else if (mode == "madvise")
    test_madvise();
  else if (mode == "mremap")
    test_mremap();
  else if (mode == "populate")
    test_populate();
  else {
    fprintf(stderr, "usage: preload_mmap kinds|munmap|madvise|mremap|populate\n");
    return 2;
  }
  printf("PASS: preload_mmap %s\n", mode.c_str());
  return 0;
}
