// SPDX-License-Identifier: Apache-2.0
// The engine in the trainer's process: one region, its fault handler, the
// evictor and sampler, the stores. Created once per process (the C API keeps
// the instance). All methods are thread-safe; ints are 0 / id or -errno.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/options.h"
#include "engine/daemon_link.h"
#include "evict/evictor.h"
#include "ipc/segment.h"
#include "page/core.h"
#include "lookahead/lookahead.h"
#include "uffd/fault_handler.h"
#include "uffd/fork_hello.h"

namespace mtier {

struct TableStats {
  int id;
  std::string name;
  uint64_t bytes, pages;
  uint64_t resident_pages;  // in memory, any tier (the engine's count)
  uint64_t slow_pages;      // of which on the slow memory tier
  uint64_t stored_pages;    // holding a store slot
  uint64_t missing_faults, minor_faults, wp_faults, zero_fills, fetches, prefetches;
  uint64_t evictions, writebacks, evict_cancels, errors, demotions, promotions;
  uint64_t heat;            // sum of page heat
};

struct ExtentInfo {
  uint64_t first_page, pages, resident_pages, stored_pages, heat, slow_pages;
};

struct StoreStats {
  std::string kind, path, mode;
  uint64_t capacity_bytes, used_bytes;
};

// Engine::lookahead_* flags (the C API's MTIER_PREFETCH_*).
inline constexpr unsigned kLookaheadAsync = 1, kLookaheadWrite = 2;

// A byte range named by a lookahead call (the C API's mtier_range).
struct LookaheadRange {
  const void* addr;
  size_t len;
};

struct EngineStats {
  uint64_t budget_bytes, high_bytes, low_bytes;
  uint64_t resident_bytes, peak_resident_bytes;
  uint64_t region_bytes, tables;
  uint64_t wild_faults, store_full, store_errors, sampled_pages, budget_overruns;
  uint64_t slow_budget_bytes, slow_resident_bytes, demote_failures;
  uint64_t slow_peak_bytes;
  uint64_t prefetch_calls, prefetch_reads, prefetch_hits, pinned_pages, window_overflows;
  uint64_t prefetch_pages, prefetch_late;
  uint64_t child_faults;  // faults of forked children served
  uint64_t held_pages;    // pages the program locked or pinned in DRAM
  std::vector<StoreStats> stores;
};

// Why the program holds pages in DRAM (Engine::hold_range).
enum class HoldKind {
  kLock,  // mlock: on or off
  kPin,   // a device's registration of the memory: counted
};

class Engine {
 public:
  // Builds the engine from options (stores opened, region registered,
  // threads started). nullptr with *err = -errno and a logged reason.
  static std::unique_ptr<Engine> create(const Options& opts, int* err);
  ~Engine();

  // A new table of `bytes`, readable and writable; *addr receives its
  // page-aligned address.
  // Returns the table id (> 0) or -errno.
  [[nodiscard]] int create_table(const std::string& name, uint64_t bytes, void** addr);
  // Frees the table: memory and store slots go back at once. 0 or -errno.
  [[nodiscard]] int free_table(int id);
  // Locks or pins (hold) the table pages of [addr, addr+len) in DRAM, or
  // unlocks or unpins them: held pages are brought in before it returns
  // (with bring_in; else as they are touched, MLOCK_ONFAULT) and no
  // eviction takes them while locked or pinned at least once. A lock is on
  // or off (mlock through the preload); pins count (io_uring fixed
  // buffers, RDMA memory regions: each registration one). Held pages are
  // at most 3/4 of the DRAM budget: -EAGAIN beyond (nothing changed);
  // -ENOMEM; the -errno of bringing a page in. Memory outside tables is
  // ignored.
  [[nodiscard]] int hold_range(const void* addr, uint64_t len, bool hold, bool bring_in = true,
                               HoldKind kind = HoldKind::kLock);
  // Makes the table `bytes` long in place (the address range right after it
  // must be free), its new pages reading as zeros. 0, -ENOSPC (no room
  // after it), -ENOENT or -ENOMEM.
  [[nodiscard]] int grow_table(int id, uint64_t bytes);
  // The NUMA node that holds the page at addr, or -ENOENT when the page is
  // not in memory (the kernel's answer, read through the alias mapping
  // under the page lock, so the page cannot be evicted meanwhile).
  [[nodiscard]] int page_node(const void* addr);
  // Id of the table containing addr, or -ENOENT.
  [[nodiscard]] int find_table(const void* addr);
  [[nodiscard]] int table_stats(int id, TableStats* out);
  // `buckets` equal extents of the table with residency and heat.
  [[nodiscard]] int table_map(int id, size_t buckets, std::vector<ExtentInfo>* out);
  // Writes back and evicts every resident page of the table.
  [[nodiscard]] int evict_table(int id);
  // Makes [addr, addr+len) of a table read back as zeros (MADV_DONTNEED
  // semantics): pages and slots are dropped. Page-aligned. 0 or -errno.
  [[nodiscard]] int discard(void* addr, uint64_t len);
  // Orders from the daemon (engine_orders.cc). The table is looked up by id
  // under the registry lock (-ENOENT when gone) and the range clipped to it.
  // Moves the resident pages of the range out of memory (to a store), or
  // with `one_tier` only its DRAM pages one tier down (the slow tier while
  // it has room, else a store).
  [[nodiscard]] int evict_range(int table_id, uint64_t first, uint64_t count, bool one_tier);
  // The table's first page in the region (the daemon's page numbers).
  [[nodiscard]] int table_first_page(int table_id, uint64_t* first);
  // Queues the range's store-held pages for fetching while DRAM has room.
  [[nodiscard]] int fetch_order(int table_id, uint64_t first, uint64_t count);
  // Moves the pages of [first, first+count) of table `table_id` that are in
  // the slow memory tier back to DRAM, while DRAM is below its high
  // watermark (a daemon's promotion order). Returns the pages moved, or
  // -ENOENT (no such table).
  [[nodiscard]] long promote_range(int table_id, uint64_t first, uint64_t count);
  // A budget in pages for tier 0 (DRAM) or 1 (slow memory) assigned from
  // outside, at most the configured one or `ceiling` if larger (see
  // Residency::set_budget_pages); 0 restores the configured budget.
  void set_budget_pages(int tier, uint64_t pages, uint64_t ceiling = 0);
  EngineStats stats();
  // Every table's counters added up, freed tables included: the process's
  // totals since the engine started.
  CounterTotals counter_totals();

