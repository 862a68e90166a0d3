// SPDX-License-Identifier: Apache-2.0
#include "uffd/placement.h"

#include <cerrno>
#include <cstring>

#include "log/log.h"
#include "sys/uffd.h"

namespace mtier {

alignas(kPageSize) const char kZeroPage[kPageSize] = {};

void claim(Core& core, Table* t, uint64_t page) {
  transition(core.word(t, page), PageEvent::kClaim, t->id, page);
  core.residency.claim();
}

void claim_reserved(Core& core, Table* t, uint64_t page) {
  transition(core.word(t, page), PageEvent::kClaim, t->id, page);
}

bool claim_within(Core& core, Table* t, uint64_t page, uint64_t limit) {
  if (!core.residency.try_claim(limit)) return false;
  transition(core.word(t, page), PageEvent::kClaim, t->id, page);
  return true;
}

void unclaim(Core& core, Table* t, uint64_t page) {
  transition(core.word(t, page), PageEvent::kUnclaim, t->id, page);
  core.residency.unclaimed();
}

int place_claimed(Core& core, Table* t, uint64_t page, const void* source, bool write,
                  std::atomic<uint64_t>& placed, bool demand, bool scan) {
  PageWordAtomic& word = core.word(t, page);
  char* addr = t->page_addr(page);
  // The counters first, then the copy, which wakes whoever waits on the
  // page in the same ioctl: whatever the woken thread does next (a stats
  // read; an evict_table, which waits for the stripe lock held here) sees
  // the page counted. One ioctl a placement instead of a copy and a wake;
  // the copy's wake costs nothing when nobody waits (the kernel checks its
  // wait queues first), and a thread that faulted on a page brought ahead
  // while it was FETCHING resumes at once.
  core.residency.placed();
  t->counters.resident_pages.fetch_add(1, std::memory_order_relaxed);
  placed.fetch_add(1, std::memory_order_relaxed);
  bool waited = word.fetch_and(~PageWord::kWaiter, std::memory_order_acq_rel) & PageWord::kWaiter;
  int rc = core.uffd->copy(addr, source, kPageSize, !write, false);
  for (int i = 0; rc == -EAGAIN && i < kCopyRetries; i++)
    rc = core.uffd->copy(addr, source, kPageSize, !write, false);
  if (rc < 0) {  // not placed: the counts go back, the claim stands
    core.residency.unplaced();
    t->counters.resident_pages.fetch_sub(1, std::memory_order_relaxed);
    placed.fetch_sub(1, std::memory_order_relaxed);
    if (waited) word.fetch_or(PageWord::kWaiter, std::memory_order_acq_rel);
  }
  if (rc == -EAGAIN) {
    // The address space keeps changing (a fork, an mremap): the page goes
    // back to where it was (its slot, or never written) and the thread,
    // woken, faults again and is served then. Nothing waits under the lock.
    unclaim(core, t, page);
    MTIER_LOG_DEBUG("table %s page %llu: UFFDIO_COPY: %s %d times; the access is retried",
                    t->name.c_str(), static_cast<unsigned long long>(page), strerror(EAGAIN),
                    kCopyRetries + 1);
    (void)core.uffd->wake(addr, kPageSize);
    return -EAGAIN;
  }
  if (rc < 0) return rc;
  transition(word, write ? PageEvent::kPlacedDirty : PageEvent::kPlacedClean, t->id, page);
  if (!scan) {
    mark_access(word);
  } else {  // referenced, no heat: the evictor's scan hand (heat/clock.h)
    word.fetch_or(PageWord::kReferenced, std::memory_order_acq_rel);
    core.scan_placed.fetch_add(1, std::memory_order_relaxed);
  }
  // Without `demand` this is the prefetcher's placement: a waiter means the
  // access reached the page while its read was in flight (a late prefetch).
  if (waited && !demand) core.counters.prefetch_late.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

}  // namespace mtier
