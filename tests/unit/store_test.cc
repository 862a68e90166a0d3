// SPDX-License-Identifier: Apache-2.0
// Unit tests of src/store: the slot allocator, the io_uring file store (on
// disk, on tmpfs, with O_DIRECT refused) and the libpmem2 store on a file.
#include "store/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "log/log.h"
#include "store/device_signature.h"
#include "store/file_channel.h"
#include "store/file_store.h"
#include "store/slot_allocator.h"

namespace mtier {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kWords = kPage / sizeof(uint64_t);

// ---------------------------------------------------------------- helpers

// A directory made with mkdtemp under `base`, removed with its contents.
class TempDir {
 public:
  explicit TempDir(const char* base) {
    std::string tmpl = std::string(base) + "/mtier-store-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  size_t entries() const {
    size_t n = 0;
    for (auto it = std::filesystem::directory_iterator(path_); it != decltype(it)(); ++it) ++n;
    return n;
  }

 private:
  std::string path_;
};

// n page-aligned 4 KiB pages.
class PageBuf {
 public:
  explicit PageBuf(size_t n)
      : p_(static_cast<unsigned char*>(std::aligned_alloc(kPage, std::max<size_t>(n, 1) * kPage))) {
  }
  ~PageBuf() { std::free(p_); }
  void* page(size_t i) { return p_ + i * kPage; }

 private:
  unsigned char* p_;
};

uint64_t splitmix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t checksum(const uint64_t* w) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i + 1 < kWords; ++i) h = (h ^ w[i]) * 0x100000001b3ULL;
  return h;
}

// A page naming its slot and generation, pseudo-random words, a checksum.
void fill_page(void* buf, uint64_t slot, uint64_t gen) {
  auto* w = static_cast<uint64_t*>(buf);
  uint64_t seed = slot * 0x100000001b3ULL ^ gen;
  w[0] = slot;
  w[1] = gen;
  for (size_t i = 2; i + 1 < kWords; ++i) w[i] = splitmix(&seed);
  w[kWords - 1] = checksum(w);
}

// Empty if the page is the one fill_page(slot, gen) wrote, else what is wrong.
std::string check_page(const void* buf, uint64_t slot, uint64_t gen) {
  const auto* w = static_cast<const uint64_t*>(buf);
  if (w[kWords - 1] != checksum(w)) return "bad checksum in slot " + std::to_string(slot);
  if (w[0] != slot || w[1] != gen)
    return "slot " + std::to_string(slot) + " gen " + std::to_string(gen) + " holds slot " +
           std::to_string(w[0]) + " gen " + std::to_string(w[1]);
  PageBuf want(1);
  fill_page(want.page(0), slot, gen);
  return memcmp(want.page(0), buf, kPage) == 0 ? ""
                                               : "content differs in slot " + std::to_string(slot);
}

// Page k of a batch: the channel's staging buffer k while there is one
// (fixed I/O), else an external buffer (plain I/O): batches mix both.
void* batch_buf(StoreChannel* ch, PageBuf* ext, size_t k) {
  return k < ch->depth() ? ch->buffer(static_cast<unsigned>(k)) : ext->page(k);
}

void write_slots(StoreChannel* ch, const std::vector<uint64_t>& slots, uint64_t gen, size_t batch) {
  PageBuf ext(batch);
  std::vector<StoreIo> ios(batch);
  for (size_t at = 0; at < slots.size(); at += batch) {
    size_t n = std::min(batch, slots.size() - at);
    for (size_t k = 0; k < n; ++k) {
      ios[k] = {slots[at + k], batch_buf(ch, &ext, k), 99};
      fill_page(ios[k].buf, slots[at + k], gen);
    }
    ASSERT_EQ(ch->write_pages(ios.data(), n), 0);
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(ios[k].result, 0) << "slot " << ios[k].slot;
  }
}

void read_verify(StoreChannel* ch, const std::vector<uint64_t>& slots, uint64_t gen, size_t batch) {
  PageBuf ext(batch);
  std::vector<StoreIo> ios(batch);
  for (size_t at = 0; at < slots.size(); at += batch) {
    size_t n = std::min(batch, slots.size() - at);
    for (size_t k = 0; k < n; ++k) {
      ios[k] = {slots[at + k], batch_buf(ch, &ext, k), 99};
      memset(ios[k].buf, 0xa5, kPage);
    }
    ASSERT_EQ(ch->read_pages(ios.data(), n), 0);
    for (size_t k = 0; k < n; ++k) {
      ASSERT_EQ(ios[k].result, 0) << "slot " << ios[k].slot;
      ASSERT_EQ(check_page(ios[k].buf, ios[k].slot, gen), "");
    }
  }
}

std::vector<uint64_t> alloc_n(Store* s, size_t n) {
  std::vector<uint64_t> v;
  for (size_t i = 0; i < n; ++i) {
    int64_t slot = s->alloc_slot();
    if (slot < 0) break;
    v.push_back(static_cast<uint64_t>(slot));
  }
  return v;
}

bool on_tmpfs(const std::string& path) {
  struct statfs sf;
  return statfs(path.c_str(), &sf) == 0 && sf.f_type == 0x01021994;
}

// ---------------------------------------------------------------- slot allocator

TEST(SlotAllocator, BumpsThenReusesLowestFreedFirst) {
  SlotAllocator a(100);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(a.alloc(), i);
  a.free(7);
  a.free(3);
  EXPECT_EQ(a.used(), 8u);
  EXPECT_EQ(a.alloc(), 3);
  EXPECT_EQ(a.alloc(), 7);
  EXPECT_EQ(a.alloc(), 10);
  EXPECT_TRUE(a.is_allocated(7));
  EXPECT_FALSE(a.is_allocated(11));
}

