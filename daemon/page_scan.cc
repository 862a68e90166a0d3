// The bounded scan of the page words (see page_scan.h).
#include "page_scan.h"

#include <algorithm>

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
  for (uint64_t p = lo; p < hi; p++) {
    policy::Place now = place_of_word(words[p].load(std::memory_order_relaxed));
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
  // Primed once a pass's worth of pages was read: moves count from then on
  // (a page first read in DRAM was not "new to DRAM" just then).
  track->unread -= std::min(track->unread, hi - lo);
  if (track->unread == 0) track->primed = true;
}

uint64_t PageScan::scan(const std::vector<ScanTable>& tables, std::vector<ScanWindow>* windows) {
  windows->assign(tables.size(), ScanWindow{});
  uint64_t total = 0;
  for (const ScanTable& t : tables) total += t.pages;
  uint64_t from = 0, to = total;
  if (total > budget_) {
    if (cursor_ >= total) cursor_ = 0;  // tables shrank or left
    from = cursor_;
    to = std::min(total, from + budget_);
    cursor_ = to == total ? 0 : to;
  } else {
    cursor_ = 0;
  }
  uint64_t at = 0;  // where tables[i] starts, end to end
  for (size_t i = 0; i < tables.size(); i++) {
    const ScanTable& t = tables[i];
    uint64_t lo = std::max(at, from), hi = std::min(at + t.pages, to);
    at += t.pages;
    if (lo >= hi) continue;
    (*windows)[i] = {lo - (at - t.pages), hi - (at - t.pages)};
    read_places(t.track, t.words, (*windows)[i].lo, (*windows)[i].hi);
  }
  last_pages_ = to - from;
  return last_pages_;
}

}  // namespace mtier::daemon
