// SPDX-License-Identifier: Apache-2.0
// The bounded scan of the page words (see page_scan.h).
#include "page_scan.h"

#include <algorithm>

#include "word_runs.h"

namespace mtier::daemon {

void ensure_track(TableTrack* track, uint64_t pages) {
  if (track->pages == pages && track->place.size() == pages) return;
  *track = TableTrack{};
  track->pages = pages;
  track->place.assign(pages, policy::Place::kUntouched);
  track->count[static_cast<size_t>(policy::Place::kUntouched)] = pages;
  track->unread = pages;
}

void read_places(TableTrack* track, const std::atomic<uint64_t>* words, uint64_t lo, uint64_t hi) {
  hi = std::min(hi, track->pages);
  if (lo >= hi) return;
  const policy::Place never_written = place_of_word(0);
  // Words in segment pages the client never wrote are not read (word_runs.h).
  for_each_word_run(words, lo, hi, [&](uint64_t a, uint64_t b, bool held) {
    for (uint64_t p = a; p < b; p++) {
      policy::Place now = held ? place_of_word(words[p].load(std::memory_order_relaxed))
                               : never_written;
      policy::Place was = track->place[p];
      if (was == now) continue;
      if (track->primed) {
        unsigned m = page_move(was, now);
        if (m < kPageMoveKinds) track->moves[m]++;
      }
      track->count[static_cast<size_t>(was)]--;
      track->count[static_cast<size_t>(now)]++;
      track->place[p] = now;
    }
  });
  // Primed once a pass's worth of pages was read: moves count from then on
  // (a page first read in DRAM was not "new to DRAM" just then).
  track->unread -= std::min(track->unread, hi - lo);
  if (track->unread == 0) track->primed = true;
}

namespace {

// Calls fn(first, end, pages) for each group: tables [first, end), which
// share a group, and their pages.
template <class F>
void for_each_group(const std::vector<ScanTable>& tables, F fn) {
  for (size_t i = 0; i < tables.size();) {
    uint64_t size = 0;
    size_t j = i;
    for (; j < tables.size() && tables[j].group == tables[i].group; j++) size += tables[j].pages;
    fn(i, j, size);
    i = j;
  }
}

}  // namespace

uint64_t PageScan::scan(const std::vector<ScanTable>& tables, std::vector<ScanWindow>* windows) {
  windows->assign(tables.size(), ScanWindow{});
  uint64_t total = 0;
  for (const ScanTable& t : tables) total += t.pages;
  if (total <= budget_) {
    for (size_t i = 0; i < tables.size(); i++) {
      (*windows)[i] = {0, tables[i].pages};
      read_places(tables[i].track, tables[i].words, 0, tables[i].pages);
    }
    cursor_ = 0;
    last_pages_ = total;
    return total;
  }
  // The level: the largest L with sum of min(group pages, L) <= budget, by
  // bisection over [0, budget] (the groups' pages add up to more than the
  // budget, so some group is larger than L and read in part).
  auto filled = [&](uint64_t level) {
    uint64_t sum = 0;
    for_each_group(tables, [&](size_t, size_t, uint64_t size) { sum += std::min(size, level); });
    return sum;
  };
  uint64_t lo = 0, hi = budget_;  // filled(lo) <= budget_
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (filled(mid) <= budget_)
      lo = mid;
    else
      hi = mid - 1;
  }
  // Groups of at most `lo` pages whole; the others from the cursor.
  uint64_t whole = 0, large = 0;
  for_each_group(tables, [&](size_t i, size_t j, uint64_t size) {
    if (size > lo) {
      large += size;
      return;
    }
    for (; i < j; i++) {
      (*windows)[i] = {0, tables[i].pages};
      read_places(tables[i].track, tables[i].words, 0, tables[i].pages);
    }
    whole += size;
  });
  if (cursor_ >= large) cursor_ = 0;  // tables shrank or left
  uint64_t from = cursor_, to = std::min(large, from + (budget_ - whole));
  cursor_ = to == large ? 0 : to;
  uint64_t at = 0;  // where a large group's table starts, end to end
  for_each_group(tables, [&](size_t i, size_t j, uint64_t size) {
    if (size <= lo) return;
    for (; i < j; i++) {
      const ScanTable& t = tables[i];
      uint64_t a = std::max(at, from), b = std::min(at + t.pages, to);
      if (a < b) {
        (*windows)[i] = {a - at, b - at};
        read_places(t.track, t.words, a - at, b - at);
      }
      at += t.pages;
    }
  });
  last_pages_ = whole + (to - from);
  return last_pages_;
}

}  // namespace mtier::daemon
