// SPDX-License-Identifier: Apache-2.0
// The oracle's simulation. Both policies run over dense page ids (pages
// renumbered 0..distinct-1 in order of first reference) so that per-page
// state is a plain array however sparse the page numbers are.
//
// MIN: a max-heap of (next use, page) with lazy deletion. LRU: reuse stack
// distances, counted with a bitmap of slots and a Fenwick tree over its
// words, which give the hits of every capacity in one pass (LRU has the
// inclusion property: a reference hits in a cache of C pages exactly when
// fewer than C other pages were referenced since the page's previous
// reference).
#include "oracle.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace mtier::bench {

TableLayout layout_tables(const WorkloadSpec& spec, uint64_t page_size) {
  TableLayout l;
  l.page_size = page_size;
  l.base.assign(spec.tables.size(), 0);
  if (page_size == 0) return l;
  uint64_t end = 0;  // first byte after the tables placed so far
  for (size_t t = 0; t < spec.tables.size(); ++t) {
    uint64_t base = (end + page_size - 1) / page_size * page_size;
    l.base[t] = base;
    end = base + spec.tables[t].bytes();
  }
  l.total_pages = (end + page_size - 1) / page_size;
  return l;
}

std::vector<uint64_t> page_references(const Trace& t, const TableLayout& layout) {
  std::vector<uint64_t> refs;
  const uint64_t ps = layout.page_size;
  if (ps == 0) return refs;
  uint64_t lookups = 0;  // a lower bound on the count: each row has >= 1 page
  for (const TraceBatch& b : t.batches) lookups += b.rows.size();
  refs.reserve(lookups);
  const size_t tables = t.spec.tables.size();
  const size_t batch = t.spec.batch;
  for (const TraceBatch& b : t.batches) {
    for (size_t tab = 0; tab < tables; ++tab) {
      const uint64_t row_bytes = uint64_t{t.spec.tables[tab].dim} * sizeof(float);
      if (row_bytes == 0) continue;
      const uint64_t base = layout.base[tab];
      // The bags of one table are contiguous in rows[], so its lookups in
      // bag order are one range.
      const uint32_t lo = b.offsets[tab * batch], hi = b.offsets[(tab + 1) * batch];
      for (uint32_t k = lo; k < hi; ++k) {
        const uint64_t start = base + uint64_t{b.rows[k]} * row_bytes;
        const uint64_t last = (start + row_bytes - 1) / ps;
        for (uint64_t p = start / ps; p <= last; ++p) refs.push_back(p);
      }
    }
  }
  return refs;
}

double OracleResult::min_hit_ratio() const {
  return references ? static_cast<double>(min_hits) / static_cast<double>(references) : 0.0;
}

double OracleResult::lru_hit_ratio() const {
  return references ? static_cast<double>(lru_hits) / static_cast<double>(references) : 0.0;
}

namespace {

// Index is the type of reference positions and dense page ids; its maximum
// is reserved as "never" (no next use, no previous reference), so the string
// must have fewer than max references.
template <class Index>
constexpr Index kNever = std::numeric_limits<Index>::max();

// Renumbers pages to dense ids in order of first reference. Open addressing
// with linear probing: a std::unordered_map costs a node allocation per
// distinct page and a pointer chase per reference, several times slower on
// 10M references.
template <class Index>
class DenseIds {
 public:
  // The id of `page`, a new one (== size() before the call) when unseen.
  Index get(uint64_t page) {
    if ((count_ + 1) * 2 > ids_.size()) grow();
    size_t i = slot(page);
    while (ids_[i] != kNever<Index>) {
      if (keys_[i] == page) return ids_[i];
      i = (i + 1) & mask_;
    }
    keys_[i] = page;
    ids_[i] = static_cast<Index>(count_);
    return static_cast<Index>(count_++);
  }
  uint64_t size() const { return count_; }

