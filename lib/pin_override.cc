// SPDX-License-Identifier: Apache-2.0
// Registrations that pin memory for a device, interposed: io_uring fixed
// buffers (liburing's io_uring_register_buffers family) and RDMA memory
// regions (libibverbs' ibv_reg_mr family). The kernel keeps using the page
// frames of such memory until it is unregistered, behind the program's
// mapping: a table page mtier evicted (punched, and brought back later in
// a new frame) would leave the device reading and writing the old frame -
// stale data both ways, silently. So the table pages of a registration are
// pinned in DRAM (Engine::hold_range, HoldKind::kPin: brought in first,
// never evicted, counted in the budget) before the registration is made,
// and unpinned after it goes. One past 3/4 of the budget is refused - as
// the kernel refuses a pin past RLIMIT_MEMLOCK: -ENOMEM from liburing,
// NULL with errno ENOMEM from libibverbs - with a line that says why.
//
// Pins mtier cannot see (a raw io_uring_register system call, a driver's
// own pinning) are documented in mtier(7) with their workaround
// (exclude_sizes keeps such buffers out of the region).
//
// Locks: pins_mu guards the registrations list; it is taken with no other
// lock held and the engine's calls run under it (they take the table
// registry's lock, a later lock in the order).
#include <dlfcn.h>
#include <liburing.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "engine_instance.h"
#include "interposer.h"
#include "interposer_state.h"
#include "log/log.h"
#include "util/runtime_scope.h"

#define MTIER_OVERRIDE extern "C" __attribute__((visibility("default")))

