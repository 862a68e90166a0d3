#include "engine/evictor.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "engine/runtime_scope.h"
#include "log/log.h"
#include "sys/numa.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier {

Evictor::Evictor(Core& core) : core_(core), hand_(core, false), sampler_(core) {}

Evictor::~Evictor() { stop(); }

int Evictor::start() {
  if (int rc = open_channels(core_, &channels_); rc < 0) return rc;
  running_ = true;
  thread_ = std::thread([this] { run(); });
  return 0;
}

void Evictor::stop() {
  if (!running_.exchange(false)) return;
  core_.residency.kick();
  thread_.join();
}

void Evictor::run() {
  RuntimeScope runtime;  // this thread is the runtime: the preload passes it through
  while (running_.load(std::memory_order_acquire)) {
    core_.residency.wait_for_work(20);
    if (!running_.load(std::memory_order_acquire)) break;
    bool dram = core_.residency.over_high();
    if (dram || (core_.has_slow_tier() && core_.slow.over_high())) {
      if (evict_pass(!dram) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } else if (sampling_useful()) {
      sampler_.tick();
    }
  }
}

// The sampler's referenced bits only matter to an eviction that is near:
// while every tier is below its low watermark it idles (unless scan_idle),
// so that a trainer whose tables fit pays nothing for it. Measured with
// scripts/bench-trainer.sh, budget 2x the tables, sampler always on: 0.93
// of all-DRAM, against 1.02 with scan_rate=0. Heat then comes from faults.
bool Evictor::sampling_useful() const {
  if (core_.opts.scan_idle) return true;
  if (core_.residency.resident() >= static_cast<int64_t>(core_.residency.low_pages())) return true;
  return core_.has_slow_tier() &&
         core_.slow.resident() >= static_cast<int64_t>(core_.slow.low_pages());
}

uint64_t Evictor::evict_pass(bool slow_tier) {
  std::lock_guard<std::mutex> pass(pass_mu_);
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  Residency& r = slow_tier ? core_.slow : core_.residency;
  uint64_t target = std::max<uint64_t>(r.excess_over_low(), 1);
  uint64_t total = 0;
  for (Table* t : core_.tables.ordered()) total += t->pages;
  uint64_t freed = 0, visited = 0;
  std::vector<PageRef> victims;
  int err = 0;
  // Two rotations at most: the first may only clear referenced bits.
  while (freed < target && visited <= 2 * total + 1 && running_.load()) {
    victims.clear();
    // The daemon's hints steer the first rotation only: stale or greedy
    // hints never stop eviction.
    bool hints = visited < total && core_.hints_active.load(std::memory_order_acquire);
    uint64_t v = hand_.sweep(total ? total : 1, &victims, core_.opts.evict_batch, slow_tier, hints);
    visited += v ? v : total + 1;
    if (!victims.empty())
      freed += slow_tier || !core_.has_slow_tier() ? evict(victims, false, &err)
                                                   : demote_or_evict(victims, &err);
    core_.residency.notify_progress();
  }
  if (!slow_tier)
    core_.residency.set_stuck(freed == 0 &&
                              core_.residency.resident() >= (int64_t)core_.residency.budget_pages());
  return freed;
}

int Evictor::evict_range(int table_id, uint64_t first, uint64_t count, bool dram_only) {
  std::lock_guard<std::mutex> pass(pass_mu_);
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  Table* t = core_.tables.by_id(table_id);
  if (!t) return -ENOENT;
  std::vector<PageRef> victims;
  int err = 0;
  auto flush = [&] {
    if (dram_only && core_.has_slow_tier())
      demote_or_evict(victims, &err, true);
    else
      evict(victims, true, &err);
    victims.clear();
  };
  // No unlocked pre-filter on the state: a page the handler is placing
  // right now is FETCHING until it lets go of the page lock, and must not
  // be skipped. start_run decides under the page locks. (The slow bit only
  // changes on this thread, under pass_mu_.)
  uint64_t end = first + std::min(count, t->pages);
  end = std::min(t->pages, end);
  for (uint64_t p = first; p < end; p++) {
    uint64_t w = core_.word(t, p).load();
    if (PageWord::state(w) == PageState::kAbsent) continue;
    if (dram_only && PageWord::slow(w)) continue;
    victims.push_back({t, p});
    if (victims.size() == core_.opts.evict_batch) flush();
  }
  if (!victims.empty()) flush();
  core_.residency.notify_progress();
  return err;
}

namespace {

// Holds the page locks of a run of consecutive pages of one table. The
// evictor is the only thread that holds more than one page lock (its passes
// are serialised by pass_mu_), so the order needs no care; a run is shorter
// than the stripe count, so its stripes are distinct.
class RunLock {
 public:
  RunLock(Core& core, Table* t, uint64_t first, size_t n) : core_(core), t_(t), first_(first), n_(n) {
    for (size_t i = 0; i < n_; i++) core_.lock_of(t_, first_ + i).lock();
  }
  ~RunLock() {
    for (size_t i = n_; i-- > 0;) core_.lock_of(t_, first_ + i).unlock();
  }

 private:
  Core& core_;
  Table* t_;
  uint64_t first_;
  size_t n_;
};

constexpr size_t kMaxRun = 256;

// Calls f(i, j) for each maximal run refs[i..j) of consecutive pages of one table.
template <class F>
void for_each_run(const std::vector<PageRef>& refs, F f) {
  for (size_t i = 0; i < refs.size();) {
    size_t j = i + 1;
    while (j < refs.size() && j - i < kMaxRun && refs[j].table == refs[i].table &&
           refs[j].page == refs[j - 1].page + 1)
      j++;
    f(i, j);
    i = j;
  }
}

}  // namespace

uint64_t Evictor::evict(const std::vector<PageRef>& victims, bool force, int* err) {
  uint64_t freed = 0;
  std::vector<PageRef> dirty;
  for_each_run(victims, [&](size_t i, size_t j) {
    freed += start_run(&victims[i], j - i, force, &dirty);
  });
  write_protect(dirty);
  std::vector<std::vector<PageRef>> by_store(core_.stores.size());
  std::vector<PageRef> no_room;
  for (const PageRef& v : dirty) {
    if (PageWord::state(core_.word(v.table, v.page).load()) != PageState::kEvicting) continue;
    int s = assign_slot(v);
    if (s >= 0) by_store[s].push_back(v);
    else no_room.push_back(v);
  }
  if (!no_room.empty()) {
    if (!*err) *err = -ENOSPC;
    std::vector<int> results(no_room.size(), -ENOSPC);
    for_each_run(no_room, [&](size_t i, size_t j) { finish_run(&no_room[i], &results[i], j - i); });
  }
  for (unsigned s = 0; s < by_store.size(); s++) write_back(s, by_store[s], err, &freed);
  return freed;
}

// Under the run's locks: clean, unreferenced pages (their data is in their
// slot, or is zeros) are dropped at once, one punch per stretch; dirty ones
// become EVICTING and are appended to *dirty for write-back. A racing write
// fault waits for the locks, then refetches or cancels. Returns pages freed.
uint64_t Evictor::start_run(const PageRef* run, size_t n, bool force, std::vector<PageRef>* dirty) {
  RunLock lk(core_, run[0].table, run[0].page, n);
  std::vector<bool> drop(n, false);
  for (size_t k = 0; k < n; k++) {
    uint64_t now = core_.word(run[k].table, run[k].page).load(std::memory_order_acquire);
    if (PageWord::referenced(now) && !force) continue;
    if (PageWord::state(now) == PageState::kClean) drop[k] = true;
    if (PageWord::state(now) != PageState::kDirty) continue;
    transition(core_.word(run[k].table, run[k].page), PageEvent::kEvictBegin, run[k].table->id,
               run[k].page);
    dirty->push_back(run[k]);
  }
  return punch_and_commit(run, n, drop, false);
}

// Punches the pages marked in `mark` (a stretch of marked pages in one
// call) and moves them to ABSENT; a page whose punch fails stays resident
// (CLEAN pages as they are, EVICTING ones back to DIRTY). Caller holds the
// run's locks. Returns the pages freed.
uint64_t Evictor::punch_and_commit(const PageRef* run, size_t n, std::vector<bool>& mark,
                                   bool written) {
  Table* t = run[0].table;
  uint64_t freed = 0, freed_slow = 0;
  for (size_t i = 0; i < n;) {
    if (!mark[i]) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && mark[j]) j++;
    int rc = core_.region->punch(core_.region_offset(t, run[i].page), (j - i) * 4096);
    for (size_t k = i; k < j; k++) {
      if (rc < 0) {
        fail_run_page(run[k], rc);
        continue;
      }
      freed_slow += PageWord::slow(core_.word(t, run[k].page).load());
      transition(core_.word(t, run[k].page), PageEvent::kEvictCommit, t->id, run[k].page);
      t->counters.evictions.fetch_add(1, std::memory_order_relaxed);
      if (written) t->counters.writebacks.fetch_add(1, std::memory_order_relaxed);
      freed++;
    }
    i = j;
  }
  core_.residency.sub(static_cast<int64_t>(freed - freed_slow));
  core_.slow.sub(static_cast<int64_t>(freed_slow));
  t->counters.resident_pages.fetch_sub(static_cast<int64_t>(freed), std::memory_order_relaxed);
  t->counters.slow_pages.fetch_sub(static_cast<int64_t>(freed_slow), std::memory_order_relaxed);
  return freed;
}

