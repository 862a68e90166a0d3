#include "uffd/fault_handler.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "util/runtime_scope.h"
#include "log/log.h"
#include "sys/uffd.h"

namespace mtier {
namespace {

alignas(4096) const char kZeroPage[4096] = {};
constexpr size_t kBatch = 64;

bool is_write(uint64_t flags) { return flags & UFFD_PAGEFAULT_FLAG_WRITE; }
bool is_minor(uint64_t flags) { return flags & UFFD_PAGEFAULT_FLAG_MINOR; }
bool is_wp(uint64_t flags) { return flags & UFFD_PAGEFAULT_FLAG_WP; }

}  // namespace

FaultHandler::FaultHandler(Core& core) : core_(core) {}

FaultHandler::~FaultHandler() { stop(); }

int FaultHandler::start() {
  if (int rc = open_channels(core_, &channels_); rc < 0) return rc;
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return -errno;
  request_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (request_fd_ < 0) return -errno;
  running_ = true;
  thread_ = std::thread([this] { run(); });
  return 0;
}

void FaultHandler::stop() {
  if (!running_.exchange(false)) return;
  uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  thread_.join();
  close(stop_fd_);
  close(request_fd_);
}

int FaultHandler::request_prefetch(int table_id, uint64_t first, uint64_t count) {
  {
    std::lock_guard<std::mutex> lk(request_mu_);
    if (requests_.size() >= 4096) return -ENOMEM;  // the daemon floods: drop, it re-orders
    requests_.push_back({table_id, first, count});
  }
  uint64_t one = 1;
  (void)!write(request_fd_, &one, sizeof one);
  return 0;
}

void FaultHandler::serve_prefetch_requests() {
  uint64_t n;
  (void)!read(request_fd_, &n, sizeof n);
  std::vector<PrefetchRequest> reqs;
  {
    std::lock_guard<std::mutex> lk(request_mu_);
    reqs.swap(requests_);
  }
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  pending_.clear();
  int64_t room = static_cast<int64_t>(core_.residency.high_pages()) - core_.residency.resident();
  for (const auto& r : reqs) {
    Table* t = core_.tables.by_id(r.table_id);
    if (!t || r.first >= t->pages) continue;
    uint64_t end = std::min(t->pages, r.first + std::min(r.count, t->pages));
    for (uint64_t p = r.first; p < end && static_cast<int64_t>(pending_.size()) < room; p++) {
      std::lock_guard<std::mutex> lk(core_.lock_of(t, p));
      uint64_t w = core_.word(t, p).load(std::memory_order_acquire);
      if (PageWord::state(w) == PageState::kAbsent && PageWord::has_slot(w))
        claim(t, p, false, true, 0);
    }
  }
  if (pending_.empty()) return;
  size_t claimed = pending_.size();
  place_all();
  requested_placed_.fetch_add(claimed, std::memory_order_relaxed);
}

void FaultHandler::run() {
  RuntimeScope runtime;  // this thread is the runtime: the preload passes it through
  struct uffd_msg msgs[kBatch];
  struct pollfd fds[3] = {{core_.uffd, POLLIN, 0}, {stop_fd_, POLLIN, 0}, {request_fd_, POLLIN, 0}};
  while (running_.load(std::memory_order_acquire)) {
    if (poll(fds, 3, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    if (fds[2].revents) serve_prefetch_requests();
    if (!fds[0].revents) continue;
    long n = sys::uffd_read(core_.uffd, msgs, kBatch);
    if (n < 0) {
      MTIER_LOG_ERROR("fault handler: read from userfaultfd: %s", strerror(static_cast<int>(-n)));
      break;
    }
    if (n > 0) handle_batch(msgs, static_cast<size_t>(n));
  }
}

void FaultHandler::handle_batch(const struct uffd_msg* msgs, size_t n) {
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  pending_.clear();
  for (size_t i = 0; i < n; i++) {
    if (msgs[i].event != UFFD_EVENT_PAGEFAULT) continue;
    uint64_t addr = msgs[i].arg.pagefault.address & ~4095ull;
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
  if (!pending_.empty()) place_all();
}

// Decides what a fault needs from the page's state (not the message kind:
// the state may have moved since the kernel raised it).
void FaultHandler::resolve(Table* t, uint64_t page, uint64_t flags, unsigned tid) {
  std::unique_lock<std::mutex> lk(core_.lock_of(t, page));
  uint64_t w = core_.word(t, page).load(std::memory_order_acquire);
  switch (PageWord::state(w)) {
    case PageState::kAbsent:
      t->counters.missing_faults.fetch_add(1, std::memory_order_relaxed);
      claim(t, page, is_write(flags), false, tid);
      lk.unlock();
      // prefetch_pages store-held neighbours come with a fetch.
      if (PageWord::has_slot(w)) claim_following(t, page, core_.opts.prefetch_pages, true, false);
      else add_zero_ahead(t, page, is_write(flags));
      return;
    case PageState::kFetching:
      return;  // a second fault on a page this batch places: the copy wakes it
    case PageState::kFailed:
      fail_access(core_, t->page_addr(page), tid);
      return;
    default:
      resolve_present(t, page, w, flags, tid);
  }
}

// CLEAN / DIRTY / EVICTING: the page is in the memfd, only the PTE is at stake.
void FaultHandler::resolve_present(Table* t, uint64_t page, uint64_t w, uint64_t flags,
                                   unsigned tid) {
  PageWordAtomic& word = core_.word(t, page);
  char* addr = t->page_addr(page);
  PageState s = PageWord::state(w);
  // A MINOR fault counts as a write where CONTINUE cannot keep the page
  // write-protected (Core::continue_wp): the page will be mapped writable.
  bool write = is_write(flags) || (is_minor(flags) && !core_.continue_wp);
  if (write && s != PageState::kDirty) {
    if (s == PageState::kEvicting) t->counters.evict_cancels.fetch_add(1, std::memory_order_relaxed);
    else if (is_write(flags)) t->counters.wp_faults.fetch_add(1, std::memory_order_relaxed);
    transition(word, PageEvent::kWrite, t->id, page);
  }
  bool keep_wp = core_.continue_wp && PageWord::state(word.load()) != PageState::kDirty;
  if (is_minor(flags)) {
    t->counters.minor_faults.fetch_add(1, std::memory_order_relaxed);
    mark_access(word);
    resolve_ioctl(sys::uffd_continue(core_.uffd, addr, 4096, keep_wp), t, page, tid, "continue");
  } else if (is_wp(flags) && !keep_wp) {
    resolve_ioctl(sys::uffd_writeprotect(core_.uffd, addr, 4096, false), t, page, tid,
                  "unprotect");
  } else {
    resolve_ioctl(sys::uffd_wake(core_.uffd, addr, 4096), t, page, tid, "wake");
  }
}

int FaultHandler::resolve_ioctl(int rc, Table* t, uint64_t page, unsigned tid, const char* what) {
  if (rc == 0) return 0;
  if (rc == -EEXIST) return sys::uffd_wake(core_.uffd, t->page_addr(page), 4096);
  // EAGAIN: the address space was changing under the ioctl (the kernel's
  // mmap_changing: a fork, mremap or memory pressure); the woken thread
  // faults again and is served then, so it is no error.
  if (rc == -EAGAIN)
    MTIER_LOG_DEBUG("table %s page %llu: %s: %s; the access is retried", t->name.c_str(),
                    static_cast<unsigned long long>(page), what, strerror(-rc));
  else
    MTIER_LOG_ERROR("table %s page %llu: %s: %s", t->name.c_str(),
                    static_cast<unsigned long long>(page), what, strerror(-rc));
  (void)sys::uffd_wake(core_.uffd, t->page_addr(page), 4096);
  if (rc != -EAGAIN) fail_access(core_, t->page_addr(page), tid);
  return rc;
}

void FaultHandler::claim(Table* t, uint64_t page, bool write, bool prefetch, unsigned tid) {
  transition(core_.word(t, page), PageEvent::kClaim, t->id, page);
  pending_.push_back({t, page, write, prefetch, tid, 0, kZeroPage});
}

// Claims up to `count` pages after `page` that are absent and, as
// `from_store` says, held in a store or never written; stops at the first
// that is not. They are placed in the same batch, mapped as `write` says,
// with nobody waiting on them.
void FaultHandler::claim_following(Table* t, uint64_t page, uint64_t count, bool from_store,
                                   bool write) {
  for (uint64_t p = page + 1; p <= page + count && p < t->pages; p++) {
    std::lock_guard<std::mutex> lk(core_.lock_of(t, p));
    uint64_t w = core_.word(t, p).load(std::memory_order_acquire);
    if (PageWord::state(w) != PageState::kAbsent || PageWord::has_slot(w) != from_store) break;
    claim(t, p, write, true, 0);
  }
}

// First touch: up to zero_ahead_pages never-written neighbours after `page`
// are zero-filled in the same batch and mapped as the touch was (writable
// for a write), while DRAM stays below its low watermark with them, so that
// filling ahead never makes the evictor run. Why: a program fills a new
// buffer front to back, one MISSING fault (a round trip through this thread)
// per page otherwise; DLRM's set-up ran 4x as long under mtier for it.
void FaultHandler::add_zero_ahead(Table* t, uint64_t page, bool write) {
  int64_t room = static_cast<int64_t>(core_.residency.low_pages()) - core_.residency.resident() -
                 static_cast<int64_t>(pending_.size());
  if (room <= 0) return;
  claim_following(t, page, std::min<uint64_t>(core_.opts.zero_ahead_pages, room), false, write);
}

void FaultHandler::place_all() {
  if (!core_.residency.wait_for_room(pending_.size()))
    MTIER_LOG_WARN("DRAM budget exceeded: eviction cannot make room (store full or failing)");
  std::vector<std::vector<Placement*>> by_store(core_.stores.size());
  for (auto& p : pending_) {
    uint64_t w = core_.word(p.table, p.page).load(std::memory_order_acquire);
    if (PageWord::has_slot(w)) by_store[PageWord::store(w)].push_back(&p);
    else place(p);  // a first touch: zeros, nothing to read
  }
  for (unsigned s = 0; s < by_store.size(); s++) fetch_from(s, by_store[s]);
}

// Reads the group's pages from store `s` into staging buffers (or points at
// the pmem mapping), at most the channel's depth at a time, placing each
// chunk before reusing the buffers.
void FaultHandler::fetch_from(unsigned s, std::vector<Placement*>& group) {
  StoreChannel& ch = *channels_[s];
  std::vector<StoreIo> ios;
  for (size_t i = 0; i < group.size(); i += ch.depth()) {
    size_t n = std::min<size_t>(ch.depth(), group.size() - i);
    ios.clear();
    for (size_t k = 0; k < n; k++) {
      Placement* p = group[i + k];
      uint64_t slot = PageWord::slot(core_.word(p->table, p->page).load());
      p->source = ch.direct(slot);
      if (!p->source) ios.push_back({slot, ch.buffer(static_cast<unsigned>(ios.size())), 0});
    }
    if (!ios.empty()) (void)ch.read_pages(ios.data(), ios.size());
    for (size_t k = 0, io = 0; k < n; k++) {
      Placement* p = group[i + k];
      if (!p->source) {
        p->source = ios[io].buf;
        p->result = ios[io++].result;
      }
      place(*p);
    }
  }
}

void FaultHandler::place(Placement& p) {
  Table* t = p.table;
  std::lock_guard<std::mutex> lk(core_.lock_of(t, p.page));
  PageWordAtomic& word = core_.word(t, p.page);
  bool fetched = PageWord::has_slot(word.load());
  if (p.result < 0 && p.prefetch) {  // nobody waits on it: leave it in the store
    transition(word, PageEvent::kUnclaim, t->id, p.page);
    return;
  }
  if (p.result < 0) return fail(t, p.page, p.tid, p.result, "fetch");
  // Copied without waking: the state and counters are updated first, so
  // that whatever the woken thread does next (an evict_table, a stats read)
  // sees them. Then everyone waiting on the page is woken, including a
  // waiter on a prefetched page whose fault found it FETCHING.
  char* addr = t->page_addr(p.page);
  int rc = sys::uffd_copy(core_.uffd, addr, p.source, 4096, !p.write, true);
  while (rc == -EAGAIN) rc = sys::uffd_copy(core_.uffd, addr, p.source, 4096, !p.write, true);
  if (rc < 0) return fail(t, p.page, p.tid, rc, "place (UFFDIO_COPY)");
  transition(word, p.write ? PageEvent::kPlacedDirty : PageEvent::kPlacedClean, t->id, p.page);
  mark_access(word);
  core_.residency.add(1);
  t->counters.resident_pages.fetch_add(1, std::memory_order_relaxed);
  auto& c = t->counters;
  (fetched ? (p.prefetch ? c.prefetches : c.fetches) : c.zero_fills)
      .fetch_add(1, std::memory_order_relaxed);
  (void)sys::uffd_wake(core_.uffd, addr, 4096);
}

void FaultHandler::fail(Table* t, uint64_t page, unsigned tid, int err, const char* what) {
  transition(core_.word(t, page), PageEvent::kFetchFailed, t->id, page);
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
