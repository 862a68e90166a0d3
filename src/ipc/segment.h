// SPDX-License-Identifier: Apache-2.0
// The shared-memory segment between the runtime of one trainer process and
// the node daemon mtierd. The runtime creates it (a sealed memfd), keeps its
// page words in it, and passes the fd to the daemon over a unix socket; the
// daemon attaches, reads residency and heat straight from the words, reads
// the table directory, writes keep hints, and sends orders (order_ring.h).
//
// Layout, version 2 (version 1: the same without the header's block at
// 512, header_bytes 512; attach() reads both). Native x86-64: little-endian, naturally aligned. Every
// offset is from the start of the memfd; the header and directory offsets
// are 64-byte aligned, words/hints/ring are 4096-byte aligned (so a freed
// table's words and hints can be punched out a page at a time), and
// total_bytes is a multiple of 4096. The layout is a pure function of
// (region_pages, max_tables, ring_slots): see compute_layout().
//
//   0                 SegmentHeader, 640 bytes (offsets pinned below):
//                       0  SegmentLayout (immutable after create, 72 bytes):
//                          u32 magic "MTGS" 0x5347544d, u16 version 1,
//                          u16 header_bytes 512, u32 max_tables,
//                          u32 ring_slots (power of two, 2..65536),
//                          u64 region_pages, u64 region_base (informational),
//                          u64 directory_offset, words_offset, hints_offset,
//                              ring_offset, total_bytes
//                     128  directory_generation (seqlock, odd while changing)
//                     192  runtime -> daemon: runtime_heartbeat_ns,
//                          dram_budget_pages, dram_resident_pages,
//                          slow_budget_pages, slow_resident_pages,
//                          missing_faults, minor_faults, evictions, fetches,
//                          dram_low_pages, dram_high_pages, the lookahead's
//                          prefetch_pages, prefetch_reads, prefetch_hits,
//                          prefetch_late, pinned_pages
//                     320  daemon -> runtime: daemon_heartbeat_ns, hints_epoch;
//                     336  runtime -> daemon: store_errors, store_full
//                     384  ring_head (daemon, the producer, writes it)
//                     448  ring_tail (runtime, the consumer, writes it)
//                     512  runtime -> daemon, version 2: page_size, and the
//                          exit summary's other counters: wp_faults,
//                          zero_fills, prefetches, writebacks, demotions,
//                          promotions, evict_cancels, budget_overruns,
//                          child_faults, held_pages
//   directory_offset  = header_bytes: max_tables x TableEntry (80 bytes):
//                       u32 id (0 = unused slot), u32 flags, u64 first_page,
//                       u64 pages, u64 bytes, char name[48] (NUL-terminated)
//   words_offset      region_pages x u64 page word (page/page_state.h); the
//                     runtime's page words live here, table t's at
//                     words[t.first_page ..]
//   hints_offset      region_pages x u8 keep priority, written by the daemon
//                     (0 = no opinion), read by the runtime's evictor
//   ring_offset       ring_slots x Order (24 bytes), see order_ring.h
//   total_bytes
//
// All u64 status words, counters and ring indexes are std::atomic<uint64_t>
// (lock-free, so they work across processes). Every header field a process
// reads from the other side is untrusted: the daemon must survive a hostile
// runtime and vice versa. So attach() validates the layout once and the
// Segment keeps a private copy of it; later changes to the shared header's
// layout fields are never read again.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mtier::ipc {

inline constexpr uint32_t kSegmentMagic = 0x5347544d;  // "MTGS" in memory
inline constexpr uint16_t kSegmentVersion = 2;
// header_bytes of each version (attach() refuses any other).
inline constexpr uint16_t kHeaderBytesV1 = 512, kHeaderBytesV2 = 640;
inline constexpr uint64_t kMaxRegionPages = 1ull << 32;  // a 16 TiB region
inline constexpr uint32_t kMaxTables = 65536;
inline constexpr uint32_t kMinRingSlots = 2;
inline constexpr uint32_t kMaxRingSlots = 65536;
// The largest segment attach() maps (kMaxRegionPages gives about 36 GiB).
inline constexpr uint64_t kMaxSegmentBytes = 64ull << 30;
inline constexpr size_t kTableNameBytes = 48;

