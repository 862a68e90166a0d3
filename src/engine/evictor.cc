#include "engine/evictor.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "log/log.h"
#include "sys/uffd.h"

namespace mtier {

Evictor::Evictor(Core& core) : core_(core), hand_(core, false), sampler_(core) {}

Evictor::~Evictor() { stop(); }

int Evictor::start() {
  for (auto& s : core_.stores) {
    auto ch = s->open_channel(core_.opts.queue_depth);
    if (!ch) return -ENOMEM;
    channels_.push_back(std::move(ch));
  }
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
  while (running_.load(std::memory_order_acquire)) {
    core_.residency.wait_for_work(20);
    if (!running_.load(std::memory_order_acquire)) break;
    if (core_.residency.over_high()) {
      if (evict_pass() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } else {
      sampler_.tick();
    }
  }
}

uint64_t Evictor::evict_pass() {
  std::lock_guard<std::mutex> pass(pass_mu_);
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  uint64_t target = std::max<uint64_t>(core_.residency.excess_over_low(), 1);
  uint64_t total = 0;
  for (Table* t : core_.tables.ordered()) total += t->pages;
  uint64_t freed = 0, visited = 0;
  std::vector<PageRef> victims;
  int err = 0;
  // Two rotations at most: the first may only clear referenced bits.
  while (freed < target && visited <= 2 * total + 1 && running_.load()) {
    victims.clear();
    uint64_t v = hand_.sweep(total ? total : 1, &victims, core_.opts.evict_batch);
    visited += v ? v : total + 1;
    if (!victims.empty()) freed += evict(victims, false, &err);
    core_.residency.notify_progress();
  }
  bool stuck = freed == 0 && core_.residency.resident() >= (int64_t)core_.residency.budget_pages();
  core_.residency.set_stuck(stuck);
  return freed;
}

int Evictor::evict_table(Table* t) {
  std::lock_guard<std::mutex> pass(pass_mu_);
  std::shared_lock<std::shared_mutex> tables(core_.tables.mutex());
  std::vector<PageRef> victims;
  int err = 0;
  // No unlocked pre-filter on the state: a page the handler is placing
  // right now is FETCHING until it lets go of the page lock, and must not
  // be skipped. drop_clean / begin_dirty decide under the lock.
  for (uint64_t p = 0; p < t->pages; p++) {
    if (PageWord::state(core_.word(t, p).load()) == PageState::kAbsent) continue;
    victims.push_back({t, p});
    if (victims.size() == core_.opts.evict_batch) {
      evict(victims, true, &err);
      victims.clear();
    }
  }
  if (!victims.empty()) evict(victims, true, &err);
  core_.residency.notify_progress();
  return err;
}

uint64_t Evictor::evict(const std::vector<PageRef>& victims, bool force, int* err) {
  uint64_t freed = 0;
  std::vector<std::vector<PageRef>> by_store(core_.stores.size());
  std::vector<PageRef> dirty;
  for (const PageRef& v : victims) {
    if (drop_clean(v, force)) freed++;
    else if (begin_dirty(v, force)) dirty.push_back(v);
  }
  write_protect(dirty);
  for (const PageRef& v : dirty) {
    if (PageWord::state(core_.word(v.table, v.page).load()) != PageState::kEvicting) continue;
    int s = assign_slot(v);
    if (s >= 0) {
      by_store[s].push_back(v);
      continue;
    }
    if (!*err) *err = s;
    commit(v, s);
  }
  for (unsigned s = 0; s < by_store.size(); s++) write_back(s, by_store[s], err, &freed);
  return freed;
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
      for (size_t k = i; k < j; k++) commit(pages[k], rc);
    }
    i = j;
  }
}

// A clean, unreferenced page: its data is in its slot or is zeros. Dropped
// under the page lock, so a racing write fault waits and then refetches.
bool Evictor::drop_clean(const PageRef& v, bool force) {
  std::lock_guard<std::mutex> lk(core_.lock_of(v.table, v.page));
  PageWordAtomic& w = core_.word(v.table, v.page);
  uint64_t now = w.load(std::memory_order_acquire);
  if (PageWord::state(now) != PageState::kClean || (PageWord::referenced(now) && !force))
    return false;
  int rc = core_.region->punch(core_.region_offset(v.table, v.page), 4096);
  if (rc < 0) {
    MTIER_LOG_ERROR("evict: punch of table %s page %llu: %s", v.table->name.c_str(),
                    static_cast<unsigned long long>(v.page), strerror(-rc));
    return false;
  }
  transition(w, PageEvent::kEvictCommit, v.table->id, v.page);
  core_.residency.sub(1);
  v.table->counters.resident_pages.fetch_sub(1, std::memory_order_relaxed);
  v.table->counters.evictions.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Evictor::begin_dirty(const PageRef& v, bool force) {
  std::lock_guard<std::mutex> lk(core_.lock_of(v.table, v.page));
  PageWordAtomic& w = core_.word(v.table, v.page);
  uint64_t now = w.load(std::memory_order_acquire);
  if (PageWord::state(now) != PageState::kDirty || (PageWord::referenced(now) && !force))
    return false;
  transition(w, PageEvent::kEvictBegin, v.table->id, v.page);
  return true;
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

void Evictor::write_back(unsigned s, std::vector<PageRef>& group, int* err, uint64_t* freed) {
  StoreChannel& ch = *channels_[s];
  std::vector<StoreIo> ios;
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
    for (size_t k = 0; k < n; k++)
      if (commit(group[i + k], ios[k].result)) (*freed)++;
  }
}

// Finishes the eviction of a dirty page whose write-back ended with
// `io_result`: punch it, or give it back to the trainer on failure. A page a
// write took back meanwhile (state DIRTY again) is left alone.
bool Evictor::commit(const PageRef& v, int io_result) {
  std::lock_guard<std::mutex> lk(core_.lock_of(v.table, v.page));
  PageWordAtomic& w = core_.word(v.table, v.page);
  if (PageWord::state(w.load(std::memory_order_acquire)) != PageState::kEvicting) return false;
  char* addr = v.table->page_addr(v.page);
  int rc = io_result < 0 ? io_result
                         : core_.region->punch(core_.region_offset(v.table, v.page), 4096);
  if (rc < 0) {
    if (rc != -ENOSPC) {
      v.table->counters.errors.fetch_add(1, std::memory_order_relaxed);
      core_.counters.store_errors.fetch_add(1, std::memory_order_relaxed);
      MTIER_LOG_ERROR("evict: write-back of table %s page %llu: %s; the page stays in DRAM",
                      v.table->name.c_str(), static_cast<unsigned long long>(v.page),
                      strerror(-rc));
    }
    transition(w, PageEvent::kWritebackFailed, v.table->id, v.page);
    (void)sys::uffd_writeprotect(core_.uffd, addr, 4096, false);
    return false;
  }
  transition(w, PageEvent::kEvictCommit, v.table->id, v.page);
  core_.residency.sub(1);
  v.table->counters.resident_pages.fetch_sub(1, std::memory_order_relaxed);
  v.table->counters.evictions.fetch_add(1, std::memory_order_relaxed);
  v.table->counters.writebacks.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace mtier
