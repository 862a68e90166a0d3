// SPDX-License-Identifier: Apache-2.0
// Threads and early allocation under LD_PRELOAD=libmtier.so (run by
// threads.test):
//
//   preload_threads race   4 threads, released together by a barrier right
//                          at program start, make the process's very first
//                          managed allocations (malloc, calloc, mmap,
//                          posix_memalign: one each), racing the engine's
//                          start; each then writes and verifies its own data
//                          over rounds that together exceed the budget
//   MTIER_TEST_CTOR=1 preload_threads ctor
//                          an allocation in a constructor, before main, is
//                          managed and keeps its data
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

namespace {

using pt::MiB;
using pt::kPage;

constexpr int kThreads = 4;
constexpr size_t kFirst = 3 * MiB;

pthread_barrier_t g_barrier;
void* g_first[kThreads];
int g_first_id[kThreads];
std::atomic<int> g_done{0};

// The constructor's allocation (MTIER_TEST_CTOR=1).
char* g_ctor_ptr = nullptr;
constexpr size_t kCtorSize = 5 * MiB;

__attribute__((constructor)) void early_alloc() {
  const char* e = getenv("MTIER_TEST_CTOR");
  if (!e || strcmp(e, "1") != 0) return;
  g_ctor_ptr = static_cast<char*>(malloc(kCtorSize));
  if (g_ctor_ptr) pt::fill(g_ctor_ptr, kCtorSize, 77);
}

void* first_alloc(int i) {
  switch (i) {
    case 0:
      return malloc(kFirst);
    case 1:
      return calloc(1, kFirst);
    case 2: {
      void* p = mmap(nullptr, kFirst, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      return p == MAP_FAILED ? nullptr : p;
    }
    default: {
      void* p = nullptr;
      return posix_memalign(&p, 4096, kFirst) == 0 ? p : nullptr;
    }
  }
}
const char* first_name(int i) {
  static const char* names[] = {"malloc", "calloc", "mmap", "posix_memalign"};
  return names[i];
}

void worker(int i) {
  pthread_barrier_wait(&g_barrier);
  char* p = static_cast<char*>(first_alloc(i));  // the process's first managed allocation, racing
  CHECK(p, "thread %d: first allocation (%s 3M): NULL (errno %d)", i, first_name(i), errno);
  g_first[i] = p;
  EXPECT_ZERO(p, kFirst, (std::string("thread ") + std::to_string(i) + " first " + first_name(i)).c_str());
  pt::fill(p, kFirst, 1000 + i);
  EXPECT_DATA(p, kFirst, 1000 + i, (std::string("thread ") + std::to_string(i) + " first block").c_str());
  // Rounds of alloc / write / verify / free: 4 threads x 2 x 4M at a time,
  // well over a 4M budget, so eviction and fetch run under all of them.
  for (int r = 0; r < 6; r++) {
    size_t n = (2 + (r + i) % 3) * MiB;
    char* a = static_cast<char*>(malloc(n));
    CHECK(a, "thread %d round %d: malloc(%zu): NULL", i, r, n);
    char* s = static_cast<char*>(malloc(100 + r));  // small ones in between
    CHECK(s, "thread %d round %d: malloc(small): NULL", i, r);
    pt::fill(a, n, i * 100 + r);
    pt::fill(s, 100 + r, i * 100 + r + 50);
    for (int pass = 0; pass < 2; pass++) {
      size_t at = pt::mismatch(a, n, i * 100 + r);
      CHECK(at == SIZE_MAX, "thread %d round %d pass %d: %zu bytes at %p: data lost at byte %zu (page %zu)",
            i, r, pass, n, a, at, at / kPage);
    }
    CHECK(pt::mismatch(s, 100 + r, i * 100 + r + 50) == SIZE_MAX, "thread %d round %d: small block data lost",
          i, r);
    size_t at = pt::mismatch(p, kFirst, 1000 + i);
    CHECK(at == SIZE_MAX, "thread %d round %d: first block data lost at byte %zu", i, r, at);
    free(s);
    free(a);
  }
  g_done++;
}

void test_race() {
  CHECK(pthread_barrier_init(&g_barrier, nullptr, kThreads) == 0, "pthread_barrier_init failed");
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; i++) ts.emplace_back(worker, i);
  for (auto& t : ts) t.join();
  CHECK(g_done == kThreads, "expected %d threads done, found %d", kThreads, g_done.load());
  pt::ok("%d threads raced their first managed allocations and kept their data", kThreads);
  // Each first block: managed, distinct tables, data intact after eviction.
  for (int i = 0; i < kThreads; i++)
    g_first_id[i] = EXPECT_MANAGED(g_first[i], kFirst, (std::string("thread first ") + first_name(i)).c_str());
  if (pt::managing())
    for (int i = 0; i < kThreads; i++)
      for (int j = i + 1; j < kThreads; j++)
        CHECK(g_first_id[i] != g_first_id[j], "threads %d and %d got the same table %d", i, j, g_first_id[i]);
  pt::churn("after the threads");
  for (int i = 0; i < kThreads; i++)
    EXPECT_DATA(g_first[i], kFirst, 1000 + i, (std::string("thread first ") + first_name(i) + " after eviction").c_str());
  for (int i = 0; i < kThreads; i++) {
    if (i == 2)
      CHECK(munmap(g_first[i], kFirst) == 0, "munmap: errno %d", errno);
    else
      free(g_first[i]);
  }
  struct mtier_stats st;
  if (pt::managing() && pt::engine_stats(&st))
    CHECK(st.tables == 0, "after freeing everything: expected 0 tables, found %llu", (unsigned long long)st.tables);
  pt::ok("all freed");
  pthread_barrier_destroy(&g_barrier);
}

void test_ctor() {
  CHECK(g_ctor_ptr, "the constructor's malloc(5M) returned NULL (or MTIER_TEST_CTOR=1 is not set)");
  int id = EXPECT_MANAGED(g_ctor_ptr, kCtorSize, "malloc(5M) in a constructor, before main");
  EXPECT_DATA(g_ctor_ptr, kCtorSize, 77, "constructor's block, in main");
  pt::churn("the constructor's block");
  pt::expect_evicted(id, "constructor's block");
  EXPECT_DATA(g_ctor_ptr, kCtorSize, 77, "constructor's block after eviction");
  free(g_ctor_ptr);
}

}  // namespace

int main(int argc, char** argv) {
  // No watchdog/printing before the race: the threads' allocations must be
  // the process's first managed ones (stdio buffers are small).
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "race") {
    alarm(120);  // default action: killed by SIGALRM if it hangs
    test_race();
    pt::start("preload_threads");  // after the fact: says which mode ran
  } else if (mode == "ctor") {
    pt::watchdog(120);
    pt::start("preload_threads");
    test_ctor();
  } else {
    fprintf(stderr, "usage: preload_threads race | MTIER_TEST_CTOR=1 preload_threads ctor\n");
    return 2;
  }
  printf("PASS: preload_threads %s\n", mode.c_str());
  return 0;
}