struct SegmentLayout {
  uint32_t magic;
  uint16_t version;
  uint16_t header_bytes;
  uint32_t max_tables;
  uint32_t ring_slots;
  uint64_t region_pages;
  uint64_t region_base;
  uint64_t directory_offset;
  uint64_t words_offset;
  uint64_t hints_offset;
  uint64_t ring_offset;
  uint64_t total_bytes;
};
static_assert(sizeof(SegmentLayout) == 72);

struct SegmentHeader {
  SegmentLayout layout;
  alignas(64) std::atomic<uint64_t> directory_generation;
  // Runtime -> daemon. The heartbeat is CLOCK_MONOTONIC ns.
  alignas(64) std::atomic<uint64_t> runtime_heartbeat_ns;
  std::atomic<uint64_t> dram_budget_pages;
  std::atomic<uint64_t> dram_resident_pages;
  std::atomic<uint64_t> slow_budget_pages;
  std::atomic<uint64_t> slow_resident_pages;
  std::atomic<uint64_t> missing_faults;
  std::atomic<uint64_t> minor_faults;
  std::atomic<uint64_t> evictions;
  std::atomic<uint64_t> fetches;
  // The configured budget's low watermark: residency the runtime's evictor
  // brings DRAM down to (dram_budget_pages is the configured budget itself).
  std::atomic<uint64_t> dram_low_pages;
  // Its high watermark: the most DRAM the evictor lets the process hold
  // (0 from a runtime that does not say: the budget itself).
  std::atomic<uint64_t> dram_high_pages;
  // The lookahead's counts (mtier_stats' fields of the same names) and the
  // pages its window pins now (0 from a runtime without a lookahead).
  std::atomic<uint64_t> prefetch_pages;
  std::atomic<uint64_t> prefetch_reads;
  std::atomic<uint64_t> prefetch_hits;
  std::atomic<uint64_t> prefetch_late;
  std::atomic<uint64_t> pinned_pages;
  // Daemon -> runtime. hints_epoch: bumped by the daemon after it rewrote hints.
  alignas(64) std::atomic<uint64_t> daemon_heartbeat_ns;
  std::atomic<uint64_t> hints_epoch;
  // Runtime -> daemon again, in this block's spare words (the runtime's
  // block above is full): store errors (failed reads and writes, checksum
  // mismatches) and evictions refused by a store with no free slot, as
  // mtier_stats counts them (0 from a runtime that does not say).
  std::atomic<uint64_t> store_errors;
  std::atomic<uint64_t> store_full;
  // The order ring's free-running indexes, each on its own cache line.
  alignas(64) std::atomic<uint64_t> ring_head;
  alignas(64) std::atomic<uint64_t> ring_tail;
  // Runtime -> daemon, version 2 only (a version-1 header ends before:
  // read these only where Segment::version() >= 2). The runtime's page
  // size, and the counters of its exit summary that the block at 192 has
  // no room for, cumulative over the process's life, freed tables
  // included (missing_faults, minor_faults, evictions and fetches above
  // are too).
  alignas(64) std::atomic<uint64_t> page_size;
  std::atomic<uint64_t> wp_faults;
  std::atomic<uint64_t> zero_fills;
  std::atomic<uint64_t> prefetches;     // store pages read ahead of a fault
  std::atomic<uint64_t> writebacks;     // evictions that wrote a dirty page
  std::atomic<uint64_t> demotions;      // pages moved DRAM -> slow memory tier
  std::atomic<uint64_t> promotions;     // pages moved slow memory tier -> DRAM
  std::atomic<uint64_t> evict_cancels;  // writes that raced an eviction
  std::atomic<uint64_t> budget_overruns;
  std::atomic<uint64_t> child_faults;   // forked children's faults served
  std::atomic<uint64_t> held_pages;     // pages the program locked (mlock)
  std::atomic<uint64_t> spare_[5];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(sizeof(SegmentHeader) == kHeaderBytesV2);
static_assert(offsetof(SegmentHeader, page_size) == kHeaderBytesV1);
static_assert(offsetof(SegmentHeader, directory_generation) == 128);
static_assert(offsetof(SegmentHeader, runtime_heartbeat_ns) == 192);
static_assert(offsetof(SegmentHeader, fetches) == 256);
static_assert(offsetof(SegmentHeader, dram_low_pages) == 264);
static_assert(offsetof(SegmentHeader, pinned_pages) == 312);
static_assert(offsetof(SegmentHeader, daemon_heartbeat_ns) == 320);
static_assert(offsetof(SegmentHeader, hints_epoch) == 328);
static_assert(offsetof(SegmentHeader, store_errors) == 336);
static_assert(offsetof(SegmentHeader, store_full) == 344);
static_assert(offsetof(SegmentHeader, ring_head) == 384);
static_assert(offsetof(SegmentHeader, ring_tail) == 448);

// One directory entry, as stored and as read_directory() returns it.
// first_page and pages are region page indexes (words[first_page ..]).
struct TableEntry {
  uint32_t id;
  uint32_t flags;
  uint64_t first_page;
  uint64_t pages;
  uint64_t bytes;
  char name[kTableNameBytes];
};
static_assert(sizeof(TableEntry) == 80);

// How the directory's entries are accessed in shared memory: ten u64 words,
// read with acquire and written with release under the seqlock (no torn-read
// data race, in-process or not). Same bytes as TableEntry on little-endian.
struct DirectorySlot {
  std::atomic<uint64_t> w[sizeof(TableEntry) / 8];
};
static_assert(sizeof(DirectorySlot) == sizeof(TableEntry));

// Orders from the daemon to the runtime (order_ring.h for their meaning).
enum class OrderOp : uint16_t { kEvict = 1, kPrefetch = 2, kMove = 3, kSetBudget = 4 };

struct Order {
  uint16_t op;  // an OrderOp; raw, since it is untrusted until validated
  uint16_t tier;
  uint32_t table_id;
  uint64_t first_page;
  uint32_t count;
  uint32_t reserved;  // 0
};
static_assert(sizeof(Order) == 24);

// The layout of `version` (1 or 2) for these sizes: magic, version, sizes,
// offsets and total_bytes filled in. 0, or -EINVAL when a size is out of
// range (region_pages 1..kMaxRegionPages, max_tables 1..kMaxTables,
// ring_slots a power of two in kMinRingSlots..kMaxRingSlots) or the
// version unknown.
[[nodiscard]] int compute_layout(uint64_t region_pages, uint32_t max_tables, uint32_t ring_slots,
                                 uint64_t region_base, SegmentLayout* out,
                                 uint16_t version = kSegmentVersion);

// CLOCK_MONOTONIC in ns (the heartbeats' clock; system-wide, so comparable
// across processes).
uint64_t monotonic_ns();

class Segment {
 public:
  // Runtime side: a new sealed memfd (sparse: memory is used only where
  // words, hints or the directory are touched), mapped shared. The Segment
  // owns the fd; send fd() and bytes() to the daemon. 0 or -errno
  // (-EINVAL: sizes out of range, see compute_layout()).
  [[nodiscard]] static int create(uint64_t region_pages, uint32_t max_tables, uint32_t ring_slots,
                                  uint64_t region_base, std::unique_ptr<Segment>* out);
  // Daemon side: maps a segment received from a process that may be buggy or
  // hostile. Checks, in order: the fd is a regular shmem file of exactly
  // claimed_bytes (<= kMaxSegmentBytes), sealed against shrinking (else the
  // client could shrink it and SIGBUS the daemon), then magic, version,
  // header_bytes, sizes, and every offset and total_bytes equal to
  // compute_layout() of the header's sizes (so all lie inside the file).
  // -EINVAL (the fd) or -EBADMSG (the contents), with *why naming the failed
  // check; -errno from a syscall. Does not take fd: the caller closes it
  // whenever it likes (the mapping stays), and fd() is -1.
  [[nodiscard]] static int attach(int fd, uint64_t claimed_bytes, std::unique_ptr<Segment>* out,
                                  std::string* why);

