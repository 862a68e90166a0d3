// SPDX-License-Identifier: Apache-2.0
// Front-to-back walks over a table's missing pages, recognised so that a
// fault on the next page of a walk brings the pages after it too, in the
// same round trip - doubling while the walk goes on, as the kernel's
// readahead does for a file or for swap.
//
// Why: a program that fills a new buffer front to back, or reads back one
// that was evicted (a DLRM set-up: a float64 array per table written, read
// back into its float32 copy, freed), otherwise takes one userfault round
// trip per 4 KiB page once DRAM is full. Measured with 1 GiB of tables and
// 2 GiB of temporaries at a 256 MiB budget: 1.44M faults, set-up 84 s
// against 25 s under the kernel's swap in a memory cgroup of the budget.
// Random accesses (embedding lookups) rarely continue a walk, so they keep
// bringing only the page they fault on.
//
// How: up to kStreams walks per table, each the page it expects next and
// its window. A fault on that page continues the walk: from the second
// such fault on, the window doubles (from kFirstWindow) up to the
// configured most; any other fault starts a walk (replacing the least
// recently continued) with the caller's base window.
//
// Contract: used by the fault handler thread only (one per engine); no
// locks, no allocation.
#pragma once
#include <algorithm>
#include <cstdint>

namespace mtier {

class SequentialStreams {
 public:
  static constexpr unsigned kStreams = 4;
  static constexpr uint32_t kFirstWindow = 4;

  // A MISSING fault on `page`: how many following pages to bring with it.
  // `base` is what a fault that continues no walk brings; `most` caps a
  // walk's window (0: no walks, always `base`).
  uint32_t on_miss(uint64_t page, uint32_t base, uint32_t most) {
    ++clock_;
    Walk* w = find(page);
    if (!w || most == 0) {
      current_ = replace();
      *current_ = {page + 1, base, 0, page, clock_};
      return base;
    }
    current_ = w;
    w->last_use = clock_;
    if (++w->hits >= 2) w->window = std::min(most, std::max(w->window * 2, kFirstWindow));
    w->window = std::max(w->window, base);
    return w->window;
  }

  // A fault on `page`, which is in DRAM (a MINOR fault): whether it
  // continues a walk for the `min_hits`-th time at least. Such faults
  // bring nothing with them: a walk over them goes a page at a time.
  bool on_present(uint64_t page, uint32_t min_hits) {
    ++clock_;
    Walk* w = find(page);
    if (!w) {
      current_ = replace();
      *current_ = {page + 1, 0, 0, page, clock_};
      return false;
    }
    current_ = w;
    *w = {page + 1, 0, w->hits + 1, page, clock_};
    return w->hits >= min_hits;
  }

  // Whether the fault on_miss was just asked about continues a walk (the
  // walk's second fault or a later one): its page and the window brought
  // with it are a front-to-back scan's, which the fault handler places
  // without heat (placement.h: the evictor's first victims).
  bool walking() const { return current_ && current_->hits > 0; }
  // Whether a MISSING fault on `page` would continue a walk that has
  // continued at least once (what walking() will say once on_miss has
  // seen it), without counting it.
  bool continues(uint64_t page) const {
    for (const Walk& w : walks_)
      if (w.next == page && w.hits > 0) return true;
    return false;
  }
  // For a fault that continues a walk: the page of the walk's previous
  // fault. The program has read from it up to this fault's page: the
  // pages in between are behind the walk now.
  uint64_t last_fault() const { return current_ ? current_->last_fault : UINT64_MAX; }

  // The fault on_miss was just asked about is followed by `followers`
  // pages that need no fault (brought with it, or already in DRAM): the
  // walk expects the page after them next.
  void brought(uint64_t page, uint64_t followers) {
    if (current_) {
      current_->next = page + 1 + followers;
      current_->last_fault = page;
    }
  }

 private:
  struct Walk {
    uint64_t next = UINT64_MAX;  // the page a continuing fault is on
    uint32_t window = 0;
    uint32_t hits = 0;           // consecutive continuing faults
    uint64_t last_fault = UINT64_MAX;  // the page of its last fault (brought())
    uint64_t last_use = 0;
  };

  Walk* find(uint64_t page) {
    for (Walk& w : walks_)
      if (w.next == page) return &w;
    return nullptr;
  }
  Walk* replace() {
    Walk* oldest = &walks_[0];
    for (Walk& w : walks_)
      if (w.last_use < oldest->last_use) oldest = &w;
    return oldest;
  }

  Walk walks_[kStreams];
  Walk* current_ = nullptr;
  uint64_t clock_ = 0;
};

}  // namespace mtier