TEST(SlotAllocator, FullIsEnospcAndFreeMakesRoom) {
  SlotAllocator a(3);
  EXPECT_EQ(a.capacity(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_GE(a.alloc(), 0);
  EXPECT_EQ(a.alloc(), -ENOSPC);
  EXPECT_EQ(a.used(), 3u);
  a.free(1);
  EXPECT_EQ(a.used(), 2u);
  EXPECT_EQ(a.alloc(), 1);
  EXPECT_EQ(a.alloc(), -ENOSPC);
}

TEST(SlotAllocator, ZeroCapacityIsAlwaysFull) {
  SlotAllocator a(0);
  EXPECT_EQ(a.alloc(), -ENOSPC);
  EXPECT_EQ(a.used(), 0u);
}

// Across word and summary-word boundaries, against a reference set.
TEST(SlotAllocator, MatchesLowestFreeReference) {
  SlotAllocator a(70000);
  std::set<uint64_t> held, freed;
  uint64_t high = 0;
  std::mt19937_64 rng(42);
  for (int step = 0; step < 200000; ++step) {
    if (held.empty() || rng() % 3 != 0) {
      int64_t got = a.alloc();
      uint64_t want = freed.empty() ? high++ : *freed.begin();
      if (!freed.empty()) freed.erase(freed.begin());
      ASSERT_EQ(got, static_cast<int64_t>(want)) << "step " << step;
      held.insert(want);
    } else {
      auto it = held.begin();
      std::advance(it, static_cast<long>(rng() % std::min<size_t>(held.size(), 64)));
      if (rng() % 2) it = std::prev(held.end());
      a.free(*it);
      freed.insert(*it);
      held.erase(it);
    }
    ASSERT_EQ(a.used(), held.size());
  }
}

TEST(SlotAllocator, ThreadsGetDistinctSlots) {
  SlotAllocator a(4 * 5000);
  std::vector<std::vector<int64_t>> got(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&a, &got, t] {
      for (int i = 0; i < 5000; ++i) {
        int64_t s = a.alloc();
        if (i % 2)
          a.free(static_cast<uint64_t>(s));
        else
          got[t].push_back(s);
      }
    });
  for (auto& t : ts) t.join();
  std::set<int64_t> all;
  for (auto& v : got) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 4u * 2500);
  EXPECT_EQ(a.used(), 4u * 2500);
  EXPECT_GE(*all.begin(), 0);
}

// Runs for clustered write-back: fresh slots in order, the next run where
// the last ended, a wholly free word before growth, growth only while the
// holes below the high-water mark are at most half the slots in use.
TEST(SlotAllocator, RunsBumpThenContinueThenTakeAFreeWord) {
  SlotAllocator a(1000);
  uint64_t got = 0;
  EXPECT_EQ(a.alloc_run(100, &got), 0);  // clamped to kMaxRun
  EXPECT_EQ(got, SlotAllocator::kMaxRun);
  EXPECT_EQ(a.alloc_run(10, &got), 64);
  EXPECT_EQ(got, 10u);
  EXPECT_EQ(a.alloc_run(0, &got), 74);  // clamped to 1
  EXPECT_EQ(got, 1u);
  for (uint64_t s = 0; s < 75; s++) EXPECT_TRUE(a.is_allocated(s)) << s;
  EXPECT_EQ(a.used(), 75u);
  for (int i = 0; i < 3; i++) ASSERT_GE(a.alloc_run(64, &got), 0);  // up to 267
  // Word 1 (slots 64-127) freed whole: the next run takes it rather than
  // growing, and continues in it.
  for (uint64_t s = 64; s < 128; s++) a.free(s);
  EXPECT_EQ(a.alloc_run(40, &got), 64);
  EXPECT_EQ(got, 40u);
  EXPECT_EQ(a.alloc_run(40, &got), 104);
  EXPECT_EQ(got, 24u);  // the word's rest; slot 128 is taken
}

TEST(SlotAllocator, RunsGrowOnlyWhileHolesAreAtMostHalfTheUsedSlots) {
  SlotAllocator a(10000);
  uint64_t got = 0;
  for (int i = 0; i < 4; i++) ASSERT_GE(a.alloc_run(64, &got), 0);  // 256 slots
  // 90 scattered holes (no free word): 166 in use, 2 * 90 > 166.
  for (uint64_t s = 0; s < 180; s += 2) a.free(s);
  EXPECT_EQ(a.alloc_run(64, &got), -ENOSPC);
  EXPECT_EQ(a.used(), 166u);
  EXPECT_EQ(a.alloc(), 0);  // single slots still come, lowest first
  // 80 holes, 176 in use: room to grow again, at the high-water mark.
  for (uint64_t s = 2; s < 20; s += 2) ASSERT_EQ(a.alloc(), static_cast<int64_t>(s));
  EXPECT_EQ(a.alloc_run(64, &got), 256);
  EXPECT_EQ(got, 64u);
}

TEST(SlotAllocator, RunsStopAtCapacity) {
  SlotAllocator a(70);
  uint64_t got = 0;
  EXPECT_EQ(a.alloc_run(64, &got), 0);
  EXPECT_EQ(a.alloc_run(64, &got), 64);
  EXPECT_EQ(got, 6u);
  EXPECT_EQ(a.alloc_run(64, &got), -ENOSPC);
  EXPECT_EQ(a.alloc(), -ENOSPC);
  EXPECT_EQ(a.used(), 70u);
}

// Runs, single slots and frees mixed at random: every slot handed out is
// free in a reference set, every run is consecutive, the count matches.
TEST(SlotAllocator, RunsAndSinglesNeverHandOutAHeldSlot) {
  SlotAllocator a(20000);
  std::vector<uint64_t> held;
  std::set<uint64_t> in_use;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 20000; ++step) {
    uint64_t r = rng() % 10;
    if (r < 3 && !held.empty()) {
      size_t k = rng() % held.size();
      a.free(held[k]);
      in_use.erase(held[k]);
      held[k] = held.back();
      held.pop_back();
    } else if (r < 5) {
      int64_t s = a.alloc();
      ASSERT_GE(s, 0);
      ASSERT_TRUE(in_use.insert(static_cast<uint64_t>(s)).second) << "step " << step;
      held.push_back(static_cast<uint64_t>(s));
    } else {
      uint64_t got = 0;
      int64_t first = a.alloc_run(1 + rng() % 64, &got);
      if (first < 0) continue;
      ASSERT_GE(got, 1u);
      for (uint64_t k = 0; k < got; k++) {
        ASSERT_TRUE(in_use.insert(static_cast<uint64_t>(first) + k).second) << "step " << step;
        held.push_back(static_cast<uint64_t>(first) + k);
      }
    }
    ASSERT_EQ(a.used(), in_use.size());
  }
}

TEST(SlotAllocatorDeathTest, FreeOfUnallocatedSlotAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SlotAllocator a(16);
  EXPECT_EQ(a.alloc(), 0);
  EXPECT_DEATH(a.free(5), "unallocated slot 5");
  a.free(0);
  EXPECT_DEATH(a.free(0), "unallocated slot 0");
}

TEST(SlotAllocatorDeathTest, FreeOutOfRangeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SlotAllocator a(16);
  EXPECT_DEATH(a.free(16), "out-of-range slot 16");
}

// ---------------------------------------------------------------- every store

enum class Backend { kFileDisk, kFileShm, kPmemFile };

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kFileDisk: return "FileDisk";
    case Backend::kFileShm: return "FileShm";
    case Backend::kPmemFile: return "PmemFile";
  }
  return "?";
}

const char* backend_base(Backend b) { return b == Backend::kFileShm ? "/dev/shm" : "/var/tmp"; }

class StoreTest : public ::testing::TestWithParam<std::tuple<Backend, unsigned>> {
 protected:
  Backend backend() const { return std::get<0>(GetParam()); }
  unsigned depth() const { return std::get<1>(GetParam()); }

