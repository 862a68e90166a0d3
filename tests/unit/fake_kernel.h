// SPDX-License-Identifier: Apache-2.0
// Stand-ins for the kernel and the device under the fault path, for the
// fault handler's and the evictor's unit tests: a userfaultfd whose calls are
// recorded and can be made to fail (EEXIST, EAGAIN, any errno), a store in
// memory whose reads and writes can be made to fail or can run a hook, and a
// Core around a real region (memfd) with one table. No thread of the engine
// runs: the tests call handle_batch() and the evictor's passes themselves.
#pragma once
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "page/core.h"
#include "page/page_checksum.h"
#include "sys/page_size.h"
#include "sys/uffd.h"

namespace mtier::testutil {

// A userfaultfd call as the fake saw it.
struct UffdCall {
  enum Kind { kCopy, kContinue, kWriteProtect, kWake, kPoison } kind;
  uintptr_t addr;
  size_t len;
  bool flag;  // copy: wp; continue: wp; writeprotect: protect
  bool wakes = false;  // copy: without UFFDIO_COPY_MODE_DONTWAKE (wakes the waiters itself)
};

// Results are taken from the per-call queue first (front to back), then the
// default (0). A successful copy puts the bytes into the memfd through the
// region's alias, as UFFDIO_COPY puts them into the page cache.
// For a test that runs the handler thread (start()): wait() returns the
// errors in wait_results first, then reports the userfaultfd readable while
// read_results or batches are queued (the eventfds polled without
// blocking), else polls the eventfds alone, blocking; read() returns the
// errors in read_results first, then the next of `batches`, then 0. Set the
// queues before start(); `delivered` counts the batches read, for the test
// thread to wait on.
class FakeUffd : public sys::Uffd {
 public:
  explicit FakeUffd(Region& region) : sys::Uffd(-1), region_(region) {}

  std::deque<int> copy_results, continue_results, writeprotect_results;
  std::vector<UffdCall> calls;

  // Called at each copy, before it takes effect (what a woken thread would see).
  std::function<void(void* dst)> on_copy;

  int copy(void* dst, const void* src, size_t len, bool wp, bool dontwake) override {
    calls.push_back({UffdCall::kCopy, reinterpret_cast<uintptr_t>(dst), len, wp, !dontwake});
    if (on_copy) on_copy(dst);
    int rc = next(copy_results);
    if (rc == 0) memcpy(alias(dst), src, len);
    return rc;
  }
  int cont(void* addr, size_t len, bool wp) override {
    calls.push_back({UffdCall::kContinue, reinterpret_cast<uintptr_t>(addr), len, wp});
    return next(continue_results);
  }
  int writeprotect(void* addr, size_t len, bool protect) override {
    calls.push_back({UffdCall::kWriteProtect, reinterpret_cast<uintptr_t>(addr), len, protect});
    return next(writeprotect_results);
  }
  int wake(void* addr, size_t len) override {
    calls.push_back({UffdCall::kWake, reinterpret_cast<uintptr_t>(addr), len, false});
    return 0;
  }
  int poison(void* addr, size_t len) override {
    calls.push_back({UffdCall::kPoison, reinterpret_cast<uintptr_t>(addr), len, false});
    return 0;
  }
  long read(struct uffd_msg* msgs, size_t n) override {
    reads++;
    if (!read_results.empty()) return next_long(read_results);
    if (batches.empty()) return 0;
    size_t k = std::min(n, batches.front().size());
    std::copy_n(batches.front().begin(), k, msgs);
    batches.pop_front();
    delivered.fetch_add(1);
    return static_cast<long>(k);
  }
  int wait(struct pollfd* fds, size_t n, int timeout_ms) override {
    waits++;
    if (!wait_results.empty()) return next(wait_results);
    bool ready = !read_results.empty() || !batches.empty();
    fds[0].revents = ready ? POLLIN : 0;
    int rc = ::poll(fds + 1, static_cast<nfds_t>(n - 1), ready ? 0 : timeout_ms);
    if (rc < 0) return -errno;
    return rc + ready;
  }

  std::deque<int> wait_results;
  std::deque<long> read_results;
  std::deque<std::vector<struct uffd_msg>> batches;
  std::atomic<uint64_t> delivered{0};
  std::atomic<uint64_t> reads{0}, waits{0};

