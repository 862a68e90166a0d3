// SPDX-License-Identifier: Apache-2.0
// munmap and mremap in a forked child over its copy of the parent's region.
// The copy is one private mapping of the region's memfd registered with
// the child's userfaultfd (lib/fork_signals.cc): the kernel's own munmap
// would leave a hole where the child's plain memory could land among the
// parent's tables, and its mremap would move a part out of the
// registration (a moved page the child never had would then read as
// zeros). So an unmapped part becomes PROT_NONE, as reserved as before,
// and a growing mapping moves to plain memory with its bytes copied.
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "interposer.h"
#include "interposer_state.h"
#include "next_alloc.h"
#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier::lib {
namespace {

uint64_t page_up(uint64_t v) { return (v + kPageSize - 1) & ~(kPageSize - 1); }

// Drops [lo, hi) of the child's copy (inside the inherited bounds) and the
// records of the tables wholly inside it. Under the lock.
void drop_locked(char* lo, char* hi) {
  State& st = state();
  for (char* at = lo; at < hi;) {
    Managed* m = st.map.first_overlapping(at, hi);
    if (!m) break;
    at = m->end();
    if (m->base >= lo && m->end() <= hi) st.map.erase(m);
  }
  (void)sys::map_anonymous_at(lo, static_cast<size_t>(hi - lo), false);
}

}  // namespace

int inherited_munmap(void* addr, size_t len) noexcept {
  auto a = static_cast<char*>(addr);
  if (reinterpret_cast<uintptr_t>(a) % kPageSize || len == 0) {
    errno = EINVAL;
    return -1;
  }
  len = page_up(len);
  auto lo = reinterpret_cast<char*>(g_inherited_lo.load());
  auto hi = reinterpret_cast<char*>(g_inherited_hi.load());
  char* end = a + len;
  int rc = 0;
  if (a < lo) rc |= next()->munmap(a, static_cast<size_t>((end < lo ? end : lo) - a));
  if (end > hi) rc |= next()->munmap(a > hi ? a : hi, static_cast<size_t>(end - (a > hi ? a : hi)));
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  drop_locked(a > lo ? a : lo, end < hi ? end : hi);
  return rc ? -1 : 0;
}

void* inherited_mremap(void* old, size_t old_size, size_t new_size, int flags,
                       void* new_addr) noexcept {
  auto o = static_cast<char*>(old);
  if (reinterpret_cast<uintptr_t>(o) % kPageSize || new_size == 0 || (flags & MREMAP_DONTUNMAP)) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  old_size = page_up(old_size);
  new_size = page_up(new_size);
  if (new_size <= old_size && !(flags & MREMAP_FIXED)) {
    if (new_size < old_size) (void)inherited_munmap(o + new_size, old_size - new_size);
    return o;
  }
  if (!(flags & MREMAP_MAYMOVE)) {
    errno = ENOMEM;  // the rest of the region follows: no room to grow in place
    return MAP_FAILED;
  }
  void* q = next()->mmap((flags & MREMAP_FIXED) ? new_addr : nullptr, new_size,
                         PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | ((flags & MREMAP_FIXED) ? MAP_FIXED : 0),
                         -1, 0);
  if (q == MAP_FAILED) return MAP_FAILED;
  memcpy(q, o, old_size < new_size ? old_size : new_size);
  (void)inherited_munmap(o, old_size);
  return q;
}

}  // namespace mtier::lib
