// SPDX-License-Identifier: Apache-2.0
#include "sys/perf.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace mtier::sys {
namespace {

int ioctl_errno(int fd, unsigned long req, unsigned long arg) {
  return ioctl(fd, req, arg) == 0 ? 0 : -errno;
}

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

int perf_open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  perf_event_attr copy = attr;
  if (copy.size == 0) copy.size = sizeof(copy);
  long fd = syscall(SYS_perf_event_open, &copy, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

int perf_enable(int fd, bool group) {
  return ioctl_errno(fd, PERF_EVENT_IOC_ENABLE, group ? PERF_IOC_FLAG_GROUP : 0);
}

int perf_disable(int fd, bool group) {
  return ioctl_errno(fd, PERF_EVENT_IOC_DISABLE, group ? PERF_IOC_FLAG_GROUP : 0);
}

int perf_set_period(int fd, uint64_t period) {
  return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) == 0 ? 0 : -errno;
}

int perf_set_output(int fd, int output_fd) {
  return ioctl_errno(fd, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(output_fd));
}

PerfRing::~PerfRing() { reset(); }

PerfRing::PerfRing(PerfRing&& other) noexcept { *this = std::move(other); }

PerfRing& PerfRing::operator=(PerfRing&& other) noexcept {
  if (this == &other) return *this;
  reset();
  control_ = std::exchange(other.control_, nullptr);
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  map_ = std::exchange(other.map_, nullptr);
  map_len_ = std::exchange(other.map_len_, 0);
  scratch_ = std::move(other.scratch_);
  corrupt_skips_ = std::exchange(other.corrupt_skips_, 0);
  skipped_bytes_ = std::exchange(other.skipped_bytes_, 0);
  return *this;
}

void PerfRing::reset() {
  if (map_) munmap(map_, map_len_);
  control_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  map_ = nullptr;
  map_len_ = 0;
  scratch_.clear();
}

int PerfRing::map(int fd, unsigned data_pages_log2) {
  if (data_pages_log2 > 20) return -EINVAL;
  reset();
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t len = page * ((size_t{1} << data_pages_log2) + 1);
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -errno;
  auto* pg = static_cast<perf_event_mmap_page*>(p);
  // data_offset/data_size are filled in since Linux 4.1; before, the data
  // area is everything after the first page.
  uint64_t off = pg->data_offset ? pg->data_offset : page;
  uint64_t size = pg->data_size ? pg->data_size : len - page;
  if (off < sizeof(perf_event_mmap_page) || off + size > len || !power_of_two(size)) {
    munmap(p, len);
    return -EPROTO;
  }
  map_ = p;
  map_len_ = len;
  control_ = pg;
  data_ = static_cast<uint8_t*>(p) + off;
  size_ = size;
  scratch_.assign((std::min<size_t>(size_, kMaxRecordBytes) + 7) / 8, 0);
  return 0;
}

int PerfRing::attach(void* block, size_t control_bytes, size_t data_bytes) {
  if (!block || reinterpret_cast<uintptr_t>(block) % 8 != 0 ||
      control_bytes < sizeof(perf_event_mmap_page) || control_bytes % 8 != 0 || data_bytes < 8 ||
      !power_of_two(data_bytes))
    return -EINVAL;
  reset();
  control_ = static_cast<perf_event_mmap_page*>(block);
  data_ = static_cast<uint8_t*>(block) + control_bytes;
  size_ = data_bytes;
  scratch_.assign((std::min<size_t>(size_, kMaxRecordBytes) + 7) / 8, 0);
  return 0;
}

uint64_t PerfRing::pending() const {
  if (!control_) return 0;
  return __atomic_load_n(&control_->data_head, __ATOMIC_ACQUIRE) -
         __atomic_load_n(&control_->data_tail, __ATOMIC_RELAXED);
}

long PerfRing::read(Visitor fn, void* ctx, size_t max_records) {
  if (!control_) return -EINVAL;
  // Acquire pairs with the kernel's store of data_head after it wrote the
  // records (perf_output_put_handle), so the records below are complete.
  const uint64_t head = __atomic_load_n(&control_->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = __atomic_load_n(&control_->data_tail, __ATOMIC_RELAXED);
  const uint64_t mask = size_ - 1;
  long visited = 0;
  bool corrupt = head - tail > size_;
  while (!corrupt && tail != head && static_cast<size_t>(visited) < max_records) {
    const uint64_t avail = head - tail;
    const size_t off = tail & mask;
    perf_event_header hdr;
    if (avail < sizeof(hdr) || off % 8 != 0) {
      corrupt = true;
      break;
    }
    // An 8-aligned header never straddles the end of a power-of-two area.
    std::memcpy(&hdr, data_ + off, sizeof(hdr));
    if (hdr.size < sizeof(hdr) || hdr.size % 8 != 0 || hdr.size > size_ || hdr.size > avail) {
      corrupt = true;
      break;
    }
    const perf_event_header* rec;
    if (off + hdr.size <= size_) {
      rec = reinterpret_cast<const perf_event_header*>(data_ + off);
    } else {
      size_t first = size_ - off;
      auto* dst = reinterpret_cast<uint8_t*>(scratch_.data());
      std::memcpy(dst, data_ + off, first);
      std::memcpy(dst + first, data_, hdr.size - first);
      rec = reinterpret_cast<const perf_event_header*>(dst);
    }
    tail += hdr.size;
    visited++;
    if (!fn(ctx, rec)) break;
  }
  if (corrupt) {
    corrupt_skips_++;
    skipped_bytes_ += head - tail;
    tail = head;
  }
  // Release orders our reads of the records before the kernel sees the
  // space as free (the smp_mb() the uapi header asks for).
  __atomic_store_n(&control_->data_tail, tail, __ATOMIC_RELEASE);
  return corrupt ? -EBADMSG : visited;
}

}  // namespace mtier::sys