  size_t count(UffdCall::Kind k, const void* addr = nullptr) const {
    size_t n = 0;
    for (const auto& c : calls)
      n += c.kind == k && (!addr || c.addr == reinterpret_cast<uintptr_t>(addr));
    return n;
  }

 private:
  static long next_long(std::deque<long>& q) {
    long rc = q.front();
    q.pop_front();
    return rc;
  }
  static int next(std::deque<int>& q) {
    if (q.empty()) return 0;
    int rc = q.front();
    q.pop_front();
    return rc;
  }
  char* alias(void* addr) const {
    return region_.alias() + (static_cast<char*>(addr) - region_.base());
  }
  Region& region_;
};

// A store in memory: slots of one page, reads and writes failing for the
// slots in fail_read / fail_write, a hook run at the start of each write
// batch (a test's way to race the evictor's write-back).
class MemStore : public Store {
 public:
  explicit MemStore(uint64_t slots) : data_(slots) {}

  std::set<uint64_t> fail_read, fail_write;
  int write_error = -EIO;  // what a write to a slot in fail_write gets
  bool byte_addressable = false;  // direct() gives the slot's bytes, as the PMem store's does
  std::function<void()> before_write, before_read;
  uint64_t reads = 0, writes = 0;
  std::vector<uint64_t> written_slots;  // every slot written, in order
  uint64_t read_calls = 0;  // read_pages calls (batches)
  size_t widest_read = 0;   // most pages in one read_pages call

  const char* kind() const override { return "file"; }
  const std::string& path() const override { return path_; }
  std::string mode() const override { return "memory (test)"; }
  uint64_t capacity_slots() const override { return data_.size(); }
  uint64_t used_slots() const override { return used_.size(); }
  int64_t alloc_slot() override {
    for (uint64_t s = 0; s < data_.size(); s++)
      if (used_.insert(s).second) return static_cast<int64_t>(s);
    return -ENOSPC;
  }
  // The lowest free slot and the free ones after it, up to n.
  int64_t alloc_run(uint64_t n, uint64_t* got) override {
    int64_t first = alloc_slot();
    if (first < 0) return first;
    auto next = [&] { return static_cast<uint64_t>(first) + *got; };
    for (*got = 1; *got < n && next() < data_.size() && used_.insert(next()).second; ++*got) {}
    return first;
  }
  void free_slot(uint64_t slot) override { used_.erase(slot); }
  void take(uint64_t slot) { used_.insert(slot); }
  char* slot_data(uint64_t slot) { return data_[slot].data(); }
  bool used(uint64_t slot) const { return used_.count(slot) != 0; }

  std::unique_ptr<StoreChannel> open_channel(unsigned depth) override {
    return std::make_unique<Channel>(*this, depth);
  }

 private:
  class Channel : public StoreChannel {
   public:
    Channel(MemStore& s, unsigned depth) : s_(s), bufs_(depth) {}
    unsigned depth() const override { return static_cast<unsigned>(bufs_.size()); }
    void* buffer(unsigned i) override { return bufs_[i].data(); }
    int read_pages(StoreIo* ios, size_t n) override {
      if (s_.before_read) s_.before_read();
      s_.read_calls++;
      s_.widest_read = std::max(s_.widest_read, n);
      int first = 0;
      for (size_t i = 0; i < n; i++) {
        s_.reads++;
        ios[i].result = s_.fail_read.count(ios[i].slot) ? -EIO : 0;
        if (ios[i].result == 0) memcpy(ios[i].buf, s_.slot_data(ios[i].slot), kPageSize);
        if (!first) first = ios[i].result;
      }
      return first;
    }
    int write_pages(StoreIo* ios, size_t n) override {
      if (s_.before_write) s_.before_write();
      int first = 0;
      for (size_t i = 0; i < n; i++) {
        s_.writes++;
        s_.written_slots.push_back(ios[i].slot);
        ios[i].result = s_.fail_write.count(ios[i].slot) ? s_.write_error : 0;
        if (ios[i].result == 0) memcpy(s_.slot_data(ios[i].slot), ios[i].buf, kPageSize);
        if (!first) first = ios[i].result;
      }
      return first;
    }
    const void* direct(uint64_t slot) override {
      return s_.byte_addressable ? s_.slot_data(slot) : nullptr;
    }

