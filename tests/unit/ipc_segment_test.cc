// SPDX-License-Identifier: Apache-2.0
// The runtime <-> daemon shared-memory segment (ipc/segment.h) and its order
// ring (ipc/order_ring.h): layout, attach checks against a hostile client,
// the seqlocked directory, the SPSC ring, and memory use.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ipc/order_ring.h"
#include "ipc/segment.h"
#include "segment_fuzz.h"
#include "sys/shm.h"

namespace mtier::ipc {
namespace {

uint64_t allocated(int fd) {
  sys::FileFacts f;
  EXPECT_EQ(sys::file_facts(fd, &f), 0);
  return f.allocated;
}

long resident_kib() {
  FILE* f = fopen("/proc/self/statm", "re");
  long size = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

std::unique_ptr<Segment> make(uint64_t pages = 1024, uint32_t tables = 16, uint32_t slots = 64) {
  std::unique_ptr<Segment> s;
  EXPECT_EQ(Segment::create(pages, tables, slots, 0x7f0000000000, &s), 0);
  return s;
}

std::unique_ptr<Segment> attach(const Segment& s) {
  std::unique_ptr<Segment> a;
  std::string why;
  EXPECT_EQ(Segment::attach(s.fd(), s.bytes(), &a, &why), 0) << why;
  return a;
}

// A hand-built segment file: `layout` as the header, of `bytes` bytes,
// with `seals` added. Returns the fd.
int hand_built(const SegmentLayout& layout, uint64_t bytes, int seals) {
  int fd = sys::memfd_sealable("hand-built");
  EXPECT_GE(fd, 0);
  EXPECT_EQ(sys::resize_fd(fd, bytes), 0);
  EXPECT_EQ(pwrite(fd, &layout, sizeof layout, 0), static_cast<ssize_t>(sizeof layout));
  if (seals) {
    EXPECT_EQ(sys::add_seals(fd, seals), 0);
  }
  return fd;
}

void write_entry(Segment& s, size_t slot, const TableEntry& e) {
  uint64_t raw[10];
  memcpy(raw, &e, sizeof raw);
  for (int k = 0; k < 10; k++) s.directory()[slot].w[k].store(raw[k]);
}

TableEntry entry(uint32_t id, uint64_t first, uint64_t pages, const char* name) {
  TableEntry e{};
  e.id = id;
  e.first_page = first;
  e.pages = pages;
  e.bytes = pages * 4096;
  snprintf(e.name, sizeof e.name, "%s", name);
  return e;
}

// Stops and joins a background thread however the test body returns (a
// failed ASSERT returns early; a joinable std::thread would terminate).
struct StopAndJoin {
  std::atomic<bool>& stop;
  std::thread& thread;
  ~StopAndJoin() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

TEST(IpcSegment, LayoutIsAlignedAndPacked) {
  SegmentLayout l;
  ASSERT_EQ(compute_layout(1000, 10, 8, 0, &l), 0);
  EXPECT_EQ(l.version, 2);
  EXPECT_EQ(l.header_bytes, 640);
  EXPECT_EQ(l.directory_offset, 640u);
  EXPECT_EQ(l.words_offset, 4096u);  // 640 + 10 * 80 rounded up
  EXPECT_EQ(l.hints_offset, 4096u + 8192u);
  EXPECT_EQ(l.ring_offset, 4096u + 8192u + 4096u);
  EXPECT_EQ(l.total_bytes, l.ring_offset + 4096u);
  EXPECT_EQ(compute_layout(0, 10, 8, 0, &l), -EINVAL);
  EXPECT_EQ(compute_layout(kMaxRegionPages + 1, 10, 8, 0, &l), -EINVAL);
  EXPECT_EQ(compute_layout(10, 0, 8, 0, &l), -EINVAL);
  EXPECT_EQ(compute_layout(10, 1, 1, 0, &l), -EINVAL);
  EXPECT_EQ(compute_layout(10, 1, 12, 0, &l), -EINVAL);
  EXPECT_EQ(compute_layout(10, 1, 131072, 0, &l), -EINVAL);
  ASSERT_EQ(compute_layout(kMaxRegionPages, kMaxTables, kMaxRingSlots, 0, &l), 0);
  EXPECT_LE(l.total_bytes, kMaxSegmentBytes);
  std::unique_ptr<Segment> s;
  EXPECT_EQ(Segment::create(10, 1, 3, 0, &s), -EINVAL);
  EXPECT_FALSE(s);
}

TEST(IpcSegment, CreateSealsAndAttachThroughFdAndDup) {
  auto s = make();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->owner());
  EXPECT_EQ(s->header()->layout.magic, kSegmentMagic);
  EXPECT_EQ(s->header()->layout.region_base, 0x7f0000000000u);
  int seals = sys::get_seals(s->fd());
  EXPECT_EQ(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_NE(ftruncate(s->fd(), 4096), 0);  // sealed
  EXPECT_TRUE(fcntl(s->fd(), F_GETFD) & FD_CLOEXEC);

  auto a = attach(*s);
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->owner());
  EXPECT_EQ(a->fd(), -1);
  EXPECT_EQ(memcmp(&a->layout(), &s->layout(), sizeof(SegmentLayout)), 0);
  EXPECT_NE(a->base(), s->base());

  int dupfd = dup(s->fd());
  std::unique_ptr<Segment> b;
  std::string why;
  ASSERT_EQ(Segment::attach(dupfd, s->bytes(), &b, &why), 0) << why;
  close(dupfd);  // the mapping outlives the fd
  b->words()[7].store(77);
  EXPECT_EQ(s->words()[7].load(), 77u);

  // Move: the moved-from Segment no longer owns the mapping.
  Segment moved(std::move(*b));
  EXPECT_EQ(b->base(), nullptr);
  EXPECT_EQ(moved.words()[7].load(), 77u);
}

TEST(IpcSegment, AttachRejectsWrongSizeClaims) {
  auto s = make();
  std::unique_ptr<Segment> a;
  std::string why;
  EXPECT_EQ(Segment::attach(s->fd(), s->bytes() - 4096, &a, &why), -EINVAL);
  EXPECT_NE(why.find("claimed size"), std::string::npos) << why;
  EXPECT_EQ(Segment::attach(s->fd(), s->bytes() + 4096, &a, &why), -EINVAL);
  EXPECT_NE(why.find("claimed size"), std::string::npos) << why;
  EXPECT_EQ(Segment::attach(s->fd(), 0, &a, &why), -EINVAL);
  EXPECT_NE(why.find("out of range"), std::string::npos) << why;
  EXPECT_EQ(Segment::attach(s->fd(), kMaxSegmentBytes + 4096, &a, &why), -EINVAL);
  EXPECT_NE(why.find("out of range"), std::string::npos) << why;
  EXPECT_EQ(Segment::attach(-1, s->bytes(), &a, &why), -EINVAL);
  EXPECT_FALSE(a);
}

TEST(IpcSegment, AttachRejectsUnsealedAndNonMemfd) {
  auto s = make();
  const SegmentLayout& l = s->layout();
  std::unique_ptr<Segment> a;
  std::string why;

  int unsealed = hand_built(l, l.total_bytes, 0);
  EXPECT_EQ(Segment::attach(unsealed, l.total_bytes, &a, &why), -EINVAL);
  EXPECT_NE(why.find("shrinking"), std::string::npos) << why;
  // Only F_SEAL_GROW: still shrinkable.
  ASSERT_EQ(sys::add_seals(unsealed, F_SEAL_GROW), 0);
  EXPECT_EQ(Segment::attach(unsealed, l.total_bytes, &a, &why), -EINVAL);
  EXPECT_NE(why.find("shrinking"), std::string::npos) << why;
  // The same file once sealed against shrinking is accepted.
  ASSERT_EQ(sys::add_seals(unsealed, F_SEAL_SHRINK), 0);
  EXPECT_EQ(Segment::attach(unsealed, l.total_bytes, &a, &why), 0) << why;
  close(unsealed);

  // A memfd made without MFD_ALLOW_SEALING carries F_SEAL_SEAL only.
  int plain = memfd_create("plain", MFD_CLOEXEC);
  ASSERT_GE(plain, 0);
  ASSERT_EQ(ftruncate(plain, static_cast<off_t>(l.total_bytes)), 0);
  ASSERT_EQ(pwrite(plain, &l, sizeof l, 0), static_cast<ssize_t>(sizeof l));
  EXPECT_EQ(Segment::attach(plain, l.total_bytes, &a, &why), -EINVAL);
  EXPECT_NE(why.find("shrinking"), std::string::npos) << why;
  close(plain);

  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(Segment::attach(p[0], l.total_bytes, &a, &why), -EINVAL);
  EXPECT_NE(why.find("not a memfd"), std::string::npos) << why;
  close(p[0]);
  close(p[1]);
}

// A version-1 runtime's segment (a 512-byte header, no page size and
// fewer counters) is attached and says so; its readers leave the newer
// counters absent.
TEST(IpcSegment, AVersionOneSegmentIsReadWithoutTheNewerCounters) {
  SegmentLayout v1;
  ASSERT_EQ(compute_layout(1000, 10, 8, 0, &v1, 1), 0);
  EXPECT_EQ(v1.header_bytes, 512);
  EXPECT_EQ(v1.directory_offset, 512u);
  int fd = hand_built(v1, v1.total_bytes, F_SEAL_SHRINK);
  std::unique_ptr<Segment> a;
  std::string why;
  ASSERT_EQ(Segment::attach(fd, v1.total_bytes, &a, &why), 0) << why;
  EXPECT_EQ(a->version(), 1);
  EXPECT_EQ(a->layout().directory_offset, 512u);
  close(fd);
}

TEST(IpcSegment, AttachRejectsBadHeaders) {
  auto s = make();
  const SegmentLayout good = s->layout();
  struct Case {
    const char* what;
    void (*mutate)(SegmentLayout*);
  };
  const Case cases[] = {
      {"bad magic", [](SegmentLayout* l) { l->magic = 0x4d544753; }},
      {"unsupported version", [](SegmentLayout* l) { l->version = 3; }},
      {"unsupported version", [](SegmentLayout* l) { l->version = 0; }},
      {"bad header_bytes", [](SegmentLayout* l) { l->header_bytes = 448; }},
      {"bad header_bytes", [](SegmentLayout* l) { l->header_bytes = 512; }},
      {"bad header_bytes", [](SegmentLayout* l) { l->version = 1; }},
      {"ring_slots", [](SegmentLayout* l) { l->ring_slots = 48; }},
      {"ring_slots", [](SegmentLayout* l) { l->ring_slots = 1; }},
      {"ring_slots", [](SegmentLayout* l) { l->ring_slots = 1u << 20; }},
      {"region_pages", [](SegmentLayout* l) { l->region_pages = 0; }},
      {"region_pages", [](SegmentLayout* l) { l->region_pages = ~0ull; }},
      {"max_tables", [](SegmentLayout* l) { l->max_tables = 0; }},
      {"bad directory_offset", [](SegmentLayout* l) { l->directory_offset = 64; }},
      {"bad words_offset", [](SegmentLayout* l) { l->words_offset = l->total_bytes; }},
      {"bad words_offset", [](SegmentLayout* l) { l->words_offset += 64; }},
      {"bad hints_offset", [](SegmentLayout* l) { l->hints_offset = 1ull << 62; }},
      {"bad ring_offset", [](SegmentLayout* l) { l->ring_offset = l->total_bytes - 64; }},
      {"bad total_bytes", [](SegmentLayout* l) { l->total_bytes += 4096; }},
      // A larger region than the file holds: the layout no longer fits.
      {"bad words_offset", [](SegmentLayout* l) { l->max_tables = 1000; }},
      {"bad hints_offset", [](SegmentLayout* l) { l->region_pages *= 4; }},
  };
  for (const Case& c : cases) {
    SegmentLayout l = good;
    c.mutate(&l);
    int fd = hand_built(l, good.total_bytes, F_SEAL_SHRINK);
    std::unique_ptr<Segment> a;
    std::string why;
    EXPECT_EQ(Segment::attach(fd, good.total_bytes, &a, &why), -EBADMSG) << c.what;
    EXPECT_NE(why.find(c.what), std::string::npos) << c.what << ": " << why;
    EXPECT_FALSE(a);
    close(fd);
  }
  // The unmutated hand-built header passes, so each rejection above is its own.
  int fd = hand_built(good, good.total_bytes, F_SEAL_SHRINK);
  std::unique_ptr<Segment> a;
  std::string why;
  EXPECT_EQ(Segment::attach(fd, good.total_bytes, &a, &why), 0) << why;
  close(fd);
}

TEST(IpcSegment, AttachKeepsItsOwnCopyOfTheLayout) {
  auto s = make();
  auto a = attach(*s);
  uint64_t words_offset = a->layout().words_offset;
  s->header()->layout.words_offset = 1ull << 40;  // a hostile change after attach
  EXPECT_EQ(a->layout().words_offset, words_offset);
  a->words()[1023].store(5);
  EXPECT_EQ(s->words()[1023].load(), 5u);
}

TEST(IpcSegment, WordsHintsAndStatusAreShared) {
  auto s = make(4096);
  auto a = attach(*s);
  for (uint64_t p = 0; p < 4096; p++) s->words()[p].store(p * 3 + 1, std::memory_order_relaxed);
  for (uint64_t p = 0; p < 4096; p++) ASSERT_EQ(a->words()[p].load(), p * 3 + 1);
  a->words()[100].fetch_or(1u << 3);
  EXPECT_EQ(s->words()[100].load(), (100u * 3 + 1) | (1u << 3));
  a->set_hint(4095, 200);
  EXPECT_EQ(s->hint(4095), 200);
  EXPECT_EQ(s->hints()[4095], 200);
  s->header()->dram_resident_pages.store(123);
  a->header()->hints_epoch.fetch_add(1);
  EXPECT_EQ(a->header()->dram_resident_pages.load(), 123u);
  EXPECT_EQ(s->header()->hints_epoch.load(), 1u);
}

TEST(IpcSegment, DirectoryPutRemoveRead) {
  auto s = make(1000, 4);
  auto a = attach(*s);
  std::vector<TableEntry> dir;
  uint64_t gen = 99;
  ASSERT_EQ(a->read_directory(&dir, &gen), 0);
  EXPECT_TRUE(dir.empty());
  EXPECT_EQ(gen, 0u);

  ASSERT_EQ(s->put_table(1, 0, 100, 400000, "emb_user"), 0);
  ASSERT_EQ(s->put_table(2, 100, 50, 200000, "emb_item", 7), 0);
  ASSERT_EQ(a->read_directory(&dir, &gen), 0);
  EXPECT_EQ(gen % 2, 0u);
  EXPECT_GT(gen, 0u);
  ASSERT_EQ(dir.size(), 2u);
  EXPECT_EQ(dir[0].id, 1u);
  EXPECT_EQ(dir[0].pages, 100u);
  EXPECT_EQ(dir[0].bytes, 400000u);
  EXPECT_STREQ(dir[0].name, "emb_user");
  EXPECT_EQ(dir[1].first_page, 100u);
  EXPECT_EQ(dir[1].flags, 7u);

  // Replace in place; bad requests.
  ASSERT_EQ(s->put_table(1, 0, 90, 1, "emb_user2"), 0);
  EXPECT_EQ(s->put_table(3, 120, 10, 1, "overlaps 2"), -EINVAL);
  EXPECT_EQ(s->put_table(3, 990, 11, 1, "past end"), -EINVAL);
  EXPECT_EQ(s->put_table(3, ~0ull - 5, 10, 1, "overflow"), -EINVAL);
  EXPECT_EQ(s->put_table(0, 500, 1, 1, "id 0"), -EINVAL);
  EXPECT_EQ(s->put_table(3, 500, 0, 1, "empty"), -EINVAL);
  EXPECT_EQ(s->put_table(3, 500, 1, 1, nullptr), -EINVAL);
  std::string long_name(100, 'x');
  ASSERT_EQ(s->put_table(3, 200, 10, 1, long_name.c_str()), 0);
  ASSERT_EQ(s->put_table(4, 300, 10, 1, "four"), 0);
  EXPECT_EQ(s->put_table(5, 400, 10, 1, "five"), -ENOSPC);
  EXPECT_EQ(a->put_table(6, 400, 10, 1, "daemon"), -EPERM);
  EXPECT_EQ(a->remove_table(1), -EPERM);

  uint64_t gen2;
  ASSERT_EQ(a->read_directory(&dir, &gen2), 0);
  EXPECT_GT(gen2, gen);
  ASSERT_EQ(dir.size(), 4u);
  EXPECT_EQ(dir[0].pages, 90u);
  EXPECT_STREQ(dir[0].name, "emb_user2");
  EXPECT_EQ(strlen(dir[2].name), kTableNameBytes - 1);

  ASSERT_EQ(s->remove_table(2), 0);
  EXPECT_EQ(s->remove_table(2), -ENOENT);
  EXPECT_EQ(s->remove_table(0), -ENOENT);
  ASSERT_EQ(s->put_table(5, 100, 50, 1, "five"), 0);  // reuses slot and range of 2
  ASSERT_EQ(a->read_directory(&dir, nullptr), 0);
  ASSERT_EQ(dir.size(), 4u);
  EXPECT_EQ(dir[1].id, 5u);
}

TEST(IpcSegment, ReadDirectoryRejectsCorruptEntries) {
  const TableEntry good = entry(1, 10, 10, "good");
  struct Case {
    const char* what;
    TableEntry e;
  };
  TableEntry no_nul = entry(2, 100, 10, "");
  memset(no_nul.name, 'a', sizeof no_nul.name);
  const Case cases[] = {
      {"overlap", entry(2, 15, 10, "overlaps")},
      {"same range", entry(2, 10, 10, "same")},
      {"out of bounds", entry(2, 1000, 1, "past end")},
      {"straddles end", entry(2, 999, 2, "straddles")},
      {"overflow", entry(2, ~0ull - 1, 4, "wraps")},
      {"empty", entry(2, 100, 0, "empty")},
      {"duplicate id", entry(1, 100, 10, "dup")},
      {"no NUL", no_nul},
  };
  for (const Case& c : cases) {
    auto s = make(1000, 4);
    auto a = attach(*s);
    write_entry(*s, 0, good);
    write_entry(*s, 3, c.e);
    std::vector<TableEntry> dir;
    EXPECT_EQ(a->read_directory(&dir, nullptr), -EBADMSG) << c.what;
    EXPECT_TRUE(dir.empty());
    // The same entry cleared: the directory reads again.
    write_entry(*s, 3, TableEntry{});
    EXPECT_EQ(a->read_directory(&dir, nullptr), 0) << c.what;
    EXPECT_EQ(dir.size(), 1u);
  }
}

TEST(IpcSegment, ReadDirectoryGivesUpOnAStuckWriter) {
  auto s = make();
  auto a = attach(*s);
  s->header()->directory_generation.store(7);  // odd forever
  std::vector<TableEntry> dir;
  EXPECT_EQ(a->read_directory(&dir, nullptr), -EAGAIN);
  s->header()->directory_generation.store(8);
  EXPECT_EQ(a->read_directory(&dir, nullptr), 0);
}

// One thread rewrites the directory; another reads it through a second
// mapping and must only see snapshots where every entry is self-consistent
// (pages, bytes and name all carry the same version) and valid.
TEST(IpcSegment, ConcurrentDirectoryReadsSeeConsistentSnapshots) {
  constexpr uint32_t kTables = 8;
  auto s = make(kTables * 1000, 16);
  auto a = attach(*s);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    char name[48];
    for (uint64_t v = 1; !stop.load(std::memory_order_relaxed); v++) {
      uint32_t id = 1 + static_cast<uint32_t>(v % kTables);
      uint64_t pages = 1 + v % 1000;
      snprintf(name, sizeof name, "t%u-v%llu", id, static_cast<unsigned long long>(v));
      if (v % 5 == 0) {
        int rc = s->remove_table(id);
        ASSERT_TRUE(rc == 0 || rc == -ENOENT);
      } else {
        ASSERT_EQ(s->put_table(id, (id - 1) * 1000ull, pages, pages * 4096 + v, name, id), 0);
      }
    }
  });
  StopAndJoin guard{stop, writer};
  std::vector<TableEntry> dir;
  int ok = 0, again = 0;
  uint64_t last_gen = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (ok < 2000 || std::chrono::steady_clock::now() < deadline) {
    uint64_t gen;
    int rc = a->read_directory(&dir, &gen);
    if (rc == -EAGAIN) {
      again++;
      ASSERT_LT(again, 1000);
      continue;
    }
    ASSERT_EQ(rc, 0);
    ok++;
    ASSERT_EQ(gen % 2, 0u);
    ASSERT_GE(gen, last_gen);
    last_gen = gen;
    for (const TableEntry& e : dir) {
      ASSERT_GE(e.id, 1u);
      ASSERT_LE(e.id, kTables);
      ASSERT_EQ(e.flags, e.id);
      ASSERT_EQ(e.first_page, (e.id - 1) * 1000ull);
      uint64_t v = e.bytes - e.pages * 4096;
      ASSERT_EQ(e.pages, 1 + v % 1000);
      ASSERT_EQ(1 + v % kTables, e.id);
      char name[48];
      snprintf(name, sizeof name, "t%u-v%llu", e.id, static_cast<unsigned long long>(v));
      ASSERT_STREQ(e.name, name);
    }
  }
  EXPECT_GT(last_gen, 0u);
}

// The tightest race: one slot rewritten as fast as possible between two
// versions that differ in every word; a reader must see one or the other,
// never a mix (a seqlock without the odd generation fails this).
TEST(IpcSegment, ConcurrentRewritesOfOneEntryAreNeverTorn) {
  auto s = make(1 << 20, 1);
  auto a = attach(*s);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const std::string na(47, 'a'), nb(47, 'b');
    for (uint64_t v = 0; !stop.load(std::memory_order_relaxed); v++) {
      if (v % 2)
        ASSERT_EQ(s->put_table(1, 1000, 1000, 1111, na.c_str(), 0x11111111), 0);
      else
        ASSERT_EQ(s->put_table(1, 200000, 50000, 2222, nb.c_str(), 0x22222222), 0);
    }
  });
  StopAndJoin guard{stop, writer};
  std::vector<TableEntry> dir;
  int seen[2] = {0, 0};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < deadline) {
    int rc = a->read_directory(&dir, nullptr);
    if (rc == -EAGAIN) continue;
    ASSERT_EQ(rc, 0);
    if (dir.empty()) continue;
    ASSERT_EQ(dir.size(), 1u);
    const TableEntry& e = dir[0];
    bool is_a = e.flags == 0x11111111;
    ASSERT_EQ(e.first_page, is_a ? 1000u : 200000u);
    ASSERT_EQ(e.pages, is_a ? 1000u : 50000u);
    ASSERT_EQ(e.bytes, is_a ? 1111u : 2222u);
    ASSERT_EQ(std::string(e.name), std::string(47, is_a ? 'a' : 'b'));
    seen[is_a]++;
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

TEST(IpcRing, FillsToFullAndWrapsAround) {
  auto s = make(1024, 4, 8);
  OrderRing ring(*s);
  EXPECT_EQ(ring.slots(), 8u);
  Order out[16];
  EXPECT_EQ(ring.pop(out, 16), 0u);
  for (uint32_t i = 0; i < 8; i++) ASSERT_TRUE(ring.push(Order{1, 0, 1, i, 1, 0}));
  EXPECT_FALSE(ring.push(Order{1, 0, 1, 8, 1, 0}));
  ASSERT_EQ(ring.pop(out, 3), 3u);
  for (uint32_t i = 0; i < 3; i++) EXPECT_EQ(out[i].first_page, i);
  ASSERT_EQ(ring.pop(out, 16), 5u);
  for (uint32_t i = 0; i < 5; i++) EXPECT_EQ(out[i].first_page, 3 + i);

  // Many laps with uneven batches; the counts go far past ring_slots.
  uint64_t next_push = 0, next_pop = 0;
  for (int round = 0; round < 5000; round++) {
    int n = 1 + round % 8;
    for (int i = 0; i < n; i++)
      if (ring.push(Order{2, 0, 3, next_push, 1, 0})) next_push++;
    size_t got = ring.pop(out, 1 + round % 5);
    for (size_t i = 0; i < got; i++) ASSERT_EQ(out[i].first_page, next_pop++);
  }
  size_t got;
  while ((got = ring.pop(out, 16)) > 0)
    for (size_t i = 0; i < got; i++) ASSERT_EQ(out[i].first_page, next_pop++);
  EXPECT_EQ(next_pop, next_push);
  EXPECT_GT(next_push, 1000u);
  EXPECT_EQ(s->header()->ring_head.load(), 8 + next_push);
  EXPECT_FALSE(ring.corrupt());
}

// The producer pushes through `daemon`, the consumer pops through `runtime`.
void spsc_stress(const Segment& daemon, const Segment& runtime) {
  constexpr uint64_t kOrders = 1000000;
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    OrderRing ring(daemon);
    for (uint64_t i = 0; i < kOrders && !stop.load(std::memory_order_relaxed);) {
      Order o{static_cast<uint16_t>(1 + i % 4), static_cast<uint16_t>(i % 2),
              static_cast<uint32_t>(i), i * 7, static_cast<uint32_t>(i ^ 0x5555), 0};
      if (ring.push(o))
        i++;
      else
        std::this_thread::yield();
    }
  });
  StopAndJoin guard{stop, producer};
  OrderRing ring(runtime);
  Order out[64];
  uint64_t next = 0;
  while (next < kOrders) {
    size_t n = ring.pop(out, 1 + next % 64);
    if (n == 0) std::this_thread::yield();
    for (size_t k = 0; k < n; k++, next++) {
      ASSERT_EQ(out[k].table_id, static_cast<uint32_t>(next));
      ASSERT_EQ(out[k].first_page, next * 7);
      ASSERT_EQ(out[k].count, static_cast<uint32_t>(next ^ 0x5555));
      ASSERT_EQ(out[k].op, 1 + next % 4);
      ASSERT_EQ(out[k].tier, next % 2);
    }
  }
  producer.join();
  EXPECT_EQ(ring.pop(out, 64), 0u);
  EXPECT_FALSE(ring.corrupt());
}

