// SPDX-License-Identifier: Apache-2.0
// The allocator and memory-map functions the interposer forwards to: the
// next definitions after libmtier.so (dlsym RTLD_NEXT; normally glibc's),
// resolved once by an explicit state machine that tolerates recursion
// (jemalloc's malloc_init_hard): dlsym may itself call calloc/malloc, and the
// thread resolving is then served from a static bootstrap arena.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace mtier::lib {

struct NextFns {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  size_t (*malloc_usable_size)(void*);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  int (*munmap)(void*, size_t);
  void* (*mremap)(void*, size_t, size_t, int, ...);
  int (*madvise)(void*, size_t, int);
};

// The next functions, resolving them on first use. While the calling thread
// is itself resolving (inside dlsym), returns nullptr: the caller must then
// serve the request from the bootstrap arena.
const NextFns* next();

// Replays, in the next allocator, the free of a table of `bytes` bytes that
// the program allocated through the malloc family: a malloc/free pair of the
// same size, so the next allocator adapts as if it had served the table.
// Why: glibc raises its mmap threshold to the size of an mmapped chunk the
// program frees (up to 32 MiB; the trim threshold to twice that), so that a
// program which frees a large temporary gets later allocations of about that
// size from its heap instead of a fresh mmap, page faults and munmap each time.
// Tables never reach glibc, so without this replay a preloaded PyTorch trainer
// kept glibc's initial 128 KiB threshold and ran at about 0.8 of its speed
// without mtier (scripts/bench-trainer.sh). glibc's own rules decide (a
// threshold the user fixed with mallopt or MALLOC_MMAP_THRESHOLD_ stays).
// Sizes above 32 MiB, which glibc never adapts to, are not replayed.
void echo_free(size_t bytes);

// Bootstrap arena: a static buffer for the few allocations dlsym makes.
// Returns nullptr when exhausted (64 KiB). Frees of arena memory are no-ops.
void* arena_alloc(size_t bytes, size_t align);
bool arena_owns(const void* p);
// The size an arena block was allocated with.
size_t arena_size(const void* p);

}  // namespace mtier::lib