  void SetUp() override {
    dir_ = std::make_unique<TempDir>(backend_base(backend()));
    if (!dir_->ok()) GTEST_SKIP() << "cannot make a directory in " << backend_base(backend());
  }

  // Opens the store with `slots` slots; skips if this build has no PMem store.
  void open(uint64_t slots) {
    StoreOptions o;
    o.bytes = slots * kPage;
    o.remove_on_close = false;  // kept by path (the TempDir removes it), for the tests that truncate it
    int err = 1;
    if (backend() == Backend::kPmemFile) {
      o.path = dir_->path() + "/pmem.img";
      store_ = open_pmem_store(o, &err);
      if (err == -ENOTSUP) GTEST_SKIP() << "built without libpmem2";
    } else {
      o.path = dir_->path() + "/store.img";
      store_ = open_file_store(o, &err);
    }
    ASSERT_NE(store_, nullptr) << "err " << err << " (" << strerror(-err) << ")";
    ASSERT_EQ(err, 0);
    ch_ = store_->open_channel(depth());
    ASSERT_NE(ch_, nullptr);
    ASSERT_EQ(ch_->depth(), depth());
  }

  void TearDown() override {
    ch_.reset();
    store_.reset();
  }

  size_t batch() const { return 3 * depth() + 1; }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StoreChannel> ch_;
};

// Opens the fixture's store; returns from the test if it was skipped.
#define OPEN_STORE(slots)                     \
  do {                                        \
    ASSERT_NO_FATAL_FAILURE(open(slots));     \
    if (::testing::Test::IsSkipped()) return; \
  } while (0)

TEST_P(StoreTest, RoundTripInBatchesLargerThanDepth) {
  OPEN_STORE(512);
  std::vector<uint64_t> slots = alloc_n(store_.get(), 300);
  ASSERT_EQ(slots.size(), 300u);
  EXPECT_EQ(store_->used_slots(), 300u);
  ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), slots, 1, batch()));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), slots, 1, batch()));
  // Overwrite half: the new generation is read back, the rest is unchanged.
  std::vector<uint64_t> first(slots.begin(), slots.begin() + 150);
  std::vector<uint64_t> rest(slots.begin() + 150, slots.end());
  ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), first, 2, batch()));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), first, 2, 7));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), rest, 1, 1));
}

TEST_P(StoreTest, RandomSlotOrder) {
  OPEN_STORE(256);
  std::vector<uint64_t> slots = alloc_n(store_.get(), 256);
  ASSERT_EQ(slots.size(), 256u);
  std::mt19937_64 rng(7);
  std::shuffle(slots.begin(), slots.end(), rng);
  ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), slots, 3, batch()));
  std::shuffle(slots.begin(), slots.end(), rng);
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), slots, 3, batch() + 5));
}

TEST_P(StoreTest, FillingUpIsEnospcAndKeepsEarlierData) {
  OPEN_STORE(40);
  EXPECT_EQ(store_->capacity_slots(), 40u);
  std::vector<uint64_t> slots;
  for (;;) {
    int64_t s = store_->alloc_slot();
    if (s < 0) {
      EXPECT_EQ(s, -ENOSPC);
      break;
    }
    slots.push_back(static_cast<uint64_t>(s));
    ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), {slots.back()}, 5, 1));
  }
  EXPECT_EQ(slots.size(), 40u);
  EXPECT_EQ(store_->used_slots(), 40u);
  EXPECT_EQ(store_->alloc_slot(), -ENOSPC);
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), slots, 5, batch()));
  store_->free_slot(17);
  EXPECT_EQ(store_->alloc_slot(), 17);
}

TEST_P(StoreTest, OutOfRangeSlotIsEinvalOthersSucceed) {
  OPEN_STORE(8);
  PageBuf bufs(3);
  std::vector<uint64_t> slots = alloc_n(store_.get(), 2);
  fill_page(bufs.page(0), slots[0], 1);
  fill_page(bufs.page(2), slots[1], 1);
  StoreIo ios[3] = {{slots[0], bufs.page(0), 9}, {8, bufs.page(1), 9}, {slots[1], bufs.page(2), 9}};
  EXPECT_EQ(ch_->write_pages(ios, 3), -EINVAL);
  EXPECT_EQ(ios[0].result, 0);
  EXPECT_EQ(ios[1].result, -EINVAL);
  EXPECT_EQ(ios[2].result, 0);
  EXPECT_EQ(ch_->read_pages(ios, 3), -EINVAL);
  EXPECT_EQ(check_page(bufs.page(2), slots[1], 1), "");
  EXPECT_EQ(ch_->read_pages(ios, 0), 0);
}

TEST_P(StoreTest, TruncatedBackingFileReadsFailWithEio) {
  OPEN_STORE(64);
  std::vector<uint64_t> slots = alloc_n(store_.get(), 48);
  ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), slots, 1, batch()));
  ASSERT_EQ(truncate(store_->path().c_str(), 0), 0) << strerror(errno);
  PageBuf bufs(slots.size());
  std::vector<StoreIo> ios;
  for (size_t i = 0; i < slots.size(); ++i) ios.push_back({slots[i], bufs.page(i), 9});
  EXPECT_EQ(ch_->read_pages(ios.data(), ios.size()), -EIO);
  for (const StoreIo& io : ios) EXPECT_EQ(io.result, -EIO) << "slot " << io.slot;
}

