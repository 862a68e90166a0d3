// SPDX-License-Identifier: Apache-2.0
// Probe 1, the limit for every fault path: a bare userfaultfd on a memfd
// registered MISSING, with one handler thread that waits in poll() and
// resolves each fault with UFFDIO_COPY, as the engine's handler does but
// with none of its bookkeeping (page words, locks, budget, stores).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

#include "bench_probes.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier::tools::bench {
namespace {

alignas(kPageSize) const char kSource[kPageSize] = {1};
constexpr size_t kBatch = 64;

struct BareUffd {
  int memfd = -1, uffd = -1, stop = -1;
  char* map = nullptr;
  size_t bytes = 0;
  std::thread handler;
  std::atomic<int> error{0};
};

// Places one page; a fault raised twice for one page finds it present
// (-EEXIST) and only needs the waiter woken.
void place(BareUffd* b, uint64_t address) {
  void* page = reinterpret_cast<void*>(address & ~uint64_t{4095});
  int rc = sys::uffd_copy(b->uffd, page, kSource, kPageSize, false);
  while (rc == -EAGAIN) rc = sys::uffd_copy(b->uffd, page, kSource, kPageSize, false);
  if (rc == -EEXIST) rc = sys::uffd_wake(b->uffd, page, kPageSize);
  int none = 0;
  if (rc < 0) b->error.compare_exchange_strong(none, rc);
}

void serve(BareUffd* b) {
  struct uffd_msg msgs[kBatch];
  struct pollfd fds[2] = {{b->uffd, POLLIN, 0}, {b->stop, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    long n = sys::uffd_read(b->uffd, msgs, kBatch);
    if (n < 0) {
      b->error = static_cast<int>(n);
      break;
    }
    for (long i = 0; i < n; i++)
      if (msgs[i].event == UFFD_EVENT_PAGEFAULT) place(b, msgs[i].arg.pagefault.address);
  }
}

int open_bare(BareUffd* b, size_t bytes) {
  b->bytes = bytes;
  if ((b->memfd = sys::memfd_open("mtier-bench-bare", bytes)) < 0) return b->memfd;
  b->map = static_cast<char*>(sys::map_shared(b->memfd, bytes));
  if (!b->map) return -errno;
  uint64_t got = 0;
  if ((b->uffd = sys::uffd_open(UFFD_FEATURE_MISSING_SHMEM, &got)) < 0) return b->uffd;
  int rc = sys::uffd_register(b->uffd, b->map, bytes, UFFDIO_REGISTER_MODE_MISSING);
  if (rc < 0) return rc;
  if ((b->stop = eventfd(0, EFD_CLOEXEC)) < 0) return -errno;
  b->handler = std::thread(serve, b);
  return 0;
}

void close_bare(BareUffd* b) {
  if (b->handler.joinable()) {
    uint64_t one = 1;
    (void)!write(b->stop, &one, sizeof one);
    b->handler.join();
  }
  if (b->uffd >= 0) close(b->uffd);
  if (b->stop >= 0) close(b->stop);
  if (b->map) (void)sys::unmap(b->map, b->bytes);
  if (b->memfd >= 0) close(b->memfd);
}

}  // namespace

int probe_bare_copy(BenchConfig& c, Samples* s) {
  BareUffd b;
  int rc = open_bare(&b, c.pages * kPageSize);
  // Loads, as the fetch probes touch: the handler's work is the same for both.
  if (rc == 0) {
    add_costs(s, "bare", time_touches(b.map, c.pages, false));
    rc = b.error.load();
  }
  close_bare(&b);
  return rc;
}

}  // namespace mtier::tools::bench
