// SPDX-License-Identifier: Apache-2.0
// A trainer stand-in for the daemon tests, on the C API: two tables, "hot"
// and "cold", of --mib MiB each, every 8-byte word written with a value
// derived from its address; then for --seconds it either hammers the first
// --hot-percent of "hot" (reads and read-modify-writes, so that the access
// sampler's MINOR faults land there) or, with --sweep, walks both tables
// end to end (every page wanted, so residency presses on the budget). Each
// update adds a known amount to a word, so at the end every word is checked
// against its expected value: data must survive every eviction, fetch and
// daemon order. With --prefetch, each round of the hot range first names it
// to the lookahead (mtier_prefetch_ranges, batch = the round, then
// mtier_prefetch_advance), as a trainer does for its next batch. Prints
// "pid N ready" when the tables are filled (the test
// waits for it) and "ok" at the end; any mismatch: exit 1 with the word.
// With --go-file PATH it starts its rounds only once PATH exists (a test
// that records it by pid creates PATH once the recording runs, so that the
// first round's read-back of the hot range is in the recording). With
// --stop-file PATH its rounds end early once PATH exists (a test that has
// seen what it wanted need not wait out --seconds on a loaded machine).
// With --exit-file PATH, after "ok" it prints "checked" and returns from
// main (its exit summary: MTIER_STATS=1) only once PATH exists: a test
// reads the daemon's view of its counters in between.
// Options come from MTIER_* variables (mtier.conf(5)).
#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mtier.h"

namespace {

uint64_t pattern(uint64_t table, uint64_t word) { return (table << 56) ^ (word * 0x9e3779b97f4a7c15ull); }

struct Table {
  uint64_t* words;
  size_t n;
  std::vector<uint32_t> adds;  // per page: updates made to its first word
};

int make(const char* name, size_t bytes, uint64_t tag, Table* t) {
  void* addr;
  int id = mtier_table_create(name, bytes, &addr);
  if (id < 0) {
    fprintf(stderr, "hot_range: mtier_table_create(%s): %s\n", name, strerror(-id));
    return -1;
  }
  t->words = static_cast<uint64_t*>(addr);
  t->n = bytes / 8;
  t->adds.assign(bytes / 4096, 0);
  for (size_t i = 0; i < t->n; i++) t->words[i] = pattern(tag, i);
  return 0;
}

// Touches pages [first, last) of t: reads the page's middle word, adds 1 to
// its first word.
uint64_t touch(Table& t, size_t first, size_t last) {
  uint64_t sum = 0;
  for (size_t p = first; p < last; p++) {
    sum += t.words[p * 512 + 256];
    t.words[p * 512] += 1;
    t.adds[p]++;
  }
  return sum;
}

int check(const Table& t, uint64_t tag, const char* name) {
  for (size_t i = 0; i < t.n; i++) {
    uint64_t want = pattern(tag, i) + (i % 512 == 0 ? t.adds[i / 512] : 0);
    if (t.words[i] != want) {
      fprintf(stderr, "hot_range: table %s word %zu: %#llx, expected %#llx\n", name, i,
              static_cast<unsigned long long>(t.words[i]), static_cast<unsigned long long>(want));
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 16;
  unsigned hot_percent = 25;
  double seconds = 5;
  bool sweep = false, prefetch = false;
  const char* go_file = nullptr;
  const char* stop_file = nullptr;
  const char* exit_file = nullptr;
  static const struct option longs[] = {{"mib", required_argument, nullptr, 'm'},
                                        {"hot-percent", required_argument, nullptr, 'p'},
                                        {"seconds", required_argument, nullptr, 's'},
                                        {"sweep", no_argument, nullptr, 'w'},
                                        {"prefetch", no_argument, nullptr, 'f'},
                                        {"go-file", required_argument, nullptr, 'g'},
                                        {"stop-file", required_argument, nullptr, 'S'},
                                        {"exit-file", required_argument, nullptr, 'E'},
                                        {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", longs, nullptr)) != -1;) {
    if (c == 'm') mib = strtoul(optarg, nullptr, 10);
    else if (c == 'p') hot_percent = static_cast<unsigned>(strtoul(optarg, nullptr, 10));
    else if (c == 's') seconds = strtod(optarg, nullptr);
    else if (c == 'w') sweep = true;
    else if (c == 'f') prefetch = true;
    else if (c == 'g') go_file = optarg;
    else if (c == 'S') stop_file = optarg;
    else if (c == 'E') exit_file = optarg;
    else return 2;
  }
  Table hot, cold;
  if (make("hot", mib << 20, 1, &hot) < 0 || make("cold", mib << 20, 2, &cold) < 0) return 1;
  printf("pid %d ready\n", getpid());
  fflush(stdout);
  for (int waited = 0; go_file && access(go_file, F_OK) != 0; waited++) {
    if (waited == 6000) {
      fprintf(stderr, "hot_range: %s did not appear in 60 s\n", go_file);
      return 1;
    }
    usleep(10000);
  }
  size_t pages = (mib << 20) / 4096, hot_pages = pages * hot_percent / 100;
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t sink = 0, rounds = 0;
  while (std::chrono::steady_clock::now() < end &&
         !(stop_file && access(stop_file, F_OK) == 0)) {
    if (sweep) {
      sink += touch(hot, 0, pages) + touch(cold, 0, pages);
    } else {
      if (prefetch) {
        struct mtier_range r = {hot.words, hot_pages * 4096};
        long rc = mtier_prefetch_ranges(&r, 1, rounds + 1, MTIER_PREFETCH_WRITE);
        if (rc < 0 || mtier_prefetch_advance(rounds + 1) < 0) {
          fprintf(stderr, "hot_range: prefetch: %s\n", strerror(rc < 0 ? -static_cast<int>(rc) : EINVAL));
          return 1;
        }
      }
      sink += touch(hot, 0, hot_pages);
      usleep(1000);  // a trainer's pace: the sampler's faults, not a busy loop
    }
    rounds++;
  }
  if (check(hot, 1, "hot") || check(cold, 2, "cold")) return 1;
  printf("ok rounds=%llu sink=%llu\n", static_cast<unsigned long long>(rounds),
         static_cast<unsigned long long>(sink & 1));
  if (exit_file) {
    printf("checked\n");
    fflush(stdout);
    while (access(exit_file, F_OK) != 0) usleep(10000);
  }
  return 0;
}
