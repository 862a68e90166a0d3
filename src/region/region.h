// SPDX-License-Identifier: Apache-2.0
// The one managed virtual region: a memfd (shmem) of `bytes`, mapped shared
// twice. `base` is the mapping the trainer uses, registered with userfaultfd;
// `alias` is not registered, so the runtime can reach resident pages (a page's
// NUMA node, tier moves) without faulting; write-back reads through the memfd
// (read()). Reservation costs no memory (sparse memfd,
// MAP_NORESERVE). Callers must only touch alias pages that are resident:
// touching an absent one would allocate it behind the engine's back.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace mtier {

class Region {
 public:
  // Returns nullptr with *err = -errno (logged) on failure.
  static std::unique_ptr<Region> create(uint64_t bytes, int* err);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  char* base() const { return base_; }
  char* alias() const { return alias_; }
  uint64_t bytes() const { return bytes_; }
  int memfd() const { return memfd_; }
  bool contains(const void* p) const {
    auto c = static_cast<const char*>(p);
    return c >= base_ && c < base_ + bytes_;
  }
  // Frees the memory of [off, off+len) at once (punch hole). 0 or -errno.
  [[nodiscard]] int punch(uint64_t off, uint64_t len) const;
  // Copies [off, off+len) of the memfd into buf through the file, not the
  // alias: the alias stays unmapped, so the punch that later frees the
  // pages has no page-table entry to clear and no TLB to flush. Measured:
  // the write-back's copy through the alias made each eviction's punch cost
  // a TLB shootdown IPI to the trainer's CPU (12% of a replay's cycles).
  // 0 or -errno.
  [[nodiscard]] int read(uint64_t off, void* buf, uint64_t len) const;
  // Pages of [off, off+len) that the memfd holds in memory (mincore on the
  // alias: counts zapped pages too, which RSS would miss).
  [[nodiscard]] long resident_pages(uint64_t off, uint64_t len) const;

 private:
  Region() = default;
  int memfd_ = -1;
  char* base_ = nullptr;
  char* alias_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace mtier
