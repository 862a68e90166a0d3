// SPDX-License-Identifier: Apache-2.0
// The table allocator (ExtentAllocator) and the region's memfd mappings.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "region/extent_allocator.h"
#include "region/region.h"
#include "sys/vm.h"

namespace mtier {
namespace {

TEST(ExtentAllocator, CarvesAndCoalesces) {
  ExtentAllocator a(100);
  EXPECT_EQ(a.alloc(10), 0);
  EXPECT_EQ(a.alloc(20), 10);
  EXPECT_EQ(a.alloc(30), 30);
  EXPECT_EQ(a.free_pages(), 40u);
  ASSERT_EQ(a.free(10, 20), 0);
  EXPECT_EQ(a.free_extents(), 2u);
  ASSERT_EQ(a.free(0, 10), 0);   // merges with [10, 30)
  ASSERT_EQ(a.free(30, 30), 0);  // merges both sides
  EXPECT_EQ(a.free_extents(), 1u);
  EXPECT_EQ(a.largest_free(), 100u);
}

TEST(ExtentAllocator, BestFitKeepsLargeHolesWhole) {
  ExtentAllocator a(100);
  ASSERT_EQ(a.alloc(10), 0);
  ASSERT_EQ(a.alloc(5), 10);
  ASSERT_EQ(a.alloc(50), 15);
  ASSERT_EQ(a.free(0, 10), 0);   // hole of 10 at 0, hole of 35 at 65
  EXPECT_EQ(a.alloc(8), 0);      // the small hole serves the small request
  EXPECT_EQ(a.largest_free(), 35u);
}

TEST(ExtentAllocator, RejectsBadRequests) {
  ExtentAllocator a(16);
  EXPECT_EQ(a.alloc(0), -EINVAL);
  EXPECT_EQ(a.alloc(17), -ENOMEM);
  ASSERT_EQ(a.alloc(8), 0);
  EXPECT_EQ(a.free(8, 1), -EINVAL);   // already free
  EXPECT_EQ(a.free(4, 8), -EINVAL);   // overlaps free space
  EXPECT_EQ(a.free(15, 4), -EINVAL);  // past the end
  EXPECT_EQ(a.free(0, 0), -EINVAL);
  EXPECT_EQ(a.free_pages(), 8u);
}

// A table grows in place only into the free extent right after it.
TEST(ExtentAllocator, ExtendsIntoTheFreeExtentRightAfter) {
  ExtentAllocator a(100);
  int64_t x = a.alloc(10), y = a.alloc(10);
  ASSERT_EQ(x, 0);
  ASSERT_EQ(y, 10);
  EXPECT_FALSE(a.extend(0, 10, 5)) << "y follows x: no room";
  EXPECT_TRUE(a.extend(10, 10, 30));
  EXPECT_EQ(a.free_pages(), 50u);
  EXPECT_FALSE(a.extend(10, 40, 61)) << "more than is free after it";
  EXPECT_TRUE(a.extend(10, 40, 50)) << "all the rest";
  EXPECT_EQ(a.free_pages(), 0u);
  EXPECT_EQ(a.alloc(1), -ENOMEM);
  EXPECT_EQ(a.free(10, 90), 0);
  EXPECT_EQ(a.largest_free(), 90u);
}

TEST(ExtentAllocator, RandomWorkloadConservesPages) {
  ExtentAllocator a(4096);
  std::mt19937 rng(7);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  uint64_t used = 0;
  for (int i = 0; i < 20000; i++) {
    if (live.empty() || rng() % 2) {
      uint64_t n = 1 + rng() % 64;
      int64_t off = a.alloc(n);
      if (off < 0) continue;
      for (auto& [o, l] : live) ASSERT_TRUE(off + n <= o || o + l <= uint64_t(off));
      live.push_back({uint64_t(off), n});
      used += n;
    } else {
      size_t k = rng() % live.size();
      ASSERT_EQ(a.free(live[k].first, live[k].second), 0);
      used -= live[k].second;
      live.erase(live.begin() + k);
    }
    ASSERT_EQ(a.free_pages() + used, 4096u);
  }
  for (auto& [o, l] : live) ASSERT_EQ(a.free(o, l), 0);
  EXPECT_EQ(a.free_extents(), 1u);
}

TEST(Region, TwoMappingsOfOneMemfdAndPunch) {
  int err = 0;
  auto r = Region::create(64ull << 30, &err);  // reservation costs no memory
  ASSERT_TRUE(r) << strerror(-err);
  EXPECT_EQ(r->resident_pages(0, 1 << 20), 0);
  strcpy(r->base() + 8192, "hello");
  EXPECT_STREQ(r->alias() + 8192, "hello");
  EXPECT_EQ(r->resident_pages(0, 1 << 20), 1);
  EXPECT_GT(sys::smaps_rss(r->base()), 0);
  ASSERT_EQ(r->punch(8192, 4096), 0);
  EXPECT_EQ(r->resident_pages(0, 1 << 20), 0);
  EXPECT_EQ(r->base()[8192], 0);
  EXPECT_TRUE(r->contains(r->base() + (64ull << 30) - 1));
  EXPECT_FALSE(r->contains(r->base() + (64ull << 30)));
}

// zap_ranges drops the entries of every range it is given in one call and
// no others: the pages stay in the memfd (read back through a read-only
// mapping of it), and a mapping's entries are seen from mincore's view of
// an anonymous private mapping (whose zapped pages read as zeros).
TEST(SysVm, ZapRangesDropsExactlyTheRangesGiven) {
  constexpr size_t kPages = 16, kBytes = kPages * 4096;
  int pidfd = sys::pidfd_self();
  ASSERT_GE(pidfd, 0) << strerror(-pidfd);
  int fd = sys::memfd_open("zap-ranges-test", kBytes);
  ASSERT_GE(fd, 0) << strerror(-fd);
  auto* rw = static_cast<char*>(sys::map_shared(fd, kBytes));
  auto* ro = static_cast<char*>(sys::map_shared(fd, kBytes, false));
  ASSERT_TRUE(rw && ro);
  for (size_t p = 0; p < kPages; p++) rw[p * 4096] = static_cast<char>(p + 1);
  // A private anonymous copy of the same pattern: a zap frees its pages.
  auto* anon = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(anon, MAP_FAILED);
  memcpy(anon, rw, kBytes);
  std::vector<struct iovec> ranges = {
      {anon + 2 * 4096, 4096}, {anon + 5 * 4096, 2 * 4096}, {rw + 7 * 4096, 4096}};
  long rc = sys::zap_ranges(pidfd, ranges.data(), ranges.size());
  if (rc == -EINVAL) GTEST_SKIP() << "this kernel does not take MADV_DONTNEED through "
                                     "process_madvise for the caller (Linux 6.13 and later do)";
  ASSERT_EQ(rc, 4 * 4096) << strerror(static_cast<int>(-rc));
  for (size_t p = 0; p < kPages; p++) {
    bool zapped = p == 2 || p == 5 || p == 6;
    EXPECT_EQ(anon[p * 4096], zapped ? 0 : static_cast<char>(p + 1)) << "page " << p;
    EXPECT_EQ(ro[p * 4096], static_cast<char>(p + 1)) << "page " << p;  // the memfd keeps all
    EXPECT_EQ(rw[p * 4096], static_cast<char>(p + 1)) << "page " << p;  // a zapped entry refaults
  }
  ranges.resize(1025, ranges[0]);
  EXPECT_EQ(sys::zap_ranges(pidfd, ranges.data(), ranges.size()), -EINVAL);  // more than IOV_MAX
  // The read-only mapping is read-only (its line in /proc/self/maps).
  char want[32];
  snprintf(want, sizeof want, "%lx-", reinterpret_cast<unsigned long>(ro));
  std::string perms;
  if (FILE* maps = fopen("/proc/self/maps", "r")) {
    char line[512];
    while (fgets(line, sizeof line, maps))
      if (strncmp(line, want, strlen(want)) == 0) perms.assign(strchr(line, ' ') + 1, 4);
    fclose(maps);
  }
  EXPECT_EQ(perms, "r--s");
  munmap(anon, kBytes);
  (void)sys::unmap(rw, kBytes);
  (void)sys::unmap(ro, kBytes);
  close(fd);
  close(pidfd);
}

}  // namespace
}  // namespace mtier