namespace {

// One pinned range: an io_uring ring's buffer slot, or an RDMA region.
struct Registration {
  int ring_fd;         // -1 for an RDMA region
  unsigned slot;       // the ring's buffer index
  const void* region;  // the ibv_mr, or nullptr for a ring's slot
  uintptr_t addr;
  size_t len;
};

std::mutex pins_mu;
// Under pins_mu. Made in static storage without allocating (an
// io_uring_queue_exit may come from a destructor, where a failed
// allocation must not throw) and never destroyed (it is used at exit).
std::vector<Registration>& registrations() {
  alignas(std::vector<Registration>) static unsigned char storage[sizeof(std::vector<Registration>)];
  static auto* r = new (storage) std::vector<Registration>;
  return *r;
}

// Set while this thread is inside an interposed registration: a library
// whose entry points call each other (libibverbs' ibv_reg_mr calls
// ibv_reg_mr_iova2) reaches the inner one through these overrides too,
// which must then pass it on (pins_mu is held).
thread_local bool t_registering = false;

struct Registering {
  Registering() { t_registering = true; }
  ~Registering() { t_registering = false; }
};

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The engine whose tables a registration may name, or nullptr.
mtier::Engine* engine_for(const void* addr, size_t len) {
  if (mtier::in_runtime() || mtier::lib::state().child || len == 0) return nullptr;
  if (t_registering) return nullptr;
  if (!mtier::lib::overlaps_region(addr, len)) return nullptr;
  return mtier::lib::running_engine();
}

// Pins or unpins [addr, addr+len) if it holds table pages: 0, or -errno
// (-ENOMEM for a pin past the held share of the budget, said once).
int pin(const void* addr, size_t len, bool on) {
  mtier::Engine* e = engine_for(addr, len);
  if (!e) return 0;
  mtier::RuntimeScope runtime;
  int err;
  try {
    err = e->hold_range(addr, len, on, true, mtier::HoldKind::kPin);
  } catch (...) {
    err = -ENOMEM;
  }
  if (err == -EAGAIN) {
    static std::once_flag said;
    std::call_once(said, [len] {
      MTIER_LOG_WARN("a device registration of %zu MiB of table memory is refused: pinned and "
                     "locked table pages may take at most 3/4 of the DRAM budget (raise "
                     "dram_bytes, or keep such buffers out with exclude_sizes)",
                     len >> 20);
    });
    err = -ENOMEM;
  }
  return err;
}

// Pins each table part of iovecs[0, n) as slots first.. of ring_fd (into
// out); on a failure unpins what it pinned and returns -errno.
int pin_iovecs(int ring_fd, unsigned first, const iovec* iov, unsigned n,
               std::vector<Registration>& out) {
  for (unsigned i = 0; iov && i < n; i++) {
    if (!engine_for(iov[i].iov_base, iov[i].iov_len)) continue;
    if (int err = pin(iov[i].iov_base, iov[i].iov_len, true); err < 0) {
      for (const Registration& r : out) (void)pin(reinterpret_cast<void*>(r.addr), r.len, false);
      out.clear();
      return err;
    }
    try {
      out.push_back({ring_fd, first + i, nullptr,
                     reinterpret_cast<uintptr_t>(iov[i].iov_base), iov[i].iov_len});
    } catch (...) {  // not remembered: given back, the registration refused
      (void)pin(iov[i].iov_base, iov[i].iov_len, false);
      for (const Registration& r : out) (void)pin(reinterpret_cast<void*>(r.addr), r.len, false);
      out.clear();
      return -ENOMEM;
    }
  }
  return 0;
}

// Unpins and forgets the registrations `match` selects. pins_mu held.
template <class Match>
void unpin_where(Match match) {
  auto& regs = registrations();
  for (size_t i = 0; i < regs.size();) {
    if (!match(regs[i])) {
      i++;
      continue;
    }
    (void)pin(reinterpret_cast<void*>(regs[i].addr), regs[i].len, false);
    regs[i] = regs.back();
    regs.pop_back();
  }
}

// Both pins_mu held. Not remembered for want of memory: the pages stay
// pinned for the process's life (safe).
void remember(const std::vector<Registration>& made) {
  try {
    registrations().insert(registrations().end(), made.begin(), made.end());
  } catch (...) {
  }
}
void remember(const Registration& one) {
  try {
    registrations().push_back(one);
  } catch (...) {
  }
}

// register(ring, first slot, iovecs, n) through `call`, pinning first.
template <class Call>
int register_ring_buffers(io_uring* ring, unsigned first, const iovec* iov, unsigned n,
                          bool replaces, Call call) {
  if (!ring || !mtier::lib::running_engine() || mtier::in_runtime() || t_registering)
    return call();
  std::lock_guard lk(pins_mu);
  std::vector<Registration> made;
  if (int err = pin_iovecs(ring->ring_fd, first, iov, n, made); err < 0) return err;
  int rc;
  {
    Registering inner;
    rc = call();
  }
  if (rc < 0) {
    for (const Registration& r : made) (void)pin(reinterpret_cast<void*>(r.addr), r.len, false);
    return rc;
  }
  if (replaces)
    unpin_where([&](const Registration& r) {
      return !r.region && r.ring_fd == ring->ring_fd && r.slot >= first && r.slot - first < n;
    });
  remember(made);
  return rc;
}

// Called after the kernel let the pins go, from interposed calls that may
// come from a destructor (mtier's own rings too): never throws.
void unpin_ring(int ring_fd) {
  if (mtier::in_runtime() || !mtier::lib::running_engine()) return;
  std::lock_guard lk(pins_mu);
  unpin_where([&](const Registration& r) { return !r.region && r.ring_fd == ring_fd; });
}

// An RDMA region made by `call` over [addr, addr+len), pinned first.
template <class Call>
void* register_region(void* addr, size_t len, Call call) {
  if (!engine_for(addr, len)) return call();
  std::lock_guard lk(pins_mu);
  if (int err = pin(addr, len, true); err < 0) {
    errno = -err;
    return nullptr;
  }
  void* mr;
  {
    Registering inner;
    mr = call();
  }
  if (!mr) {
    int saved = errno;
    (void)pin(addr, len, false);
    errno = saved;
    return nullptr;
  }
  remember(Registration{-1, 0, mr, reinterpret_cast<uintptr_t>(addr), len});
  return mr;
}

void unpin_region(const void* mr) {
  if (mtier::in_runtime() || !mtier::lib::running_engine()) return;
  std::lock_guard lk(pins_mu);
  unpin_where([&](const Registration& r) { return r.region == mr; });
}

}  // namespace

MTIER_OVERRIDE int io_uring_register_buffers(io_uring* ring, const iovec* iov, unsigned n) {
  static auto real = next<int (*)(io_uring*, const iovec*, unsigned)>("io_uring_register_buffers");
  if (!real) return -ENOSYS;
  return register_ring_buffers(ring, 0, iov, n, false, [&] { return real(ring, iov, n); });
}