 private:
  size_t slot(uint64_t page) const {
    // splitmix64's finalizer: page numbers are often consecutive, which
    // would cluster under an identity hash.
    uint64_t z = page + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<size_t>(z ^ (z >> 31)) & mask_;
  }
  void grow() {
    std::vector<uint64_t> keys = std::move(keys_);
    std::vector<Index> ids = std::move(ids_);
    const size_t cap = ids.empty() ? 1024 : ids.size() * 2;
    keys_.assign(cap, 0);
    ids_.assign(cap, kNever<Index>);
    mask_ = cap - 1;
    for (size_t j = 0; j < ids.size(); ++j) {
      if (ids[j] == kNever<Index>) continue;
      size_t i = slot(keys[j]);
      while (ids_[i] != kNever<Index>) i = (i + 1) & mask_;
      keys_[i] = keys[j];
      ids_[i] = ids[j];
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<Index> ids_;  // kNever marks an empty slot
  size_t mask_ = 0;
  uint64_t count_ = 0;
};

// A MIN heap entry (next use, page), ordered by next use then page. With
// 32-bit indices it is one uint64_t, so a comparison is one instruction.
template <class Index>
struct HeapEntry {
  using Type = std::pair<Index, Index>;
  static Type make(Index key, Index page) { return {key, page}; }
  static Index key(const Type& e) { return e.first; }
  static Index page(const Type& e) { return e.second; }
};
template <>
struct HeapEntry<uint32_t> {
  using Type = uint64_t;
  static Type make(uint32_t key, uint32_t page) { return uint64_t{key} << 32 | page; }
  static uint32_t key(Type e) { return static_cast<uint32_t>(e >> 32); }
  static uint32_t page(Type e) { return static_cast<uint32_t>(e); }
};

// Counts the references the passes step through and tells the caller's
// OracleProgress, if any, every kChunk of them (a masked test in the loops:
// no measurable cost) and at each pass's end.
struct Meter {
  static constexpr size_t kChunk = size_t{1} << 20;
  explicit Meter(const OracleProgress& f) : fn(f) {}
  const OracleProgress& fn;
  uint64_t done = 0, total = 0;
  // In a loop over i: a chunk ends at i.
  void at(size_t i) {
    if (((i + 1) & (kChunk - 1)) == 0) add(kChunk);
  }
  // A pass of n references is over: what at() has not counted yet.
  void pass_end(size_t n) { add(n & (kChunk - 1)); }
  void add(uint64_t k) {
    done += k;
    if (fn) fn(done, total);
  }
};

// Renumbers refs into *ids (sized like refs) in order of first reference;
// returns the number of distinct pages. Page numbers from a layout are
// dense (below total_pages), so when the largest is small against the
// string a direct array replaces the hash table (2-3x faster); either way
// memory stays O(refs).
template <class Index>
uint64_t to_dense_ids(std::span<const uint64_t> refs, std::vector<Index>* ids) {
  const size_t n = refs.size();
  uint64_t max_page = 0;
  for (uint64_t p : refs) max_page = std::max(max_page, p);
  if (max_page < 4 * uint64_t{n} + 4096) {
    std::vector<Index> id_of(max_page + 1, kNever<Index>);
    Index count = 0;
    for (size_t i = 0; i < n; ++i) {
      Index& id = id_of[refs[i]];
      if (id == kNever<Index>) id = count++;
      (*ids)[i] = id;
    }
    return count;
  }
  DenseIds<Index> dense;
  for (size_t i = 0; i < n; ++i) (*ids)[i] = dense.get(refs[i]);
  return dense.size();
}

// Belady's MIN with `cap` frames (1 <= cap < distinct). Heap entries are
// (next use, page). Lazy deletion needs no check at the top: after step i an
// entry is stale exactly when its key is <= i (its page has been referenced
// again, and a new entry pushed) — an evicted page's entry is the one popped.
// Every live key is > i and "never" entries are all live, so when the cache
// is full the top is live and is the farthest next use. Stale entries sink
// to the bottom and are dropped by compacting when the heap doubles, which
// keeps memory O(cap) at O(1) amortized cost.
template <class Index>
uint64_t simulate_min(const std::vector<Index>& ids, const std::vector<Index>& next,
                      uint64_t distinct, uint64_t cap, Meter* meter) {
  using E = HeapEntry<Index>;
  std::vector<typename E::Type> heap;
  std::vector<uint8_t> resident(distinct, 0);
  heap.reserve(2 * cap + 64);
  uint64_t in_cache = 0, hits = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const Index p = ids[i];
    if (resident[p]) {
      ++hits;
    } else {
      if (in_cache == cap) {
        std::pop_heap(heap.begin(), heap.end());
        resident[E::page(heap.back())] = 0;
        heap.pop_back();
        --in_cache;
      }
      resident[p] = 1;
      ++in_cache;
    }
    heap.push_back(E::make(next[i], p));
    std::push_heap(heap.begin(), heap.end());
    if (heap.size() > 2 * cap + 64) {
      const Index now = static_cast<Index>(i);
      std::erase_if(heap, [now](typename E::Type e) { return E::key(e) <= now; });
      std::make_heap(heap.begin(), heap.end());
    }
    meter->at(i);
  }
  meter->pass_end(ids.size());
  return hits;
}

// A Fenwick tree of counts. Unsigned arithmetic is modulo 2^bits, so
// adding "minus one" as a wrap-around is exact while the true sums stay in
// range.
template <class Index>
class Fenwick {
 public:
  explicit Fenwick(size_t n) : t_(n + 1, 0) {}
  void add(size_t pos, Index delta) {
    for (size_t i = pos + 1; i < t_.size(); i += i & (~i + 1)) t_[i] += delta;
  }
  // Sum over positions (lo, hi), lo < hi. The two prefix walks stop where
  // they meet, so a short range costs O(log(hi - lo)) nodes, not two full
  // walks.
  Index between(size_t lo, size_t hi) const {
    size_t a = lo + 1, b = hi;  // the sum is prefix(b) - prefix(a), 1-based
    Index s = 0;
    while (a != b) {
      if (b > a) {
        s += t_[b];
        b &= b - 1;
      } else {
        s -= t_[a];
        a &= a - 1;
      }
    }
    return s;
  }
  // Sets position i to value(i) for every i, in O(n).
  template <class F>
  void build(F value) {
    for (size_t i = 1; i < t_.size(); ++i) t_[i] = value(i - 1);
    for (size_t i = 1; i < t_.size(); ++i) {
      const size_t up = i + (i & (~i + 1));
      if (up < t_.size()) t_[up] += t_[i];
    }
  }

