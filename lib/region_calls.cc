// SPDX-License-Identifier: Apache-2.0
// munmap, mremap and madvise on managed memory, as the kernel would do them
// on private anonymous memory: an unmapped part faults (SIGSEGV: it is made
// PROT_NONE and its pages dropped), a discarded part reads back as zeros, a
// moved mapping keeps its bytes. Nothing here throws (boundary.h): what
// needs memory and finds none fails the call with ENOMEM (munmap, mremap)
// or EAGAIN (madvise), changing nothing.
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "boundary.h"
#include "interposer.h"
#include "interposer_state.h"
#include "next_alloc.h"
#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier::lib {
namespace {


uint64_t page_up(uint64_t v) { return (v + kPageSize - 1) & ~(kPageSize - 1); }

int fail(int err) {
  errno = err;
  return -1;
}

// Drops [lo, lo+len) of a table's pages (they read back as zeros); false
// (logged) if the engine threw. Under the lock.
bool discard(char* lo, uint64_t len) {
  return contained("munmap/madvise of a table", "pages may keep their data", [&] {
    (void)state().engine->discard(lo, len);
  });
}

// Unmaps [lo, hi) of m (page-aligned, inside m): frees the table when no
// page of it is left. Under the lock. 0, or -ENOMEM when the record of an
// unmapped part could not grow (then nothing changed).
int unmap_part(Managed* m, char* lo, char* hi) {
  State& st = state();
  if (lo == m->base && hi == m->end()) return release_locked(m), 0;
  if (!m->add_unmapped(static_cast<uint64_t>(lo - m->base) / kPageSize,
                       static_cast<uint64_t>(hi - m->base) / kPageSize))
    return -ENOMEM;
  if (!st.child) {
    (void)discard(lo, static_cast<uint64_t>(hi - lo));
    (void)sys::protect(lo, static_cast<size_t>(hi - lo), false);
  }
  if (m->unmapped_pages() == m->pages()) release_locked(m);
  return 0;
}

// Calls f(record, lo, hi) for each record's overlap with [lo, hi) (f may
// free the record) and returns the first negative result, or 0. Builds no
// list: munmap must work when memory has run out.
template <class F>
int for_each_overlap(char* lo, char* hi, F f) {
  State& st = state();
  int rc = 0;
  for (char* at = lo; at < hi;) {
    Managed* m = st.map.first_overlapping(at, hi);
    if (!m) break;
    char* end = m->end();
    int r = f(m, at > m->base ? at : m->base, hi < end ? hi : end);
    if (r < 0 && rc == 0) rc = r;
    at = end;
  }
  return rc;
}

// Applies the libc call `call` to the parts of [addr, addr+len) outside the region.
template <class F>
int outside_parts(char* addr, size_t len, F call) {
  char* lo = reinterpret_cast<char*>(g_region_lo.load());
  char* hi = reinterpret_cast<char*>(g_region_hi.load());
  char* end = addr + len;
  int rc = 0;
  if (addr < lo) rc |= call(addr, static_cast<size_t>((end < lo ? end : lo) - addr));
  if (end > hi) rc |= call(addr > hi ? addr : hi, static_cast<size_t>(end - (addr > hi ? addr : hi)));
  return rc;
}

char* clip_lo(char* a) {
  char* lo = reinterpret_cast<char*>(g_region_lo.load());
  return a < lo ? lo : a;
}
char* clip_hi(char* a) {
  char* hi = reinterpret_cast<char*>(g_region_hi.load());
  return a > hi ? hi : a;
}

// Moves the mapping at `old` to new memory of new_size: a managed
// allocation if selected, else plain anonymous memory (at new_addr when
// fixed). Copies the bytes both have, then unmaps the old part.
void* move_mapping(char* old, size_t old_size, size_t new_size, void* fixed) {
  void* q = fixed ? next()->mmap(fixed, new_size, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
                  : mmap(nullptr, new_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);  // the interposed mmap
  if (q == MAP_FAILED) return MAP_FAILED;
  memcpy(q, old, old_size < new_size ? old_size : new_size);
  munmap(old, old_size);  // the interposed munmap: frees the table when all of it goes
  return q;
}

}  // namespace

int region_munmap(void* addr, size_t len) noexcept {
  auto a = static_cast<char*>(addr);
  if (reinterpret_cast<uintptr_t>(a) % kPageSize || len == 0) return fail(EINVAL);
  len = page_up(len);
  int rc = outside_parts(a, len, [](char* p, size_t n) { return next()->munmap(p, n); });
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  // A part a table's record could not note (out of memory) stays mapped:
  // the call fails with ENOMEM, as the kernel's munmap may.
  int err = for_each_overlap(clip_lo(a), clip_hi(a + len),
                             [](Managed* m, char* lo, char* hi) { return unmap_part(m, lo, hi); });
  if (err < 0) return fail(-err);
  return rc ? -1 : 0;
}

int region_madvise(void* addr, size_t len, int advice) noexcept {
  auto a = static_cast<char*>(addr);
  if (reinterpret_cast<uintptr_t>(a) % kPageSize) return fail(EINVAL);
  len = page_up(len);
  int rc = outside_parts(a, len, [advice](char* p, size_t n) { return next()->madvise(p, n, advice); });
  if (advice != MADV_DONTNEED && advice != MADV_FREE && advice != MADV_REMOVE)
    return rc ? -1 : 0;  // hints: nothing to do for memory the runtime places itself
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  if (st.child) return fail(ENOMEM);  // not mapped in a forked child
  int err = for_each_overlap(clip_lo(a), clip_hi(a + len), [](Managed*, char* lo, char* hi) {
    return discard(lo, static_cast<uint64_t>(hi - lo)) ? 0 : -EAGAIN;
  });
  if (err < 0) return fail(-err);
  return rc ? -1 : 0;
}

namespace {

// The part of mremap that needs no move: shrink, or grow back into pages a
// shrink took. Sets *must_move when the mapping must move instead (under
// the lock; returns nullptr then), or returns MAP_FAILED with errno.
void* resize_in_place(char* o, size_t old_size, size_t new_size, int flags, bool* must_move) {
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  Managed* m = st.map.find(o);
  if (!m || st.child || o + old_size > m->end()) {
    errno = EFAULT;
    return MAP_FAILED;
  }
  if (flags & MREMAP_FIXED) {
    *must_move = true;
    return nullptr;
  }
  if (new_size <= old_size) {
    if (new_size < old_size && unmap_part(m, o + new_size, o + old_size) < 0) {
      errno = ENOMEM;
      return MAP_FAILED;
    }
    return o;
  }
  if (o + new_size <= m->end()) {  // grow into pages unmapped before: they read as zeros
    uint64_t first = static_cast<uint64_t>(o + old_size - m->base) / kPageSize;
    if (!m->remove_unmapped(first, first + (new_size - old_size) / kPageSize)) {
      errno = ENOMEM;
      return MAP_FAILED;
    }
    (void)sys::protect(o + old_size, new_size - old_size, true);
    return o;
  }
  if (!(flags & MREMAP_MAYMOVE)) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  *must_move = true;
  return nullptr;
}

}  // namespace

void* region_mremap(void* old, size_t old_size, size_t new_size, int flags,
                    void* new_addr) noexcept {
  auto o = static_cast<char*>(old);
  if (reinterpret_cast<uintptr_t>(o) % kPageSize || new_size == 0 || (flags & MREMAP_DONTUNMAP)) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  old_size = page_up(old_size);
  new_size = page_up(new_size);
  bool must_move = false;
  void* r = resize_in_place(o, old_size, new_size, flags, &must_move);
  if (!must_move) return r;
  // Outside the runtime scope: the new memory and the unmap of the old go
  // through the interposer like the program's own calls.
  return move_mapping(o, old_size, new_size, (flags & MREMAP_FIXED) ? new_addr : nullptr);
}

}  // namespace mtier::lib