// A page whose eviction failed (`err`): an EVICTING page goes back to the
// trainer as DIRTY and writable; a CLEAN one simply stays. Lock held.
void Evictor::fail_run_page(const PageRef& v, int err) {
  PageWordAtomic& w = core_.word(v.table, v.page);
  if (err != -ENOSPC) {
    v.table->counters.errors.fetch_add(1, std::memory_order_relaxed);
    core_.counters.store_errors.fetch_add(1, std::memory_order_relaxed);
    MTIER_LOG_ERROR("evict: table %s page %llu: %s; the page stays in DRAM",
                    v.table->name.c_str(), static_cast<unsigned long long>(v.page), strerror(-err));
  }
  if (PageWord::state(w.load(std::memory_order_acquire)) != PageState::kEvicting) return;
  transition(w, PageEvent::kWritebackFailed, v.table->id, v.page);
  (void)sys::uffd_writeprotect(core_.uffd, v.table->page_addr(v.page), 4096, false);
}

// Finishes the eviction of a run of written-back (or failed) pages: those
// still EVICTING with a good write are punched; failed ones go back to
// DIRTY. A page a write took back meanwhile (DIRTY again) is left alone.
uint64_t Evictor::finish_run(const PageRef* run, const int* results, size_t n) {
  RunLock lk(core_, run[0].table, run[0].page, n);
  std::vector<bool> punch(n, false);
  for (size_t k = 0; k < n; k++) {
    uint64_t now = core_.word(run[k].table, run[k].page).load(std::memory_order_acquire);
    if (PageWord::state(now) != PageState::kEvicting) continue;
    if (results[k] < 0) fail_run_page(run[k], results[k]);
    else punch[k] = true;
  }
  return punch_and_commit(run, n, punch, true);
}

