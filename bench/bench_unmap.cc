// SPDX-License-Identifier: Apache-2.0
// Probe 8: what dropping a page's mapping costs the evictor, and whether
// the kernel batches it. Every dirty victim is unmapped before its
// write-back (its next access then faults), and each unmap is a TLB
// shootdown reaching the CPU the trainer runs on. Measured here:
// - "unmap_dirty_each": a page's entry in a writable shared mapping of a
//   memfd (the engine's region) dropped with madvise(MADV_DONTNEED), one
//   call a page. Such entries are all dirty: the trainer writes its rows,
//   UFFDIO_COPY and CONTINUE install them dirty, and even a read fault's
//   entry is made dirty when the mapping is writable (the page is);
// - "unmap_dirty_vec": the same, 64 pages in one process_madvise();
// - "unmap_clean_each" and "unmap_clean_vec": the same in a read-only
//   mapping of the memfd, whose entries are clean: the kernel may drop
//   those lazily and flush once for all the ranges of a call (Linux 6.16),
//   which it cannot do for dirty ones.
// - "unmap_span": the victims' whole span (kSpanPages) zapped in one call
//   and the pages between them mapped again with UFFDIO_CONTINUE (a mapping
//   of the memfd registered for MINOR faults), a victim's share of it: what
//   the evictor would pay to seal many victims with one shootdown. Cheaper
//   here than "unmap_dirty_each", and yet slower in the hinted replay (the
//   README: the trainer pays for the entries changed under it).
// Victims are every 4th page (not adjacent: each is its own range), while
// another thread of the process reads its own memory (the trainer: without
// it a flush stays on the local CPU).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "bench_probes.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier::tools::bench {
namespace {

constexpr uint64_t kStride = 4;   // a victim every kStride pages
constexpr size_t kRangesACall = 64;
constexpr uint64_t kSpanPages = 512;  // one page table's worth

// A thread of this process that keeps reading its own buffer until stopped.
class Spinner {
 public:
  // 0, or -EAGAIN / -ENOMEM when no thread could be started.
  int start() {
    try {
      buf_.assign(64 * kPageSize, 1);
      thread_ = std::thread([this] {
        unsigned long sum = 0;
        while (!stop_.load(std::memory_order_relaxed))
          for (size_t i = 0; i < buf_.size(); i += kPageSize) sum += static_cast<unsigned char>(buf_[i]);
        sink_.store(sum, std::memory_order_relaxed);
      });
    } catch (const std::system_error&) {
      return -EAGAIN;
    } catch (const std::bad_alloc&) {
      return -ENOMEM;
    }
    return 0;
  }
  ~Spinner() {
    stop_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::vector<char> buf_;
  std::atomic<bool> stop_{false};
  std::atomic<unsigned long> sink_{0};
  std::thread thread_;
};

struct Mapping {
  int fd = -1;
  char* map = nullptr;       // read-write
  char* readonly = nullptr;  // the same pages, read-only
  size_t bytes = 0;
  ~Mapping() {
    if (map) (void)sys::unmap(map, bytes);
    if (readonly) (void)sys::unmap(readonly, bytes);
    if (fd >= 0) close(fd);
  }
};

// Unmaps every kStride-th page, one madvise a page, or kRangesACall in one
// zap_ranges through `pidfd` (>= 0). Microseconds a page in *us.
int time_unmaps(char* base, uint64_t pages, int pidfd, std::vector<double>* us) {
  std::vector<struct iovec> victims;
  for (uint64_t p = 0; p < pages; p += kStride) victims.push_back({base + p * kPageSize, kPageSize});
  us->clear();
  if (pidfd < 0) {
    for (const struct iovec& v : victims) {
      auto t0 = Clock::now();
      if (int rc = sys::zap(v.iov_base, v.iov_len); rc < 0) return rc;
      us->push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    return 0;
  }
  for (size_t i = 0; i < victims.size(); i += kRangesACall) {
    size_t n = std::min(kRangesACall, victims.size() - i);
    auto t0 = Clock::now();
    if (long rc = sys::zap_ranges(pidfd, &victims[i], n); rc < 0) return static_cast<int>(rc);
    double each = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
    us->insert(us->end(), n, each);
  }
  return 0;
}

// A userfaultfd and a mapping of the memfd registered with it for MINOR
// faults, every page mapped (CONTINUE: nothing here ever faults).
struct MinorMapping {
  int uffd = -1;
  char* map = nullptr;
  size_t bytes = 0;
  ~MinorMapping() {
    if (map) (void)sys::unmap(map, bytes);
    if (uffd >= 0) close(uffd);
  }
  int open(int memfd, size_t len) {
    uint64_t got = 0;
    if ((uffd = sys::uffd_open(UFFD_FEATURE_MINOR_SHMEM, &got)) < 0) return uffd;
    if (!(map = static_cast<char*>(sys::map_shared(memfd, len)))) return -errno;
    bytes = len;
    if (int rc = sys::uffd_register(uffd, map, len, UFFDIO_REGISTER_MODE_MINOR); rc < 0) return rc;
    return sys::uffd_continue(uffd, map, len, false, true);
  }
};

// "unmap_span" (see the top of this file); microseconds a victim in *us.
int time_span_unmaps(MinorMapping& m, uint64_t pages, std::vector<double>* us) {
  us->clear();
  for (uint64_t first = 0; first + kSpanPages <= pages; first += kSpanPages) {
    char* base = m.map + first * kPageSize;
    auto t0 = Clock::now();
    if (int rc = sys::zap(base, kSpanPages * kPageSize); rc < 0) return rc;
    for (uint64_t p = 1; p < kSpanPages; p += kStride)  // the gap after each victim
      if (int rc = sys::uffd_continue(m.uffd, base + p * kPageSize, (kStride - 1) * kPageSize, false, true);
          rc < 0)
        return rc;
    double each = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                  (kSpanPages / kStride);
    us->insert(us->end(), kSpanPages / kStride, each);
  }
  return 0;
}

}  // namespace

int probe_unmap(BenchConfig& c, Samples* s) {
  // At most 16384 pages: the cost a page does not depend on the table's size.
  uint64_t pages = std::min<uint64_t>(c.pages, 16384);
  Mapping m;
  m.bytes = pages * kPageSize;
  if ((m.fd = sys::memfd_open("mtier-bench-unmap", m.bytes)) < 0) return m.fd;
  if (!(m.map = static_cast<char*>(sys::map_shared(m.fd, m.bytes)))) return -errno;
  if (!(m.readonly = static_cast<char*>(sys::map_shared(m.fd, m.bytes, false)))) return -errno;
  dirty_all(m.map, pages);  // every page in the memfd
  int pidfd = sys::pidfd_self();  // < 0: no process_madvise rows (an older kernel)
  Spinner trainer;
  int rc = trainer.start();
  std::vector<double> us;
  for (bool clean : {false, true}) {
    if (rc < 0) break;
    for (bool batched : {false, true}) {
      if (batched && pidfd < 0) continue;
      char* base = clean ? m.readonly : m.map;
      if (clean) read_all(base, pages);  // mapped by read faults
      else dirty_all(base, pages);
      rc = time_unmaps(base, pages, batched ? pidfd : -1, &us);
      // A kernel that does not take MADV_DONTNEED through process_madvise
      // for the caller (before 6.13): those rows stay unmeasured.
      if (batched && rc == -EINVAL) {
        rc = 0;
        continue;
      }
      if (rc < 0) break;
      std::string key = std::string("unmap_") + (clean ? "clean" : "dirty");
      add_costs(s, key + (batched ? "_vec" : "_each"), std::move(us));
    }
  }
  if (pidfd >= 0) close(pidfd);
  // Where no userfaultfd can be had (or MINOR faults on shared memory are
  // missing) the span row stays empty; an error once open is the probe's.
  MinorMapping minor;
  if (rc == 0 && pages >= kSpanPages && minor.open(m.fd, m.bytes) == 0) {
    dirty_all(minor.map, pages);
    rc = time_span_unmaps(minor, pages, &us);
    if (rc == 0) add_costs(s, "unmap_span", std::move(us));
  }
  return rc;
}

}  // namespace mtier::tools::bench
