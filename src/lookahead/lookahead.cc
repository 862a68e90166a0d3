// SPDX-License-Identifier: Apache-2.0
#include "lookahead/lookahead.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <shared_mutex>

#include "log/log.h"
#include "page/page_checksum.h"
#include "sys/uffd.h"
#include "uffd/fetch_pages.h"
#include "uffd/placement.h"
#include "util/runtime_thread.h"

namespace mtier {

Lookahead::Lookahead(Core& core) : core_(core), window_(core) {}

Lookahead::~Lookahead() { stop(); }

int Lookahead::start() {
  if (int rc = open_channels(core_, &channels_); rc < 0) return rc;
  try {
    claimed_.reserve(core_.opts.queue_depth);
    ios_.reserve(core_.opts.queue_depth);
    group_.reserve(core_.opts.queue_depth);
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  return start_runtime_thread(&thread_, "lookahead", "lookahead reads are no longer served",
                              [this] { run(); });
}

void Lookahead::stop() {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lk(mu_);
  for (Job& j : queue_) {
    done_ = j.ticket;
    results_[j.ticket % kResults] = -ECANCELED;
  }
  queue_.clear();
  done_cv_.notify_all();
}

long Lookahead::enqueue(Job&& job) {
  std::lock_guard lk(mu_);
  if (stopping_) return -ENODEV;
  job.ticket = ++issued_;
  queue_.push_back(std::move(job));  // std::bad_alloc: the API boundary turns it into -ENOMEM
  work_.notify_one();
  return queue_.back().ticket;
}

long Lookahead::submit(std::vector<LookaheadKey>&& pages, uint64_t batch, bool write) {
  return enqueue(Job{0, false, write, batch, std::move(pages)});
}

long Lookahead::advance(uint64_t batch) { return enqueue(Job{0, true, false, batch, {}}); }

long Lookahead::wait(long ticket, int timeout_ms) {
  std::unique_lock lk(mu_);
  if (ticket <= 0 || ticket > issued_) return -EINVAL;
  auto ready = [&] { return done_ >= ticket; };
  if (timeout_ms < 0) done_cv_.wait(lk, ready);
  else if (!done_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), ready)) return -ETIMEDOUT;
  if (done_ - ticket >= kResults) return -EINVAL;
  return results_[ticket % kResults];
}

void Lookahead::complete(long ticket, long result) {
  {
    std::lock_guard lk(mu_);
    results_[ticket % kResults] = result;
    done_ = ticket;
  }
  done_cv_.notify_all();
}

void Lookahead::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock lk(mu_);
      work_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    long r = 0;
    try {
      if (job.advance) window_.advance(job.batch);
      else r = serve(job.pages, job.batch, job.write);
    } catch (const std::bad_alloc&) {
      r = -ENOMEM;
    }
    complete(job.ticket, r);
  }
}

// The named pages that are absent now (read without locks: an estimate of
// the room to make; the claims below decide under the stripe locks).
uint64_t Lookahead::absent_pages(const std::vector<LookaheadKey>& pages) {
  std::shared_lock tables(core_.tables.mutex());
  uint64_t n = 0;
  Table* t = nullptr;
  for (const LookaheadKey& k : pages) {
    if (!t || t->id != k.table_id) t = core_.tables.by_id(k.table_id);
    if (t && k.page < t->pages)
      n += PageWord::state(core_.word(t, k.page).load(std::memory_order_relaxed)) ==
           PageState::kAbsent;
  }
  return n;
}

