// SPDX-License-Identifier: Apache-2.0
// mlock, mlock2, munlock, mlockall and munlockall, interposed. A lock of
// table memory holds its pages in DRAM through the engine
// (Engine::hold_range: brought in, never evicted, counted in the budget;
// EAGAIN past 3/4 of it) instead of the kernel's mlock, which would pin
// pages mtier must be able to evict (every eviction then failed with
// EINVAL, hundreds of thousands of lines a second). mlockall locks what it
// locks but the region and mtier's own shared segment (locked, they would
// be populated whole: tens of GiB). Everything else goes to the kernel.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine_instance.h"
#include "interposer.h"
#include "interposer_state.h"
#include "util/runtime_scope.h"

#define MTIER_OVERRIDE extern "C" __attribute__((visibility("default")))

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif

namespace {

long kernel_mlock2(const void* addr, size_t len, unsigned flags) {
  return syscall(SYS_mlock2, addr, len, flags);
}

// The engine whose tables a lock call may name, or nullptr (not running,
// a forked child, the runtime's own call).
mtier::Engine* engine_for(const void* addr, size_t len) {
  if (mtier::in_runtime() || mtier::lib::state().child) return nullptr;
  if (!mtier::lib::overlaps_region(addr, len)) return nullptr;
  return mtier::lib::running_engine();
}

// Applies f to the parts of [addr, addr+len) outside the region; returns
// the first failure (-1 with errno) or 0.
template <class F>
int outside_region(const void* addr, size_t len, F f) {
  auto a = reinterpret_cast<uintptr_t>(addr), end = a + len;
  uintptr_t lo = mtier::lib::g_region_lo.load(), hi = mtier::lib::g_region_hi.load();
  int rc = 0;
  if (a < lo) rc |= f(a, (end < lo ? end : lo) - a);
  if (end > hi) rc |= f(a > hi ? a : hi, end - (a > hi ? a : hi));
  return rc ? -1 : 0;
}

int lock_call(const void* addr, size_t len, bool lock, unsigned flags) {
  mtier::Engine* e = engine_for(addr, len);
  if (!e) {
    return static_cast<int>(lock ? kernel_mlock2(addr, len, flags)
                                 : syscall(SYS_munlock, addr, len));
  }
  int rc = outside_region(addr, len, [&](uintptr_t a, size_t n) {
    return static_cast<int>(lock ? kernel_mlock2(reinterpret_cast<void*>(a), n, flags)
                                 : syscall(SYS_munlock, a, n));
  });
  int err = 0;
  {
    mtier::RuntimeScope runtime;
    try {
      err = e->hold_range(addr, len, lock, !(flags & MLOCK_ONFAULT));
    } catch (...) {
      err = -ENOMEM;
    }
  }
  if (err < 0) {
    errno = err == -EAGAIN ? EAGAIN : err == -ENOMEM ? ENOMEM : EAGAIN;
    return -1;
  }
  return rc;
}

// Whether a /proc/self/maps line names mtier's own shared memory.
bool runtime_mapping(const char* line) {
  return strstr(line, "/memfd:mtier-region") || strstr(line, "/memfd:mtier-segment");
}

// mlockall(MCL_CURRENT) less mtier's mappings: each other mapping locked
// as the kernel's mlockall would. 0, or -1 with errno of the first failure
// that is not a special mapping's (vsyscall, vvar: the kernel skips those).
int lock_current(unsigned flags) {
  FILE* f = fopen("/proc/self/maps", "re");
  if (!f) return -1;
  char line[512];
  int rc = 0, first_err = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[8] = "";
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || runtime_mapping(line)) continue;
    if (strstr(line, "[vsyscall]") || strstr(line, "[vvar]")) continue;
    // An inaccessible mapping (a guard page, a reserved heap) is locked
    // without being populated, as mlockall does; mlock would fail on it.
    unsigned f = strncmp(perms, "---", 3) == 0 ? MLOCK_ONFAULT : flags;
    if (kernel_mlock2(reinterpret_cast<void*>(lo), hi - lo, f) != 0 && !first_err &&
        errno != EINVAL && errno != EPERM) {
      first_err = errno;
      rc = -1;
    }
  }
  fclose(f);
  if (rc) errno = first_err;
  return rc;
}

}  // namespace

MTIER_OVERRIDE int mlock(const void* addr, size_t len) { return lock_call(addr, len, true, 0); }

MTIER_OVERRIDE int mlock2(const void* addr, size_t len, unsigned int flags) {
  return lock_call(addr, len, true, flags);
}

MTIER_OVERRIDE int munlock(const void* addr, size_t len) { return lock_call(addr, len, false, 0); }

MTIER_OVERRIDE int mlockall(int flags) {
  if (mtier::in_runtime() || mtier::lib::state().child || !mtier::lib::running_engine())
    return static_cast<int>(syscall(SYS_mlockall, flags));
  // MCL_FUTURE as asked (the region's later mappings unlock themselves:
  // sys/vm.cc map_shared); MCL_CURRENT mapping by mapping, but mtier's.
  if ((flags & MCL_FUTURE) && syscall(SYS_mlockall, flags & (MCL_FUTURE | MCL_ONFAULT)) != 0)
    return -1;
  if (flags & MCL_CURRENT) return lock_current((flags & MCL_ONFAULT) ? MLOCK_ONFAULT : 0);
  return 0;
}

MTIER_OVERRIDE int munlockall(void) {
  if (mtier::Engine* e = mtier::in_runtime() || mtier::lib::state().child
                             ? nullptr : mtier::lib::running_engine()) {
    mtier::RuntimeScope runtime;
    uintptr_t lo = mtier::lib::g_region_lo.load(), hi = mtier::lib::g_region_hi.load();
    try {
      if (hi > lo) (void)e->hold_range(reinterpret_cast<void*>(lo), hi - lo, false);
    } catch (...) {
    }
  }
  return static_cast<int>(syscall(SYS_munlockall));
}
