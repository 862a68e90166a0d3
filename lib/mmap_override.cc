// SPDX-License-Identifier: Apache-2.0
// Anonymous memory maps, interposed: a private, anonymous, read-write map of
// a managed size with no address asked becomes a table; munmap, mremap and
// madvise of managed memory act on the table (region_calls.cc). Every other
// call, and every part of a call outside the region, goes to libc.
#include <sys/mman.h>

#include <cerrno>
#include <cstdarg>

#include "allocators.h"
#include "interposer.h"
#include "next_alloc.h"
#include "sys/page_size.h"

#define MTIER_OVERRIDE extern "C" __attribute__((visibility("default")))

using mtier::lib::next;

namespace {

bool manageable(void* addr, int prot, int flags, int fd) {
  constexpr int kRefused = MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_HUGETLB | MAP_GROWSDOWN | MAP_STACK;
  return !addr && fd == -1 && prot == (PROT_READ | PROT_WRITE) && (flags & MAP_ANONYMOUS) &&
         (flags & MAP_TYPE) == MAP_PRIVATE && !(flags & kRefused);
}

// `caller`: the code that called mmap. An allocator's own mappings (its
// arenas) are never tables (lib/allocators.h).
void* map_for(const void* caller, void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (mtier::lib::maybe_candidate(len) && manageable(addr, prot, flags, fd) &&
      !mtier::lib::in_allocator(caller))
    if (void* p = mtier::lib::managed_alloc(len, mtier::kPageSize)) {
      if (flags & MAP_POPULATE) mtier::lib::populate(p, len);
      return p;
    }
  return next()->mmap(addr, len, prot, flags, fd, off);
}

}  // namespace

MTIER_OVERRIDE void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return map_for(__builtin_return_address(0), addr, len, prot, flags, fd, off);
}

MTIER_OVERRIDE void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return map_for(__builtin_return_address(0), addr, len, prot, flags, fd, off);
}

MTIER_OVERRIDE int munmap(void* addr, size_t len) {
  if (!mtier::in_runtime() && mtier::lib::overlaps_region(addr, len))
    return mtier::lib::region_munmap(addr, len);
  // A forked child unmapping part of its copy of the parent's tables.
  if (mtier::lib::overlaps_inherited(addr, len)) return mtier::lib::inherited_munmap(addr, len);
  return next()->munmap(addr, len);
}

MTIER_OVERRIDE void* mremap(void* old, size_t old_size, size_t new_size, int flags, ...) {
  void* new_addr = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_addr = va_arg(ap, void*);
    va_end(ap);
  }
  if (!mtier::in_runtime() && mtier::lib::in_region(old))
    return mtier::lib::region_mremap(old, old_size, new_size, flags, new_addr);
  if (mtier::lib::in_inherited(old))
    return mtier::lib::inherited_mremap(old, old_size, new_size, flags, new_addr);
  return next()->mremap(old, old_size, new_size, flags, new_addr);
}

MTIER_OVERRIDE int madvise(void* addr, size_t len, int advice) {
  if (!mtier::in_runtime() && mtier::lib::overlaps_region(addr, len))
    return mtier::lib::region_madvise(addr, len, advice);
  return next()->madvise(addr, len, advice);
}