  // The lookahead (engine_lookahead.cc; the C API's mtier_prefetch_*). The
  // pages of the ranges, or of rows ids[0..n) of `row_bytes` each from
  // `base` (id_bytes 4 or 8; negative ids skipped), deduplicated, are read
  // into DRAM and pinned for `batch` by the Lookahead (started on first
  // use). Memory outside tables is ignored. `flags`: kLookaheadAsync returns
  // a ticket for lookahead_wait (else it waits and returns the pages read);
  // kLookaheadWrite places pages read dirty and writable. -errno on errors.
  [[nodiscard]] long lookahead_ranges(const LookaheadRange* ranges, size_t n, uint64_t batch,
                                     unsigned flags);
  [[nodiscard]] long lookahead_rows(const void* base, size_t row_bytes, const void* ids, size_t n,
                                   int id_bytes, uint64_t batch, unsigned flags);
  [[nodiscard]] long lookahead_wait(long ticket, int timeout_ms);
  // Releases the pins of batches before `batch` (in order with the
  // reads queued before it). While the lookahead can bring nothing in
  // and nothing is pinned, the advance is only recorded (no round trip
  // through the lookahead's thread, which is not even started) and put
  // before the next read ahead served. 0 or -errno.
  [[nodiscard]] int lookahead_advance(uint64_t batch);
  // Whether naming pages can do anything: the lookahead can bring pages in
  // (lookahead_can_help) or pages are pinned. A few counters read: for callers that
  // would rather not build a lookahead call's arguments for nothing.
  bool lookahead_useful() const;

  // Fork (uffd/forked_children.h). Called by the thread about to fork (the
  // fork's prepare handler; lock-free): what the child needs to read the
  // tables, with ok false when children cannot (then the child leaves the
  // region unmapped).
  struct ForkPlan {
    bool ok = false;
    Inheritance inheritance;
  };
  ForkPlan prepare_fork();
  // Forked children reading the tables now, and tables the program freed
  // that are kept for them (Engine::free_table).
  size_t forked_children() const;
  size_t retired_tables() const;
  // Drops the retired tables no forked child can read any more (the fault
  // handler's thread calls it when a child exits). Takes the registry.
  void drop_retired();

  // The tiers and sources in effect, one line ("mtier: tiers: ...").
  std::string describe() const;
  // The short form for a terminal (MTIER_STATS; start_line.cc): budget and
  // where it came from, store file with its size and place, tiers, daemon,
  // lookahead.
  std::string start_line() const;
  // The link to mtierd (nullptr with daemon_socket=none or no segment).
  const DaemonLink* daemon_link() const { return link_.get(); }
  const Options& options() const { return core_->opts; }
  Region& region() { return *core_->region; }

 private:
  explicit Engine(std::unique_ptr<Core> core);
  void drop_pages(Table* t, uint64_t first, uint64_t count);
  void remove_locked(Table* t, bool listed);
  void release_holds(Table* t, uint64_t first, uint64_t end);
  void drop_retired_locked();
  void open_segment();
  Lookahead* lookahead_worker(int* err);
  long submit_lookahead(std::vector<LookaheadKey>&& keys, uint64_t batch, unsigned flags);
  bool lookahead_can_help() const;
  static constexpr uint32_t kDirectoryTables = 4096;
  static constexpr uint32_t kRingSlots = 4096;

  std::unique_ptr<Core> core_;
  std::unique_ptr<FaultHandler> handler_;
  std::unique_ptr<Evictor> evictor_;
  std::unique_ptr<ipc::Segment> segment_;  // page words, directory, hints, orders
  std::unique_ptr<DaemonLink> link_;
  std::mutex lookahead_mu_;  // a leaf: the lookahead's start
  std::unique_ptr<Lookahead> lookahead_;
  std::atomic<uint64_t> deferred_advance_{0};  // recorded by lookahead_advance; 0: none
  bool directory_full_said_ = false;
};

}  // namespace mtier