TEST_P(StoreTest, KindModePathAndRemoveOnClose) {
  OPEN_STORE(16);
  bool pmem = backend() == Backend::kPmemFile;
  EXPECT_STREQ(store_->kind(), pmem ? "pmem" : "file");
  EXPECT_FALSE(store_->mode().empty());
  EXPECT_EQ(store_->path().rfind(dir_->path() + "/", 0), 0u) << store_->path();
  struct stat st;
  ASSERT_EQ(stat(store_->path().c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 17 * kPage) << "16 slots and mtier's header page";
  EXPECT_LE(st.st_blocks, static_cast<blkcnt_t>(kPage / 512))
      << "a new store file should be sparse but for its header";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ch_.reset();
  store_.reset();
  EXPECT_EQ(dir_->entries(), 1u) << "remove_on_close=false keeps the file";
}

TEST_P(StoreTest, ChannelsOnTwoThreads) {
  OPEN_STORE(256);
  auto run = [this](uint64_t gen) {
    std::unique_ptr<StoreChannel> ch = store_->open_channel(depth());
    ASSERT_NE(ch, nullptr);
    std::vector<uint64_t> slots = alloc_n(store_.get(), 100);
    ASSERT_NO_FATAL_FAILURE(write_slots(ch.get(), slots, gen, batch()));
    ASSERT_NO_FATAL_FAILURE(read_verify(ch.get(), slots, gen, batch()));
  };
  std::thread t1(run, 11), t2(run, 12);
  t1.join();
  t2.join();
  EXPECT_EQ(store_->used_slots(), 200u);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest,
                         ::testing::Combine(::testing::Values(Backend::kFileDisk, Backend::kFileShm,
                                                              Backend::kPmemFile),
                                            ::testing::Values(1u, 64u)),
                         [](const ::testing::TestParamInfo<StoreTest::ParamType>& info) {
                           return std::string(backend_name(std::get<0>(info.param))) + "_depth" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------- file store

std::unique_ptr<Store> open_file(const std::string& path, uint64_t bytes, int* err,
                                 bool remove = true) {
  StoreOptions o;
  o.path = path;
  o.bytes = bytes;
  o.remove_on_close = remove;
  return open_file_store(o, err);
}

TEST(FileStore, DiskFileIsOpenedODirect) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "/var/tmp is tmpfs here";
  int err = 1;
  auto store = open_file(dir.path(), 64 * kPage, &err);
  ASSERT_NE(store, nullptr);
  auto* fs = dynamic_cast<FileStore*>(store.get());
  ASSERT_NE(fs, nullptr);
  EXPECT_EQ(store->mode(), "O_DIRECT");
  EXPECT_TRUE(fs->direct_io());
  int flags = fcntl(fs->fd(), F_GETFL);
  ASSERT_GE(flags, 0);
  EXPECT_NE(flags & O_DIRECT, 0);
  EXPECT_EQ(store->path().find(dir.path() + "/mtier-" + std::to_string(getpid()) + "-"), 0u);
}

// Where tmpfs accepts O_DIRECT (Linux >= 6.6) the store says the pages stay in
// memory; where it refuses, the store falls back to buffered I/O.
TEST(FileStore, ShmStoreSaysHowItIsBacked) {
  TempDir dir("/dev/shm");
  if (!dir.ok()) GTEST_SKIP() << "no /dev/shm";
  int err = 1;
  auto store = open_file(dir.path(), 64 * kPage, &err);
  ASSERT_NE(store, nullptr);
  auto* fs = dynamic_cast<FileStore*>(store.get());
  int flags = fcntl(fs->fd(), F_GETFL);
  if (fs->direct_io()) {
    EXPECT_EQ(store->mode(), "O_DIRECT (tmpfs: pages stay in memory)");
    EXPECT_NE(flags & O_DIRECT, 0);
  } else {
    EXPECT_EQ(store->mode(), "buffered (O_DIRECT unsupported on tmpfs)");
    EXPECT_EQ(flags & O_DIRECT, 0);
  }
}

int refuse_direct(int) { return -EINVAL; }

TEST(FileStore, BufferedFallbackWhenODirectIsRefused) {
  TempDir dir("/dev/shm");
  if (!dir.ok()) GTEST_SKIP() << "no /dev/shm";
  StoreOptions o;
  o.path = dir.path();
  o.bytes = 128 * kPage;
  int err = 1;
  auto store = open_file_store_with(o, FileStoreSys{refuse_direct}, &err);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(err, 0);
  auto* fs = dynamic_cast<FileStore*>(store.get());
  EXPECT_FALSE(fs->direct_io());
  EXPECT_EQ(store->mode(), "buffered (O_DIRECT unsupported on tmpfs)");
  EXPECT_EQ(fcntl(fs->fd(), F_GETFL) & O_DIRECT, 0);
  auto ch = store->open_channel(8);
  std::vector<uint64_t> slots = alloc_n(store.get(), 128);
  std::shuffle(slots.begin(), slots.end(), std::mt19937_64(3));
  ASSERT_NO_FATAL_FAILURE(write_slots(ch.get(), slots, 4, 20));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch.get(), slots, 4, 13));
}

// The child of RamfsRefusesODirect, in its own mount namespace: 0 passed,
// 77 skipped, 1 failed; the reason goes to fd `out`.
int ramfs_child(const std::string& dir, int out) {
  auto say = [out](const std::string& s, int code) {
    if (write(out, s.data(), s.size()) < 0) return 1;
    return code;
  };
  if (unshare(CLONE_NEWNS) != 0) return say(std::string("unshare: ") + strerror(errno), 77);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return say(std::string("mount private: ") + strerror(errno), 77);
  if (mount("ramfs", dir.c_str(), "ramfs", 0, nullptr) != 0)
    return say(std::string("mount ramfs: ") + strerror(errno), 77);
  int err = 1;
  auto store = open_file(dir, 32 * kPage, &err);
  if (!store) return say("open failed: " + std::to_string(err), 1);
  if (store->mode() != "buffered (O_DIRECT unsupported on ramfs)")
    return say("mode: " + store->mode(), 1);
  auto ch = store->open_channel(4);
  PageBuf bufs(16);
  std::vector<StoreIo> ios;
  for (uint64_t i = 0; i < 16; ++i) {
    uint64_t slot = static_cast<uint64_t>(store->alloc_slot());
    fill_page(bufs.page(i), slot, 9);
    ios.push_back({slot, bufs.page(i), 1});
  }
  if (ch->write_pages(ios.data(), ios.size()) != 0) return say("write failed", 1);
  for (uint64_t i = 0; i < 16; ++i) memset(bufs.page(i), 0, kPage);
  if (ch->read_pages(ios.data(), ios.size()) != 0) return say("read failed", 1);
  for (const StoreIo& io : ios)
    if (!check_page(io.buf, io.slot, 9).empty()) return say(check_page(io.buf, io.slot, 9), 1);
  return 0;
}

TEST(FileStore, RamfsRefusesODirectAndTheStoreFallsBack) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting ramfs needs root";
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  int pfd[2];
  ASSERT_EQ(pipe(pfd), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pfd[0]);
    _exit(ramfs_child(dir.path(), pfd[1]));
  }
  close(pfd[1]);
  std::string msg;
  char buf[256];
  for (ssize_t got; (got = read(pfd[0], buf, sizeof buf)) > 0;) msg.append(buf, size_t(got));
  close(pfd[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died: status " << status;
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot mount ramfs: " << msg;
  EXPECT_EQ(WEXITSTATUS(status), 0) << msg;
}

TEST(FileStore, SizeIsRequiredAndRoundedDown) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  int err = 0;
  EXPECT_EQ(open_file(dir.path(), 0, &err), nullptr);
  EXPECT_EQ(err, -EINVAL);
  EXPECT_EQ(open_file(dir.path(), 4095, &err), nullptr);
  EXPECT_EQ(err, -EINVAL);
  EXPECT_EQ(dir.entries(), 0u) << "a failed open must not leave a file";
  auto store = open_file(dir.path(), 3 * kPage + 100, &err);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->capacity_slots(), 3u);
}

TEST(FileStore, MissingDirectoryIsEnoent) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  int err = 0;
  EXPECT_EQ(open_file(dir.path() + "/no/such/file", kPage, &err), nullptr);
  EXPECT_EQ(err, -ENOENT);
}

