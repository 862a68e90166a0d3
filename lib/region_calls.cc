// munmap, mremap and madvise on managed memory, as the kernel would do them
// on private anonymous memory: an unmapped part faults (SIGSEGV: it is made
// PROT_NONE and its pages dropped), a discarded part reads back as zeros, a
// moved mapping keeps its bytes.
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "interposer.h"
#include "interposer_state.h"
#include "next_alloc.h"
#include "sys/vm.h"

namespace mtier::lib {
namespace {

constexpr uint64_t kPage = 4096;

uint64_t page_up(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

int fail(int err) {
  errno = err;
  return -1;
}

// Unmaps [lo, hi) of m (page-aligned, inside m): frees the table when no
// page of it is left. Under the lock.
void unmap_part(Managed* m, char* lo, char* hi) {
  State& st = state();
  if (lo == m->base && hi == m->end()) return release_locked(m);
  if (!st.child) {
    (void)st.engine->discard(lo, static_cast<uint64_t>(hi - lo));
    (void)sys::protect(lo, static_cast<size_t>(hi - lo), false);
  }
  m->add_unmapped(static_cast<uint64_t>(lo - m->base) / kPage,
                  static_cast<uint64_t>(hi - m->base) / kPage);
  if (m->unmapped_pages() == m->pages()) release_locked(m);
}

// Calls f(record, lo, hi) for each record's overlap with [lo, hi).
template <class F>
void for_each_overlap(char* lo, char* hi, F f) {
  State& st = state();
  for (char* base : st.map.overlapping(lo, hi)) {
    Managed* m = st.map.find(base);
    if (!m) continue;
    f(m, lo > m->base ? lo : m->base, hi < m->end() ? hi : m->end());
  }
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

int region_munmap(void* addr, size_t len) {
  auto a = static_cast<char*>(addr);
  if (reinterpret_cast<uintptr_t>(a) % kPage || len == 0) return fail(EINVAL);
  len = page_up(len);
  int rc = outside_parts(a, len, [](char* p, size_t n) { return next()->munmap(p, n); });
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  for_each_overlap(clip_lo(a), clip_hi(a + len),
                   [](Managed* m, char* lo, char* hi) { unmap_part(m, lo, hi); });
  return rc ? -1 : 0;
}

int region_madvise(void* addr, size_t len, int advice) {
  auto a = static_cast<char*>(addr);
  if (reinterpret_cast<uintptr_t>(a) % kPage) return fail(EINVAL);
  len = page_up(len);
  int rc = outside_parts(a, len, [advice](char* p, size_t n) { return next()->madvise(p, n, advice); });
  if (advice != MADV_DONTNEED && advice != MADV_FREE && advice != MADV_REMOVE)
    return rc ? -1 : 0;  // hints: nothing to do for memory the runtime places itself
  RuntimeScope runtime;
  State& st = state();
  std::lock_guard<std::mutex> lk(st.mu);
  if (st.child) return fail(ENOMEM);  // not mapped in a forked child
  for_each_overlap(clip_lo(a), clip_hi(a + len), [&](Managed* m, char* lo, char* hi) {
    (void)m;
    (void)st.engine->discard(lo, static_cast<uint64_t>(hi - lo));
  });
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
    if (new_size < old_size) unmap_part(m, o + new_size, o + old_size);
    return o;
  }
  if (o + new_size <= m->end()) {  // grow into pages unmapped before: they read as zeros
    uint64_t first = static_cast<uint64_t>(o + old_size - m->base) / kPage;
    m->remove_unmapped(first, first + (new_size - old_size) / kPage);
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

void* region_mremap(void* old, size_t old_size, size_t new_size, int flags, void* new_addr) {
  auto o = static_cast<char*>(old);
  if (reinterpret_cast<uintptr_t>(o) % kPage || new_size == 0 || (flags & MREMAP_DONTUNMAP)) {
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