// Write-protects the pages (contiguous runs in one ioctl) before their data
// is copied: a write from then on faults, and the handler cancels the
// eviction. A page that cannot be protected goes back to DIRTY at once.
void Evictor::write_protect(const std::vector<PageRef>& pages) {
  for (size_t i = 0; i < pages.size();) {
    size_t j = i + 1;
    while (j < pages.size() && pages[j].table == pages[i].table &&
           pages[j].page == pages[j - 1].page + 1)
      j++;
    int rc = sys::uffd_writeprotect(core_.uffd, pages[i].table->page_addr(pages[i].page),
                                    (j - i) * 4096, true);
    if (rc < 0) {
      MTIER_LOG_ERROR("evict: write-protect of table %s pages %llu-%llu: %s",
                      pages[i].table->name.c_str(), (unsigned long long)pages[i].page,
                      (unsigned long long)pages[j - 1].page, strerror(-rc));
      for (size_t k = i; k < j; k++) {
        std::lock_guard<std::mutex> lk(core_.lock_of(pages[k].table, pages[k].page));
        fail_run_page(pages[k], rc);
      }
    }
    i = j;
  }
}

// The store index the page's data goes to: its own slot if it has one,
// else a new slot in the first store with room. -ENOSPC when all are full.
int Evictor::assign_slot(const PageRef& v) {
  PageWordAtomic& w = core_.word(v.table, v.page);
  uint64_t now = w.load(std::memory_order_acquire);
  if (PageWord::has_slot(now)) return static_cast<int>(PageWord::store(now));
  for (unsigned s = 0; s < core_.stores.size(); s++) {
    int64_t slot = core_.stores[s]->alloc_slot();
    if (slot < 0) continue;
    set_slot(w, s, static_cast<uint64_t>(slot));
    full_logged_ = false;
    return static_cast<int>(s);
  }
  // Logged once until a slot is found again: a full store refuses every
  // dirty page of every pass, and one line says it.
  if (core_.counters.store_full.fetch_add(1, std::memory_order_relaxed) == 0 || !full_logged_)
    MTIER_LOG_ERROR("evict: no store has room for table %s page %llu: store full, dirty pages "
                    "stay in DRAM over the budget", v.table->name.c_str(),
                    static_cast<unsigned long long>(v.page));
  full_logged_ = true;
  return -ENOSPC;
}

