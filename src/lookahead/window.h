// SPDX-License-Identifier: Apache-2.0
// The lookahead window: the pages the current and the next batches named,
// pinned against eviction until the program advances past the batch that
// named them last (FBGEMM's SSD cache learned that a prefetch must never
// evict rows a batch in flight uses). Pins are bits of the page words
// (page/page_state.h); this class remembers which pages each batch pinned,
// keeps the pinned count within the limit, and releases pins on advance.
//
// Threads: used by the lookahead's worker only (not thread-safe). The
// count of pinned pages is Core::counters.pinned_pages (a discard of a
// pinned page takes it off there too).
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "page/core.h"

namespace mtier {

class PinWindow {
 public:
  explicit PinWindow(Core& core) : core_(core) {}

  // The most pages pinned at once: pin_limit_pct of the DRAM budget, so
  // that eviction always has unpinned pages to take (a window larger than
  // that is demand-faulted beyond it, never a deadlock).
  uint64_t limit() const;
  // Makes room to record `n` pins of `batch` (allocates: call with no lock
  // held; std::bad_alloc escapes to the caller).
  void reserve(uint64_t batch, size_t n);
  // Pins page `page` of `t` for `batch` (reserve()d). False when the window
  // is full and the page was not pinned before: the caller neither pins nor
  // fetches it (an overflow). Caller holds the registry shared and the
  // page's stripe lock.
  bool pin(Table* t, uint64_t page, uint64_t batch);
  // Releases the pins of every batch before `batch`: a page keeps its pin
  // if a later batch named it too. Takes the registry (shared) and the
  // stripe locks itself; the caller holds none.
  void advance(uint64_t batch);
  // The batch the program works on (the last advance), 0 before any.
  uint64_t current() const { return current_; }
  // Whether `batch` is one the program has not reached: after an advance,
  // a batch beyond the current one. Such a batch's pages past the pin
  // limit are not read ahead (they would push out the unpinned pages the
  // current batch still uses); before any advance every batch reads them.
  bool ahead(uint64_t batch) const { return advanced_ && batch > current_; }

 private:
  struct Key {
    int table_id;
    uint64_t page;
  };
  struct BatchPins {
    uint64_t batch;
    std::vector<Key> pages;
  };
  BatchPins& pins_of(uint64_t batch);

  Core& core_;
  std::deque<BatchPins> batches_;  // ascending by batch
  uint64_t current_ = 0;
  bool advanced_ = false;
};

}  // namespace mtier
