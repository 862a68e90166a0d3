// SPDX-License-Identifier: Apache-2.0
#include "uffd/fault_handler.h"
#include "sys/runtime_fds.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

#include "log/log.h"
#include "page/page_checksum.h"
#include "page/run_lock.h"
#include "sys/uffd.h"
#include "sys/vm.h"
#include "uffd/fetch_pages.h"
#include "uffd/loop_errors.h"
#include "uffd/placement.h"
#include "util/monotonic.h"
#include "util/runtime_thread.h"

namespace mtier {
namespace {

constexpr size_t kMaxRequests = 4096;  // queued fetch orders (the daemon re-orders)

bool is_write(uint64_t flags) { return flags & UFFD_PAGEFAULT_FLAG_WRITE; }
bool is_minor(uint64_t flags) { return flags & UFFD_PAGEFAULT_FLAG_MINOR; }
bool is_wp(uint64_t flags) { return flags & UFFD_PAGEFAULT_FLAG_WP; }
// A page in DRAM and settled (not on its way in or out): what a walk passes
// over.
bool in_dram(uint64_t w) {
  PageState s = PageWord::state(w);
  return s == PageState::kClean || s == PageState::kDirty;
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

FaultHandler::FaultHandler(Core& core) : core_(core) {}

FaultHandler::~FaultHandler() { stop(); }

int FaultHandler::prepare() {
  if (prepared_) return 0;
  if (int rc = open_channels(core_, &channels_); rc < 0) return rc;
  try {
    size_t followers = std::max({core_.opts.prefetch_pages, core_.opts.zero_ahead_pages,
                                 core_.opts.stream_pages});
    size_t depth = 1;
    for (auto& ch : channels_) depth = std::max<size_t>(depth, ch->depth());
    pending_.reserve(kBatch * (1 + followers));
    by_store_.resize(channels_.size());
    for (auto& g : by_store_) g.reserve(pending_.capacity());
    ios_.reserve(depth);
    serving_.reserve(kMaxRequests);
    child_batch_.reserve(kBatch);
    deferred_.reserve(kMaxChildWaits);
    retrying_.reserve(kMaxChildWaits);
    std::lock_guard<std::mutex> lk(request_mu_);
    requests_.reserve(kMaxRequests);
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  prepared_ = true;
  return 0;
}

int FaultHandler::start() {
  if (int rc = prepare(); rc < 0) return rc;
  stop_fd_ = sys::adopt_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (stop_fd_ < 0) return -errno;
  request_fd_ = sys::adopt_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (request_fd_ < 0) return -errno;
  running_ = true;
  int rc = start_runtime_thread(&thread_, "fault handler",
                                "faults in managed tables are no longer served", [this] { run(); });
  if (rc < 0) running_ = false;
  return rc;
}

void FaultHandler::stop() {
  if (!running_.exchange(false)) return;
  uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  thread_.join();
  (void)sys::close_fd(stop_fd_);
  (void)sys::close_fd(request_fd_);
}

int FaultHandler::queue_fetch_order(int table_id, uint64_t first, uint64_t count) {
  {
    std::lock_guard<std::mutex> lk(request_mu_);
    // Within the capacity prepare() reserved: no allocation, and a daemon
    // that floods is dropped (it re-orders).
    if (requests_.size() >= kMaxRequests) return -ENOMEM;
    requests_.push_back({table_id, first, count});
  }
  uint64_t one = 1;
  (void)!write(request_fd_, &one, sizeof one);
  return 0;
}

// Fetch orders are placed in chunks of pending_'s capacity, only
// while DRAM stays below its high watermark: no wait, no allocation.
void FaultHandler::serve_fetch_orders() {
  uint64_t n;
  (void)!read(request_fd_, &n, sizeof n);
  {
    std::lock_guard<std::mutex> lk(request_mu_);
    serving_.swap(requests_);  // both keep the capacity prepare() gave them
  }
  std::shared_lock tables(core_.tables.mutex());
  pending_.clear();
  // Claims count in Residency::claimed() at once: the room shrinks as
  // pages are claimed, and the lookahead's claims count too.
  const uint64_t high = core_.residency.high_pages();
  auto flush = [&] {
    requested_placed_.fetch_add(pending_.size(), std::memory_order_relaxed);
    place_all();
    pending_.clear();
  };
  for (const auto& r : serving_) {
    Table* t = core_.tables.by_id(r.table_id);
    if (!t || r.first >= t->pages) continue;
    uint64_t end = std::min(t->pages, r.first + std::min(r.count, t->pages));
    bool room = true;
    for (uint64_t p = r.first; p < end && room; p++) {
      {
        std::lock_guard lk(core_.lock_of(t, p));
        uint64_t w = core_.word(t, p).load(std::memory_order_acquire);
        if (PageWord::state(w) == PageState::kAbsent && PageWord::has_slot(w)) {
          room = claim_ahead(t, p, false, high);
        }
      }
      if (pending_.size() == pending_.capacity()) flush();
    }
  }
  serving_.clear();
  if (!pending_.empty()) flush();
}

// Leaves only when stop() asks. A failing wait or read is logged and retried
// after a back-off (uffd/loop_errors.h), however long it lasts: a thread
// that left would hang every later fault in a managed table for ever.
// While a forked child's fault waits for a page on its way in, the wait
// wakes every millisecond to look again.
void FaultHandler::run() {
  struct uffd_msg msgs[kBatch];
  struct pollfd fds[kFixedFds + 2 * ForkedChildren::kMaxChildren];
  LoopErrors errors;
  auto retry = [&](const char* what, long err) {
    uint64_t backoff = errors.failed(what, static_cast<int>(err), now_ns());
    std::this_thread::sleep_for(std::chrono::nanoseconds(backoff));
  };
  while (running_.load(std::memory_order_acquire)) {
    size_t nfds = poll_set(fds);
    if (int rc = core_.uffd->wait(fds, nfds, deferred_.empty() ? -1 : 1); rc < 0) {
      if (rc != -EINTR) retry("poll", rc);  // EINTR: a signal, no error
      continue;
    }
    if (fds[1].revents) break;
    if (fds[2].revents) serve_fetch_orders();
    if (fds[0].revents) {
      long n = core_.uffd->read(msgs, kBatch);
      if (n < 0) {
        retry("read from userfaultfd", n);
        continue;
      }
      if (errors.consecutive()) errors.succeeded(now_ns());  // no clock read per batch
      if (n > 0) handle_batch(msgs, static_cast<size_t>(n));
    }
    if (core_.children) serve_children(fds);
    if (!deferred_.empty()) retry_child_waits();
  }
}

// fds[0]: this process's userfaultfd, [1] stop, [2] fetch orders;
// with forked children possible, [3] their announcements, then each
// child's userfaultfd and pidfd. Returns the count.
size_t FaultHandler::poll_set(struct pollfd* fds) const {
  fds[0] = {core_.uffd->fd(), POLLIN, 0};
  fds[1] = {stop_fd_, POLLIN, 0};
  fds[2] = {request_fd_, POLLIN, 0};
  if (!core_.children) return 3;
  ForkedChildren& ch = *core_.children;
  fds[3] = {ch.listen_fd(), POLLIN, 0};
  for (size_t i = 0; i < ch.count(); i++) {
    fds[kFixedFds + 2 * i] = {ch.child(i).uffd, POLLIN, 0};
    fds[kFixedFds + 2 * i + 1] = {ch.child(i).pidfd, POLLIN, 0};
  }
  return kFixedFds + 2 * ch.count();
}

// After a wait: the children's faults, then their exits (from the last:
// a reap moves the last child into the freed slot), then announcements
// (a new child takes the next slot, which this round did not poll).
void FaultHandler::serve_children(const struct pollfd* fds) {
  ForkedChildren& ch = *core_.children;
  size_t polled = ch.count();
  // One batch for all the children's faults of this round: one wait for
  // room, and their store reads in flight together. A child whose faults
  // did not fit stays readable for the next round.
  struct uffd_msg msgs[kBatch];
  ForkedChildren::Child* owners[kBatch];
  size_t n = 0;
  for (size_t i = 0; i < polled && n < kBatch; i++) {
    if (!(fds[kFixedFds + 2 * i].revents & POLLIN)) continue;
    long got = sys::uffd_read(ch.child(i).uffd, msgs + n, kBatch - n);
    for (long k = 0; k < got; k++) owners[n++] = &ch.child(i);
  }
  if (n > 0) handle_child_batch(msgs, owners, n);
  for (size_t i = polled; i-- > 0;)
    if (fds[kFixedFds + 2 * i + 1].revents) reap_child(i);
  if (fds[3].revents & POLLIN) {
    while (true) {
      int rc = ch.accept();
      if (rc == -EAGAIN || rc == -EINTR) break;
      if (rc < 0) {
        MTIER_LOG_WARN("forked children: receiving an announcement: %s", strerror(-rc));
        break;
      }
    }
  }
}

// Child i has exited: its waits go, its descriptors close, and the tables
// freed since that no child can read any more go (on_child_exit).
void FaultHandler::reap_child(size_t i) {
  ForkedChildren& ch = *core_.children;
  pid_t pid = ch.child(i).pid;
  deferred_.erase(std::remove_if(deferred_.begin(), deferred_.end(),
                                 [pid](const ChildWait& w) { return w.pid == pid; }),
                  deferred_.end());
  MTIER_LOG_DEBUG("forked child %d exited (%llu faults served)", pid,
                  static_cast<unsigned long long>(ch.child(i).faults));
  ch.reap(i);
  if (ch.retired() && on_child_exit_) on_child_exit_();
}

// The pages a batch must have room for: its distinct MISSING faults. (A
// MISSING fault on a page placed since counts too: room is made a little
// early, never too late.) Followers - read around the fault or zero-filled ahead - only
// take room that is free: they never make the evictor run, and a batch
// never waits for more than the budget.
uint64_t FaultHandler::demand_pages(const struct uffd_msg* msgs, size_t n) const {
  uint64_t distinct = 0;
  for (size_t i = 0; i < n; i++) {
    const auto& pf = msgs[i].arg.pagefault;
    if (msgs[i].event != UFFD_EVENT_PAGEFAULT ||
        (pf.flags & (UFFD_PAGEFAULT_FLAG_MINOR | UFFD_PAGEFAULT_FLAG_WP)))
      continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = msgs[j].event == UFFD_EVENT_PAGEFAULT &&
             ((msgs[j].arg.pagefault.address ^ pf.address) & kPageMask) == 0;
    distinct += !seen;
  }
  return distinct;
}

// Reserves the room a batch needs (demand_pages) in reserved_. Where
// eviction cannot make it, the batch goes over the budget and says so:
// once, then at most every 10 s, with how many times so far (a stuck budget
// fails every batch, and a line each flooded the program's stderr;
// budget_overruns counts every one).
void FaultHandler::reserve_for(const struct uffd_msg* msgs, size_t n) {
  reserved_ = 0;
  uint64_t demand = demand_pages(msgs, n);
  if (!demand) return;
  if (scans()) advance_walk_fronts(msgs, n);
  if (core_.residency.reserve_room(demand)) {
    reserved_ = demand;
    return;
  }
  const int64_t now = static_cast<int64_t>(monotonic_ms());
  int64_t last = over_budget_said_ms_.load(std::memory_order_relaxed);
  if (last >= 0 && now - last < 10000) return;
  if (!over_budget_said_ms_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  MTIER_LOG_WARN("DRAM budget exceeded: eviction cannot make room (store full or failing); "
                 "said once every 10 s at most; budget_overruns counts each (%llu so far)",
                 static_cast<unsigned long long>(core_.residency.overruns()));
}

// Before the batch waits for room: a fault that continues a walk moves
// the walk's front to its page (Table::walked), so that the pages the walk
// read since its last fault (its last window) are the evictor's first
// victims (ClockHand::take_behind_walks) while the fault waits. Why: the
// front moved only once the room was made, and the evictor, finding none
// of the walk's pages past, made it with the CLOCK - 8,192 hot rows at a
// time, 190,000 written back in a 4 GiB save. The registry is held shared
// only here, not while the batch waits (handle_batch), so handle_batch
// looks the tables up again after the wait (one more shared-lock take and
// binary search a batch, with scan_resistant only). It cannot keep them:
// a table may be freed while the batch waits, and the registry cannot be
// held across the wait (LOCKING in page/core.h: the evictor making the
// room takes it, and would queue behind a free waiting to take it
// exclusively).
void FaultHandler::advance_walk_fronts(const struct uffd_msg* msgs, size_t n) {
  std::shared_lock tables(core_.tables.mutex());
  for (size_t i = 0; i < n; i++) {
    if (msgs[i].event != UFFD_EVENT_PAGEFAULT) continue;
    void* addr = reinterpret_cast<void*>(msgs[i].arg.pagefault.address & kPageMask);
    Table* t = core_.tables.find(addr);
    if (t && t->streams.continues(t->page_of(addr))) t->walked(t->page_of(addr));
  }
}

void FaultHandler::handle_batch(const struct uffd_msg* msgs, size_t n) {
  // Room first, with no lock held (LOCKING in page/core.h): the evictor
  // that makes it needs the registry.
  // The room is reserved, not only waited for: the lookahead's worker
  // claims concurrently and would take it before this batch's claims.
  reserve_for(msgs, n);
  std::shared_lock tables(core_.tables.mutex());
  pending_.clear();
  for (size_t i = 0; i < n; i++) {
    if (msgs[i].event != UFFD_EVENT_PAGEFAULT) continue;
    uint64_t addr = msgs[i].arg.pagefault.address & kPageMask;
    uint64_t flags = msgs[i].arg.pagefault.flags;
    unsigned tid = msgs[i].arg.pagefault.feat.ptid;
    Table* t = core_.tables.find(reinterpret_cast<void*>(addr));
    if (!t) {
      core_.counters.wild_faults.fetch_add(1, std::memory_order_relaxed);
      MTIER_LOG_ERROR("access to %#llx in the managed region outside any table: SIGBUS",
                      static_cast<unsigned long long>(addr));
      fail_access(core_, reinterpret_cast<void*>(addr), tid);
      continue;
    }
    resolve(t, t->page_of(reinterpret_cast<void*>(addr)), flags, tid);
  }
  // Faults whose page was placed or fetched meanwhile claimed nothing.
  if (reserved_) core_.residency.unclaimed(static_cast<int64_t>(std::exchange(reserved_, 0)));
  if (!pending_.empty()) place_all();
}

// A forked child's faults: each page is brought into the memfd as for a
// read fault of this process's own (claimed and placed in this process's
// mapping, within the same budget), then the child is woken: its access,
// retried, maps the memfd's page. The page word's state decides, not the
// message: a page in DRAM by now only needs the wake.
void FaultHandler::handle_child_batch(const struct uffd_msg* msgs,
                                      ForkedChildren::Child* const* owners, size_t n) {
  reserve_for(msgs, n);
  std::shared_lock tables(core_.tables.mutex());
  pending_.clear();
  child_batch_.clear();
  for (size_t i = 0; i < n; i++) {
    if (msgs[i].event != UFFD_EVENT_PAGEFAULT) continue;
    ForkedChildren::Child& c = *owners[i];
    c.faults++;
    core_.counters.child_faults.fetch_add(1, std::memory_order_relaxed);
    ChildWait w{c.pid, c.uffd, msgs[i].arg.pagefault.feat.ptid,
                msgs[i].arg.pagefault.address & kPageMask};
    if (child_fault_claims(c, msgs[i])) child_batch_.push_back(w);
    else fail_child(w, "outside every table it inherited");
  }
  if (reserved_) core_.residency.unclaimed(static_cast<int64_t>(std::exchange(reserved_, 0)));
  if (!pending_.empty()) place_all();
  for (const ChildWait& w : child_batch_) settle_child(w, true);
}

// Claims the page of a child's fault when it is absent (a read: the
// child's write copies the page into its own memory). False when the
// address is in no table the child inherited.
bool FaultHandler::child_fault_claims(ForkedChildren::Child& c, const struct uffd_msg& m) {
  void* addr = reinterpret_cast<void*>(m.arg.pagefault.address & kPageMask);
  Table* t = core_.tables.find(addr);
  if (!t || t->id >= c.inherited_below) return false;
  uint64_t page = t->page_of(addr);
  std::unique_lock lk(core_.lock_of(t, page));
  uint64_t w = core_.word(t, page).load(std::memory_order_acquire);
  if (PageWord::state(w) != PageState::kAbsent) return true;
  t->counters.missing_faults.fetch_add(1, std::memory_order_relaxed);
  claim(t, page, false, 0);  // no thread of this process to fail if the read fails
  lk.unlock();
  add_followers(t, page, PageWord::has_slot(w), false);
  return true;
}

// After the batch's placements (registry held shared): wakes the child
// where its page is in the memfd; keeps the fault for later where the page
// is still on its way in (while there is room to keep it); fails it where
// the page could not be read.
void FaultHandler::settle_child(const ChildWait& w, bool may_defer) {
  Table* t = core_.tables.find(reinterpret_cast<void*>(w.addr));
  if (!t) return fail_child(w, "outside every table it inherited");
  uint64_t word = core_.word(t, t->page_of(reinterpret_cast<void*>(w.addr))).load();
  PageState s = PageWord::state(word);
  if (s == PageState::kFailed) return fail_child(w, "on a page that could not be read");
  if (s == PageState::kFetching && may_defer && deferred_.size() < deferred_.capacity()) {
    deferred_.push_back(w);
    return;
  }
  // In DRAM: the retried access maps it. Absent again (evicted at once) or
  // still on its way: the access faults again and comes back.
  (void)sys::uffd_wake(w.uffd, reinterpret_cast<void*>(w.addr), kPageSize);
}

void FaultHandler::retry_child_waits() {
  retrying_.swap(deferred_);  // both keep the capacity prepare() gave them
  std::shared_lock tables(core_.tables.mutex());
  for (const ChildWait& w : retrying_) settle_child(w, true);
  retrying_.clear();
}

// A child's access that cannot be served gets SIGBUS (a poison marker in
// the child's mapping, else a signal to its thread), after one line for
// the first few.
void FaultHandler::fail_child(const ChildWait& w, const char* why) {
  static std::atomic<int> said{0};
  if (said.fetch_add(1, std::memory_order_relaxed) < 8)
    MTIER_LOG_ERROR("forked child %d: access to %#llx %s: SIGBUS", static_cast<int>(w.pid),
                    static_cast<unsigned long long>(w.addr), why);
  void* addr = reinterpret_cast<void*>(w.addr);
  if (sys::uffd_poison(w.uffd, addr, kPageSize) == 0) return;
  (void)sys::signal_thread_of(w.pid, static_cast<pid_t>(w.tid), SIGBUS);
  (void)sys::uffd_wake(w.uffd, addr, kPageSize);
}

// Decides what a fault needs from the page's state (not the message kind:
// the state may have moved since the kernel raised it).
void FaultHandler::resolve(Table* t, uint64_t page, uint64_t flags, unsigned tid) {
  std::unique_lock lk(core_.lock_of(t, page));
  uint64_t w = core_.word(t, page).load(std::memory_order_acquire);
  switch (PageWord::state(w)) {
    case PageState::kAbsent:
      t->counters.missing_faults.fetch_add(1, std::memory_order_relaxed);
      claim(t, page, is_write(flags), tid);
      lk.unlock();
      add_followers(t, page, PageWord::has_slot(w), is_write(flags));
      return;
    case PageState::kFetching:
      // Placed by this batch or by the lookahead: its placement wakes the
      // thread (the mark makes the lookahead's do so).
      core_.word(t, page).fetch_or(PageWord::kWaiter, std::memory_order_acq_rel);
      return;
    case PageState::kFailed:
      fail_access(core_, t->page_addr(page), tid);
      return;
    default:
      if (resolve_present(t, page, w, flags, tid)) {
        lk.unlock();
        map_ahead(t, page);
      }
  }
}

// A walk over pages in DRAM the CLOCK has zapped (an array written, then
// read back front to back) would otherwise take a round trip per page.
// Mapping a page here is what serving its MINOR fault does, under the same
// lock, so it races the evictor no more than that fault would: a page it
// takes meanwhile is EVICTING (passed over here) or unmapped again later.
void FaultHandler::map_ahead(Table* t, uint64_t page) {
  uint64_t q = page + 1;
  for (; q < t->pages && q <= page + kResidentWindow; q++) {
    std::lock_guard lk(core_.lock_of(t, q));
    PageWordAtomic& word = core_.word(t, q);
    uint64_t w = word.load(std::memory_order_acquire);
    PageState s = PageWord::state(w);
    // Without CONTINUE's write protection a CLEAN page would be mapped
    // writable, and so count as written (resolve_present): it stops here.
    // So does a page in the slow tier: its MINOR faults are the heat the
    // daemon's page-fault source sees, which decides its promotion.
    if (s != PageState::kDirty && !(s == PageState::kClean && core_.continue_wp)) break;
    if (PageWord::slow(w)) break;
    int rc = core_.uffd->cont(t->page_addr(q), kPageSize, s == PageState::kClean);
    if (rc != 0 && rc != -EEXIST) break;  // EEXIST: mapped already
    word.fetch_or(PageWord::kReferenced, std::memory_order_acq_rel);
  }
  t->resident_walks.brought(page, q - page - 1);
}

// CLEAN / DIRTY / EVICTING: the page is in the memfd, only the PTE is at stake.
bool FaultHandler::resolve_present(Table* t, uint64_t page, uint64_t w, uint64_t flags,
                                   unsigned tid) {
  PageWordAtomic& word = core_.word(t, page);
  char* addr = t->page_addr(page);
  PageState s = PageWord::state(w);
  // A MINOR fault counts as a write where CONTINUE cannot keep the page
  // write-protected (Core::continue_wp): the page will be mapped writable.
  bool write = is_write(flags) || (is_minor(flags) && !core_.continue_wp);
  if (write && s != PageState::kDirty) {
    if (s == PageState::kEvicting) t->counters.evict_cancels.fetch_add(1, std::memory_order_relaxed);
    else if (is_write(flags)) {
      t->counters.wp_faults.fetch_add(1, std::memory_order_relaxed);
      if (s == PageState::kClean) t->write_intent.written();
    }
    transition(word, PageEvent::kWrite, t->id, page);
  }
  bool keep_wp = core_.continue_wp && PageWord::state(word.load()) != PageState::kDirty;
  if (is_minor(flags)) {
    t->counters.minor_faults.fetch_add(1, std::memory_order_relaxed);
    mark_access(word);
    // A walk over zapped pages in DRAM (an array read back front to back
    // after the CLOCK cleared its bits): the evictor spares what lies ahead.
    // (no walks where they are off: stream_pages 0)
    bool walk = core_.opts.stream_pages > 0 &&
                t->resident_walks.on_present(page, kResidentWalkHits);
    if (walk) t->walked(page);
    int rc = resolve_ioctl(core_.uffd->cont(addr, kPageSize, keep_wp), t, page, tid, "continue");
    return walk && rc == 0;
  }
  if (is_wp(flags) && !keep_wp)
    resolve_ioctl(core_.uffd->writeprotect(addr, kPageSize, false), t, page, tid, "unprotect");
  else
    resolve_ioctl(core_.uffd->wake(addr, kPageSize), t, page, tid, "wake");
  return false;
}

int FaultHandler::resolve_ioctl(int rc, Table* t, uint64_t page, unsigned tid, const char* what) {
  if (rc == 0) return 0;
  if (rc == -EEXIST) return core_.uffd->wake(t->page_addr(page), kPageSize);
  // EAGAIN: the address space was changing under the ioctl (the kernel's
  // mmap_changing: a fork, mremap or memory pressure); the woken thread
  // faults again and is served then, so it is no error.
  if (rc == -EAGAIN)
    MTIER_LOG_DEBUG("table %s page %llu: %s: %s; the access is retried", t->name.c_str(),
                    static_cast<unsigned long long>(page), what, strerror(-rc));
  else
    MTIER_LOG_ERROR("table %s page %llu: %s: %s", t->name.c_str(),
                    static_cast<unsigned long long>(page), what, strerror(-rc));
  (void)core_.uffd->wake(t->page_addr(page), kPageSize);
  if (rc != -EAGAIN) fail_access(core_, t->page_addr(page), tid);
  return rc;
}

// A demand page (thread `tid` faults on it): claimed whatever the room, the
// batch waited for it. Caller holds the page's stripe lock; pending_ has
// room (its capacity covers a batch's claims: a follower is claimed only
// below it).
void FaultHandler::claim(Table* t, uint64_t page, bool write, unsigned tid) {
  // One of the batch's reserved pages; beyond them (no room could be
  // made, or a fault the batch did not count) over the budget.
  if (reserved_ > 0) {
    reserved_--;
    claim_reserved(core_, t, page);
  } else {
    mtier::claim(core_, t, page);
  }
  pending_.push_back({t, page, write, false, tid, 0, kZeroPage});
}

// A page nobody waits on yet (read around a fault, a fetch order's):
// claimed only while DRAM's resident and claimed pages stay within `limit`
// (claim_within). Same contract as claim(); returns whether it was claimed.
bool FaultHandler::claim_ahead(Table* t, uint64_t page, bool write, uint64_t limit) {
  if (!claim_within(core_, t, page, limit)) return false;
  pending_.push_back({t, page, write, true, 0, 0, kZeroPage});
  return true;
}

// Claims the pages among the `count` after `page` that are absent and, as
// `from_store` says, held in a store or never written, each only while
// DRAM's resident and claimed pages stay within `limit` (claim_within: the
// lookahead claims concurrently). Pages already in DRAM are passed over;
// it stops at the first page that is neither. The claimed pages are placed
// in the same batch, mapped as `write` says, with nobody waiting on them.
// Returns the pages after `page` it went through (claimed or passed over).
// Why pass over resident pages: a table read back front to back after
// training (a checkpoint saved, an evaluation pass, a final hash) has its
// hot rows still in DRAM, scattered; a walk that stopped at each of them
// brought one page per fault there.
uint64_t FaultHandler::claim_following(Table* t, uint64_t page, uint64_t count, uint64_t limit,
                                       bool from_store, bool write) {
  uint64_t p = page + 1;
  for (; p <= page + count && p < t->pages; p++) {
    if (pending_.size() == pending_.capacity()) break;
    std::lock_guard lk(core_.lock_of(t, p));
    uint64_t w = core_.word(t, p).load(std::memory_order_acquire);
    if (in_dram(w)) continue;
    if (PageWord::state(w) != PageState::kAbsent || PageWord::has_slot(w) != from_store) break;
    if (!claim_ahead(t, p, write, limit)) break;
  }
  return p - page - 1;
}

// How many pages from `page` on (at most `most`) are in DRAM, mapped or
// not: a walk's next fault comes after them. Read without the pages'
// locks: a wrong count only makes the next fault start a new walk.
uint64_t FaultHandler::in_dram_from(const Table* t, uint64_t page, uint64_t most) const {
  uint64_t n = 0;
  while (n < most && page + n < t->pages &&
         in_dram(t->words[page + n].load(std::memory_order_relaxed)))
    n++;
  return n;
}

// The pages that come with a MISSING fault on `page`, placed in the same
// round trip, mapped as the fault was (writable for a write; a fetched
// page as fetch_writable says):
// - a fault that continues a front-to-back walk (sequential_streams.h):
//   the walk's window, as far as the budget has free room;
// - else a fetch: the read-around, prefetch_pages store-held neighbours,
//   as far as the budget has free room;
// - else a first touch: zero_ahead_pages never-written neighbours, while
//   DRAM stays below its low watermark with them (filling ahead of a
//   program that is not walking never makes the evictor run). Why: a
//   program fills a new buffer front to back, one MISSING fault per page
//   otherwise; DLRM's set-up ran 4x as long under mtier for it.
// Followers only take room that is free: a batch never waits for them.
void FaultHandler::add_followers(Table* t, uint64_t page, bool from_store, bool write) {
  uint32_t base = from_store ? core_.opts.prefetch_pages : core_.opts.zero_ahead_pages;
  uint32_t want = t->streams.on_miss(page, base, core_.opts.stream_pages);
  Residency& r = core_.residency;
  uint64_t limit = want > base || from_store ? r.budget_pages() : r.low_pages();
  size_t first = pending_.size();
  uint64_t span = want ? claim_following(t, page, want, limit, from_store, write) : 0;
  // A walk's pages (the faulting one, claimed last before this call, and
  // those brought with it) enter without heat: a front-to-back read of
  // every table (a checkpoint's save) then evicts its own pages first
  // instead of the hot rows (placement.h, Evictor::evict_pass).
  // Only where eviction may come (the tables do not fit the budget, or a
  // slow tier takes DRAM's victims): where they fit, a walked page zapped
  // behind the walk would cost a MINOR fault at its next use for nothing.
  // A walk's fetched pages are mapped as its faults are, whatever the
  // table's write intent (fetch_writable) says: that intent is learned from
  // training steps, which write the rows they read, and it changes a page
  // at a time, a budget's worth of evictions late. A checkpoint's save
  // reads every table once after training: mapped writable by the intent,
  // each page it read came back DIRTY and was written back again on its way
  // out (38,963 of 40,898 pages evicted in a 160 MiB save at 25%). A walk
  // that writes what it reads pays one write-protect fault a page instead.
  bool scan = scans();
  if (t->streams.walking()) {
    if (first > 0 && pending_[first - 1].table == t && pending_[first - 1].page == page) {
      pending_[first - 1].scan = scan;
      pending_[first - 1].walk = true;
    }
    for (size_t i = first; i < pending_.size(); i++) {
      pending_[i].scan = scan;
      pending_[i].walk = true;
    }
    if (scan) read_behind(t, t->streams.last_fault(), page);
  }
  if (t->streams.walking()) {
    core_.walk_miss_ms.store(t->walked(page), std::memory_order_relaxed);
  } else {
    t->walk_front.store(UINT64_MAX, std::memory_order_relaxed);
  }
  // The walk's next fault is on the first page after the window not in DRAM
  // (no scan where walks are off: stream_pages 0).
  span += in_dram_from(t, page + 1 + span, core_.opts.stream_pages);
  t->streams.brought(page, span);
}

bool FaultHandler::scans() const {
  return core_.opts.scan_resistant &&
         (core_.has_slow_tier() || core_.tables.table_pages() > core_.residency.budget_pages());
}

// The pages [from, to) of a walk were read by the program since the walk's
// last fault: those it placed (walked and referenced: place_claimed's
// `scan`; any heat is from before their last eviction, since a use of
// its own clears the walked bit) lose the referenced bit and their
// page-table entries, which makes them the evictor's first victims (Evictor::evict_pass) and makes
// a later use of one a MINOR fault that marks it (promoted: heat, bit) as
// the sampler's zaps do - an unreferenced page keeps no entry (heat/clock.h).
// Other pages (the hot rows the walk passed over, or a walked page
// faulted in again on its own) keep theirs. The pages ahead of the walk
// keep their bits until it passes them: a window is not evicted before it
// is read. No lock: the bits beside the state change by atomic RMW, and a
// zap that races a state change costs a MINOR fault at most.
void FaultHandler::read_behind(Table* t, uint64_t from, uint64_t to) {
  if (from >= to || to > t->pages) return;
  if (to - from > 2ull * core_.opts.stream_pages + 2) from = to - 2ull * core_.opts.stream_pages - 2;
  uint64_t run = to;  // first page of the run of cleared pages, `to` when none
  for (uint64_t p = from; p <= to; p++) {
    bool cleared = false;
    if (p < to) {
      PageWordAtomic& w = core_.word(t, p);
      uint64_t v = w.load(std::memory_order_acquire);
      while (PageWord::walked(v) && PageWord::referenced(v) && in_dram(v) && !cleared)
        cleared = w.compare_exchange_weak(v, v & ~PageWord::kReferenced, std::memory_order_acq_rel);
    }
    if (cleared && run == to) run = p;
    if (!cleared && run != to) {
      (void)sys::zap(t->page_addr(run), (p - run) * kPageSize);
      run = to;
    }
  }
}

// Places the claimed pages: first touches at once, the rest read from
// their stores in groups. Registry held shared; no stripe lock held.
void FaultHandler::place_all() {
  for (auto& g : by_store_) g.clear();
  for (size_t i = 0; i < pending_.size();) {
    Placement& p = pending_[i];
    uint64_t w = core_.word(p.table, p.page).load(std::memory_order_acquire);
    if (PageWord::has_slot(w)) {
      by_store_[PageWord::store(w)].push_back(&p);
      i++;
    } else {
      i += place_zeros(i);  // first touches: zeros, nothing to read
    }
  }
  for (unsigned s = 0; s < by_store_.size(); s++)
    if (!by_store_[s].empty()) fetch_from(s, by_store_[s]);
}

// Reads the group's pages from store `s` (fetch_pages: verified, at the
// channel's depth) and places them as their reads complete: a walk's
// consecutive pages read into consecutive staging pages in one copy
// (place_fetched), the rest one at a time. A run ends with its chunk of
// reads, whose staging buffers the next chunk reuses.
void FaultHandler::fetch_from(unsigned s, std::vector<Placement*>& group) {
  const size_t depth = channels_[s]->depth();
  size_t first = 0, n = 0;  // group[first, first+n): read, not yet placed
  auto continues = [&](const Placement& prev, const Placement& p) {
    return p.walk && prev.walk && p.result == 0 && prev.result == 0 && p.table == prev.table &&
           p.page == prev.page + 1 && p.write == prev.write && p.scan == prev.scan &&
           p.prefetch == prev.prefetch &&
           p.source == static_cast<const char*>(prev.source) + kPageSize && n < kZeroRunPages;
  };
  fetch_pages(
      core_, *channels_[s], group.size(),
      [&](size_t i) { return std::pair{group[i]->table, group[i]->page}; },
      [&](size_t i, const void* src, int rc) {
        group[i]->source = src;
        group[i]->result = rc;
        if (n > 0 && !continues(*group[first + n - 1], *group[i])) {
          place_fetched(group, first, n);
          n = 0;
        }
        if (n++ == 0) first = i;
        if ((i + 1) % depth == 0 || i + 1 == group.size()) {
          place_fetched(group, first, n);
          n = 0;
        }
      },
      ios_);
}

// Places group[first, first+n): one page as place() does; a run of a
// walk's pages (consecutive, read alike, mapped alike, their bytes
// consecutive) in one copy (place_run), page by page where that fails.
void FaultHandler::place_fetched(std::vector<Placement*>& group, size_t first, size_t n) {
  if (n == 1) return place(*group[first]);
  const Placement& head = *group[first];
  auto& c = head.table->counters;
  if (place_run_locked(head, n, head.source, head.prefetch ? c.prefetches : c.fetches)) return;
  for (size_t k = 0; k < n; k++) place(*group[first + k], true);
}

// The first touches from pending_[i] on that are the same table's next
// pages, mapped alike (a fault's page and the never-written pages brought
// with it), placed in one copy (place_zero_run); a run that fails, or of
// one page, page by page. Returns the placements it took.
size_t FaultHandler::place_zeros(size_t i) {
  Placement& head = pending_[i];
  size_t n = 1;
  while (i + n < pending_.size() && n < kZeroRunPages) {
    const Placement& q = pending_[i + n];
    if (q.table != head.table || q.page != head.page + n || q.write != head.write ||
        q.scan != head.scan ||
        PageWord::has_slot(core_.word(q.table, q.page).load(std::memory_order_acquire)))
      break;
    n++;
  }
  if (n > 1 && place_run_locked(head, n, kZeroRun, head.table->counters.zero_fills)) return n;
  for (size_t k = 0; k < n; k++) place(pending_[i + k], n > 1);
  return n;
}

// place_run of the n pages from `head` on, under their stripe locks.
// False: nothing placed (said at debug level); the caller places them one
// at a time with may_exist.
bool FaultHandler::place_run_locked(const Placement& head, size_t n, const void* source,
                                    std::atomic<uint64_t>& placed) {
  int rc;
  {
    RunLock lk(core_, head.table, head.page, n);
    rc = place_run(core_, head.table, head.page, n, source, head.write, head.scan, placed);
  }
  if (rc == 0) return true;
  MTIER_LOG_DEBUG("table %s pages %llu-%llu: UFFDIO_COPY of the run: %s; placed page by page",
                  head.table->name.c_str(), static_cast<unsigned long long>(head.page),
                  static_cast<unsigned long long>(head.page + n - 1), strerror(-rc));
  return false;
}

void FaultHandler::place(Placement& p, bool may_exist) {
  Table* t = p.table;
  std::lock_guard lk(core_.lock_of(t, p.page));
  PageWordAtomic& word = core_.word(t, p.page);
  bool fetched = PageWord::has_slot(word.load());
  if (p.result < 0 && p.prefetch) {  // nobody waits on it: leave it in the store
    unclaim(core_, t, p.page);
    return;
  }
  if (p.result < 0) return fail(t, p.page, p.tid, p.result, "fetch");
  auto& c = t->counters;
  bool write = fetched && !p.walk ? fetch_writable(core_, t, p.write) : p.write;
  int rc = place_claimed(core_, t, p.page, p.source, write,
                         fetched ? (p.prefetch ? c.prefetches : c.fetches) : c.zero_fills, true,
                         p.scan, may_exist);
  if (rc < 0 && rc != -EAGAIN) fail(t, p.page, p.tid, rc, "place (UFFDIO_COPY)");
}

void FaultHandler::fail(Table* t, uint64_t page, unsigned tid, int err, const char* what) {
  transition(core_.word(t, page), PageEvent::kFetchFailed, t->id, page);
  core_.residency.unclaimed();
  t->counters.errors.fetch_add(1, std::memory_order_relaxed);
  core_.counters.store_errors.fetch_add(1, std::memory_order_relaxed);
  uint64_t w = core_.word(t, page).load();
  MTIER_LOG_ERROR("table %s page %llu: %s from %s slot %llu failed: %s; the access gets SIGBUS",
                  t->name.c_str(), static_cast<unsigned long long>(page), what,
                  PageWord::has_slot(w) ? core_.stores[PageWord::store(w)]->kind() : "zero page",
                  static_cast<unsigned long long>(PageWord::slot(w)), strerror(-err));
  fail_access(core_, t->page_addr(page), tid);
}

}  // namespace mtier