  ~Segment();
  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&& other) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  SegmentHeader* header() const { return reinterpret_cast<SegmentHeader*>(base_); }
  // The validated layout (a private copy; never re-read from shared memory).
  const SegmentLayout& layout() const { return layout_; }
  // The layout's version: the header's block at 512 exists from 2 on.
  uint16_t version() const { return layout_.version; }
  char* base() const { return base_; }
  std::atomic<uint64_t>* words() const {
    return reinterpret_cast<std::atomic<uint64_t>*>(base_ + layout_.words_offset);
  }
  // Access concurrently with the other side through hint()/set_hint() (or
  // std::atomic_ref): plain accesses would be a data race in one process.
  uint8_t* hints() const { return reinterpret_cast<uint8_t*>(base_ + layout_.hints_offset); }
  uint8_t hint(uint64_t page) const;
  void set_hint(uint64_t page, uint8_t priority);
  DirectorySlot* directory() const {
    return reinterpret_cast<DirectorySlot*>(base_ + layout_.directory_offset);
  }
  Order* ring() const { return reinterpret_cast<Order*>(base_ + layout_.ring_offset); }
  uint64_t region_pages() const { return layout_.region_pages; }
  uint32_t max_tables() const { return layout_.max_tables; }
  uint32_t ring_slots() const { return layout_.ring_slots; }
  uint64_t bytes() const { return layout_.total_bytes; }
  int fd() const { return fd_; }
  // True for the creating (runtime) side.
  bool owner() const { return owner_; }