// Through two mappings of the memfd, as between two processes.
TEST(IpcRing, SpscStressOneMillionInOrderAcrossMappings) {
  auto s = make(1024, 4, 256);
  auto a = attach(*s);
  spsc_stress(*a, *s);
}

// Through one mapping: the same addresses on both sides, so TSan can check
// the ring's acquire/release ordering (it cannot relate two mappings).
TEST(IpcRing, SpscStressOneMillionInOrderOneMapping) {
  auto s = make(1024, 4, 256);
  spsc_stress(*s, *s);
}

TEST(IpcRing, ConsumerDetectsCorruptHead) {
  auto s = make(1024, 4, 8);
  OrderRing ring(*s);
  ASSERT_TRUE(ring.push(Order{1, 0, 1, 0, 1, 0}));
  Order out[8];
  ASSERT_EQ(ring.pop(out, 8), 1u);
  s->header()->ring_head.store(1 + 8 + 1);  // 9 ahead of tail 1: impossible
  EXPECT_EQ(ring.pop(out, 8), 0u);
  EXPECT_TRUE(ring.corrupt());
  s->header()->ring_head.store(2);  // sane again: the ring stays condemned
  EXPECT_EQ(ring.pop(out, 8), 0u);

  auto s2 = make(1024, 4, 8);
  OrderRing ring2(*s2);
  s2->header()->ring_head.store(~0ull);  // behind the tail
  EXPECT_EQ(ring2.pop(out, 8), 0u);
  EXPECT_TRUE(ring2.corrupt());

  // A huge head never indexes out of bounds: exactly ring_slots ahead is full, legal.
  auto s3 = make(1024, 4, 8);
  s3->header()->ring_head.store(8);
  OrderRing ring3(*s3);
  EXPECT_EQ(ring3.pop(out, 8), 8u);
  EXPECT_FALSE(ring3.corrupt());
}

