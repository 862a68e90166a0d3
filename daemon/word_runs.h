// SPDX-License-Identifier: Apache-2.0
// How the daemon reads its clients' page words without allocating them.
// The words lie in the client's segment, a shmem memfd the daemon maps
// shared, and a read fault on a page of it that the client never wrote
// makes the kernel allocate that page (zeroed) in the memfd: read whole,
// the words of a mostly untouched table would cost 8 bytes a table page -
// 512 MiB for a 2^26-page table - and the first read of them seconds of
// faults. A page the memfd does not hold has only zero words (ABSENT,
// never written), so those are taken as zeros without being read. (A page
// of words the kernel swapped out under memory pressure is not held either:
// its table pages then show as untouched in the daemon's view until the
// client touches that page of words again - a wrong view for a while,
// never wrong data: the daemon only reads the words.)
#pragma once
#include <atomic>
#include <cstdint>

#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier::daemon {

// Calls fn(a, b, held) for consecutive runs [a, b) covering [lo, hi) of
// `words`: held, the words of [a, b) lie in pages the segment holds and
// must be read; not held, they are all 0 and need not be. A failed mincore
// counts as held (the words are read, as before). Allocates nothing.
template <class F>
void for_each_word_run(const std::atomic<uint64_t>* words, uint64_t lo, uint64_t hi, F fn) {
  constexpr size_t kChunk = 256;  // pages asked of mincore per call
  unsigned char held[kChunk];
  uint64_t run = lo;
  bool run_held = true;
  for (uint64_t p = lo; p < hi;) {
    auto addr = reinterpret_cast<uintptr_t>(words + p);
    uintptr_t page = addr & ~static_cast<uintptr_t>(kPageSize - 1);
    // Words from p to the end of the kChunk pages starting at p's page.
    uint64_t span = (page + kChunk * kPageSize - addr) / sizeof(uint64_t);
    uint64_t end = hi - p < span ? hi : p + span;
    size_t pages = (reinterpret_cast<uintptr_t>(words + end) - 1 - page) / kPageSize + 1;
    bool ok = sys::pages_in_memory(reinterpret_cast<const void*>(page), pages * kPageSize, held) == 0;
    for (size_t i = 0; i < pages && p < end; i++) {
      uint64_t page_end = p + (page + (i + 1) * kPageSize - reinterpret_cast<uintptr_t>(words + p)) /
                                  sizeof(uint64_t);
      if (page_end > end) page_end = end;
      bool h = !ok || (held[i] & 1);
      if (h != run_held && p > run) {
        fn(run, p, run_held);
        run = p;
      }
      run_held = h;
      p = page_end;
    }
  }
  if (hi > run) fn(run, hi, run_held);
}

}  // namespace mtier::daemon