TEST(FileStore, FilePathIsCreatedAndRemovedOrKept) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  std::string path = dir.path() + "/store.img";
  int err = 1;
  // Created O_EXCL, mode 0600, and unlinked at once: nothing is left behind
  // even by a process that never closes the store.
  auto store = open_file(path, 8 * kPage, &err);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->path(), path + " (unlinked)");
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "created file left in place";
  struct stat st;
  ASSERT_EQ(fstat(static_cast<FileStore*>(store.get())->fd(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  store.reset();
  store = open_file(path, 8 * kPage, &err, /*remove=*/false);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->path(), path);
  store.reset();
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << "file removed despite remove_on_close=false";
  // A file that is an mtier store already (its header says so) is taken
  // again, resized, and never removed: this store did not create it.
  store = open_file(path, 16 * kPage, &err);
  ASSERT_NE(store, nullptr) << strerror(-err);
  EXPECT_EQ(store->capacity_slots(), 16u);
  store.reset();
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
}

// Writes `text` to a new file at `path` with `mode`.
void write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ASSERT_EQ(fchmod(fd, mode), 0);
  close(fd);
}

std::string read_whole(const std::string& path) {
  std::string out;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return "(unreadable)";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

// An existing file mtier did not make a store is never overwritten nor
// grown: refused with -EEXIST, its bytes as they were.
TEST(FileStore, ExistingNonEmptyFileIsRefusedUntouched) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  std::string path = dir.path() + "/precious.db";
  ASSERT_NO_FATAL_FAILURE(write_file(path, "precious data\n"));
  int err = 0;
  EXPECT_EQ(open_file(path, 64 * kPage, &err), nullptr);
  EXPECT_EQ(err, -EEXIST);
  EXPECT_EQ(read_whole(path), "precious data\n");
}

// An empty file of this user's is taken, made private, marked as a store
// (so that the next run takes it again) and kept.
TEST(FileStore, EmptyFileIsTakenMadePrivateAndKept) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  std::string path = dir.path() + "/store.img";
  ASSERT_NO_FATAL_FAILURE(write_file(path, "", 0644));
  int err = 1;
  auto store = open_file(path, 8 * kPage, &err);
  ASSERT_NE(store, nullptr) << strerror(-err);
  EXPECT_EQ(store->path(), path);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  store.reset();
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
  store = open_file(path, 4 * kPage, &err);
  EXPECT_NE(store, nullptr) << "an mtier store file is taken again: " << strerror(-err);
}

// A symbolic link to a file (planted in a sticky directory, say) is not
// followed; one to a directory is.
TEST(FileStore, SymlinkToAFileIsRefusedToADirectoryFollowed) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  std::string target = dir.path() + "/target", link = dir.path() + "/store.img";
  ASSERT_NO_FATAL_FAILURE(write_file(target, "", 0600));
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  int err = 0;
  EXPECT_EQ(open_file(link, 8 * kPage, &err), nullptr);
  EXPECT_EQ(err, -ELOOP);
  EXPECT_EQ(read_whole(target), "");
  std::string dlink = dir.path() + "/dir";
  ASSERT_EQ(symlink(dir.path().c_str(), dlink.c_str()), 0);
  auto store = open_file(dlink, 8 * kPage, &err);
  ASSERT_NE(store, nullptr) << strerror(-err);
  EXPECT_NE(store->path().find("(unlinked)"), std::string::npos) << store->path();
}

// Another user's file (pre-created in /tmp for root to write its memory
// into) is refused, even if it is empty.
TEST(FileStore, FileOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  std::string path = dir.path() + "/store.img";
  ASSERT_NO_FATAL_FAILURE(write_file(path, "", 0666));
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0) << strerror(errno);
  int err = 0;
  EXPECT_EQ(open_file(path, 8 * kPage, &err), nullptr);
  EXPECT_EQ(err, -EPERM);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
}

// A store_bytes the filesystem has no room for is refused at open, naming
// both sizes; the automatic size (bytes_given=false) only warns.
TEST(FileStore, StoreLargerThanTheFreeSpaceIsRefusedWhenAskedFor) {
  TempDir dir("/dev/shm");
  if (!dir.ok()) GTEST_SKIP() << "no /dev/shm";
  struct statvfs sv;
  ASSERT_EQ(statvfs(dir.path().c_str(), &sv), 0);
  uint64_t bytes = (static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize + (1ull << 30)) & ~(kPage - 1);
  StoreOptions o;
  o.path = dir.path();
  o.bytes = bytes;
  int err = 0;
  log::capture_errors(true);
  EXPECT_EQ(open_file_store(o, &err), nullptr);
  EXPECT_EQ(err, -ENOSPC);
  std::string line = log::captured_error();
  log::capture_errors(false);
  // The free space is printed in the unit that fits it (MiB in a small VM).
  EXPECT_NE(line.find(" free, the store is"), std::string::npos) << line;
  EXPECT_NE(line.find("store_bytes"), std::string::npos) << line;
  EXPECT_EQ(dir.entries(), 0u);
  o.bytes_given = false;
  auto store = open_file_store(o, &err);
  EXPECT_NE(store, nullptr) << strerror(-err);
}

// ---------------------------------------------------------------- block devices

TEST(DeviceSignature, NamesFilesystemsAndPartitionTablesNotZeros) {
  std::vector<unsigned char> buf(kSignatureBytes, 0);
  EXPECT_EQ(device_signature(buf.data(), buf.size()), nullptr);
  buf[0x438] = 0x53;
  buf[0x439] = 0xef;
  EXPECT_STREQ(device_signature(buf.data(), buf.size()), "an ext2/3/4 filesystem");
  std::fill(buf.begin(), buf.end(), 0);
  memcpy(&buf[0x200], "EFI PART", 8);
  EXPECT_STREQ(device_signature(buf.data(), buf.size()), "a GPT partition table");
  std::fill(buf.begin(), buf.end(), 0);
  buf[0x1fe] = 0x55;
  buf[0x1ff] = 0xaa;
  EXPECT_NE(device_signature(buf.data(), buf.size()), nullptr);
  memcpy(&buf[0xff6], "SWAPSPACE2", 10);
  EXPECT_STREQ(device_signature(buf.data(), buf.size()), "swap space");
  EXPECT_EQ(device_signature(buf.data(), 0x100), nullptr) << "a short read sees only what it has";
}