TEST(IpcRing, ProducerDetectsCorruptTail) {
  auto s = make(1024, 4, 8);
  OrderRing ring(*s);
  ASSERT_TRUE(ring.push(Order{1, 0, 1, 0, 1, 0}));
  s->header()->ring_tail.store(5);  // past the head
  EXPECT_FALSE(ring.push(Order{1, 0, 1, 0, 1, 0}));
  EXPECT_TRUE(ring.corrupt());
}

TEST(IpcRing, ValidateOrder) {
  std::vector<TableEntry> tables = {entry(1, 0, 100, "a"), entry(2, 100, 50, "b")};
  auto ok = [&](Order o) { return validate_order(o, tables); };
  EXPECT_EQ(ok(Order{1, 0, 1, 0, 100, 0}), 0);
  EXPECT_EQ(ok(Order{1, 1, 2, 100, 50, 0}), 0);
  EXPECT_EQ(ok(Order{2, 0, 2, 149, 1, 0}), 0);
  EXPECT_EQ(ok(Order{3, 1, 1, 10, 5, 0}), 0);
  EXPECT_EQ(ok(Order{4, 1, 0, 123456, 0, 0}), 0);
  EXPECT_EQ(ok(Order{0, 0, 1, 0, 1, 0}), -EINVAL);    // unknown op
  EXPECT_EQ(ok(Order{5, 0, 1, 0, 1, 0}), -EINVAL);    // unknown op
  EXPECT_EQ(ok(Order{1, 2, 1, 0, 1, 0}), -EINVAL);    // tier
  EXPECT_EQ(ok(Order{2, 1, 1, 0, 1, 0}), -EINVAL);    // prefetch is into DRAM
  EXPECT_EQ(ok(Order{1, 0, 3, 0, 1, 0}), -EINVAL);    // no such table
  EXPECT_EQ(ok(Order{1, 0, 0, 0, 1, 0}), -EINVAL);    // table 0
  EXPECT_EQ(ok(Order{1, 0, 1, 0, 0, 0}), -EINVAL);    // count 0
  EXPECT_EQ(ok(Order{1, 0, 1, 0, 101, 0}), -EINVAL);  // past the table
  EXPECT_EQ(ok(Order{1, 0, 2, 99, 1, 0}), -EINVAL);   // before the table
  EXPECT_EQ(ok(Order{1, 0, 2, ~0ull, 2, 0}), -EINVAL);
  EXPECT_EQ(ok(Order{1, 0, 1, 0, 1, 1}), -EINVAL);    // reserved
  EXPECT_EQ(ok(Order{4, 0, 1, 5, 0, 0}), -EINVAL);    // budget names no table
  EXPECT_EQ(ok(Order{4, 0, 0, 5, 1, 0}), -EINVAL);
}

