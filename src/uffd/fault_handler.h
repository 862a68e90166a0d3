// SPDX-License-Identifier: Apache-2.0
// The fault-handler thread: reads userfaultfd messages in batches and
// resolves every one. MISSING: zero-fill or fetch from the store that holds
// the page (UFFDIO_COPY), with adjacent pages read around it when configured (prefetch_pages);
// MINOR: an access seen by the sampler (UFFDIO_CONTINUE); WP: first write to
// a clean page (un-protect, mark dirty). A failing store turns the access into
// SIGBUS with a logged reason; the handler never leaves a fault unanswered.
//
// Forked children (uffd/forked_children.h): the thread also takes their
// announcements and serves their MISSING faults - the page is brought into
// the memfd as for a read fault of this process's own, then the child is
// woken (its retried access maps the memfd's page); a page on its way in
// (the lookahead's) is waited for between batches; a page that cannot be
// had fails the child's access with SIGBUS. A child's exit (its pidfd)
// closes its descriptors and lets the tables freed meanwhile that only it
// could still read go.
//
// Locks (LOCKING in page/core.h): a batch first waits for DRAM room for its
// demand pages with no lock held, then holds the table registry shared from
// the first claim to the last placement, and one page stripe at a time.
// Allocation: none per batch; every buffer is sized in prepare().
#pragma once
#include <linux/userfaultfd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "page/core.h"
#include "uffd/forked_children.h"
#include "uffd/placement.h"

namespace mtier {

class FaultHandler {
 public:
  explicit FaultHandler(Core& core);
  ~FaultHandler();
  // prepare(), then starts the thread. 0 or -errno.
  [[nodiscard]] int start();
  void stop();
  // Opens the store channels and sizes every buffer a batch needs, so that
  // serving faults allocates nothing. 0 or -errno. start() calls it; a test
  // that drives handle_batch() itself calls it instead.
  [[nodiscard]] int prepare();

  // Resolves a batch of messages (the thread's body; public for tests,
  // which call it after prepare()). Takes the registry itself: the caller
  // holds no lock.
  void handle_batch(const struct uffd_msg* msgs, size_t n);
  // Resolves a batch of messages read from forked children's userfaultfds,
  // msgs[i] from owners[i] (public for tests, after prepare()); the caller
  // holds no lock.
  void handle_child_batch(const struct uffd_msg* msgs, ForkedChildren::Child* const* owners,
                          size_t n);
  // Child faults waiting for a page on its way in (tests).
  size_t child_waits() const { return deferred_.size(); }
  // Called on the handler's thread, holding no lock, when a forked child
  // has exited while retired tables exist (Engine::drop_retired). Set
  // before start().
  void on_child_exit(std::function<void()> f) { on_child_exit_ = std::move(f); }
  // UFFDIO_COPY retries on EAGAIN (uffd/placement.h).
  static constexpr int kCopyRetries = mtier::kCopyRetries;
  // Messages read per batch.
  static constexpr size_t kBatch = 64;
  // MINOR faults on consecutive pages that make a walk over pages in DRAM
  // (Table::walk_front): random rows rarely make 8 in a row.
  static constexpr uint32_t kResidentWalkHits = 8;
  // The pages such a walk's fault maps ahead of it (map_ahead).
  static constexpr uint64_t kResidentWindow = 64;
  // The poll set's fixed part: this process's userfaultfd, stop, fetch
  // orders, forked children's announcements (then 2 a child).
  static constexpr size_t kFixedFds = 4;
  // Queues a fetch order: the store-held pages of [first, first+count) of
  // table `table_id` (a daemon's order). The handler thread claims them
  // between fault batches, only while DRAM is below its high watermark (a
  // fetch order never makes the evictor run); a table gone by then is skipped.
  // Thread-safe; 0 or -ENOMEM.
  [[nodiscard]] int queue_fetch_order(int table_id, uint64_t first, uint64_t count);
  // Pages placed by fetch orders since start.
  uint64_t placed_on_order() const { return requested_placed_.load(); }

 private:
  struct Placement {
    Table* table;
    uint64_t page;
    bool write;
    bool prefetch;
    unsigned tid;
    int result;          // 0, or -errno of the fetch
    const void* source;  // data to copy in (zero page, staging buffer, pmem)
    bool scan = false;   // a walk's page: placed without heat (place_claimed)
    bool walk = false;   // a walk's page: mapped as the walk's fault was
  };