// Moves cold DRAM pages to the slow memory tier while it has room, and
// evicts the rest to a store. Returns the DRAM pages freed.
uint64_t Evictor::demote_or_evict(const std::vector<PageRef>& victims, int* err, bool force) {
  int64_t room = static_cast<int64_t>(core_.slow.budget_pages()) - core_.slow.resident();
  size_t n = static_cast<size_t>(std::clamp<int64_t>(room, 0, victims.size()));
  std::vector<PageRef> rest = demote(std::vector<PageRef>(victims.begin(), victims.begin() + n));
  uint64_t moved = n - rest.size();
  rest.insert(rest.end(), victims.begin() + n, victims.end());
  return moved + (rest.empty() ? 0 : evict(rest, force, err));
}

// move_pages through the alias mapping: the pages stay resident and mapped
// (a MINOR fault away), only their node changes. With the trainer's view
// zapped (zap_view; a CLOCK victim's is already), the alias, populated for
// the move and zapped after, is the page's only mapping: MPOL_MF_MOVE
// refuses shared pages. Only the evictor changes tiers or punches, and the
// registry is held shared, so the pages stay resident throughout.
template <typename F>
void Evictor::move_runs(const std::vector<PageRef>& pages, int node, bool zap_view, F moved) {
  std::vector<const void*> addrs;
  std::vector<int> nodes, status;
  for_each_run(pages, [&](size_t i, size_t j) {
    size_t n = j - i;
    char* alias = core_.alias_of(pages[i].table, pages[i].page);
    if (zap_view)
      (void)sys::zap(core_.region->base() + core_.region_offset(pages[i].table, pages[i].page),
                     n * 4096);
    addrs.resize(n);
    for (size_t k = 0; k < n; k++) addrs[k] = alias + k * 4096;
    nodes.assign(n, node);
    status.assign(n, -1);
    long rc = sys::populate_read(alias, n * 4096);
    if (rc == 0)
      rc = sys::move_pages(0, n, addrs.data(), nodes.data(), status.data(), MPOL_MF_MOVE);
    (void)sys::zap(alias, n * 4096);
    for (size_t k = 0; k < n; k++) moved(pages[i + k], rc >= 0 ? status[k] : -1);
  });
}

