// SPDX-License-Identifier: Apache-2.0
// mtierd's check that a registering process maps the region its segment
// claims (daemon/peer_region.h): map lines parsed, adjacent pieces of one
// file joined, holes, other files and anonymous memory refused; and the
// real /proc/self/maps with a memfd mapped as the runtime maps its region.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "peer_region.h"

namespace mtier::daemon {
namespace {

const char* kMaps =
    "555555554000-555555556000 r--p 00000000 08:01 1234 /usr/bin/python3\n"
    "7f0000000000-7f0000100000 rw-s 00000000 00:01 99 /memfd:mtier-region (deleted)\n"
    "7f0000100000-7f0000200000 rw-s 00100000 00:01 99 /memfd:mtier-region (deleted)\n"
    "7f0000200000-7f0000300000 rw-p 00000000 00:00 0 \n"
    "7f0000300000-7f0000400000 rw-s 00000000 00:01 77 /memfd:other (deleted)\n";

TEST(PeerRegion, AdjacentPiecesOfOneFileCover) {
  std::string why;
  EXPECT_EQ(maps_cover(kMaps, 0x7f0000000000, 0x200000, &why), 0) << why;
  EXPECT_EQ(maps_cover(kMaps, 0x7f0000080000, 0x100000, &why), 0) << why;
}

TEST(PeerRegion, MoreThanIsMappedIsRefusedWithTheAddress) {
  std::string why;
  EXPECT_EQ(maps_cover(kMaps, 0x7f0000000000, 0x300000, &why), -EINVAL);
  EXPECT_NE(why.find("0x7f0000200000"), std::string::npos) << why;
  // Anonymous memory, another file, nothing at all, a wrapping range.
  EXPECT_EQ(maps_cover(kMaps, 0x7f0000200000, 0x1000, &why), -EINVAL);
  EXPECT_EQ(maps_cover(kMaps, 0x7f0000100000, 0x300000, &why), -EINVAL);
  EXPECT_EQ(maps_cover(kMaps, 0x100000, 0x1000, &why), -EINVAL);
  EXPECT_EQ(maps_cover(kMaps, ~0ull - 0xfff, 0x2000, &why), -EINVAL);
  EXPECT_EQ(maps_cover(kMaps, 0x7f0000000000, 0, &why), -EINVAL);
  EXPECT_EQ(maps_cover("garbage\n\n-\nzz-yy a b c d\n", 0x1000, 0x1000, &why), -EINVAL);
  EXPECT_FALSE(why.empty());
}

TEST(PeerRegion, OwnMemfdMappingIsSeenAndItsTailIsNot) {
  int fd = memfd_create("peer-region-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const size_t len = 1 << 20;
  ASSERT_EQ(ftruncate(fd, len), 0);
  void* p = mmap(nullptr, len, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto base = reinterpret_cast<uint64_t>(p);
  std::string why;
  EXPECT_EQ(peer_maps_region(getpid(), base, len, &why), 0) << why;
  EXPECT_EQ(peer_maps_region(getpid(), base, uint64_t{1} << 40, &why), -EINVAL);
  EXPECT_NE(peer_maps_region(999999999, base, len, &why), 0);
  EXPECT_NE(why.find("/proc/999999999/maps"), std::string::npos) << why;
  munmap(p, len);
  close(fd);
}

}  // namespace
}  // namespace mtier::daemon