   private:
    struct alignas(kPageSize) Page : std::array<char, kPageSize> {};
    MemStore& s_;
    std::vector<Page> bufs_;
  };

  std::string path_ = "(memory)";
  std::vector<std::array<char, kPageSize>> data_;
  std::set<uint64_t> used_;
};

// A Core over a real 64 MiB region with one table of `pages` pages, a
// MemStore of `slots` slots and a FakeUffd. Zero fill ahead and prefetch
// are off unless a test sets them before building its handler.
struct FakeEngine {
  FakeEngine(uint64_t pages, uint64_t budget_pages, uint64_t slots = 256) {
    int err = 0;
    auto region = Region::create(64ull << 20, &err);
    Options o;
    o.dram_bytes = budget_pages * kPageSize;
    o.zero_ahead_pages = 0;
    o.stream_pages = 0;
    o.prefetch_pages = 0;
    o.queue_depth = 4;
    o.evict_batch = 64;
    o.high_watermark = 95;  // the marks these tests' page counts were worked out for
    o.low_watermark = 85;
    core = std::make_unique<Core>(o, std::move(region));
    auto s = std::make_unique<MemStore>(slots);
    store = s.get();
    core->stores.push_back(std::move(s));
    auto u = std::make_unique<FakeUffd>(*core->region);
    uffd = u.get();
    core->uffd = std::move(u);
    core->uffd_features = UFFD_FEATURE_POISON;  // failures show as poison calls
    table = core->tables.add("t", pages * kPageSize, &err);
  }

  char* addr(uint64_t page) const { return table->page_addr(page); }
  char* alias(uint64_t page) const { return core->alias_of(table, page); }
  uint64_t word(uint64_t page) const { return table->words[page].load(); }
  PageState state(uint64_t page) const { return PageWord::state(word(page)); }

  // Puts the page in the store at `slot` with `fill` bytes: ABSENT, slot
  // set, its checksum recorded as the evictor's write-back would.
  void put_in_store(uint64_t page, uint64_t slot, char fill) {
    memset(store->slot_data(slot), fill, kPageSize);
    store->take(slot);
    set_slot(table->words[page], 0, slot);
    record_page_sum(table, page, store->slot_data(slot));
  }
  // Makes the page resident with `fill` bytes in the memfd, CLEAN or DIRTY.
  void make_resident(uint64_t page, char fill, bool dirty) {
    memset(alias(page), fill, kPageSize);
    transition(table->words[page], PageEvent::kClaim, table->id, page);
    transition(table->words[page], dirty ? PageEvent::kPlacedDirty : PageEvent::kPlacedClean,
               table->id, page);
    core->residency.add(1);
    table->counters.resident_pages.fetch_add(1);
  }
  bool page_is(uint64_t page, char fill) const {
    const char* p = alias(page);
    for (size_t i = 0; i < kPageSize; i++)
      if (p[i] != fill) return false;
    return true;
  }

  std::unique_ptr<Core> core;
  MemStore* store = nullptr;
  FakeUffd* uffd = nullptr;
  Table* table = nullptr;
};

// Whether the page at `addr` has a page-table entry in this process
// (/proc/self/pagemap, bit 63: present).
inline bool has_pte(const void* addr) {
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  uint64_t entry = 0;
  auto a = reinterpret_cast<uintptr_t>(addr);
  bool ok = fd >= 0 && pread(fd, &entry, sizeof entry, static_cast<off_t>(a / 4096 * 8)) == 8;
  if (fd >= 0) close(fd);
  return ok && (entry >> 63);
}

// A userfaultfd page-fault message for `addr` with UFFD_PAGEFAULT_FLAG_* `flags`.
inline struct uffd_msg fault_msg(const void* addr, uint64_t flags = 0, unsigned tid = 0) {
  struct uffd_msg m = {};
  m.event = UFFD_EVENT_PAGEFAULT;
  m.arg.pagefault.address = reinterpret_cast<uintptr_t>(addr);
  m.arg.pagefault.flags = flags;
  m.arg.pagefault.feat.ptid = tid;
  return m;
}

}  // namespace mtier::testutil
