// The fault-handler thread: reads userfaultfd messages in batches and
// resolves every one. MISSING: zero-fill or fetch from the store that holds
// the page (UFFDIO_COPY), with adjacent pages prefetched when configured;
// MINOR: an access seen by the sampler (UFFDIO_CONTINUE); WP: first write to
// a clean page (un-protect, mark dirty). A failing store turns the access into
// SIGBUS with a logged reason; the handler never leaves a fault unanswered.
#pragma once
#include <linux/userfaultfd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "page/core.h"

namespace mtier {

class FaultHandler {
 public:
  explicit FaultHandler(Core& core);
  ~FaultHandler();
  // Opens the store channels and starts the thread. 0 or -errno.
  [[nodiscard]] int start();
  void stop();

  // Resolves a batch of messages (the thread's body; public for tests).
  void handle_batch(const struct uffd_msg* msgs, size_t n);
  // Queues a prefetch of the store-held pages of [first, first+count) of
  // table `table_id` (a daemon's order). The handler thread claims them
  // between fault batches, only while DRAM is below its high watermark (a
  // prefetch never makes the evictor run); a table gone by then is skipped.
  // Thread-safe; 0 or -ENOMEM.
  [[nodiscard]] int request_prefetch(int table_id, uint64_t first, uint64_t count);
  // Pages placed by requested prefetches since start.
  uint64_t prefetched_on_request() const { return requested_placed_.load(); }

 private:
  struct Placement {
    Table* table;
    uint64_t page;
    bool write;
    bool prefetch;
    unsigned tid;
    int result;          // 0, or -errno of the fetch
    const void* source;  // data to copy in (zero page, staging buffer, pmem)
  };

  struct PrefetchRequest {
    int table_id;
    uint64_t first, count;
  };

  void run();
  void serve_prefetch_requests();
  void resolve(Table* t, uint64_t page, uint64_t flags, unsigned tid);
  void resolve_present(Table* t, uint64_t page, uint64_t w, uint64_t flags, unsigned tid);
  void claim(Table* t, uint64_t page, bool write, bool prefetch, unsigned tid);
  void claim_following(Table* t, uint64_t page, uint64_t count, bool from_store, bool write);
  void add_zero_ahead(Table* t, uint64_t page, bool write);
  void place_all();
  void fetch_from(unsigned store, std::vector<Placement*>& group);
  void place(Placement& p);
  void fail(Table* t, uint64_t page, unsigned tid, int err, const char* what);
  int resolve_ioctl(int rc, Table* t, uint64_t page, unsigned tid, const char* what);

  Core& core_;
  std::vector<std::unique_ptr<StoreChannel>> channels_;
  std::vector<Placement> pending_;
  std::thread thread_;
  int stop_fd_ = -1;
  int request_fd_ = -1;  // eventfd: prefetch requests queued
  std::mutex request_mu_;
  std::vector<PrefetchRequest> requests_;
  std::atomic<uint64_t> requested_placed_{0};
  std::atomic<bool> running_{false};
};

}  // namespace mtier
