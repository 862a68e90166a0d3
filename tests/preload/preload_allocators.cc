// SPDX-License-Identifier: Apache-2.0
// A C++ program for allocators.test: big buffers (tables under mtier) and
// many small and medium blocks (the preloaded allocator's own: its arenas
// and extents), written, checked and freed in turns, from several threads.
// Prints one line: the checksum of everything read back. Runs the same with
// and without mtier, with jemalloc or tcmalloc preloaded or not.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 33);
}

// Fills n bytes with words of `seed` and returns the sum of one word a page.
uint64_t fill_and_sum(uint64_t* p, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n / 8; i++) p[i] = mix(seed + i);
  uint64_t s = 0;
  for (size_t i = 0; i < n / 8; i += 512) s += p[i];
  return s;
}

uint64_t worker(int id) {
  uint64_t sum = 0;
  std::vector<uint64_t*> small;
  for (int round = 0; round < 6; round++) {
    // A table-sized buffer: 80-96 MiB.
    size_t big = (80ull + 4 * ((id + round) % 5)) << 20;
    auto* b = static_cast<uint64_t*>(malloc(big));
    if (!b) return 0;
    sum += fill_and_sum(b, big, id * 1000 + round);
    // Small and medium blocks between: the allocator grows its arenas.
    for (int k = 0; k < 2000; k++) {
      size_t n = 64 + (mix(k + round * 7919 + id) % (1 << 18));
      auto* s = static_cast<uint64_t*>(malloc(n));
      if (!s) return 0;
      s[0] = mix(k);
      small.push_back(s);
    }
    for (size_t k = 0; k < small.size(); k += 2) {
      sum += small[k][0];
      free(small[k]);
      small[k] = nullptr;
    }
    std::vector<uint64_t*> kept;
    for (auto* s : small)
      if (s) kept.push_back(s);
    small.swap(kept);
    // Reread the big buffer's words: what was written is there.
    for (size_t i = 0; i < big / 8; i += 4096) sum += b[i] == mix(id * 1000 + round + i);
    auto* r = static_cast<uint64_t*>(realloc(b, big + (8 << 20)));
    if (!r) return 0;
    for (size_t i = 0; i < big / 8; i += 4096) sum += r[i] == mix(id * 1000 + round + i);
    free(r);
  }
  for (auto* s : small) {
    sum += s[0];
    free(s);
  }
  return sum;
}

}  // namespace

int main() {
  uint64_t sums[3] = {};
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; t++) ts.emplace_back([t, &sums] { sums[t] = worker(t); });
  for (auto& t : ts) t.join();
  for (uint64_t s : sums)
    if (s == 0) {
      puts("FAIL: an allocation failed");
      return 1;
    }
  printf("checksum %llx %llx %llx\n", (unsigned long long)sums[0], (unsigned long long)sums[1],
         (unsigned long long)sums[2]);
  return 0;
}
