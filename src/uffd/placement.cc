// SPDX-License-Identifier: Apache-2.0
#include "uffd/placement.h"

#include <cerrno>
#include <cstring>

#include "log/log.h"
#include "sys/uffd.h"

namespace mtier {

alignas(kPageSize) const char kZeroPage[kPageSize] = {};

namespace {
// Zero-initialised and never written: in .bss, so the kernel's zero page
// backs it and the copy reads it without memory of its own.
alignas(kPageSize) char zero_run_storage[kZeroRunPages * kPageSize];
}  // namespace
const char* const kZeroRun = zero_run_storage;

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

namespace {

// A placed page's first mark: an access (heat), or for a walk's page
// (`scan`) referenced and walked without heat - the evictor's scan hand
// (heat/clock.h).
void mark_placed(Core& core, PageWordAtomic& word, bool scan) {
  if (!scan) {
    mark_access(word);
  } else {
    word.fetch_or(PageWord::kReferenced | PageWord::kWalked, std::memory_order_acq_rel);
    core.scan_placed.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

int place_claimed(Core& core, Table* t, uint64_t page, const void* source, bool write,
                  std::atomic<uint64_t>& placed, bool demand, bool scan, bool may_exist) {
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
  if (rc == -EEXIST && may_exist) rc = core.uffd->wake(addr, kPageSize);  // placed by the run
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
  mark_placed(core, word, scan);
  // Without `demand` this is the lookahead's placement: a waiter means the
  // access reached the page while its read was in flight (a late read ahead).
  if (waited && !demand) core.counters.prefetch_late.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

int place_run(Core& core, Table* t, uint64_t first, uint64_t n, const void* source, bool write,
              bool scan, std::atomic<uint64_t>& placed) {
  // As place_claimed: the counts first, then the copy, which wakes the
  // run's waiters in the same ioctl.
  uint64_t waited = 0;  // bit i: page first+i had a waiter
  for (uint64_t i = 0; i < n; i++) {
    core.residency.placed();
    if (core.word(t, first + i).fetch_and(~PageWord::kWaiter, std::memory_order_acq_rel) &
        PageWord::kWaiter)
      waited |= uint64_t{1} << i;
  }
  t->counters.resident_pages.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
  placed.fetch_add(n, std::memory_order_relaxed);
  int rc = core.uffd->copy(t->page_addr(first), source, n * kPageSize, !write, false);
  if (rc < 0) {  // nothing counted, every claim stands: placed page by page
    for (uint64_t i = 0; i < n; i++) {
      core.residency.unplaced();
      if (waited >> i & 1) core.word(t, first + i).fetch_or(PageWord::kWaiter);
    }
    t->counters.resident_pages.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed);
    placed.fetch_sub(n, std::memory_order_relaxed);
    return rc;
  }
  for (uint64_t i = 0; i < n; i++) {
    PageWordAtomic& word = core.word(t, first + i);
    transition(word, write ? PageEvent::kPlacedDirty : PageEvent::kPlacedClean, t->id, first + i);
    mark_placed(core, word, scan);
  }
  return 0;
}

}  // namespace mtier