  // Runtime side: adds table `id` or replaces its entry, as one seqlock write.
  // The range [first_page, first_page + pages) must lie in the region and
  // overlap no other table. A name longer than 47 bytes is truncated.
  // Writers are serialized by an internal mutex; the runtime keeps its own
  // copy of the directory, so a daemon scribbling on it confuses only itself.
  // 0; -EINVAL (id 0, pages 0, range out of bounds or overlapping, no name);
  // -ENOSPC (max_tables entries in use); -EPERM on an attached segment.
  [[nodiscard]] int put_table(uint32_t id, uint64_t first_page, uint64_t pages, uint64_t bytes,
                              const char* name, uint32_t flags = 0);
  // Runtime side: removes table `id`. 0, -ENOENT, -EPERM on an attached segment.
  [[nodiscard]] int remove_table(uint32_t id);
  // Daemon side: a consistent snapshot of the used entries, in slot order,
  // and the (even) generation it was taken at. Retries while the runtime is
  // writing; -EAGAIN if no consistent snapshot came after many tries.
  // -EBADMSG if an entry is invalid: range out of the region (overflow
  // included) or empty, name not NUL-terminated, id used twice, or two
  // ranges overlap. *out is left empty on error.
  [[nodiscard]] int read_directory(std::vector<TableEntry>* out, uint64_t* generation) const;

  // Runtime side: the words and hints of [first_page, first_page + pages)
  // (clamped to the region) go back to 0, e.g. for a freed table. Large
  // spans are punched out of the memfd, so their memory is returned (a later
  // touch, by either side, allocates it again); small ones are stored to.
  // Nobody may be writing those words meanwhile.
  void clear_words(uint64_t first_page, uint64_t pages);

  // Heartbeats: stamp with monotonic_ns(). A side is alive when its last
  // stamp is set and at most max_age_ns old (a stamp in the future is bogus).
  void stamp_runtime_heartbeat();
  void stamp_daemon_heartbeat();
  bool daemon_alive(uint64_t max_age_ns) const;
  bool runtime_alive(uint64_t max_age_ns) const;

 private:
  Segment() = default;
  void release();
  void write_slot(size_t slot, const TableEntry& e);

  char* base_ = nullptr;
  int fd_ = -1;
  bool owner_ = false;
  SegmentLayout layout_{};
  // Runtime side: the authoritative directory (slot i = entry i) and
  // generation, under dir_mu_.
  std::unique_ptr<std::mutex> dir_mu_;
  std::vector<TableEntry> shadow_;
  uint64_t generation_ = 0;
};

}  // namespace mtier::ipc