// A daemon's demotion order takes pages the trainer may have mapped (the
// CLOCK's victims are zapped already), so the view is zapped in both cases.
// Returns the pages that did not move.
std::vector<PageRef> Evictor::demote(const std::vector<PageRef>& pages) {
  std::vector<PageRef> failed;
  move_runs(pages, core_.opts.slow_node, true,
            [&](const PageRef& v, int node) { account_demotion(v, node, &failed); });
  core_.counters.demote_failures.fetch_add(failed.size(), std::memory_order_relaxed);
  return failed;
}

// A slow page may be mapped in the trainer's view (a MINOR fault since its
// demotion mapped it): that view is zapped first, so the alias is the only
// mapping and MPOL_MF_MOVE moves it. An access racing the move maps the page
// again; move_pages then leaves it where it is, and it stays slow.
long Evictor::promote_range(int table_id, uint64_t first, uint64_t count) {
  std::lock_guard<std::mutex> pass(pass_mu_);
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  Table* t = core_.tables.by_id(table_id);
  if (!t) return -ENOENT;
  int64_t room = static_cast<int64_t>(core_.residency.high_pages()) - core_.residency.resident();
  std::vector<PageRef> pages;
  uint64_t end = first + std::min(count, t->pages);
  end = std::min(t->pages, end);
  for (uint64_t p = first; p < end && static_cast<int64_t>(pages.size()) < room; p++) {
    uint64_t w = core_.word(t, p).load();
    if (PageWord::resident(w) && PageWord::slow(w)) pages.push_back({t, p});
  }
  int dram = core_.opts.dram_node >= 0 ? core_.opts.dram_node : 0;
  long moved = 0, failed = 0;
  move_runs(pages, dram, true, [&](const PageRef& v, int node) {
    if (node != dram) {
      failed++;
      return;
    }
    set_slow(core_.word(v.table, v.page), false);
    core_.slow.sub(1);
    core_.residency.add(1);
    v.table->counters.promotions.fetch_add(1, std::memory_order_relaxed);
    v.table->counters.slow_pages.fetch_sub(1, std::memory_order_relaxed);
    moved++;
  });
  core_.counters.demote_failures.fetch_add(failed, std::memory_order_relaxed);
  return moved;
}

void Evictor::account_demotion(const PageRef& v, int node, std::vector<PageRef>* failed) {
  if (node != core_.opts.slow_node) {
    failed->push_back(v);
    return;
  }
  set_slow(core_.word(v.table, v.page), true);
  core_.residency.sub(1);
  core_.slow.add(1);
  v.table->counters.demotions.fetch_add(1, std::memory_order_relaxed);
  v.table->counters.slow_pages.fetch_add(1, std::memory_order_relaxed);
}

void Evictor::write_back(unsigned s, std::vector<PageRef>& group, int* err, uint64_t* freed) {
  StoreChannel& ch = *channels_[s];
  std::vector<StoreIo> ios;
  std::vector<int> results;
  for (size_t i = 0; i < group.size(); i += ch.depth()) {
    size_t n = std::min<size_t>(ch.depth(), group.size() - i);
    ios.clear();
    for (size_t k = 0; k < n; k++) {
      const PageRef& v = group[i + k];
      uint64_t slot = PageWord::slot(core_.word(v.table, v.page).load());
      void* buf = ch.buffer(static_cast<unsigned>(k));
      memcpy(buf, core_.alias_of(v.table, v.page), 4096);
      ios.push_back({slot, buf, 0});
    }
    int rc = ch.write_pages(ios.data(), n);
    if (rc < 0 && !*err) *err = rc;
    results.resize(n);
    for (size_t k = 0; k < n; k++) results[k] = ios[k].result;
    std::vector<PageRef> chunk(group.begin() + i, group.begin() + i + n);
    for_each_run(chunk, [&](size_t a, size_t b) {
      *freed += finish_run(&chunk[a], &results[a], b - a);
    });
  }
}

}  // namespace mtier
