// SPDX-License-Identifier: Apache-2.0
// The lookahead: brings the pages a program says its next batches
// read into DRAM before it touches them, at the store's queue depth, and
// pins them in the window (lookahead/window.h).
//
// One worker thread serves jobs in the order they were submitted (a
// read ahead for batch B, an advance to batch B), so that an advance and the
// read after it never overtake each other. A job's missing pages are
// claimed (FETCHING), read from their stores as batched io_uring reads
// (queue_depth in flight), and placed with UFFDIO_COPY before the program
// touches them: no fault at all for a page that arrives in time. A fault on
// a page whose read is in flight finds it FETCHING and sleeps until the
// placement wakes it: one read, never stale data.
//
// Locks (LOCKING in page/core.h): the worker waits for DRAM room with no
// lock held, then holds the registry shared for the job and one stripe at a
// time; no stripe is held across I/O. mu_ is a leaf.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "page/core.h"
#include "lookahead/window.h"

namespace mtier {

// A page named by a lookahead call: table id and page index (sorted, unique).
struct LookaheadKey {
  int table_id;
  uint64_t page;
  bool operator<(const LookaheadKey& o) const {
    return table_id != o.table_id ? table_id < o.table_id : page < o.page;
  }
  bool operator==(const LookaheadKey& o) const = default;
};

class Lookahead {
 public:
  explicit Lookahead(Core& core);
  ~Lookahead();
  // Opens the store channels and starts the worker. 0 or -errno.
  [[nodiscard]] int start();
  // Ends the worker; jobs not served yet complete with -ECANCELED.
  void stop();

  // Queues a read ahead of `pages` (sorted, unique) for `batch`; with
  // `write` the pages read are placed dirty and writable. Returns its
  // ticket (> 0) or -ENOMEM.
  long submit(std::vector<LookaheadKey>&& pages, uint64_t batch, bool write = false);
  // Queues the window's advance to `batch`. Returns its ticket or -ENOMEM.
  long advance(uint64_t batch);
  // Waits for ticket `t`: the pages it read (>= 0) or -errno of the job;
  // -ETIMEDOUT after timeout_ms (< 0: no limit); -EINVAL for a ticket never
  // issued or too old (kResults later ones completed).
  long wait(long ticket, int timeout_ms);
  static constexpr long kResults = 1024;
  // The longest a job waits for DRAM room before it claims what there is.
  static constexpr int kRoomWaitMs = 1000;

  // Serves one read ahead now, on the calling thread (the worker's body;
  // public for tests that drive it without the thread). Returns the pages
  // read from stores. Caller holds no lock.
  long serve(const std::vector<LookaheadKey>& pages, uint64_t batch, bool write = false);
  PinWindow& window() { return window_; }

 private:
  struct Job {
    long ticket;
    bool advance;
    bool write;
    uint64_t batch;
    std::vector<LookaheadKey> pages;
  };
  struct Claimed {
    Table* table;
    uint64_t page;
    int store;  // -1: never written, placed from the zero page
  };

  void run();
  long enqueue(Job&& job);
  void complete(long ticket, long result);
  uint64_t absent_pages(const std::vector<LookaheadKey>& pages);
  void flush(long* read, bool write);
  void read_from(unsigned store, long* read, bool write);
  void release(const Claimed& c, int err);
  void say_overflow(uint64_t pages);

  Core& core_;
  PinWindow window_;
  std::vector<std::unique_ptr<StoreChannel>> channels_;
  std::vector<Claimed> claimed_;  // this job's FETCHING pages (capacity: the depth)
  std::vector<StoreIo> ios_;
  std::vector<Claimed*> group_;
  bool overflow_said_ = false;

  std::mutex mu_;  // leaf: the queue and the results
  std::condition_variable work_, done_cv_;
  std::deque<Job> queue_;
  long issued_ = 0, done_ = 0;
  long results_[kResults] = {};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mtier
