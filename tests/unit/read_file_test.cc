// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/config/read_file (and sys::read_regular_file under it):
// a configuration file is a regular file of at most kConfigFileMaxBytes,
// read without blocking; anything else is one line naming the file.
#include "config/read_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sys/text_file.h"
#include "temp_dir.h"

namespace mtier::config {
namespace {

using testutil::TempDir;

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// A read that blocks or never ends must fail the test, not hang the run:
// SIGALRM ends the process after 10 s.
class ReadConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    alarm(10);
  }
  void TearDown() override { alarm(0); }
  // Runs read_config_file(path, required); *why is kept.
  int read(const std::string& path, bool required = true) {
    text_ = "stale";
    return read_config_file(path, required, &text_, &why_);
  }

  TempDir dir_{"mtier-read-file-test"};
  std::string text_, why_;
};

TEST_F(ReadConfigFile, RegularFileIsReadWhole) {
  std::string path = write_file(dir_.file("a.conf"), "dram_bytes = 3G\n# x\n");
  EXPECT_EQ(read(path), 0) << why_;
  EXPECT_EQ(text_, "dram_bytes = 3G\n# x\n");
}

// /etc files may be symbolic links: they are followed.
TEST_F(ReadConfigFile, SymbolicLinkIsFollowed) {
  std::string target = write_file(dir_.file("a.conf"), "verbose = 1\n");
  ASSERT_EQ(symlink(target.c_str(), dir_.file("link.conf").c_str()), 0);
  EXPECT_EQ(read(dir_.file("link.conf")), 0) << why_;
  EXPECT_EQ(text_, "verbose = 1\n");
}

TEST_F(ReadConfigFile, FileAtTheCapIsReadOneByteMoreIsRefused) {
  std::string at_cap = write_file(dir_.file("cap.conf"), std::string(kConfigFileMaxBytes, '#'));
  EXPECT_EQ(read(at_cap), 0) << why_;
  EXPECT_EQ(text_.size(), kConfigFileMaxBytes);
  std::string big = write_file(dir_.file("big.conf"), std::string(kConfigFileMaxBytes + 1, '#'));
  EXPECT_EQ(read(big), -EFBIG);
  EXPECT_EQ(text_, "");
  EXPECT_EQ(why_, big + ": larger than 1 MiB, the most a configuration file may hold");
}

// A FIFO with no writer: opening it for reading would block, reading it
// would wait for a writer. Refused at once.
TEST_F(ReadConfigFile, FifoIsRefusedWithoutBlocking) {
  std::string fifo = dir_.file("fifo.conf");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(read(fifo), -EINVAL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_EQ(text_, "");
  EXPECT_EQ(why_, fifo + ": not a regular file (a FIFO)");
}

// Endless: reading it would run out of memory.
TEST_F(ReadConfigFile, DevZeroIsRefused) {
  EXPECT_EQ(read("/dev/zero"), -EINVAL);
  EXPECT_EQ(text_, "");
  EXPECT_EQ(why_, "/dev/zero: not a regular file (a character device)");
}

TEST_F(ReadConfigFile, DirectoryIsRefused) {
  EXPECT_EQ(read(dir_.path()), -EISDIR);
  EXPECT_EQ(why_, dir_.path() + ": not a regular file (a directory)");
  EXPECT_EQ(read(dir_.path(), false), -EISDIR);  // present, so an error even if optional
}

// An absent default file (/etc/mtier.conf) is fine; a file the user named
// (MTIER_CONF, --config) must be there.
TEST_F(ReadConfigFile, MissingFileIsFineUnlessRequired) {
  std::string missing = dir_.file("none.conf");
  EXPECT_EQ(read(missing, false), 0);
  EXPECT_EQ(text_, "");
  EXPECT_EQ(read(missing, true), -ENOENT);
  EXPECT_EQ(text_, "");
  EXPECT_EQ(why_, missing + ": cannot read: No such file or directory");
}

TEST_F(ReadConfigFile, UnreadableFileNamesTheReason) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads any file";
  std::string path = write_file(dir_.file("secret.conf"), "verbose = 1\n");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  EXPECT_EQ(read(path), -EACCES);
  EXPECT_EQ(why_, path + ": cannot read: Permission denied");
}

}  // namespace
}  // namespace mtier::config