TEST(IpcSegment, ClearWordsReturnsMemory) {
  constexpr uint64_t kPages = 1 << 20;  // 8 MiB of words, 1 MiB of hints
  auto s = make(kPages + 2);
  auto a = attach(*s);
  uint64_t before = allocated(s->fd());
  for (uint64_t p = 0; p < kPages + 2; p++) {
    s->words()[p].store(p | 1, std::memory_order_relaxed);
    a->set_hint(p, 9);
  }
  uint64_t touched = allocated(s->fd());
  EXPECT_GE(touched, before + kPages * 9);
  s->clear_words(1, kPages);  // starts mid-page: the first word's page stays
  uint64_t after = allocated(s->fd());
  EXPECT_LE(after, touched - kPages * 9 + (64u << 10)) << before << " " << touched;
  EXPECT_EQ(a->words()[0].load(), 1u);
  EXPECT_EQ(a->words()[kPages + 1].load(), (kPages + 1) | 1);
  EXPECT_EQ(a->hint(0), 9);
  EXPECT_EQ(a->hint(kPages + 1), 9);
  for (uint64_t p = 1; p <= kPages; p += 997) {
    ASSERT_EQ(a->words()[p].load(), 0u) << p;
    ASSERT_EQ(a->hint(p), 0) << p;
  }
  EXPECT_EQ(a->words()[kPages].load(), 0u);

  // Small spans are stored to; neighbors stay; out-of-range is clamped.
  s->words()[5].store(5);
  s->words()[6].store(6);
  s->words()[7].store(7);
  s->set_hint(6, 1);
  s->clear_words(6, 1);
  EXPECT_EQ(a->words()[5].load(), 5u);
  EXPECT_EQ(a->words()[6].load(), 0u);
  EXPECT_EQ(a->hint(6), 0);
  EXPECT_EQ(a->words()[7].load(), 7u);
  s->clear_words(kPages + 1, 100);
  EXPECT_EQ(a->words()[kPages + 1].load(), 0u);
  s->clear_words(kPages + 2, 1);  // past the end: nothing
}

