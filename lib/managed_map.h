// The interposer's record of what it handed out: one entry per managed
// allocation (a table), with the parts the program munmapped since.
// Not thread-safe: the interposer holds its lock around every use.
#pragma once
#include <cstdint>
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

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
  uint64_t pages() const { return capacity / 4096; }
  uint64_t usable(const void* p) const {
    return capacity - static_cast<uint64_t>(static_cast<const char*>(p) - base);
  }
  uint64_t unmapped_pages() const;
  void add_unmapped(uint64_t first, uint64_t last);
  // Takes [first, last) out of the unmapped set (a grow by mremap).
  void remove_unmapped(uint64_t first, uint64_t last);
};

class ManagedMap {
 public:
  // The record whose [base, end) contains p, or nullptr.
  Managed* find(const void* p);
  Managed* insert(const Managed& m);
  void erase(const Managed* m);
  // Bases of the records overlapping [lo, hi), in address order (bases stay
  // valid while records are erased, iterators would not).
  std::vector<char*> overlapping(const char* lo, const char* hi) const;
  size_t size() const { return by_base_.size(); }

 private:
  std::map<uintptr_t, Managed> by_base_;
};

}  // namespace mtier::lib