  struct FetchOrder {
    int table_id;
    uint64_t first, count;
  };

  // A forked child's fault, until the child is woken or failed.
  struct ChildWait {
    pid_t pid;
    int uffd;  // the child's (valid while the child is in ForkedChildren)
    unsigned tid;
    uint64_t addr;
  };
  static constexpr size_t kMaxChildWaits = 4096;

  void run();
  size_t poll_set(struct pollfd* fds) const;
  void serve_children(const struct pollfd* fds);
  bool child_fault_claims(ForkedChildren::Child& c, const struct uffd_msg& m);
  void settle_child(const ChildWait& w, bool may_defer);
  void retry_child_waits();
  void fail_child(const ChildWait& w, const char* why);
  void reap_child(size_t i);
  void reserve_for(const struct uffd_msg* msgs, size_t n);
  uint64_t demand_pages(const struct uffd_msg* msgs, size_t n) const;
  void serve_fetch_orders();
  void resolve(Table* t, uint64_t page, uint64_t flags, unsigned tid);
  // Returns whether the fault continues a walk over pages in DRAM (a MINOR
  // fault's; Table::walk_front).
  bool resolve_present(Table* t, uint64_t page, uint64_t w, uint64_t flags, unsigned tid);
  // After a MINOR fault on `page` that continues a walk: maps the pages
  // after it that are in DRAM without an entry, up to kResidentWindow, as
  // their MINOR faults would (referenced; a CLEAN one write-protected),
  // stopping at the first that is not in DRAM (the slow tier included).
  // Each page under its lock; the caller holds none.
  void map_ahead(Table* t, uint64_t page);
  // Whether a walk's pages are placed as a scan's (scan_resistant, and
  // eviction may come: the tables do not fit the budget, or a slow tier
  // takes DRAM's victims).
  bool scans() const;
  void claim(Table* t, uint64_t page, bool write, unsigned tid);
  bool claim_ahead(Table* t, uint64_t page, bool write, uint64_t limit);
  uint64_t claim_following(Table* t, uint64_t page, uint64_t count, uint64_t limit,
                           bool from_store, bool write);
  uint64_t in_dram_from(const Table* t, uint64_t page, uint64_t most) const;
  void add_followers(Table* t, uint64_t page, bool from_store, bool write);
  void place_all();
  void fetch_from(unsigned store, std::vector<Placement*>& group);
  void place_fetched(std::vector<Placement*>& group, size_t first, size_t n);
  bool place_run_locked(const Placement& head, size_t n, const void* source,
                        std::atomic<uint64_t>& placed);
  void read_behind(Table* t, uint64_t from, uint64_t to);
  void advance_walk_fronts(const struct uffd_msg* msgs, size_t n);
  size_t place_zeros(size_t i);
  // `may_exist`: after a run's copy that failed part of the way
  // (place_claimed).
  void place(Placement& p, bool may_exist = false);
  void fail(Table* t, uint64_t page, unsigned tid, int err, const char* what);
  int resolve_ioctl(int rc, Table* t, uint64_t page, unsigned tid, const char* what);

  Core& core_;
  std::vector<std::unique_ptr<StoreChannel>> channels_;
  // Preallocated in prepare(): pending_ never grows past its capacity (a
  // batch claims at most kBatch pages and their followers; fetch
  // orders are placed in chunks of that size).
  std::vector<Placement> pending_;
  // Room reserved for the current batch's demand pages not yet claimed
  // (handle_batch; the handler's thread only).
  uint64_t reserved_ = 0;
  // When the over-budget warning was last said (steady clock, ms; -1:
  // never): reserve_for says it at most every 10 s.
  std::atomic<int64_t> over_budget_said_ms_{-1};
  std::vector<std::vector<Placement*>> by_store_;
  std::vector<StoreIo> ios_;
  std::vector<FetchOrder> serving_;  // swapped with requests_ under request_mu_
  // Forked children's faults: those of the batch being served, and those
  // waiting for a page on its way in (the handler's thread only).
  std::vector<ChildWait> child_batch_, deferred_, retrying_;
  std::function<void()> on_child_exit_;
  std::thread thread_;
  int stop_fd_ = -1;
  int request_fd_ = -1;  // eventfd: fetch orders queued
  std::mutex request_mu_;
  std::vector<FetchOrder> requests_;
  std::atomic<uint64_t> requested_placed_{0};
  std::atomic<bool> running_{false};
  bool prepared_ = false;
};

}  // namespace mtier
