// SPDX-License-Identifier: Apache-2.0
#include "next_alloc.h"

#include <dlfcn.h>
#include <sched.h>

#include <atomic>
#include <cstdint>

// glibc's own entry points: the fallback when RTLD_NEXT finds nothing (a
// statically ordered link where libmtier.so comes after libc).
extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
}

namespace mtier::lib {
namespace {

enum State : int { kUninit, kResolving, kReady };
std::atomic<int> g_state{kUninit};
NextFns g_next;
// The thread that is resolving (its nested calls use the arena).
__attribute__((tls_model("initial-exec"))) thread_local bool t_resolving = false;

alignas(64) unsigned char g_arena[64 << 10];
std::atomic<size_t> g_arena_used{0};
constexpr size_t kHeader = 16;  // each block is preceded by its size

template <class F>
void resolve_one(F* slot, const char* name, F fallback) {
  void* sym = dlsym(RTLD_NEXT, name);
  *slot = sym ? reinterpret_cast<F>(sym) : fallback;
}

// glibc exports no __libc_ twins of these; their fallbacks build on memalign.
int fallback_posix_memalign(void** out, size_t align, size_t n) {
  void* p = __libc_memalign(align, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* fallback_aligned_alloc(size_t align, size_t n) { return __libc_memalign(align, n); }

void resolve_all() {
  resolve_one(&g_next.malloc, "malloc", &__libc_malloc);
  resolve_one(&g_next.free, "free", &__libc_free);
  resolve_one(&g_next.calloc, "calloc", &__libc_calloc);
  resolve_one(&g_next.realloc, "realloc", &__libc_realloc);
  resolve_one(&g_next.posix_memalign, "posix_memalign", &fallback_posix_memalign);
  resolve_one(&g_next.aligned_alloc, "aligned_alloc", &fallback_aligned_alloc);
  resolve_one(&g_next.memalign, "memalign", &__libc_memalign);
  resolve_one(&g_next.valloc, "valloc", &__libc_valloc);
  resolve_one(&g_next.pvalloc, "pvalloc", &__libc_pvalloc);
  resolve_one<size_t (*)(void*)>(&g_next.malloc_usable_size, "malloc_usable_size", nullptr);
  resolve_one<void* (*)(void*, size_t, int, int, int, off_t)>(&g_next.mmap, "mmap", nullptr);
  resolve_one<int (*)(void*, size_t)>(&g_next.munmap, "munmap", nullptr);
  resolve_one<void* (*)(void*, size_t, size_t, int, ...)>(&g_next.mremap, "mremap", nullptr);
  resolve_one<int (*)(void*, size_t, int)>(&g_next.madvise, "madvise", nullptr);
}

}  // namespace

const NextFns* next() {
  int s = g_state.load(std::memory_order_acquire);
  if (s == kReady) return &g_next;
  if (t_resolving) return nullptr;
  int expected = kUninit;
  if (g_state.compare_exchange_strong(expected, kResolving)) {
    t_resolving = true;
    resolve_all();
    t_resolving = false;
    g_state.store(kReady, std::memory_order_release);
    return &g_next;
  }
  while (g_state.load(std::memory_order_acquire) != kReady) sched_yield();
  return &g_next;
}

void echo_free(size_t bytes) {
  // glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit targets.
  constexpr size_t kLargestAdapted = 32u << 20;
  if (bytes == 0 || bytes > kLargestAdapted) return;
  const NextFns* f = next();
  if (!f) return;
  // An mmapped chunk is mapped and unmapped again untouched but for its
  // header; a heap chunk (the threshold is already above it) goes back.
  if (void* p = f->malloc(bytes)) f->free(p);
}

void* arena_alloc(size_t bytes, size_t align) {
  if (align < kHeader) align = kHeader;
  size_t used = g_arena_used.load();
  for (;;) {
    uintptr_t start = reinterpret_cast<uintptr_t>(g_arena) + used + kHeader;
    start = (start + align - 1) & ~(uintptr_t{align} - 1);
    size_t end = start + bytes - reinterpret_cast<uintptr_t>(g_arena);
    if (end > sizeof g_arena || bytes > sizeof g_arena) return nullptr;
    if (g_arena_used.compare_exchange_weak(used, end)) {
      reinterpret_cast<size_t*>(start)[-1] = bytes;
      return reinterpret_cast<void*>(start);
    }
  }
}

bool arena_owns(const void* p) {
  auto c = static_cast<const unsigned char*>(p);
  return c >= g_arena && c < g_arena + sizeof g_arena;
}

size_t arena_size(const void* p) { return static_cast<const size_t*>(p)[-1]; }

}  // namespace mtier::lib
