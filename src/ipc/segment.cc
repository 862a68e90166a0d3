// SPDX-License-Identifier: Apache-2.0
#include "ipc/segment.h"
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "sys/page_size.h"
#include "sys/shm.h"
#include "sys/vm.h"

namespace mtier::ipc {
namespace {

constexpr uint64_t kSectionAlign = kPageSize;  // a freed section can be given back
constexpr size_t kSlotWords = sizeof(DirectorySlot) / 8;
// read_directory: attempts before -EAGAIN; the first few spin, the rest
// yield (the writer may be another process, preempted mid-write).
constexpr int kReadAttempts = 10000;
constexpr int kReadSpins = 8;
// clear_words: spans of at least this many bytes are punched out of the memfd.
constexpr uint64_t kPunchBytes = 64 * 1024;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

bool overlaps(const TableEntry& a, uint64_t first, uint64_t pages) {
  return a.first_page < first + pages && first < a.first_page + a.pages;
}

// Checks the used entries of a snapshot; appends them to *out.
bool valid_entries(const std::vector<TableEntry>& snap, uint64_t region_pages,
                   std::vector<TableEntry>* out) {
  for (const TableEntry& e : snap) {
    if (e.id == 0) continue;
    if (e.pages == 0 || e.first_page > region_pages || e.pages > region_pages - e.first_page)
      return false;
    if (!memchr(e.name, 0, sizeof e.name)) return false;
    out->push_back(e);
  }
  std::vector<const TableEntry*> order;
  order.reserve(out->size());
  for (const TableEntry& e : *out) order.push_back(&e);
  std::sort(order.begin(), order.end(),
            [](const TableEntry* a, const TableEntry* b) { return a->id < b->id; });
  for (size_t i = 1; i < order.size(); i++)
    if (order[i - 1]->id == order[i]->id) return false;
  // Ranges are in bounds, so these sums cannot overflow.
  std::sort(order.begin(), order.end(), [](const TableEntry* a, const TableEntry* b) {
    return a->first_page < b->first_page;
  });
  for (size_t i = 1; i < order.size(); i++)
    if (order[i - 1]->first_page + order[i - 1]->pages > order[i]->first_page) return false;
  return true;
}

}  // namespace

int compute_layout(uint64_t region_pages, uint32_t max_tables, uint32_t ring_slots,
                   uint64_t region_base, SegmentLayout* out, uint16_t version) {
  if (version < 1 || version > kSegmentVersion) return -EINVAL;
  if (region_pages == 0 || region_pages > kMaxRegionPages) return -EINVAL;
  if (max_tables == 0 || max_tables > kMaxTables) return -EINVAL;
  if (!power_of_two(ring_slots) || ring_slots < kMinRingSlots || ring_slots > kMaxRingSlots)
    return -EINVAL;
  SegmentLayout l{};
  l.magic = kSegmentMagic;
  l.version = version;
  l.header_bytes = version >= 2 ? kHeaderBytesV2 : kHeaderBytesV1;
  l.max_tables = max_tables;
  l.ring_slots = ring_slots;
  l.region_pages = region_pages;
  l.region_base = region_base;
  // The limits above keep every sum far from overflowing.
  l.directory_offset = l.header_bytes;
  l.words_offset = align_up(l.directory_offset + uint64_t{max_tables} * sizeof(TableEntry),
                            kSectionAlign);
  l.hints_offset = align_up(l.words_offset + region_pages * sizeof(uint64_t), kSectionAlign);
  l.ring_offset = align_up(l.hints_offset + region_pages, kSectionAlign);
  l.total_bytes = align_up(l.ring_offset + uint64_t{ring_slots} * sizeof(Order), kSectionAlign);
  *out = l;
  return 0;
}

uint64_t monotonic_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int Segment::create(uint64_t region_pages, uint32_t max_tables, uint32_t ring_slots,
                    uint64_t region_base, std::unique_ptr<Segment>* out) {
  SegmentLayout l;
  int rc = compute_layout(region_pages, max_tables, ring_slots, region_base, &l);
  if (rc < 0) return rc;
  std::unique_ptr<Segment> s(new Segment());
  s->owner_ = true;
  s->layout_ = l;
  s->fd_ = sys::memfd_sealable("mtier-segment");
  if (s->fd_ < 0) return s->fd_;
  if ((rc = sys::resize_fd(s->fd_, l.total_bytes)) < 0) return rc;
  s->base_ = static_cast<char*>(sys::map_shared(s->fd_, l.total_bytes));
  if (!s->base_) return -errno;
  // A fresh memfd reads as zeros: every atomic starts at 0.
  memcpy(s->base_, &l, sizeof l);
  // The daemon requires F_SEAL_SHRINK; GROW and SEAL make the size final.
  if ((rc = sys::add_seals(s->fd_, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) < 0) return rc;
  s->dir_mu_ = std::make_unique<std::mutex>();
  s->shadow_.assign(max_tables, TableEntry{});
  *out = std::move(s);
  return 0;
}

int Segment::attach(int fd, uint64_t claimed_bytes, std::unique_ptr<Segment>* out,
                    std::string* why) {
  std::string ignored;
  if (!why) why = &ignored;
  auto fail = [why](int err, const char* check) {
    *why = check;
    return err;
  };
  if (fd < 0) return fail(-EINVAL, "no fd");
  if (claimed_bytes < sizeof(SegmentHeader) || claimed_bytes > kMaxSegmentBytes)
    return fail(-EINVAL, "claimed size out of range");
  // Seals first: once F_SEAL_SHRINK is seen the size can only grow, so the
  // size checked next is a floor for as long as the mapping lives.
  int seals = sys::get_seals(fd);
  if (seals < 0) return fail(-EINVAL, "no seals: not a memfd");
  if (!(seals & F_SEAL_SHRINK)) return fail(-EINVAL, "not sealed against shrinking");
  sys::FileFacts f;
  int rc = sys::file_facts(fd, &f);
  if (rc < 0) return fail(rc, "fstat");
  if (!f.regular) return fail(-EINVAL, "not a regular file");
  // hugetlbfs memfds can be sealed too, but a fault there may SIGBUS when
  // huge pages run out.
  if (!f.shmem) return fail(-EINVAL, "not a shmem memfd");
  if (f.size != claimed_bytes) return fail(-EINVAL, "file size differs from the claimed size");

  std::unique_ptr<Segment> s(new Segment());
  s->base_ = static_cast<char*>(sys::map_shared(fd, claimed_bytes));
  if (!s->base_) return fail(-errno, "mmap");
  s->layout_.total_bytes = claimed_bytes;  // what release() unmaps until validated
  // One snapshot of the layout; the client may change the shared copy later.
  SegmentLayout l;
  memcpy(&l, s->base_, sizeof l);
  if (l.magic != kSegmentMagic) return fail(-EBADMSG, "bad magic");
  // A version-1 runtime's segment is read without the counters it lacks.
  if (l.version < 1 || l.version > kSegmentVersion) return fail(-EBADMSG, "unsupported version");
  if (l.header_bytes != (l.version >= 2 ? kHeaderBytesV2 : kHeaderBytesV1))
    return fail(-EBADMSG, "bad header_bytes");
  if (!power_of_two(l.ring_slots) || l.ring_slots < kMinRingSlots || l.ring_slots > kMaxRingSlots)
    return fail(-EBADMSG, "ring_slots not a power of two in range");
  if (l.region_pages == 0 || l.region_pages > kMaxRegionPages)
    return fail(-EBADMSG, "region_pages out of range");
  if (l.max_tables == 0 || l.max_tables > kMaxTables)
    return fail(-EBADMSG, "max_tables out of range");
  SegmentLayout want;
  if (compute_layout(l.region_pages, l.max_tables, l.ring_slots, l.region_base, &want, l.version) < 0)
    return fail(-EBADMSG, "sizes out of range");
  if (l.directory_offset != want.directory_offset) return fail(-EBADMSG, "bad directory_offset");
  if (l.words_offset != want.words_offset) return fail(-EBADMSG, "bad words_offset");
  if (l.hints_offset != want.hints_offset) return fail(-EBADMSG, "bad hints_offset");
  if (l.ring_offset != want.ring_offset) return fail(-EBADMSG, "bad ring_offset");
  if (l.total_bytes != want.total_bytes) return fail(-EBADMSG, "bad total_bytes");
  if (l.total_bytes != claimed_bytes)
    return fail(-EBADMSG, "total_bytes differs from the file size");
  s->layout_ = l;
  why->clear();
  *out = std::move(s);
  return 0;
}

Segment::~Segment() { release(); }

void Segment::release() {
  if (base_) (void)sys::unmap(base_, layout_.total_bytes);
  if (fd_ >= 0) (void)sys::close_fd(fd_);
  base_ = nullptr;
  fd_ = -1;
}

Segment::Segment(Segment&& other) noexcept { *this = std::move(other); }

Segment& Segment::operator=(Segment&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    owner_ = other.owner_;
    layout_ = other.layout_;
    dir_mu_ = std::move(other.dir_mu_);
    shadow_ = std::move(other.shadow_);
    generation_ = other.generation_;
  }
  return *this;
}

uint8_t Segment::hint(uint64_t page) const {
  return std::atomic_ref<uint8_t>(hints()[page]).load(std::memory_order_relaxed);
}

void Segment::set_hint(uint64_t page, uint8_t priority) {
  std::atomic_ref<uint8_t>(hints()[page]).store(priority, std::memory_order_relaxed);
}

int Segment::put_table(uint32_t id, uint64_t first_page, uint64_t pages, uint64_t bytes,
                       const char* name, uint32_t flags) {
  if (!owner_) return -EPERM;
  if (id == 0 || pages == 0 || !name) return -EINVAL;
  if (first_page > layout_.region_pages || pages > layout_.region_pages - first_page)
    return -EINVAL;
  std::lock_guard<std::mutex> lock(*dir_mu_);
  int slot = -1, free_slot = -1;
  for (size_t i = 0; i < shadow_.size(); i++) {
    const TableEntry& e = shadow_[i];
    if (e.id == id) {
      slot = static_cast<int>(i);
    } else if (e.id == 0) {
      if (free_slot < 0) free_slot = static_cast<int>(i);
    } else if (overlaps(e, first_page, pages)) {
      return -EINVAL;
    }
  }
  if (slot < 0) slot = free_slot;
  if (slot < 0) return -ENOSPC;
  TableEntry e{};
  e.id = id;
  e.flags = flags;
  e.first_page = first_page;
  e.pages = pages;
  e.bytes = bytes;
  size_t len = strnlen(name, sizeof e.name - 1);
  memcpy(e.name, name, len);
  shadow_[slot] = e;
  write_slot(slot, e);
  return 0;
}

int Segment::remove_table(uint32_t id) {
  if (!owner_) return -EPERM;
  if (id == 0) return -ENOENT;
  std::lock_guard<std::mutex> lock(*dir_mu_);
  for (size_t i = 0; i < shadow_.size(); i++) {
    if (shadow_[i].id != id) continue;
    shadow_[i] = TableEntry{};
    write_slot(i, shadow_[i]);
    return 0;
  }
  return -ENOENT;
}

// The seqlock write (caller holds dir_mu_): odd generation, the words, even
// generation. Each word is stored with release, so a reader that loads any
// new word (with acquire) also sees the odd generation when it re-reads the
// generation. No standalone fences (TSan does not model them); on x86-64
// these are all plain moves.
void Segment::write_slot(size_t slot, const TableEntry& e) {
  uint64_t raw[kSlotWords];
  memcpy(raw, &e, sizeof raw);
  std::atomic<uint64_t>& gen = header()->directory_generation;
  gen.store(++generation_, std::memory_order_relaxed);
  DirectorySlot& d = directory()[slot];
  for (size_t k = 0; k < kSlotWords; k++) d.w[k].store(raw[k], std::memory_order_release);
  gen.store(++generation_, std::memory_order_release);
}

int Segment::read_directory(std::vector<TableEntry>* out, uint64_t* generation) const {
  out->clear();
  const size_t n = layout_.max_tables;
  std::vector<uint64_t> raw(n * kSlotWords);
  const std::atomic<uint64_t>& gen = header()->directory_generation;
  const DirectorySlot* dir = directory();
  for (int attempt = 0; attempt < kReadAttempts; attempt++) {
    if (attempt >= kReadSpins) sched_yield();
    uint64_t g1 = gen.load(std::memory_order_acquire);
    if (g1 & 1) continue;
    for (size_t i = 0; i < n; i++)
      for (size_t k = 0; k < kSlotWords; k++)
        raw[i * kSlotWords + k] = dir[i].w[k].load(std::memory_order_acquire);
    // Ordered after the acquire loads above.
    if (gen.load(std::memory_order_relaxed) != g1) continue;
    std::vector<TableEntry> snap(n);
    memcpy(snap.data(), raw.data(), n * sizeof(TableEntry));
    if (!valid_entries(snap, layout_.region_pages, out)) {
      out->clear();
      return -EBADMSG;
    }
    if (generation) *generation = g1;
    return 0;
  }
  return -EAGAIN;
}

void Segment::clear_words(uint64_t first_page, uint64_t pages) {
  if (first_page >= layout_.region_pages || pages == 0) return;
  pages = std::min(pages, layout_.region_pages - first_page);
  // Punching zeroes the partial pages at either end too, so on success the
  // whole span reads 0.
  uint64_t off = layout_.words_offset + first_page * sizeof(uint64_t);
  uint64_t len = pages * sizeof(uint64_t);
  if (fd_ < 0 || len < kPunchBytes || sys::memfd_punch(fd_, off, len) < 0) {
    std::atomic<uint64_t>* w = words() + first_page;
    for (uint64_t i = 0; i < pages; i++) w[i].store(0, std::memory_order_relaxed);
  }
  off = layout_.hints_offset + first_page;
  if (fd_ < 0 || pages < kPunchBytes || sys::memfd_punch(fd_, off, pages) < 0) {
    for (uint64_t i = 0; i < pages; i++) set_hint(first_page + i, 0);
  }
}

void Segment::stamp_runtime_heartbeat() {
  header()->runtime_heartbeat_ns.store(monotonic_ns(), std::memory_order_release);
}

void Segment::stamp_daemon_heartbeat() {
  header()->daemon_heartbeat_ns.store(monotonic_ns(), std::memory_order_release);
}

namespace {
// Loads the stamp before reading the clock, so a genuine stamp is never in
// the future.
bool alive(const std::atomic<uint64_t>& stamp, uint64_t max_age_ns) {
  uint64_t t = stamp.load(std::memory_order_acquire);
  uint64_t now = monotonic_ns();
  return t != 0 && t <= now && now - t <= max_age_ns;
}
}  // namespace

bool Segment::daemon_alive(uint64_t max_age_ns) const {
  return alive(header()->daemon_heartbeat_ns, max_age_ns);
}

bool Segment::runtime_alive(uint64_t max_age_ns) const {
  return alive(header()->runtime_heartbeat_ns, max_age_ns);
}

}  // namespace mtier::ipc
