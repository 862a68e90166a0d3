// SPDX-License-Identifier: Apache-2.0
#include "heat/clock.h"

#include <algorithm>

#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier {
namespace {

// The daemon writes hints from another process (or thread, in tests).
bool kept_by_hint(const uint8_t* hints, uint64_t region_page) {
  return hints && __atomic_load_n(&hints[region_page], __ATOMIC_RELAXED) >= ClockHand::kKeepHint;
}

}  // namespace

bool ClockHand::kept(const Table* t, uint64_t page, uint64_t word, const uint8_t* hints) {
  return PageWord::pinned(word) || t->held(page) || kept_by_hint(hints, t->first_page + page);
}

void ClockHand::flush_zap() {
  if (zap_len_) {
    (void)sys::zap(zap_start_, zap_len_);
    zap_calls_++;
  }
  core_.counters.sampled_pages.fetch_add(zap_pages_, std::memory_order_relaxed);
  zap_len_ = 0;
  zap_pages_ = 0;
  span_end_ = nullptr;
}

// One zap covers the referenced pages and whatever lies between them that
// has no page-table entry worth keeping (span()). Why: every zap is a TLB
// shootdown, an IPI to the trainer's CPU; with scattered rows, referenced
// pages are rarely adjacent and a zap a page made madvise the largest cost
// of a replay (14% of its cycles, 2026-12-05 profile).
void ClockHand::zap_page(char* a) {
  if (zap_len_ && span_end_ == a && static_cast<uint64_t>(a + kPageSize - zap_start_) <= kMaxZapBytes) {
    zap_len_ = static_cast<uint64_t>(a + kPageSize - zap_start_);
  } else {
    flush_zap();
    zap_start_ = a;
    zap_len_ = kPageSize;
  }
  zap_pages_++;
  span_end_ = a + kPageSize;
}

// The page at `a` (just visited) may lie inside a zap: it has no PTE (not
// resident, or unreferenced since its last zap) or losing its PTE costs at
// most a MINOR fault that the handler serves in any state (under the
// page's lock, as every fault). Pages the hand keeps mapped on purpose
// (pinned, kept by a hint, a table named ahead, another tier's) break the
// span instead (sweep).
void ClockHand::span(char* a) {
  if (span_end_ == a) span_end_ = a + kPageSize;
}