 private:
  std::vector<Index> t_;
};

// A set of slots: a bit per slot and, per 64-slot word, its count in a
// Fenwick tree. Counting a range is two popcounts and a walk over a tree
// 64 times smaller than one over slots: for a million pages the bits and
// the tree fit in L2 where a per-slot tree would not.
template <class Index>
class SlotSet {
 public:
  explicit SlotSet(size_t slots) : bits_((slots + 63) / 64, 0), words_(bits_.size()) {}
  void insert(size_t s) {
    bits_[s / 64] |= uint64_t{1} << (s % 64);
    words_.add(s / 64, 1);
  }
  void erase(size_t s) {
    bits_[s / 64] &= ~(uint64_t{1} << (s % 64));
    words_.add(s / 64, static_cast<Index>(~Index{0}));  // -1
  }
  // Members strictly between lo and hi, lo < hi.
  Index count_between(size_t lo, size_t hi) const {
    const size_t wl = lo / 64, wh = hi / 64;
    const unsigned bl = lo % 64, bh = hi % 64;
    if (wl == wh) {  // bits bl+1 .. bh-1; bl < bh, so no shift is by 64
      const uint64_t below_hi = (uint64_t{1} << bh) - 1;
      return static_cast<Index>(std::popcount((bits_[wl] & below_hi) >> bl >> 1));
    }
    const uint64_t above_lo = bl == 63 ? 0 : bits_[wl] >> (bl + 1);
    const uint64_t below_hi = bits_[wh] & ((uint64_t{1} << bh) - 1);
    return static_cast<Index>(std::popcount(above_lo) + std::popcount(below_hi)) +
           words_.between(wl, wh);
  }
  // Makes the set exactly {0, ..., k-1}.
  void assign_first(size_t k) {
    for (size_t w = 0; w < bits_.size(); ++w) {
      const size_t lo = w * 64;
      bits_[w] = k >= lo + 64 ? ~uint64_t{0} : k > lo ? (uint64_t{1} << (k - lo)) - 1 : 0;
    }
    words_.build([this](size_t w) { return static_cast<Index>(std::popcount(bits_[w])); });
  }

