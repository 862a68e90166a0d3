// SPDX-License-Identifier: Apache-2.0
// The preload interposer's core: which allocations become managed tables,
// and what the malloc family and the memory-map calls do with them. The
// extern "C" overrides (alloc_override.cc, mmap_override.cc) are thin
// shells over these functions.
//
// Contract: the interposer is active only in a process that preloaded
// libmtier.so (LD_PRELOAD names it, or MTIER_INTERPOSE=1); a program that
// merely links the library for the C API, a setuid program, a forked child
// and the runtime's own threads (RuntimeScope) get plain allocation. The
// engine starts at the first managed allocation; if it cannot (no
// userfaultfd, say), one line says why and allocation stays plain. A start
// that failed for want of memory (-ENOMEM, -EAGAIN: std::bad_alloc, a thread
// that could not be made) is tried again at the next managed-size
// allocation, the ones before it getting plain memory; any other failure is
// final.
//
// No exception leaves these functions (boundary.h): where the runtime runs
// out of memory, a managed-size allocation gets plain memory from the next
// allocator (one line says so, once per reason) and a call on the region
// fails as the kernel's would (ENOMEM).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "util/runtime_scope.h"

namespace mtier::lib {

// Sizes below this are never managed (SIZE_MAX while inactive): the one test
// on the fast path of every allocation.
extern std::atomic<uint64_t> g_smallest_candidate;
// The region's bounds once the engine runs ([0, 0) before).
extern std::atomic<uintptr_t> g_region_lo, g_region_hi;

// In a forked child: the parent's region bounds. The child's own plain
// memory may land there (the region is not mapped in the child), so only
// pointers the parent handed out (inherited_record) are treated as tables.
extern std::atomic<uintptr_t> g_inherited_lo, g_inherited_hi;

// Reads the options and turns the interposer on (called once, at load).
void activate() noexcept;

inline bool in_region(const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return a >= g_region_lo.load(std::memory_order_relaxed) &&
         a < g_region_hi.load(std::memory_order_relaxed);
}
inline bool overlaps_region(const void* p, size_t len) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return a < g_region_hi.load(std::memory_order_relaxed) &&
         a + len > g_region_lo.load(std::memory_order_relaxed);
}
// True when an allocation of n bytes might become a table.
inline bool maybe_candidate(size_t n) {
  return n >= g_smallest_candidate.load(std::memory_order_relaxed) && !in_runtime();
}

// A managed allocation of `bytes` aligned to `align` (a power of two; <= kPageSize
// gives page alignment), or nullptr when the selection or the engine says no
// (the caller then uses the next allocator). Memory reads as zeros. `room`:
// address space kept for it to grow into by realloc (0: just its bytes).
void* managed_alloc(size_t bytes, size_t align, size_t room = 0) noexcept;
// MAP_POPULATE of a new table: its first pages, as many as the DRAM budget
// holds, are faulted in (zero-filled) before mmap returns.
void populate(void* p, size_t len) noexcept;
// free() of a pointer in the region; returns the bytes the program had asked
// for (0 when p is not a table's pointer).
size_t managed_free(void* p) noexcept;
// malloc_usable_size() of a pointer in the region.
size_t managed_usable_size(const void* p) noexcept;
// realloc() of a pointer in the region.
void* managed_realloc(void* p, size_t n) noexcept;

// The region part of munmap / mremap / madvise; each returns what the libc
// call would (-1 with errno set on failure).
int region_munmap(void* addr, size_t len) noexcept;
void* region_mremap(void* old, size_t old_size, size_t new_size, int flags,
                    void* new_addr) noexcept;
int region_madvise(void* addr, size_t len, int advice) noexcept;

inline bool in_inherited(const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return a >= g_inherited_lo.load(std::memory_order_relaxed) &&
         a < g_inherited_hi.load(std::memory_order_relaxed);
}
inline bool overlaps_inherited(const void* p, size_t len) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return a < g_inherited_hi.load(std::memory_order_relaxed) &&
         a + len > g_inherited_lo.load(std::memory_order_relaxed);
}
// In a forked child: true when p is exactly a pointer the parent's
// interposer handed out; with `forget`, the record is dropped and the
// child's copy of the table goes (free).
bool inherited_record(const void* p, bool forget) noexcept;
// munmap and mremap in a forked child over its copy of the parent's
// region (lib/fork_signals.cc maps it privately): an unmapped part becomes
// PROT_NONE (it stays reserved); a mapping that grows moves to plain
// memory with its bytes. Return what the libc call would.
int inherited_munmap(void* addr, size_t len) noexcept;
void* inherited_mremap(void* old, size_t old_size, size_t new_size, int flags,
                       void* new_addr) noexcept;

// Fork: the atfork handlers take and drop the interposer's lock; the child
// stops managing: g_region_* become empty and g_inherited_* hold the
// parent's bounds, and the child reads the parent's tables through a
// private mapping of the region (lib/fork_signals.cc).
bool in_forked_child() noexcept;

}  // namespace mtier::lib