uint64_t ClockHand::sweep(uint64_t budget, std::vector<PageRef>* cold, size_t max_cold, int tier,
                          bool use_hints) {
  const uint8_t* hints = use_hints ? core_.hints : nullptr;
  const auto& tables = core_.tables.ordered();
  if (tables.empty()) return 0;
  size_t ti = core_.tables.index_at_or_after(hand_);
  uint64_t visited = 0, walked = 0, total = 0;
  const uint64_t now_ms = spare_walks_ || mode_.scan_only ? Table::walk_clock_ms() : 0;
  for (Table* t : tables) total += t->pages;
  while (visited < budget && walked < total && (!cold || cold->size() < max_cold)) {
    Table* t = tables[ti];
    uint64_t page = hand_ > t->first_page && hand_ < t->first_page + t->pages
                        ? hand_ - t->first_page : 0;
    const uint64_t spared_from = spare_walks_ ? t->spared_from(now_ms) : UINT64_MAX;
    if (mode_.scan_only && t->spared_from(now_ms) != UINT64_MAX) {
      walked += t->pages - page;  // passed over whole: take_behind_walks' pages
      page = t->pages;
      span_end_ = nullptr;
    }
    for (; page < t->pages && visited < budget && (!cold || cold->size() < max_cold);
         page++, walked++) {
      PageWordAtomic& w = t->words[page];
      uint64_t v = w.load(std::memory_order_acquire);
      PageState s = PageWord::state(v);
      char* a = t->page_addr(page);
      if (s != PageState::kClean && s != PageState::kDirty) {
        span(a);  // not resident, or on its way in or out: see span()
        continue;
      }
      if (tier >= 0 && PageWord::slow(v) != (tier == 1)) {
        span_end_ = nullptr;  // another tier's page: its PTE is not ours to drop
        continue;
      }
      visited++;
      if (mode_.decay_heat) decay_heat(w);
      // A page the daemon keeps is no victim this turn: passed over with its
      // referenced bit left alone, since a zap would only cost it a MINOR
      // fault (measured: 28k more faults in a replay at 100% budget).
      // A page the lookahead window pins is no victim either (nor zapped:
      // the batch that named it is about to read it).
      if (cold && kept(t, page, v, hints)) {
        span_end_ = nullptr;
        continue;
      }
      if (take_any_) {  // the last resort (set_take_any): no bit, no zap
        span_end_ = nullptr;
        if (cold) cold->push_back({t, page});
        continue;
      }
      // Ahead of a live walk (spare_walks): a marked page is passed over;
      // an unmarked one (a previous pass's, behind that walk) still goes.
      if (cold && page >= spared_from && (PageWord::referenced(v) || PageWord::heat(v) > 0)) {
        span_end_ = nullptr;
        continue;
      }
      if (mode_.scan_only) {  // no zaps: each page's mapping stays as it is
        span_end_ = nullptr;
        if (cold && PageWord::walked(v) && !PageWord::referenced(v))
          cold->push_back({t, page});
        continue;
      }
      // A referenced page that was accessed again since it was placed or
      // last zapped (heat >= kHotHeat) keeps its mapping and its bit this
      // rotation, its heat halved: a hot row is zapped every other rotation
      // instead of every one. Each zap of a page still in use costs a MINOR
      // fault, a round trip through the handler; measured on a 512 MiB
      // replay at 25%: 42% fewer MINOR faults for 2% more misses.
      if (cold && PageWord::referenced(v) && PageWord::heat(v) >= kHotHeat) {
        decay_heat(w);
        span_end_ = nullptr;  // mapped
        continue;
      }
      if (test_and_clear_referenced(w)) {
        if (t->named_ahead.load(std::memory_order_relaxed)) {  // table.h: stays mapped
          span_end_ = nullptr;
          continue;
        }
        zap_page(a);
      } else {
        // Unreferenced: zapped when its bit was cleared - unless its table
        // is named ahead, whose bits are cleared with no zap.
        if (t->named_ahead.load(std::memory_order_relaxed)) span_end_ = nullptr;
        else span(a);
        if (cold && mode_.by_frequency && PageWord::heat(v) > 0) decay_heat(w);
        else if (cold) cold->push_back({t, page});
      }
    }
    hand_ = t->first_page + page;
    if (page >= t->pages) {
      ti = (ti + 1) % tables.size();
      if (ti == 0) rotations_++;
      hand_ = tables[ti]->first_page;
    }
  }
  flush_zap();
  return visited;
}

size_t ClockHand::take_behind_walks(std::vector<PageRef>* cold, size_t max_cold,
                                    bool use_hints) {
  const uint8_t* hints = use_hints ? core_.hints : nullptr;
  const uint64_t now_ms = Table::walk_clock_ms();
  const size_t before = cold->size();
  // Whether page `page` of `t` is a walk's own page the walk is past.
  auto take = [&](Table* t, uint64_t page) {
    uint64_t v = t->words[page].load(std::memory_order_acquire);
    PageState s = PageWord::state(v);
    if ((s != PageState::kClean && s != PageState::kDirty) || PageWord::slow(v)) return;
    if (PageWord::walked(v) && !kept(t, page, v, hints)) cold->push_back({t, page});
  };
  for (Table* t : core_.tables.ordered()) {
    uint64_t front = t->spared_from(now_ms);
    if (front == UINT64_MAX) continue;
    front = std::min(front, t->pages);
    if (front < t->behind_hi) t->behind_lo = t->behind_hi = front;  // a new pass
    const size_t first = cold->size();
    uint64_t looked = 0;
    // The pages passed since the last call, the newest first...
    uint64_t page = front;
    for (; page > t->behind_hi && cold->size() < max_cold && looked < kBehindPages; looked++)
      take(t, --page);
    if (page > t->behind_hi) {
      // ...cut short: what is left of them is looked at next time.
      t->behind_lo = page;
      t->behind_hi = front;
    } else {
      t->behind_hi = front;
      // ...then the older ones, below those looked at already.
      for (page = t->behind_lo; page > 0 && cold->size() < max_cold && looked < kBehindPages;
           looked++)
        take(t, --page);
      t->behind_lo = page;
    }
    // In address order, as every victim list (the evictor's runs).
    std::reverse(cold->begin() + static_cast<std::ptrdiff_t>(first), cold->end());
    if (cold->size() >= max_cold) break;
  }
  return cold->size() - before;
}

}  // namespace mtier