TEST(IpcSegment, A64GiBRegionCreatesQuicklyInLittleMemory) {
  constexpr uint64_t kPages = (64ull << 30) / 4096;  // 16M pages
  long rss0 = resident_kib();
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Segment> s;
  ASSERT_EQ(Segment::create(kPages, 4096, 4096, 0, &s), 0);
  auto a = attach(*s);
  ASSERT_TRUE(a);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - t0)
                .count();
  EXPECT_LT(ms, 1000);
  EXPECT_GE(s->bytes(), kPages * 9);  // 128 MiB words + 16 MiB hints
  EXPECT_LT(allocated(s->fd()), 1u << 20);
  EXPECT_LT(resident_kib() - rss0, 8 * 1024);
  // The last page's word and hint are usable.
  s->words()[kPages - 1].store(42);
  EXPECT_EQ(a->words()[kPages - 1].load(), 42u);
  a->set_hint(kPages - 1, 3);
  EXPECT_EQ(s->hint(kPages - 1), 3);
  EXPECT_LT(allocated(s->fd()), 1u << 20);
}

TEST(IpcSegment, Heartbeats) {
  auto s = make();
  auto a = attach(*s);
  EXPECT_FALSE(s->daemon_alive(1000000000));
  EXPECT_FALSE(a->runtime_alive(1000000000));
  a->stamp_daemon_heartbeat();
  s->stamp_runtime_heartbeat();
  EXPECT_TRUE(s->daemon_alive(1000000000));
  EXPECT_TRUE(a->runtime_alive(1000000000));
  uint64_t now = monotonic_ns();
  s->header()->daemon_heartbeat_ns.store(now - 2000000000);
  EXPECT_FALSE(s->daemon_alive(1000000000));
  EXPECT_TRUE(s->daemon_alive(5000000000));
  s->header()->daemon_heartbeat_ns.store(now + 60000000000);  // in the future: bogus
  EXPECT_FALSE(s->daemon_alive(~0ull));
}

}  // namespace
}  // namespace mtier::ipc

