// SPDX-License-Identifier: Apache-2.0
// Out of memory in the structures the interposer updates inside malloc and
// munmap (lib/boundary.h): ExtentAllocator (the region's free ranges) and
// ManagedMap (the interposer's records). This binary's operator new throws
// std::bad_alloc while `g_failing` is set; each case checks that the call
// then reports the failure, or needs no memory at all, and that the state
// is exactly as before (the next calls work).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <new>

#include "managed_map.h"
#include "region/extent_allocator.h"

namespace {
bool g_failing = false;
int g_refused = 0;
}  // namespace

void* operator new(size_t n) {
  if (g_failing) {
    g_refused++;
    throw std::bad_alloc();
  }
  if (void* p = malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// Not inlined: GCC would pair this free() with the operator new above at a
// call site and warn (-Wmismatched-new-delete), though they match.
__attribute__((noinline)) void operator delete(void* p) noexcept { free(p); }
__attribute__((noinline)) void operator delete(void* p, size_t) noexcept { free(p); }

namespace mtier {
namespace {

// Sets g_failing for its lifetime.
struct Failing {
  Failing() {
    g_refused = 0;
    g_failing = true;
  }
  ~Failing() { g_failing = false; }
};

TEST(OutOfMemory, ExtentAllocNeedsNoMemory) {
  ExtentAllocator a(100);
  {
    Failing f;
    EXPECT_EQ(a.alloc(10), 0);   // shrinks the one free extent in place
    EXPECT_EQ(a.alloc(90), 10);  // takes the rest: erases it
    EXPECT_EQ(a.alloc(1), -ENOMEM);
    EXPECT_EQ(g_refused, 0);
  }
  EXPECT_EQ(a.free_pages(), 0u);
}

TEST(OutOfMemory, ExtentFreeJoiningANeighbourNeedsNoMemory) {
  ExtentAllocator a(100);
  ASSERT_EQ(a.alloc(10), 0);
  ASSERT_EQ(a.alloc(10), 10);
  ASSERT_EQ(a.alloc(10), 20);
  {
    Failing f;
    EXPECT_EQ(a.free(20, 10), 0);  // joins the free [30, 100)
    EXPECT_EQ(a.free(0, 10), -ENOMEM);  // no free neighbour: needs a node
    EXPECT_EQ(g_refused, 1);            // the first node; nothing changed before it
    EXPECT_EQ(a.free_pages(), 80u);
    EXPECT_EQ(a.free_extents(), 1u);
  }
  // The refused extent stays out of use, everything else is intact.
  EXPECT_EQ(a.largest_free(), 80u);
  EXPECT_EQ(a.free(10, 10), 0);  // joins [20, 100)
  EXPECT_EQ(a.free_pages(), 90u);
  EXPECT_EQ(a.free_extents(), 1u);
  EXPECT_EQ(a.alloc(90), 10);
}

TEST(OutOfMemory, ExtentFreeJoiningBothNeighboursNeedsNoMemory) {
  ExtentAllocator a(30);
  ASSERT_EQ(a.alloc(10), 0);
  ASSERT_EQ(a.alloc(10), 10);
  ASSERT_EQ(a.alloc(10), 20);
  ASSERT_EQ(a.free(0, 10), 0);
  ASSERT_EQ(a.free(20, 10), 0);
  {
    Failing f;
    EXPECT_EQ(a.free(10, 10), 0);
    EXPECT_EQ(g_refused, 0);
  }
  EXPECT_EQ(a.free_extents(), 1u);
  EXPECT_EQ(a.largest_free(), 30u);
}

TEST(OutOfMemory, ManagedMapInsertFailsCleanly) {
  static char region[16 * 4096];
  lib::ManagedMap map;
  lib::Managed a;
  a.base = a.ptr = region;
  a.capacity = 4 * 4096;
  a.id = 1;
  ASSERT_NE(map.insert(a), nullptr);
  lib::Managed b = a;
  b.base = b.ptr = region + 8 * 4096;
  b.id = 2;
  {
    Failing f;
    EXPECT_EQ(map.insert(b), nullptr);
    EXPECT_GT(g_refused, 0);
    // Lookups and visiting overlaps need no memory.
    EXPECT_EQ(map.find(region + 100)->id, 1);
    EXPECT_EQ(map.first_overlapping(region, region + sizeof region)->id, 1);
    EXPECT_EQ(map.first_overlapping(region + 4 * 4096, region + sizeof region), nullptr);
  }
  EXPECT_EQ(map.size(), 1u);
  EXPECT_EQ(map.find(region + 8 * 4096), nullptr);
  {
    Failing f;
    map.erase(map.find(region));  // erasing needs no memory
    EXPECT_EQ(g_refused, 0);
  }
  EXPECT_EQ(map.size(), 0u);
}

TEST(OutOfMemory, UnmappedIntervalsUnchangedWhenOutOfMemory) {
  lib::Managed m;
  m.capacity = 16 * 4096;
  ASSERT_TRUE(m.add_unmapped(2, 4));
  {
    Failing f;
    EXPECT_FALSE(m.add_unmapped(8, 10));
    EXPECT_FALSE(m.remove_unmapped(2, 3));
  }
  ASSERT_EQ(m.unmapped.size(), 1u);
  EXPECT_EQ(m.unmapped[0], std::make_pair(uint64_t{2}, uint64_t{4}));
  EXPECT_TRUE(m.add_unmapped(8, 10));
  EXPECT_EQ(m.unmapped_pages(), 4u);
}

}  // namespace
}  // namespace mtier
