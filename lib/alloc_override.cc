// SPDX-License-Identifier: Apache-2.0
// The malloc family, interposed (glibc supports replacing these: its own
// internal calls go through them too). Each sends a managed-size request to
// the interposer and everything else, and every pointer mtier did not hand
// out, to the next allocator untouched.
#include <malloc.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "interposer.h"
#include "next_alloc.h"
#include "sys/page_size.h"

#define MTIER_OVERRIDE extern "C" __attribute__((visibility("default")))

using mtier::lib::arena_alloc;
using mtier::lib::arena_owns;
using mtier::lib::in_inherited;
using mtier::lib::in_region;
using mtier::lib::managed_alloc;
using mtier::lib::maybe_candidate;
using mtier::lib::next;

namespace {

bool power_of_two(size_t a) { return a && !(a & (a - 1)); }

void* managed_if_candidate(size_t n, size_t align) {
  return maybe_candidate(n) ? managed_alloc(n, align) : nullptr;
}

}  // namespace

MTIER_OVERRIDE void* malloc(size_t n) {
  if (void* p = managed_if_candidate(n, 0)) return p;
  const mtier::lib::NextFns* f = next();
  return f ? f->malloc(n) : arena_alloc(n, 16);
}

MTIER_OVERRIDE void free(void* p) {
  if (!p || arena_owns(p)) return;
  if (in_region(p)) return mtier::lib::echo_free(mtier::lib::managed_free(p));
  if (in_inherited(p) && mtier::lib::inherited_record(p, true)) return;  // a forked child's copy
  if (const mtier::lib::NextFns* f = next()) f->free(p);
}

MTIER_OVERRIDE void* calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (void* p = managed_if_candidate(total, 0)) return p;  // a new table reads as zeros
  const mtier::lib::NextFns* f = next();
  return f ? f->calloc(n, size) : arena_alloc(total, 16);  // the arena is zeroed
}

MTIER_OVERRIDE void* realloc(void* p, size_t n) {
  if (!p) return malloc(n);
  if (in_region(p) || (in_inherited(p) && mtier::lib::inherited_record(p, false)))
    return mtier::lib::managed_realloc(p, n);
  if (arena_owns(p)) {
    void* q = malloc(n);
    if (q) memcpy(q, p, n < mtier::lib::arena_size(p) ? n : mtier::lib::arena_size(p));
    return q;
  }
  const mtier::lib::NextFns* f = next();
  // A buffer that grows into a table: twice its bytes of room to grow in
  // place (mtier::lib::managed_realloc).
  if (void* q = maybe_candidate(n) ? managed_alloc(n, 0, 2 * n) : nullptr) {
    size_t old = f->malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    f->free(p);
    return q;
  }
  return f->realloc(p, n);
}

MTIER_OVERRIDE void* reallocarray(void* p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, total);
}

MTIER_OVERRIDE int posix_memalign(void** out, size_t align, size_t n) {
  if (!power_of_two(align) || align % sizeof(void*)) return EINVAL;
  if (void* p = managed_if_candidate(n, align)) {
    *out = p;
    return 0;
  }
  return next()->posix_memalign(out, align, n);
}

MTIER_OVERRIDE void* aligned_alloc(size_t align, size_t n) {
  if (power_of_two(align))
    if (void* p = managed_if_candidate(n, align)) return p;
  return next()->aligned_alloc(align, n);
}

MTIER_OVERRIDE void* memalign(size_t align, size_t n) {
  if (power_of_two(align))
    if (void* p = managed_if_candidate(n, align)) return p;
  const mtier::lib::NextFns* f = next();
  return f ? f->memalign(align, n) : arena_alloc(n, align);
}

MTIER_OVERRIDE void* valloc(size_t n) {
  if (void* p = managed_if_candidate(n, mtier::kPageSize)) return p;
  return next()->valloc(n);
}

MTIER_OVERRIDE void* pvalloc(size_t n) {
  size_t rounded = (n + mtier::kPageSize - 1) & ~(mtier::kPageSize - 1);
  if (rounded < n) {
    errno = ENOMEM;
    return nullptr;
  }
  if (void* p = managed_if_candidate(rounded ? rounded : mtier::kPageSize, mtier::kPageSize)) return p;
  return next()->pvalloc(n);
}

MTIER_OVERRIDE size_t malloc_usable_size(void* p) {
  if (!p) return 0;
  if (in_region(p) || (in_inherited(p) && mtier::lib::inherited_record(p, false)))
    return mtier::lib::managed_usable_size(p);
  if (arena_owns(p)) return mtier::lib::arena_size(p);
  return next()->malloc_usable_size(p);
}
