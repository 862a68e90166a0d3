// The state the engine's threads share: the region, its userfaultfd, the
// tables, the page locks, the budget and the stores. Owned by Engine; the
// fault handler, evictor and sampler each hold a reference.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "config/options.h"
#include "page/page_locks.h"
#include "page/residency.h"
#include "page/table_registry.h"
#include "region/region.h"
#include "store/store.h"

namespace mtier {

struct EngineCounters {
  std::atomic<uint64_t> wild_faults{0};   // faults in the region outside any table
  std::atomic<uint64_t> store_full{0};    // evictions refused for lack of store space
  std::atomic<uint64_t> store_errors{0};  // failed store reads and writes
  std::atomic<uint64_t> sampled_pages{0}; // PTEs zapped by the sampler and clock
  std::atomic<uint64_t> demote_failures{0}; // pages move_pages did not move
};

struct Core {
  Core(const Options& o, std::unique_ptr<Region> r)
      : opts(o),
        region(std::move(r)),
        tables(region->base(), region->bytes() / 4096),
        residency(o.dram_bytes, o.high_watermark, o.low_watermark),
        slow(o.slow_bytes, o.high_watermark, o.low_watermark) {}

  Options opts;
  std::unique_ptr<Region> region;
  int uffd = -1;
  uint64_t uffd_features = 0;
  // UFFDIO_CONTINUE can keep a clean page write-protected (Linux >= 6.3).
  // Without it a MINOR fault maps the page writable, so it must count as
  // a write: the page becomes DIRTY (more write-backs, never a lost write).
  bool continue_wp = false;
  TableRegistry tables;
  PageLocks locks;
  Residency residency;  // DRAM
  Residency slow;       // the slow memory tier (budget 0: none)
  std::vector<std::unique_ptr<Store>> stores;  // eviction order: first with room wins
  EngineCounters counters;
  // The daemon's keep priority per region page (the shared segment's hints;
  // nullptr without a segment), honoured by the evictor's first rotation
  // while hints_active (a daemon is registered and alive).
  const uint8_t* hints = nullptr;
  std::atomic<bool> hints_active{false};

  bool has_slow_tier() const { return slow.budget_pages() > 0; }
  // The memory tier's residency a page (word) counts against.
  Residency& tier_of(uint64_t w) { return PageWord::slow(w) ? slow : residency; }
  PageWordAtomic& word(Table* t, uint64_t page) { return t->words[page]; }
  std::mutex& lock_of(Table* t, uint64_t page) { return locks.of(t->first_page + page); }
  uint64_t region_offset(Table* t, uint64_t page) const { return (t->first_page + page) * 4096; }
  char* alias_of(Table* t, uint64_t page) const {
    return region->alias() + region_offset(t, page);
  }
};

// One I/O channel per store, in store order, for the calling thread's use
// (queue_depth staging buffers each). 0 or -ENOMEM.
[[nodiscard]] int open_channels(Core& core, std::vector<std::unique_ptr<StoreChannel>>* out);

// Makes the access at `addr` (by thread `tid`) fail with SIGBUS: a poison
// marker where the kernel has UFFDIO_POISON, else a signal to the thread.
void fail_access(Core& core, void* addr, unsigned tid);

}  // namespace mtier
