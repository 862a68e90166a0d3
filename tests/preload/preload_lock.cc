// SPDX-License-Identifier: Apache-2.0
// mlock and mlockall with tables (run by locks.test, with and without
// LD_PRELOAD=libmtier.so; under mtier with MTIER_DRAM_BYTES=16M).
//   preload_lock mlock     a locked part of a table stays in memory (the
//                          kernel's count, mincore) while 3 budgets' worth
//                          of other pages pass through, every byte intact;
//                          a lock past 3/4 of the budget fails with EAGAIN;
//                          after munlock the part can leave like any other
//   preload_lock all       mlockall(MCL_CURRENT | MCL_FUTURE) with tables:
//                          returns 0 without populating the region (VmLck
//                          and VmRSS stay small), tables made after it are
//                          still paged within the budget; munlockall
//   preload_lock future    mlockall(MCL_FUTURE) before the first table: the
//                          engine starts without populating its region
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace {

using pt::MiB;
using pt::kPage;

// VmLck / VmRSS of this process in bytes.
uint64_t status_bytes(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') sscanf(line + n + 1, "%llu", &kb);
  fclose(f);
  return kb * 1024;
}

void test_mlock() {
  const size_t len = 32 * MiB, part = 8 * MiB;
  char* t = static_cast<char*>(malloc(len));
  CHECK(t, "malloc(32M): NULL");
  EXPECT_MANAGED(t, len, "malloc(32M)");
  pt::fill(t, len, 3);
  // A page-aligned part (malloc's pointer need not be).
  char* lk = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(t) + 4 * MiB) & ~(kPage - 1));
  CHECK(mlock(lk, part) == 0, "mlock(8M of a table): errno %d (%s)", errno, strerror(errno));
  CHECK(pt::pages_in_memory(lk, part) == part / kPage, "just after mlock: %zu of %zu pages in memory",
        pt::pages_in_memory(lk, part), part / kPage);
  pt::churn_thrice("while 8M of a table is locked");
  CHECK(pt::pages_in_memory(lk, part) == part / kPage,
        "after 3 budgets' worth of other pages: %zu of %zu locked pages in memory",
        pt::pages_in_memory(lk, part), part / kPage);
  EXPECT_DATA(t, len, 3, "the table with a locked part, after the churn");
  pt::ok("an mlock()ed part of a table stayed in memory through the churn");
  if (pt::managing()) {
    errno = 0;
    int rc = mlock(lk + 12 * MiB, 8 * MiB);  // 16M locked in all: past 3/4 of 16M
    CHECK(rc == -1 && errno == EAGAIN,
          "mlock past 3/4 of the budget: expected -1 EAGAIN, found %d errno %d", rc, errno);
    pt::ok("a lock past 3/4 of the budget fails with EAGAIN");
  }
  CHECK(munlock(lk, part) == 0, "munlock: errno %d", errno);
  pt::churn_thrice("after munlock");
  if (pt::managing())
    CHECK(pt::pages_in_memory(lk, part) < part / kPage, "after munlock and the churn: all %zu pages still "
          "in memory", part / kPage);
  EXPECT_DATA(t, len, 3, "the table after munlock and the churn");
  free(t);
}

void test_all(bool before) {
  if (before) CHECK(mlockall(MCL_FUTURE) == 0, "mlockall(MCL_FUTURE): errno %d", errno);
  char* a = static_cast<char*>(malloc(24 * MiB));
  CHECK(a, "malloc(24M): NULL");
  EXPECT_MANAGED(a, 24 * MiB, "malloc(24M)");
  pt::fill(a, 24 * MiB, 5);
  if (!before)
    CHECK(mlockall(MCL_CURRENT | MCL_FUTURE) == 0, "mlockall(MCL_CURRENT | MCL_FUTURE): errno %d",
          errno);
  uint64_t lck = status_bytes("VmLck"), rss = status_bytes("VmRSS");
  pt::ok("after mlockall: VmLck %llu MiB, VmRSS %llu MiB", (unsigned long long)(lck >> 20),
         (unsigned long long)(rss >> 20));
  CHECK(rss < 512 * MiB, "after mlockall: VmRSS %llu MiB (the region populated?)",
        (unsigned long long)(rss >> 20));
  char* b = static_cast<char*>(malloc(24 * MiB));
  CHECK(b, "malloc(24M) after mlockall: NULL");
  EXPECT_MANAGED(b, 24 * MiB, "malloc(24M) after mlockall");
  pt::fill(b, 24 * MiB, 6);
  pt::churn_thrice("after mlockall");
  EXPECT_DATA(a, 24 * MiB, 5, "a table from before mlockall");
  EXPECT_DATA(b, 24 * MiB, 6, "a table from after mlockall");
  struct mtier_stats st;
  if (pt::managing() && pt::engine_stats(&st))
    CHECK(st.resident_bytes <= st.budget_bytes, "resident %llu over the budget %llu",
          (unsigned long long)st.resident_bytes, (unsigned long long)st.budget_bytes);
  CHECK(munlockall() == 0, "munlockall: errno %d", errno);
  free(a);
  free(b);
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::start("preload_lock");
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "mlock")
    test_mlock();
  else if (mode == "all")
    test_all(false);
  else if (mode == "future")
    test_all(true);
  else {
    fprintf(stderr, "usage: preload_lock mlock|all|future\n");
    return 2;
  }
  printf("PASS: preload_lock %s\n", mode.c_str());
  return 0;
}
