// SPDX-License-Identifier: Apache-2.0
// Which job a process is a rank of, from a fake environment: MTIER_JOB
// first, then torchrun's run id (not its shared default "none"), then the
// env:// rendezvous address; the rank from RANK, else LOCAL_RANK.
#include "engine/job_identity.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace mtier {
namespace {

JobIdentity from(const std::map<std::string, std::string>& vars) {
  return job_identity([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(JobIdentity, NoneWithoutTheVariables) {
  JobIdentity j = from({});
  EXPECT_EQ(j.name, "");
  EXPECT_EQ(j.rank, -1);
  EXPECT_STREQ(j.source, "none");
  // A port alone, or an address alone, is no job.
  EXPECT_EQ(from({{"MASTER_PORT", "29500"}}).name, "");
  EXPECT_EQ(from({{"MASTER_ADDR", "localhost"}, {"MASTER_PORT", ""}}).name, "");
}

TEST(JobIdentity, TheFirstSourceFoundNamesTheJob) {
  std::map<std::string, std::string> v = {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}};
  EXPECT_EQ(from(v).name, "torch:10.0.0.1:29500");
  EXPECT_STREQ(from(v).source, "MASTER_ADDR:MASTER_PORT");
  v["TORCHELASTIC_RUN_ID"] = "none";  // torchrun's default: every job's
  EXPECT_EQ(from(v).name, "torch:10.0.0.1:29500");
  v["TORCHELASTIC_RUN_ID"] = "5f2c";
  EXPECT_EQ(from(v).name, "torchelastic:5f2c");
  v["MTIER_JOB"] = "ctr-model";
  EXPECT_EQ(from(v).name, "ctr-model");
  EXPECT_STREQ(from(v).source, "MTIER_JOB");
  v["MTIER_JOB"] = "";  // empty: not set
  EXPECT_EQ(from(v).name, "torchelastic:5f2c");
}

TEST(JobIdentity, LongNamesAreCutToTheWireLimit) {
  std::string long_name(200, 'j');
  EXPECT_EQ(from({{"MTIER_JOB", long_name}}).name, std::string(kMaxJobNameBytes, 'j'));
}

TEST(JobIdentity, TheRankIsRankElseLocalRank) {
  EXPECT_EQ(from({{"RANK", "3"}, {"LOCAL_RANK", "1"}}).rank, 3);
  EXPECT_EQ(from({{"LOCAL_RANK", "1"}}).rank, 1);
  for (const char* bad : {"", "-1", "x", "3x", "2147483648"})
    EXPECT_EQ(from({{"RANK", bad}}).rank, -1) << bad;
  EXPECT_EQ(from({{"RANK", "bad"}, {"LOCAL_RANK", "2"}}).rank, 2);
}

TEST(JobIdentity, TheWorldIsWorldSize) {
  EXPECT_EQ(from({}).world, -1);
  EXPECT_EQ(from({{"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}}).world, 4);
  EXPECT_EQ(from({{"WORLD_SIZE", "2147483647"}}).world, 2147483647);
  for (const char* bad : {"", "0", "-1", "x", "4x", "2147483648"})
    EXPECT_EQ(from({{"WORLD_SIZE", bad}}).world, -1) << bad;
}

}  // namespace
}  // namespace mtier