MTIER_OVERRIDE int io_uring_register_buffers_tags(io_uring* ring, const iovec* iov,
                                                  const __u64* tags, unsigned n) {
  static auto real = next<int (*)(io_uring*, const iovec*, const __u64*, unsigned)>(
      "io_uring_register_buffers_tags");
  if (!real) return -ENOSYS;
  return register_ring_buffers(ring, 0, iov, n, false, [&] { return real(ring, iov, tags, n); });
}

MTIER_OVERRIDE int io_uring_register_buffers_update_tag(io_uring* ring, unsigned off,
                                                        const iovec* iov, const __u64* tags,
                                                        unsigned n) {
  static auto real = next<int (*)(io_uring*, unsigned, const iovec*, const __u64*, unsigned)>(
      "io_uring_register_buffers_update_tag");
  if (!real) return -ENOSYS;
  return register_ring_buffers(ring, off, iov, n, true,
                               [&] { return real(ring, off, iov, tags, n); });
}

MTIER_OVERRIDE int io_uring_unregister_buffers(io_uring* ring) {
  static auto real = next<int (*)(io_uring*)>("io_uring_unregister_buffers");
  if (!real) return -ENOSYS;
  int rc = real(ring);
  if (rc == 0 && ring) unpin_ring(ring->ring_fd);
  return rc;
}

MTIER_OVERRIDE void io_uring_queue_exit(io_uring* ring) {
  static auto real = next<void (*)(io_uring*)>("io_uring_queue_exit");
  int fd = ring ? ring->ring_fd : -1;
  if (real) real(ring);
  if (fd >= 0) unpin_ring(fd);  // closing the ring unregisters its buffers
}

MTIER_OVERRIDE void* ibv_reg_mr(void* pd, void* addr, size_t len, int access) {
  static auto real = next<void* (*)(void*, void*, size_t, int)>("ibv_reg_mr");
  if (!real) {
    errno = ENOSYS;
    return nullptr;
  }
  return register_region(addr, len, [&] { return real(pd, addr, len, access); });
}

MTIER_OVERRIDE void* ibv_reg_mr_iova(void* pd, void* addr, size_t len, uint64_t iova,
                                     int access) {
  static auto real = next<void* (*)(void*, void*, size_t, uint64_t, int)>("ibv_reg_mr_iova");
  if (!real) {
    errno = ENOSYS;
    return nullptr;
  }
  return register_region(addr, len, [&] { return real(pd, addr, len, iova, access); });
}

MTIER_OVERRIDE void* ibv_reg_mr_iova2(void* pd, void* addr, size_t len, uint64_t iova,
                                      unsigned access) {
  static auto real =
      next<void* (*)(void*, void*, size_t, uint64_t, unsigned)>("ibv_reg_mr_iova2");
  if (!real) {
    errno = ENOSYS;
    return nullptr;
  }
  return register_region(addr, len, [&] { return real(pd, addr, len, iova, access); });
}

// libibverbs' IBV_REREG_MR_CHANGE_TRANSLATION: the region moves to
// [addr, addr+len).
constexpr int kRegChangeTranslation = 1;

MTIER_OVERRIDE int ibv_rereg_mr(void* mr, int flags, void* pd, void* addr, size_t len,
                                int access) {
  static auto real = next<int (*)(void*, int, void*, void*, size_t, int)>("ibv_rereg_mr");
  if (!real) return ENOSYS;
  if (!(flags & kRegChangeTranslation) || !mtier::lib::running_engine() || mtier::in_runtime() ||
      t_registering)
    return real(mr, flags, pd, addr, len, access);
  std::lock_guard lk(pins_mu);
  bool pinned = engine_for(addr, len) != nullptr;
  if (pinned) {
    if (int err = pin(addr, len, true); err < 0) return -err;
  }
  int rc;
  {
    Registering inner;
    rc = real(mr, flags, pd, addr, len, access);
  }
  if (rc != 0) {
    if (pinned) (void)pin(addr, len, false);
    return rc;
  }
  unpin_where([&](const Registration& r) { return r.region == mr; });
  if (pinned) {
    remember(Registration{-1, 0, mr, reinterpret_cast<uintptr_t>(addr), len});
  }
  return rc;
}

MTIER_OVERRIDE int ibv_dereg_mr(void* mr) {
  static auto real = next<int (*)(void*)>("ibv_dereg_mr");
  if (!real) return ENOSYS;
  int rc = real(mr);
  if (rc == 0) unpin_region(mr);
  return rc;
}