// A loop device over a 16 MiB image in a TempDir, detached at the end.
// Needs root and a loop driver; ok() false otherwise (why in why()).
class LoopDevice {
 public:
  LoopDevice() : dir_("/var/tmp") {
    if (geteuid() != 0) {
      why_ = "loop devices need root";
      return;
    }
    std::string img = dir_.path() + "/disk.img";
    if (truncate_new(img) != 0) return;
    FILE* p = popen(("losetup -f --show " + img + " 2>/dev/null").c_str(), "r");
    char line[128] = {};
    if (p && fgets(line, sizeof line, p)) dev_ = std::string(line, strcspn(line, "\n"));
    if (p) pclose(p);
    if (dev_.empty()) why_ = "losetup failed (no loop driver?)";
  }
  ~LoopDevice() {
    if (!mnt_.empty()) (void)umount(mnt_.c_str());
    if (!dev_.empty()) (void)!system(("losetup -d " + dev_).c_str());
  }
  bool ok() const { return !dev_.empty(); }
  const std::string& why() const { return why_; }
  const std::string& dev() const { return dev_; }
  bool mkfs() { return system(("mkfs.ext4 -q " + dev_ + " >/dev/null 2>&1").c_str()) == 0; }
  bool mount() {
    std::string m = dir_.path() + "/mnt";
    if (mkdir(m.c_str(), 0700) != 0 || ::mount(dev_.c_str(), m.c_str(), "ext4", 0, nullptr) != 0)
      return false;
    mnt_ = m;
    return true;
  }

 private:
  int truncate_new(const std::string& img) {
    int fd = open(img.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, 16 << 20) != 0) {
      why_ = "cannot make the image";
      if (fd >= 0) close(fd);
      return -1;
    }
    close(fd);
    return 0;
  }
  TempDir dir_;
  std::string dev_, mnt_, why_;
};

std::unique_ptr<Store> open_device(const std::string& dev, bool force, int* err) {
  StoreOptions o;
  o.path = dev;
  o.force = force;
  return open_file_store(o, err);
}

// A blank device is taken at its own size.
TEST(FileStore, BlankBlockDeviceIsTaken) {
  LoopDevice loop;
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  int err = 1;
  auto store = open_device(loop.dev(), false, &err);
  ASSERT_NE(store, nullptr) << strerror(-err);
  EXPECT_EQ(store->capacity_slots(), (16u << 20) / kPage);
}

// A device holding a filesystem is refused, naming it, unless forced.
TEST(FileStore, BlockDeviceWithAFilesystemIsRefusedUnlessForced) {
  LoopDevice loop;
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  if (!loop.mkfs()) GTEST_SKIP() << "mkfs.ext4 failed or is missing";
  int err = 0;
  log::capture_errors(true);
  EXPECT_EQ(open_device(loop.dev(), false, &err), nullptr);
  std::string line = log::captured_error();
  log::capture_errors(false);
  EXPECT_EQ(err, -EEXIST);
  EXPECT_NE(line.find("holds an ext2/3/4 filesystem"), std::string::npos) << line;
  EXPECT_NE(line.find("store_force"), std::string::npos) << line;
  auto store = open_device(loop.dev(), true, &err);
  EXPECT_NE(store, nullptr) << strerror(-err);
}

// A mounted device is refused, forced or not: its filesystem stays intact.
TEST(FileStore, MountedBlockDeviceIsRefusedEvenForced) {
  LoopDevice loop;
  if (!loop.ok()) GTEST_SKIP() << loop.why();
  if (!loop.mkfs()) GTEST_SKIP() << "mkfs.ext4 failed or is missing";
  if (!loop.mount()) GTEST_SKIP() << "cannot mount the loop device: " << strerror(errno);
  int err = 0;
  EXPECT_EQ(open_device(loop.dev(), true, &err), nullptr);
  EXPECT_EQ(err, -EBUSY);
}

TEST(FileStore, SecondStoreOnTheSameFileIsEbusy) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  std::string path = dir.path() + "/store.img";
  int err = 1;
  auto first = open_file(path, 8 * kPage, &err, /*remove=*/false);  // kept under its name
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(open_file(path, 8 * kPage, &err), nullptr);
  EXPECT_EQ(err, -EBUSY);
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << "the failed open removed the first store's file";
  EXPECT_EQ(open_file("", 8 * kPage, &err), nullptr);
  EXPECT_EQ(err, -EINVAL);
}

TEST(FileStore, DepthsFromOneTo256) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  int err = 1;
  auto store = open_file(dir.path(), 1024 * kPage, &err);
  ASSERT_NE(store, nullptr);
  std::vector<uint64_t> slots = alloc_n(store.get(), 1024);
  uint64_t gen = 100;
  for (unsigned depth : {1u, 2u, 7u, 32u, 256u}) {
    auto ch = store->open_channel(depth);
    ASSERT_NE(ch, nullptr) << "depth " << depth;
    ASSERT_EQ(ch->depth(), depth);
    auto* fc = dynamic_cast<FileChannel*>(ch.get());
    EXPECT_TRUE(fc->registered()) << "staging buffers not registered at depth " << depth;
    ASSERT_NO_FATAL_FAILURE(write_slots(ch.get(), slots, ++gen, 2 * depth + 3));
    ASSERT_NO_FATAL_FAILURE(read_verify(ch.get(), slots, gen, depth + 1));
  }
  auto ch = store->open_channel(0);
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->depth(), 1u);
  EXPECT_EQ(ch->direct(0), nullptr);
  EXPECT_EQ(ch->buffer(1), nullptr);
}

// A real ring whose completions and submissions fail on demand.
class FlakyUring : public sys::Uring {
 public:
  int eagain_completions = 0;  // completions to report as -EAGAIN
  int eintr_submits = 0;       // submissions to fail with -EINTR
  int fatal_after = -1;        // submissions that succeed before -EFAULT forever
  std::vector<unsigned> lengths;  // bytes of each transfer prepared

  int prep_read(int fd, void* buf, unsigned len, uint64_t off, int fixed_index,
                uint64_t user_data) override {
    lengths.push_back(len);
    return Uring::prep_read(fd, buf, len, off, fixed_index, user_data);
  }
  int prep_write(int fd, const void* buf, unsigned len, uint64_t off, int fixed_index,
                 uint64_t user_data) override {
    lengths.push_back(len);
    return Uring::prep_write(fd, buf, len, off, fixed_index, user_data);
  }

  int submit_and_wait(unsigned wait_nr) override {
    if (eintr_submits > 0 && eintr_submits--) return -EINTR;
    if (fatal_after == 0) return -EFAULT;
    if (fatal_after > 0) --fatal_after;
    return Uring::submit_and_wait(wait_nr);
  }
  unsigned reap(sys::UringCompletion* out, unsigned max) override {
    unsigned n = Uring::reap(out, max);
    for (unsigned k = 0; k < n; ++k)
      if (eagain_completions > 0 && eagain_completions--) out[k].res = -EAGAIN;
    return n;
  }
};

class FileChannelFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    int err = 1;
    store_ = open_file(dir_.path(), 64 * kPage, &err);
    ASSERT_NE(store_, nullptr);
    slots_ = alloc_n(store_.get(), 40);
    auto* fs = dynamic_cast<FileStore*>(store_.get());
    auto ring = std::make_unique<FlakyUring>();
    ring_ = ring.get();
    ch_ = std::make_unique<FileChannel>(fs->fd(), store_->capacity_slots(), std::move(ring));
    ASSERT_EQ(ch_->init(4, store_->path()), 0);
  }

  TempDir dir_{"/var/tmp"};
  std::unique_ptr<Store> store_;
  std::vector<uint64_t> slots_;
  FlakyUring* ring_ = nullptr;
  std::unique_ptr<FileChannel> ch_;
};

TEST_F(FileChannelFaults, EagainCompletionsAndEintrSubmitsAreRetried) {
  ring_->eagain_completions = 25;
  ring_->eintr_submits = 5;
  ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), slots_, 1, 10));
  ring_->eagain_completions = 25;
  ring_->eintr_submits = 5;
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), slots_, 1, 17));
  EXPECT_EQ(ring_->eagain_completions, 0);
}

// Consecutive slots from consecutive staging buffers go as one transfer
// (the evictor's fresh slots, a walk read back); anything else page by page.
// Every page reads back what was written, merged or not.
TEST_F(FileChannelFaults, ConsecutiveSlotsFromConsecutiveBuffersAreOneTransfer) {
  std::vector<StoreIo> ios;
  for (unsigned k = 0; k < 4; ++k) {
    fill_page(ch_->buffer(k), slots_[k], 5);
    ios.push_back({slots_[k], ch_->buffer(k), 9});
  }
  ASSERT_EQ(ch_->write_pages(ios.data(), ios.size()), 0);
  EXPECT_EQ(ring_->lengths, (std::vector<unsigned>{4 * kPage}));
  // Slots out of order, and one buffer out of order: not merged.
  ring_->lengths.clear();
  std::vector<StoreIo> mixed = {{slots_[10], ch_->buffer(0), 9}, {slots_[12], ch_->buffer(1), 9},
                                {slots_[13], ch_->buffer(3), 9}, {slots_[14], ch_->buffer(2), 9}};
  for (StoreIo& io : mixed) fill_page(io.buf, io.slot, 6);
  ASSERT_EQ(ch_->write_pages(mixed.data(), mixed.size()), 0);
  EXPECT_EQ(ring_->lengths, (std::vector<unsigned>(4, kPage)));
  for (const StoreIo& io : mixed) EXPECT_EQ(io.result, 0);
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), {slots_[0], slots_[1], slots_[2], slots_[3]}, 5, 1));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), {slots_[10], slots_[12], slots_[13], slots_[14]}, 6, 4));
  // Read back merged, into the staging buffers.
  ring_->lengths.clear();
  for (unsigned k = 0; k < 4; ++k) {
    memset(ch_->buffer(k), 0, kPage);
    ios[k] = {slots_[k], ch_->buffer(k), 9};
  }
  ASSERT_EQ(ch_->read_pages(ios.data(), ios.size()), 0);
  EXPECT_EQ(ring_->lengths, (std::vector<unsigned>{4 * kPage}));
  for (const StoreIo& io : ios) EXPECT_EQ(check_page(io.buf, io.slot, 5), "");
}

// An -EAGAIN completion of a merged transfer queues the whole transfer again.
TEST_F(FileChannelFaults, AMergedTransferIsRetriedWhole) {
  ring_->eagain_completions = 2;
  std::vector<StoreIo> ios;
  for (unsigned k = 0; k < 4; ++k) {
    fill_page(ch_->buffer(k), slots_[20 + k], 8);
    ios.push_back({slots_[20 + k], ch_->buffer(k), 9});
  }
  ASSERT_EQ(ch_->write_pages(ios.data(), ios.size()), 0);
  EXPECT_EQ(ring_->lengths, (std::vector<unsigned>(3, 4 * kPage)));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), {slots_[20], slots_[21], slots_[22], slots_[23]}, 8, 3));
}

TEST_F(FileChannelFaults, EndlessEagainEndsWithEagainNotAHang) {
  ring_->eagain_completions = 1 << 30;
  PageBuf bufs(10);
  std::vector<StoreIo> ios;
  for (size_t i = 0; i < 10; ++i) ios.push_back({slots_[i], bufs.page(i), 9});
  EXPECT_EQ(ch_->read_pages(ios.data(), ios.size()), -EAGAIN);
  for (const StoreIo& io : ios) EXPECT_EQ(io.result, -EAGAIN);
}

TEST_F(FileChannelFaults, DeadRingFailsEveryIoThenAndLater) {
  ring_->fatal_after = 2;
  PageBuf bufs(20);
  std::vector<StoreIo> ios;
  for (size_t i = 0; i < 20; ++i) {  // every other slot: 20 transfers, not one merged
    fill_page(bufs.page(i), slots_[2 * i], 1);
    ios.push_back({slots_[2 * i], bufs.page(i), 9});
  }
  EXPECT_EQ(ch_->write_pages(ios.data(), ios.size()), -EFAULT);
  size_t failed = 0;
  for (const StoreIo& io : ios) {
    EXPECT_TRUE(io.result == 0 || io.result == -EFAULT) << io.result;
    failed += io.result == -EFAULT;
  }
  EXPECT_GE(failed, 20u - 2 * 4);
  EXPECT_EQ(ch_->read_pages(ios.data(), 3), -EFAULT);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(ios[i].result, -EFAULT);
  ch_.reset();  // I/Os the kernel took may still read bufs until the ring is gone
}

// ---------------------------------------------------------------- pmem store

std::unique_ptr<Store> open_pmem(const std::string& path, uint64_t bytes, int* err) {
  StoreOptions o;
  o.path = path;
  o.bytes = bytes;
  return open_pmem_store(o, err);
}

TEST(PmemStore, RegularFileIsPageGranularityAndDirectReadsTheMapping) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  int err = 1;
  auto store = open_pmem(dir.path() + "/pmem.img", 32 * kPage, &err);
  if (err == -ENOTSUP) GTEST_SKIP() << "built without libpmem2";
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->mode(), "page granularity file (not DAX)");
  EXPECT_EQ(store->capacity_slots(), 32u);
  auto ch = store->open_channel(4);
  std::vector<uint64_t> slots = alloc_n(store.get(), 32);
  ASSERT_NO_FATAL_FAILURE(write_slots(ch.get(), slots, 8, 10));
  for (uint64_t s : slots) {
    ASSERT_NE(ch->direct(s), nullptr);
    EXPECT_EQ(check_page(ch->direct(s), s, 8), "");
  }
  EXPECT_EQ(ch->direct(32), nullptr);
}

