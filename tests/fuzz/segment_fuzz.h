// SPDX-License-Identifier: Apache-2.0
// One input of the segment parser's fuzz test (ipc::Segment::attach and
// read_directory, src/ipc/segment.h): the input is the start of a segment
// as a hostile runtime would write it (header, directory), the rest of the
// file zeros. The file is sized by the header's own total_bytes when that is
// small (so the layout checks are reached), else by the input. Nothing may
// crash or read out of bounds; every rejection names its reason; a
// directory that reads has every entry inside the region, no two
// overlapping, each name NUL-terminated. Shared by tests/fuzz/segment_fuzz.cc
// (libFuzzer) and tests/unit/ipc_segment_test.cc (IpcSegment.SeededFuzz).
// Returns false when an invariant broke (the caller traps or fails);
// *outcome (if given): 1 the directory read, 0 rejected, -1 not tried.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ipc/segment.h"
#include "sys/shm.h"

namespace mtier::ipc::fuzz {

// Segments larger than this are not made (the fuzzer's memory).
inline constexpr uint64_t kMaxFuzzBytes = 16u << 20;

inline bool segment_one(const uint8_t* data, size_t size, int* outcome = nullptr) {
  int ignored;
  if (!outcome) outcome = &ignored;
  *outcome = -1;
  uint64_t bytes = (size + 4095) & ~uint64_t{4095};
  if (size >= sizeof(SegmentLayout)) {
    SegmentLayout l;
    memcpy(&l, data, sizeof l);
    if (l.total_bytes >= size && l.total_bytes <= kMaxFuzzBytes) bytes = l.total_bytes;
  }
  if (bytes == 0 || bytes > kMaxFuzzBytes) return true;
  int fd = sys::memfd_sealable("segment-fuzz");
  if (fd < 0) return true;  // out of descriptors: nothing to learn
  bool ok = true;
  if (sys::resize_fd(fd, bytes) == 0 && pwrite(fd, data, size, 0) == static_cast<ssize_t>(size) &&
      sys::add_seals(fd, F_SEAL_SHRINK | F_SEAL_GROW) == 0) {
    std::unique_ptr<Segment> s;
    std::string why;
    int rc = Segment::attach(fd, bytes, &s, &why);
    *outcome = 0;
    if (rc < 0) {
      ok = !why.empty() && !s;
    } else {
      std::vector<TableEntry> dir;
      uint64_t gen = 0;
      rc = s->read_directory(&dir, &gen);
      if (rc == 0) {
        *outcome = 1;
        std::sort(dir.begin(), dir.end(), [](const TableEntry& a, const TableEntry& b) {
          return a.first_page < b.first_page;
        });
        uint64_t end = 0;
        for (const TableEntry& e : dir) {
          ok &= e.id != 0 && e.pages > 0 && e.first_page >= end &&
                e.pages <= s->region_pages() - e.first_page &&
                memchr(e.name, 0, sizeof e.name) != nullptr;
          end = e.first_page + e.pages;
        }
      } else {
        ok = dir.empty() && (rc == -EBADMSG || rc == -EAGAIN);
      }
    }
  }
  close(fd);
  return ok;
}

}  // namespace mtier::ipc::fuzz