namespace mtier::ipc {
namespace {

// The segment parser under a seeded fuzz (tests/fuzz/segment_fuzz.h has
// the invariants; tests/fuzz/segment_fuzz.cc is the long-running version):
// valid segments with a few tables, then bit flips, random header fields,
// random directory entries, and truncations. Some inputs must attach and
// read, others be rejected, each with its reason.
TEST(IpcSegment, SeededFuzz) {
  std::mt19937_64 rng(0x5345474d);
  auto pick = [&](uint64_t n) { return rng() % n; };
  SegmentLayout l;
  ASSERT_EQ(compute_layout(64, 4, 2, 0x7f0000000000, &l), 0);
  std::vector<uint8_t> valid(l.words_offset, 0);
  memcpy(valid.data(), &l, sizeof l);
  for (uint32_t i = 0; i < 3; i++) {
    TableEntry e{};
    e.id = i + 1;
    e.first_page = i * 16;
    e.pages = 16;
    e.bytes = 16 * 4096;
    snprintf(e.name, sizeof e.name, "t%u", i);
    memcpy(valid.data() + l.directory_offset + i * sizeof e, &e, sizeof e);
  }
  int outcome;
  ASSERT_TRUE(fuzz::segment_one(valid.data(), valid.size(), &outcome));
  ASSERT_EQ(outcome, 1);
  size_t attached = 0, rejected = 0;
  for (int i = 0; i < 20000; i++) {
    std::vector<uint8_t> in = valid;
    switch (i % 4) {
      case 0:  // bit flips anywhere
        for (uint64_t k = 1 + pick(4); k > 0; k--) in[pick(in.size())] ^= 1u << pick(8);
        break;
      case 1: {  // one header word random, or a power of two
        size_t w = pick(sizeof(SegmentLayout) / 8) * 8;
        uint64_t v = pick(2) ? rng() : uint64_t{1} << pick(64);
        memcpy(in.data() + w, &v, 8);
        break;
      }
      case 2:  // directory words random, or near the region's edge
        for (uint64_t k = 1 + pick(6); k > 0; k--) {
          size_t w = l.directory_offset + pick(4 * sizeof(TableEntry) / 8) * 8;
          uint64_t v = pick(2) ? rng() : 60 + pick(8) - (pick(2) ? 0 : 64);
          memcpy(in.data() + w, &v, 8);
        }
        break;
      case 3:  // truncated (the file is then sized by the header)
        in.resize(pick(in.size() + 1));
        break;
    }
    int outcome;
    ASSERT_TRUE(fuzz::segment_one(in.data(), in.size(), &outcome)) << "input " << i;
    attached += outcome == 1;
    rejected += outcome == 0;
  }
  EXPECT_GT(attached, 0u);
  EXPECT_GT(rejected, 0u);
}

}  // namespace
}  // namespace mtier::ipc
