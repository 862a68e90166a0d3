// SPDX-License-Identifier: Apache-2.0
// Unit tests for the libpmem2 loader (src/sys/pmem2_api): a library that is
// not there is a clear error naming it and the Debian package; the real one
// resolves every function. libmtier.so not linking libpmem2 is checked on
// the built library by tests/preload/no_pmem2_link.test.
#include "sys/pmem2_api.h"

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

namespace mtier::sys {
namespace {

TEST(Pmem2Api, MissingLibraryNamesItAndThePackage) {
  Pmem2Api api;
  char why[512] = "";
  const char* soname = "libpmem2-mtier-test-absent.so.1";
  EXPECT_EQ(load_pmem2(soname, &api, why, sizeof why), -ELIBACC);
  std::string line(why);
  EXPECT_NE(line.find(soname), std::string::npos) << line;
  EXPECT_NE(line.find("libpmem2-1"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line: " << line;
  EXPECT_EQ(api.map_new, nullptr);
}

TEST(Pmem2Api, LibraryWithoutTheFunctionsIsRefused) {
  // libc is loaded and has none of pmem2's functions.
  Pmem2Api api;
  char why[512] = "";
  EXPECT_EQ(load_pmem2("libc.so.6", &api, why, sizeof why), -ELIBACC);
  EXPECT_NE(std::string(why).find("pmem2_source_from_fd"), std::string::npos) << why;
  EXPECT_EQ(api.source_from_fd, nullptr);
}

TEST(Pmem2Api, InstalledLibraryResolvesEveryFunction) {
  const char* why = "";
  const Pmem2Api* api = pmem2_api(&why);
  if (!api) GTEST_SKIP() << why;
  EXPECT_NE(api->source_from_fd, nullptr);
  EXPECT_NE(api->map_new, nullptr);
  EXPECT_NE(api->get_drain_fn, nullptr);
  EXPECT_NE(api->errormsg, nullptr);
  EXPECT_EQ(pmem2_api(&why), api) << "loaded once";
}

}  // namespace
}  // namespace mtier::sys
