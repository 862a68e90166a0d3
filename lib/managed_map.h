// SPDX-License-Identifier: Apache-2.0
// The interposer's record of what it handed out: one entry per managed
// allocation (a table), with the parts the program munmapped since.
// Not thread-safe: the interposer holds its lock around every use.
// Nothing here throws: the calls that need memory say when there was none
// (they run inside malloc and munmap, see boundary.h), and leave the record
// as it was then.
#pragma once
#include <cstdint>
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "sys/page_size.h"

namespace mtier::lib {

struct Managed {
  char* base = nullptr;    // the table's first byte (page-aligned)
  uint64_t capacity = 0;   // the table's bytes (whole pages)
  char* ptr = nullptr;     // what the program got (base, or aligned above it)
  int id = 0;              // engine table id
  uint64_t requested = 0;  // the bytes the program asked for
  // Page intervals [first, last) from base that the program unmapped
  // (PROT_NONE, discarded), sorted and merged.
  std::vector<std::pair<uint64_t, uint64_t>> unmapped;

  char* end() const { return base + capacity; }
  uint64_t pages() const { return capacity / kPageSize; }
  uint64_t usable(const void* p) const {
    return capacity - static_cast<uint64_t>(static_cast<const char*>(p) - base);
  }
  uint64_t unmapped_pages() const;
  // Adds [first, last) to the unmapped set; false (set unchanged) when out of memory.
  [[nodiscard]] bool add_unmapped(uint64_t first, uint64_t last) noexcept;
  // Takes [first, last) out of the unmapped set (a grow by mremap); false
  // (set unchanged) when out of memory.
  [[nodiscard]] bool remove_unmapped(uint64_t first, uint64_t last) noexcept;
};

class ManagedMap {
 public:
  // The record whose [base, end) contains p, or nullptr.
  Managed* find(const void* p) noexcept;
  // The new record, or nullptr (map unchanged) when out of memory.
  [[nodiscard]] Managed* insert(const Managed& m) noexcept;
  void erase(const Managed* m) noexcept;
  // The record with the lowest base that overlaps [lo, hi), or nullptr. To
  // visit every overlap while erasing some, start the next look at the end
  // of the record just visited (no list is built: no allocation).
  Managed* first_overlapping(const char* lo, const char* hi) noexcept;
  size_t size() const { return by_base_.size(); }

 private:
  std::map<uintptr_t, Managed> by_base_;
};

}  // namespace mtier::lib
