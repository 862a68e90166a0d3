// SPDX-License-Identifier: Apache-2.0
// Thin perf_event_open(2) layer for the heat sources: the syscall, the ioctls
// the rate controller needs, and PerfRing, the reader of a sample ring (the
// perf_event_mmap_page control page followed by 2^n data pages). Every call
// returns 0 (or an fd / a count) or -errno.
#pragma once
#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace mtier::sys {

// perf_event_open(2); PERF_FLAG_FD_CLOEXEC is always added to `flags`.
// Returns the fd or -errno (ENOENT: no such PMU / event on this machine,
// EACCES/EPERM: perf_event_paranoid or ptrace access forbid it).
[[nodiscard]] int perf_open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                            unsigned long flags);
// PERF_EVENT_IOC_ENABLE / DISABLE of the event (and of the children it
// inherited into threads created since); `group`: of every member of the
// group `fd` leads (PERF_IOC_FLAG_GROUP).
[[nodiscard]] int perf_enable(int fd, bool group = false);
[[nodiscard]] int perf_disable(int fd, bool group = false);
// PERF_EVENT_IOC_PERIOD. The kernel applies it to this event only: children
// already inherited keep the period they were created with; threads created
// afterwards inherit the new one. IBS rounds it down to a multiple of 16.
[[nodiscard]] int perf_set_period(int fd, uint64_t period);
// PERF_EVENT_IOC_SET_OUTPUT: records of `fd` go to the ring of `output_fd`.
// Both must be per-task events on the same task (or per-cpu on one cpu).
[[nodiscard]] int perf_set_output(int fd, int output_fd);

// Reader of one sample ring. The kernel writes records at data_head; the
// reader consumes from data_tail and publishes the new tail, so the kernel
// never overwrites unread records (it drops and later reports
// PERF_RECORD_LOST instead). Single reader; not thread-safe.
class PerfRing {
 public:
  // One record is at most this big: perf_event_header.size is a u16.
  static constexpr size_t kMaxRecordBytes = 65535;
  // Called once per record, in ring order. `rec` is 8-aligned and valid for
  // rec->size bytes until the call returns (a record that wraps around the
  // end of the data area is handed over as a contiguous copy). Returning
  // false stops the read after this record (which counts as consumed).
  using Visitor = bool (*)(void* ctx, const perf_event_header* rec);

  PerfRing() = default;
  ~PerfRing();
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;
  PerfRing(PerfRing&& other) noexcept;
  PerfRing& operator=(PerfRing&& other) noexcept;

  // mmap()s the ring of perf event `fd`: one control page and
  // 2^data_pages_log2 data pages, read-write (a read-only mapping would let
  // the kernel overwrite unread records). The data area is the one the
  // kernel reports in data_offset/data_size. 0 or -errno.
  [[nodiscard]] int map(int fd, unsigned data_pages_log2);
  // Reads a ring in memory the caller owns (synthetic rings in tests, a
  // recorded ring): `block` (8-aligned) holds a perf_event_mmap_page in its
  // first `control_bytes` bytes (>= sizeof(perf_event_mmap_page)), and the
  // data area, `data_bytes` (a power of two, >= 8), right after. The control
  // page's data_head/data_tail are used as they are. 0 or -EINVAL.
  [[nodiscard]] int attach(void* block, size_t control_bytes, size_t data_bytes);
  // Unmaps (if mapped) or forgets the attached block.
  void reset();

  bool valid() const { return control_ != nullptr; }
  perf_event_mmap_page* control() const { return control_; }
  const uint8_t* data() const { return data_; }
  size_t data_size() const { return size_; }
  // Bytes written by the kernel and not consumed yet.
  uint64_t pending() const;

  // Visits the records between data_tail and data_head (at most
  // `max_records`), then stores the new data_tail. Returns the number of
  // records visited, or -EBADMSG when the ring is corrupt: a header whose
  // size is 0, < 8, not a multiple of 8, larger than the data area or past
  // data_head, or a head more than the data area ahead of the tail. Then the
  // tail is moved to the head (what was pending is dropped: corrupt_skips()
  // counts such events, skipped_bytes() the bytes) so that the next read
  // starts clean; records visited before the corrupt one were delivered.
  // Never reads outside the data area, never loops more than
  // data_size / 8 times.
  [[nodiscard]] long read(Visitor fn, void* ctx, size_t max_records = SIZE_MAX);
  // read() with a callable `bool fn(const perf_event_header*)`.
  template <class Fn>
  [[nodiscard]] long for_each(Fn&& fn, size_t max_records = SIZE_MAX) {
    using F = std::remove_reference_t<Fn>;
    return read([](void* c, const perf_event_header* r) { return (*static_cast<F*>(c))(r); },
                const_cast<void*>(static_cast<const void*>(&fn)), max_records);
  }

  uint64_t corrupt_skips() const { return corrupt_skips_; }
  uint64_t skipped_bytes() const { return skipped_bytes_; }

 private:
  perf_event_mmap_page* control_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;      // data area bytes, a power of two
  void* map_ = nullptr;  // non-null when map() owns the mapping
  size_t map_len_ = 0;
  std::vector<uint64_t> scratch_;  // contiguous copy of a wrapping record
  uint64_t corrupt_skips_ = 0;
  uint64_t skipped_bytes_ = 0;
};

}  // namespace mtier::sys
