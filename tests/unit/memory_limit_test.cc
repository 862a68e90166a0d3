// SPDX-License-Identifier: Apache-2.0
// The default DRAM budget's inputs and rule: the memory cgroup's limit read
// from fake cgroup trees (v1, v2, hybrid, unlimited, missing files), and the
// budget taken from the least of the machine and the cgroup, shared by the
// job's ranks, less what the process uses.
#include "sys/memory_limit.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/default_budget.h"

namespace mtier {
namespace {

namespace fs = std::filesystem;

class FakeCgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path("/tmp") / ("mtier-memory-limit-test-" + std::to_string(getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return root_.string(); }
  fs::path root_;
};

constexpr uint64_t kGiB = 1ull << 30, kMiB = 1ull << 20;

TEST_F(FakeCgroupTree, V2TakesTheLeastLimitAlongTheAncestors) {
  put("memory.max", "max\n");  // the root's: none
  put("jobs/memory.max", "8589934592\n");
  put("jobs/rank0/memory.max", "max\n");
  sys::MemoryLimit l = sys::cgroup_memory_limit("0::/jobs/rank0\n", root());
  EXPECT_EQ(l.bytes, 8 * kGiB);
  EXPECT_EQ(l.where, root() + "/jobs/memory.max");
  put("jobs/rank0/memory.max", "1073741824\n");
  EXPECT_EQ(sys::cgroup_memory_limit("0::/jobs/rank0\n", root()).bytes, kGiB);
}

TEST_F(FakeCgroupTree, V1ReadsTheMemoryControllersHierarchy) {
  put("memory/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  put("memory/train/memory.limit_in_bytes", "2147483648\n");
  const char* proc = "12:pids:/x\n9:memory:/train\n1:name=systemd:/y\n0::/z\n";
  sys::MemoryLimit l = sys::cgroup_memory_limit(proc, root());
  EXPECT_EQ(l.bytes, 2 * kGiB);
  EXPECT_EQ(l.where, root() + "/memory/train/memory.limit_in_bytes");
  // Controllers listed together, and a limit only on the leaf.
  put("memory/a/b/memory.limit_in_bytes", "536870912\n");
  EXPECT_EQ(sys::cgroup_memory_limit("4:cpu,memory:/a/b\n", root()).bytes, 512 * kMiB);
}

TEST_F(FakeCgroupTree, NoLimitUnlimitedOrUnreadableIsNone) {
  EXPECT_EQ(sys::cgroup_memory_limit("", root()).bytes, 0u);
  EXPECT_EQ(sys::cgroup_memory_limit("0::/\n", root()).bytes, 0u);  // no file
  put("memory.max", "max\n");
  EXPECT_EQ(sys::cgroup_memory_limit("0::/\n", root()).bytes, 0u);
  put("memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(sys::cgroup_memory_limit("3:memory:/\n", root()).bytes, 0u);
  put("memory/odd/memory.limit_in_bytes", "garbage\n");
  EXPECT_EQ(sys::cgroup_memory_limit("3:memory:/odd\n", root()).bytes, 0u);
}

TEST(OwnMemory, TheProcessHasAResidentSet) {
  EXPECT_GT(sys::own_rss_bytes(), 1 * kMiB);
  (void)sys::own_memory_limit();  // whatever this machine has: it must not fail
}

TEST(DefaultBudget, HalfOfTheLeastOfMachineAndCgroupPerRankLessWhatIsInUse) {
  std::string why;
  BudgetBasis b;
  b.ram = 32 * kGiB;
  EXPECT_EQ(default_dram_budget(b, &why), 16 * kGiB);
  EXPECT_EQ(why, "default: half of the machine's memory (32.0 GiB)");
  b.limit = {8 * kGiB, "/sys/fs/cgroup/job/memory.max"};
  EXPECT_EQ(default_dram_budget(b, &why), 4 * kGiB);
  EXPECT_NE(why.find("the memory cgroup's limit (8.0 GiB, /sys/fs/cgroup/job/memory.max)"),
            std::string::npos) << why;
  b.ranks = 4;
  b.rss = 512 * kMiB;
  // 8 GiB / 4 ranks = 2 GiB, less 512 MiB in use, halved.
  EXPECT_EQ(default_dram_budget(b, &why), 768 * kMiB);
  EXPECT_NE(why.find("shared by 4 ranks (LOCAL_WORLD_SIZE)"), std::string::npos) << why;
  EXPECT_NE(why.find("less the 512.0 MiB this process used at start"), std::string::npos) << why;
  // A cgroup above the machine's memory does not raise the budget.
  b = {};
  b.ram = 4 * kGiB;
  b.limit = {64 * kGiB, "x"};
  EXPECT_EQ(default_dram_budget(b, &why), 2 * kGiB);
  // What is in use takes at most half the share.
  b.rss = 100 * kGiB;
  EXPECT_EQ(default_dram_budget(b, &why), 1 * kGiB);
}

TEST(DefaultBudget, LocalWorldSizeIsTakenWhenItIsANumber) {
  setenv("LOCAL_WORLD_SIZE", "3", 1);
  EXPECT_EQ(local_ranks(), 3u);
  for (const char* bad : {"0", "-1", "two", "", "5000", "3x"}) {
    setenv("LOCAL_WORLD_SIZE", bad, 1);
    EXPECT_EQ(local_ranks(), 1u) << bad;
  }
  unsetenv("LOCAL_WORLD_SIZE");
  EXPECT_EQ(local_ranks(), 1u);
}

}  // namespace
}  // namespace mtier
