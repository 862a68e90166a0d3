// SPDX-License-Identifier: Apache-2.0
// Probes 6 and 7: the ways a page can be put in place for the program, to
// choose the engine's by measurement.
//
// 6. Placed ahead (read around a fault: nobody waits on the page), then accessed once.
//    Each figure is the placement's cost plus the first access's, per page:
//    - "place_copy": UFFDIO_COPY into a memfd registered MISSING (the
//      engine's way);
//    - "place_continue": pwrite() into the memfd, then UFFDIO_CONTINUE on a
//      mapping registered MINOR;
//    - "place_fill": pwrite() into the memfd only, the mapping registered
//      MISSING only: the access finds the page in the page cache and the
//      kernel maps it, with no userfault at all.
// 7. "sigbus": a missing fault served in the faulting thread itself
//    (UFFD_FEATURE_SIGBUS: a SIGBUS handler places the page with
//    UFFDIO_COPY), against probe 1's handler thread: no thread switch.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "bench_probes.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier::tools::bench {
namespace {

alignas(kPageSize) const char kSource[kPageSize] = {2};

// One memfd, its mapping and a userfaultfd registered on it.
struct Mapped {
  int memfd = -1, uffd = -1;
  char* map = nullptr;
  size_t bytes = 0;
  ~Mapped() {
    if (map) (void)sys::unmap(map, bytes);
    if (uffd >= 0) close(uffd);
    if (memfd >= 0) close(memfd);
  }
};

int open_mapped(Mapped* m, size_t bytes, uint64_t features, uint64_t modes) {
  m->bytes = bytes;
  if ((m->memfd = sys::memfd_open("mtier-bench-place", bytes)) < 0) return m->memfd;
  m->map = static_cast<char*>(sys::map_shared(m->memfd, bytes));
  if (!m->map) return -errno;
  uint64_t got = 0;
  if ((m->uffd = sys::uffd_open(features, &got)) < 0) return m->uffd;
  if ((got & features) != features) return -ENOTSUP;
  return sys::uffd_register(m->uffd, m->map, bytes, modes);
}

enum class Way { kCopy, kContinue, kFill };

int place_one(const Mapped& m, uint64_t page, Way way) {
  char* addr = m.map + page * kPageSize;
  if (way == Way::kCopy) return sys::uffd_copy(m.uffd, addr, kSource, kPageSize, false);
  if (pwrite(m.memfd, kSource, kPageSize, static_cast<off_t>(page * kPageSize)) != static_cast<ssize_t>(kPageSize)) return -EIO;
  return way == Way::kContinue ? sys::uffd_continue(m.uffd, addr, kPageSize, false) : 0;
}

int time_way(uint64_t pages, Way way, const char* key, Samples* s) {
  Mapped m;
  uint64_t features = way == Way::kContinue ? UFFD_FEATURE_MINOR_SHMEM : UFFD_FEATURE_MISSING_SHMEM;
  uint64_t modes = way == Way::kContinue ? UFFDIO_REGISTER_MODE_MINOR : UFFDIO_REGISTER_MODE_MISSING;
  if (int rc = open_mapped(&m, pages * kPageSize, features, modes); rc < 0) return rc;
  std::vector<double> us(pages);
  for (uint64_t p = 0; p < pages; p++) {
    auto t0 = Clock::now();
    if (int rc = place_one(m, p, way); rc < 0) return rc;
    us[p] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }
  std::vector<double> access = time_touches(m.map, pages, false);
  for (uint64_t p = 0; p < pages; p++) us[p] += access[p];
  add_costs(s, key, std::move(us));
  return 0;
}

// The SIGBUS handler's state: one probe at a time, set before the touches.
int g_sigbus_uffd = -1;
volatile sig_atomic_t g_sigbus_error = 0;

void on_sigbus(int, siginfo_t* si, void*) {
  auto page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(si->si_addr) & ~uintptr_t{4095});
  int rc = sys::uffd_copy(g_sigbus_uffd, page, kSource, kPageSize, false);
  // A page that is not ours, or a copy that failed: the fault would repeat
  // for ever, so the default action (the process ends, a bug in the probe).
  if (rc < 0 && rc != -EEXIST) {
    g_sigbus_error = 1;
    signal(SIGBUS, SIG_DFL);
  }
}

int time_sigbus(uint64_t pages, Samples* s) {
  Mapped m;
  int rc = open_mapped(&m, pages * kPageSize, UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_SIGBUS,
                       UFFDIO_REGISTER_MODE_MISSING);
  if (rc < 0) return rc;
  struct sigaction sa = {}, old = {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  g_sigbus_uffd = m.uffd;
  if (sigaction(SIGBUS, &sa, &old) < 0) return -errno;
  add_costs(s, "sigbus", time_touches(m.map, pages, false));
  sigaction(SIGBUS, &old, nullptr);
  g_sigbus_uffd = -1;
  return g_sigbus_error ? -EIO : 0;
}

}  // namespace

int probe_placement(BenchConfig& c, Samples* s) {
  // At most 16384 pages: these figures do not depend on the table's size.
  uint64_t pages = std::min<uint64_t>(c.pages, 16384);
  if (int rc = time_way(pages, Way::kCopy, "place_copy", s); rc < 0) return rc;
  if (int rc = time_way(pages, Way::kContinue, "place_continue", s); rc < 0) return rc;
  if (int rc = time_way(pages, Way::kFill, "place_fill", s); rc < 0) return rc;
  return time_sigbus(pages, s);
}

}  // namespace mtier::tools::bench