TEST(PmemStore, DirectoryGetsANewFileAndSizeIsRequired) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  int err = 1;
  auto store = open_pmem(dir.path(), 0, &err);
  if (err == -ENOTSUP) GTEST_SKIP() << "built without libpmem2";
  EXPECT_EQ(store, nullptr);
  EXPECT_EQ(err, -EINVAL);
  EXPECT_EQ(dir.entries(), 0u);
  store = open_pmem(dir.path(), 8 * kPage, &err);
  ASSERT_NE(store, nullptr);
  // A scratch file in a directory is unlinked at once: nothing is left
  // behind even if the process never closes the store.
  EXPECT_EQ(dir.entries(), 0u);
  EXPECT_NE(store->path().find("(unlinked)"), std::string::npos) << store->path();
  store.reset();
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(FileStore, DirectoryGetsAnUnlinkedScratchFile) {
  TempDir dir("/var/tmp");
  ASSERT_TRUE(dir.ok());
  StoreOptions o;
  o.path = dir.path();
  o.bytes = 64 * kPage;
  int err = 1;
  auto store = open_file_store(o, &err);
  ASSERT_NE(store, nullptr) << strerror(-err);
  EXPECT_EQ(dir.entries(), 0u);
  EXPECT_EQ(store->path().rfind(dir.path() + "/mtier-", 0), 0u) << store->path();
  EXPECT_NE(store->path().find("(unlinked)"), std::string::npos) << store->path();
  auto ch = store->open_channel(4);
  ASSERT_NE(ch, nullptr);
  int64_t slot = store->alloc_slot();
  ASSERT_GE(slot, 0);
  memset(ch->buffer(0), 0x5a, kPage);
  StoreIo io{static_cast<uint64_t>(slot), ch->buffer(0), 1};
  ASSERT_EQ(ch->write_pages(&io, 1), 0);
  memset(ch->buffer(0), 0, kPage);
  ASSERT_EQ(ch->read_pages(&io, 1), 0);
  EXPECT_EQ(static_cast<unsigned char*>(ch->buffer(0))[kPage - 1], 0x5a);
}

// ---------------------------------------------------------------- throughput

class StoreThroughput : public StoreTest {};

// Not a benchmark: prints MB/s of 4 KiB random writes, then reads, in batches of 256.
TEST_P(StoreThroughput, RandomPages) {
  constexpr size_t kSlots = 8192;  // 32 MiB
  OPEN_STORE(kSlots);
  std::vector<uint64_t> slots = alloc_n(store_.get(), kSlots);
  std::shuffle(slots.begin(), slots.end(), std::mt19937_64(1));
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(write_slots(ch_.get(), slots, 1, 256));
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(read_verify(ch_.get(), slots, 1, 256));
  auto t2 = std::chrono::steady_clock::now();
  double mb = kSlots * kPage / 1e6;
  auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  printf("    %s (%s), depth %u: write %.0f MB/s, read+verify %.0f MB/s\n", backend_name(backend()),
         store_->mode().c_str(), depth(), mb / secs(t1 - t0), mb / secs(t2 - t1));
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreThroughput,
                         ::testing::Combine(::testing::Values(Backend::kFileDisk, Backend::kFileShm,
                                                              Backend::kPmemFile),
                                            ::testing::Values(kFileStoreDefaultDepth)),
                         [](const ::testing::TestParamInfo<StoreTest::ParamType>& info) {
                           return std::string(backend_name(std::get<0>(info.param)));
                         });

// The file store on a real (or emulated) NVMe block device: its own size,
// O_DIRECT, checksummed pages in and out. `make check-vm` names the device in
// MTIER_TEST_NVME; elsewhere there is no NVMe disk to spare, and it skips.
TEST(FileStore, NvmeBlockDevice) {
  const char* dev = getenv("MTIER_TEST_NVME");
  if (!dev || !*dev) GTEST_SKIP() << "MTIER_TEST_NVME names no NVMe block device (make check-vm sets it)";
  StoreOptions o;
  o.path = dev;
  int err = 1;
  auto store = open_file_store(o, &err);
  ASSERT_NE(store, nullptr) << dev << ": " << strerror(-err);
  EXPECT_EQ(store->mode().rfind("O_DIRECT", 0), 0u) << store->mode();
  EXPECT_GE(store->capacity_slots(), 1024u);
  auto ch = store->open_channel(32);
  ASSERT_NE(ch, nullptr);
  std::vector<uint64_t> slots = alloc_n(store.get(), 1024);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(3));
  ASSERT_NO_FATAL_FAILURE(write_slots(ch.get(), slots, 21, 100));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch.get(), slots, 21, 100));
}

// A PMem store opened on `path` works as `mode` says: cache-line
// granularity (no page cache), data in and out, and direct() pointing at
// the slot's bytes in the mapping.
void pmem_round_trip(const std::string& path, uint64_t bytes, const char* mode, uint64_t gen) {
  StoreOptions o;
  o.path = path;
  o.bytes = bytes;
  int err = 1;
  auto store = open_pmem_store(o, &err);
  if (err == -ENOTSUP) GTEST_SKIP() << "built without libpmem2";
  ASSERT_NE(store, nullptr) << path << ": " << strerror(-err);
  EXPECT_EQ(store->mode(), mode);
  EXPECT_GE(store->capacity_slots(), 1024u);
  auto ch = store->open_channel(32);
  ASSERT_NE(ch, nullptr);
  std::vector<uint64_t> slots = alloc_n(store.get(), 1024);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(gen));
  ASSERT_NO_FATAL_FAILURE(write_slots(ch.get(), slots, gen, 100));
  ASSERT_NO_FATAL_FAILURE(read_verify(ch.get(), slots, gen, 100));
  ASSERT_NE(ch->direct(slots[0]), nullptr);
  EXPECT_EQ(check_page(ch->direct(slots[0]), slots[0], gen), "");
}

// The PMem store on a device DAX (make check-vm sets MTIER_TEST_PMEM to
// /dev/daxN.M).
TEST(PmemStore, DeviceDax) {
  const char* dev = getenv("MTIER_TEST_PMEM");
  if (!dev || strncmp(dev, "/dev/dax", 8) != 0)
    GTEST_SKIP() << "MTIER_TEST_PMEM names no device DAX (make check-vm sets it)";
  pmem_round_trip(dev, 0, "devdax", 22);
}

// The PMem store on a directory of a filesystem mounted -o dax (make
// check-vm sets MTIER_TEST_FSDAX to ext4 on an fsdax namespace): a new file
// there, mapped with cache-line granularity (MAP_SYNC), which a file on any
// other filesystem cannot be.
TEST(PmemStore, FileOnFsdax) {
  const char* dir = getenv("MTIER_TEST_FSDAX");
  if (!dir || !*dir)
    GTEST_SKIP() << "MTIER_TEST_FSDAX names no filesystem mounted -o dax (make check-vm sets it)";
  pmem_round_trip(dir, 16ull << 20, "fsdax", 23);
}

}  // namespace
}  // namespace mtier