 private:
  std::vector<uint64_t> bits_;
  Fenwick<Index> words_;
};

// LRU hits for capacities 0..distinct: hits[c] = references whose reuse
// stack distance is <= c. Each page's latest reference holds a slot of a
// timeline, so the pages referenced since page p's previous reference are
// the members between p's slot and now. Only order matters, so when the
// timeline fills, the live slots are packed to its front: a timeline of
// 2 x distinct slots instead of one per reference keeps the structure small
// enough to stay in cache, and a repack every >= distinct references is
// O(1) amortized.
template <class Index>
std::vector<uint64_t> lru_hits_by_capacity(const std::vector<Index>& ids, uint64_t distinct,
                                           Meter* meter) {
  std::vector<uint64_t> hits(distinct + 1, 0);
  const size_t slots = std::min<size_t>(ids.size(), 2 * distinct + 1024);
  std::vector<Index> slot_of(distinct, kNever<Index>);  // latest slot of each page
  // The page that took each slot; a slot is live while slot_of agrees, so
  // a page moving on leaves no write behind (page_at is written in order).
  std::vector<Index> page_at(slots, kNever<Index>);
  SlotSet<Index> live(slots);
  size_t now = 0;  // next free slot
  for (size_t i = 0; i < ids.size(); ++i) {
    if (now == slots) {
      size_t packed = 0;
      for (size_t s = 0; s < slots; ++s) {
        const Index q = page_at[s];
        if (q == kNever<Index> || slot_of[q] != s) continue;
        page_at[packed] = q;
        slot_of[q] = static_cast<Index>(packed++);
      }
      live.assign_first(packed);
      now = packed;
    }
    const Index p = ids[i];
    const Index j = slot_of[p];
    if (j != kNever<Index>) {
      // The live slots between j and now are the other pages referenced
      // since; p itself is one more: distance 1 is an immediate repeat.
      ++hits[live.count_between(j, now) + 1];
      live.erase(j);
    }
    live.insert(now);
    page_at[now] = p;
    slot_of[p] = static_cast<Index>(now++);
    meter->at(i);
  }
  meter->pass_end(ids.size());
  for (uint64_t c = 1; c <= distinct; ++c) hits[c] += hits[c - 1];
  return hits;
}

// Whether a string of n references runs on 32-bit positions and ids: they
// halve the memory and cache traffic of every array; the wide (64-bit) path
// is for strings too long for them.
bool narrow(size_t n) { return n < kNever<uint32_t>; }

// A reference string renumbered to dense ids, with each reference's next
// use: what both policies run over.
template <class Index>
struct Numbered {
  std::vector<Index> ids, next;
  uint64_t distinct = 0;
};

// Numbering and next use, a pass each (counted in *meter). The meter's
// total is set once the distinct pages are known, before its first report:
// those two passes, LRU's, and MIN's at each of `capacities` that needs one.
template <class Index>
Numbered<Index> number(std::span<const uint64_t> refs, std::span<const uint64_t> capacities,
                       Meter* meter) {
  const size_t n = refs.size();
  Numbered<Index> s;
  s.ids.resize(n);
  s.distinct = to_dense_ids(refs, &s.ids);
  uint64_t min_passes = 0;
  for (uint64_t cap : capacities) min_passes += cap > 0 && cap < s.distinct;
  meter->total = (3 + min_passes) * uint64_t{n};
  meter->add(n);
  // next[i]: the position of the next reference to ids[i], by a backward
  // pass remembering each page's nearest later position.
  s.next.resize(n);
  std::vector<Index> later(s.distinct, kNever<Index>);
  for (size_t i = n; i-- > 0;) {
    s.next[i] = later[s.ids[i]];
    later[s.ids[i]] = static_cast<Index>(i);
  }
  meter->add(n);
  return s;
}

// MIN's hits at `cap` pages over a numbered string: none at capacity 0,
// every reuse once all pages fit (nothing is ever evicted), else a MIN pass.
template <class Index>
uint64_t min_hits_at(const Numbered<Index>& s, uint64_t cap, Meter* meter) {
  if (cap == 0) return 0;
  if (cap >= s.distinct) return s.ids.size() - s.distinct;
  return simulate_min(s.ids, s.next, s.distinct, cap, meter);
}

// MIN's hits at `cap` pages, with no LRU pass.
template <class Index>
uint64_t min_hits_only(std::span<const uint64_t> refs, uint64_t cap) {
  const OracleProgress none;
  Meter meter(none);
  return min_hits_at(number<Index>(refs, {&cap, 1}, &meter), cap, &meter);
}

template <class Index>
std::vector<OracleResult> simulate_with(const std::vector<uint64_t>& refs,
                                        const std::vector<uint64_t>& capacities,
                                        const OracleProgress& progress) {
  const size_t n = refs.size();
  Meter meter(progress);
  const Numbered<Index> s = number<Index>(refs, capacities, &meter);
  const std::vector<uint64_t> lru = lru_hits_by_capacity(s.ids, s.distinct, &meter);

  std::vector<OracleResult> out;
  out.reserve(capacities.size());
  for (uint64_t cap : capacities) {
    OracleResult r;
    r.capacity_pages = cap;
    r.references = n;
    r.distinct_pages = s.distinct;
    r.lru_hits = lru[std::min(cap, s.distinct)];
    r.min_hits = min_hits_at(s, cap, &meter);
    out.push_back(r);
  }
  return out;
}

}  // namespace

std::vector<OracleResult> simulate(const std::vector<uint64_t>& refs,
                                   const std::vector<uint64_t>& capacities,
                                   const OracleProgress& progress) {
  if (narrow(refs.size())) return simulate_with<uint32_t>(refs, capacities, progress);
  return simulate_with<uint64_t>(refs, capacities, progress);
}

namespace detail {
std::vector<OracleResult> simulate_wide(const std::vector<uint64_t>& refs,
                                        const std::vector<uint64_t>& capacities) {
  return simulate_with<uint64_t>(refs, capacities, {});
}
}  // namespace detail

int64_t min_misses_from(std::span<const uint64_t> resident, std::span<const uint64_t> refs,
                        uint64_t capacity) {
  if (resident.size() > capacity) return -1;
  std::vector<uint64_t> sorted(resident.begin(), resident.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return -1;
  // The resident pages first: all fit, so the prefix is |resident| misses,
  // no hit and no eviction, and leaves MIN exactly that cache.
  std::vector<uint64_t> all;
  all.reserve(resident.size() + refs.size());
  all.insert(all.end(), resident.begin(), resident.end());
  all.insert(all.end(), refs.begin(), refs.end());
  const uint64_t hits = narrow(all.size()) ? min_hits_only<uint32_t>(all, capacity)
                                           : min_hits_only<uint64_t>(all, capacity);
  return static_cast<int64_t>(all.size() - hits - resident.size());
}

}  // namespace mtier::bench