long Lookahead::serve(const std::vector<LookaheadKey>& pages, uint64_t batch, bool write) {
  EngineCounters& c = core_.counters;
  c.prefetch_calls.fetch_add(1, std::memory_order_relaxed);
  c.prefetch_pages.fetch_add(pages.size(), std::memory_order_relaxed);
  window_.reserve(batch, pages.size());
  // Room first, with no lock held (LOCKING): the evictor makes it from
  // pages outside the window (pinned pages are no victims). A job
  // fills DRAM up to the high watermark only: the rest of the budget is
  // the fault handler's, whose batches waited for room before they claim
  // (without that margin a job could take the room a fault batch
  // waited for, and the batch would place over the budget).
  // The wait is for pages the window can still pin (so that the pinned
  // pages and the room asked for fit in the budget with unpinned pages to
  // spare) and bounded: a job that finds no room in time claims what
  // there is, and the rest is demand-faulted.
  Residency& r = core_.residency;
  uint64_t margin = r.budget_pages() - std::min(r.high_pages(), r.budget_pages());
  int64_t pinnable = static_cast<int64_t>(window_.limit()) - c.pinned_pages.load();
  if (uint64_t want = std::min<uint64_t>(absent_pages(pages), std::max<int64_t>(pinnable, 0)))
    (void)r.wait_for_room(want + margin, kRoomWaitMs);
  std::shared_lock tables(core_.tables.mutex());
  long read = 0;
  uint64_t overflow = 0, hits = 0;
  claimed_.clear();
  Table* t = nullptr;
  for (const LookaheadKey& k : pages) {
    if (!t || t->id != k.table_id) {
      t = core_.tables.by_id(k.table_id);
      if (t && !t->named_ahead.load(std::memory_order_relaxed))
        t->named_ahead.store(true, std::memory_order_relaxed);  // the CLOCK stops zapping it
    }
    if (!t || k.page >= t->pages) continue;  // freed since the call: nothing to do
    {
      std::lock_guard lk(core_.lock_of(t, k.page));
      PageWordAtomic& word = core_.word(t, k.page);
      // Past the pin limit a page of the current batch is still read while
      // there is room, only not kept: the CLOCK gives it its second chance
      // like any other. A later batch's is left for its own turn.
      bool pinned = window_.pin(t, k.page, batch);
      if (!pinned) overflow++;
      uint64_t w = word.load(std::memory_order_acquire);
      if (PageWord::state(w) != PageState::kAbsent) {
        // Resident (a hit: its heat counts the coming access) or FETCHING
        // (the fault handler places it).
        if (PageWord::resident(w)) {
          mark_access(word);
          hits++;
        }
        continue;
      }
      if (!pinned && window_.ahead(batch)) continue;  // named again (or faulted) in its batch
      if (!claim_within(core_, t, k.page, r.high_pages())) continue;  // demand-faulted
      claimed_.push_back({t, k.page, PageWord::has_slot(w) ? static_cast<int>(PageWord::store(w)) : -1});
    }
    if (claimed_.size() == claimed_.capacity()) flush(&read, write);
  }
  if (!claimed_.empty()) flush(&read, write);
  c.prefetch_hits.fetch_add(hits, std::memory_order_relaxed);
  if (overflow) say_overflow(overflow);
  return read;
}

// Places the claimed pages: never-written ones from the zero page, the rest
// read from their stores, one batch of reads per store. Registry shared, no
// stripe lock held (each placement takes its page's).
void Lookahead::flush(long* read, bool write) {
  for (const Claimed& cl : claimed_) {
    if (cl.store >= 0) continue;
    std::lock_guard lk(core_.lock_of(cl.table, cl.page));
    int rc = place_claimed(core_, cl.table, cl.page, kZeroPage, write,
                           cl.table->counters.zero_fills, false);
    if (rc < 0 && rc != -EAGAIN) release(cl, rc);
  }
  for (unsigned s = 0; s < channels_.size(); s++) read_from(s, read, write);
  claimed_.clear();
}

void Lookahead::read_from(unsigned store, long* read, bool write) {
  group_.clear();
  for (Claimed& cl : claimed_)
    if (cl.store == static_cast<int>(store)) group_.push_back(&cl);
  fetch_pages(
      core_, *channels_[store], group_.size(),
      [&](size_t i) { return std::pair{group_[i]->table, group_[i]->page}; },
      [&](size_t i, const void* src, int rc) {
        const Claimed& cl = *group_[i];
        std::lock_guard lk(core_.lock_of(cl.table, cl.page));
        if (rc == 0)
          rc = place_claimed(core_, cl.table, cl.page, src, fetch_writable(core_, cl.table, write),
                             cl.table->counters.prefetches, false);
        if (rc == 0) {
          (*read)++;
          core_.counters.prefetch_reads.fetch_add(1, std::memory_order_relaxed);
        } else if (rc != -EAGAIN) {
          release(cl, rc);
        }
      },
      ios_);
}

// A lookahead read that failed: nobody asked for the page yet, so it goes back to
// its slot (ABSENT) and any thread that faulted on it meanwhile is woken to
// fault again; the fault handler then reads it itself, and a store that
// still fails gives that access (only it) SIGBUS with the reason. Caller
// holds the page's stripe lock.
void Lookahead::release(const Claimed& cl, int err) {
  Table* t = cl.table;
  unclaim(core_, t, cl.page);
  (void)core_.uffd->wake(t->page_addr(cl.page), kPageSize);
  t->counters.errors.fetch_add(1, std::memory_order_relaxed);
  core_.counters.store_errors.fetch_add(1, std::memory_order_relaxed);
  MTIER_LOG_WARN("table %s page %llu: lookahead %s failed: %s; the page stays where it was "
                 "(an access fetches it again)",
                 t->name.c_str(), static_cast<unsigned long long>(cl.page),
                 cl.store >= 0 ? "read" : "placement", strerror(-err));
}

void Lookahead::say_overflow(uint64_t pages) {
  core_.counters.window_overflows.fetch_add(pages, std::memory_order_relaxed);
  if (overflow_said_) return;
  overflow_said_ = true;
  MTIER_LOG_WARN("lookahead: the window does not fit: %llu pages named were not pinned (pin "
                 "limit %llu pages, %u%% of the DRAM budget); they are read ahead while there is "
                 "room, but may be evicted before their batch (then demand-faulted). A larger "
                 "budget or a shorter lookahead avoids it (counted in window_overflows)",
                 static_cast<unsigned long long>(pages),
                 static_cast<unsigned long long>(window_.limit()), core_.opts.pin_limit_pct);
}

}  // namespace mtier
