// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/config: sizes, every kind of bad value, sources and
// their precedence, describe(), and the option table against mtier.conf(5).
#include "config/options.h"
#include "config/size_ranges.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sys/vm.h"

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for man/mtier.conf.5)"
#endif

namespace mtier {
namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

// An envp built from strings, nullptr-terminated.
class Env {
 public:
  Env(std::initializer_list<std::string> vars) : vars_(vars) {
    for (std::string& v : vars_) ptrs_.push_back(v.data());
    ptrs_.push_back(nullptr);
  }
  char** envp() { return ptrs_.data(); }

 private:
  std::vector<std::string> vars_;
  std::vector<char*> ptrs_;
};

// A scratch directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mtier_config_test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    files_.push_back(p);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// The message set() gives for name=value, or "" if it was accepted.
std::string set_error(const std::string& name, const std::string& value) {
  OptionSet o;
  std::string why;
  int rc = o.set(name, value, OptionSource::kApi, &why);
  if (rc == 0) return "";
  EXPECT_EQ(rc, -EINVAL);
  return why;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- parse_size --------------------------------------------------------

TEST(ParseSize, AcceptsUnitsAndSuffixes) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"0", 0},           {"4096", 4096},          {"4096B", 4096},
      {"4096b", 4096},    {"64K", 64 << 10},       {"64k", 64 << 10},
      {"64KiB", 64 << 10}, {"64M", 64 * kMiB},     {"64MiB", 64 * kMiB},
      {"64mb", 64 * kMiB}, {"2G", 2 * kGiB},       {"2gb", 2 * kGiB},
      {"2GIB", 2 * kGiB}, {"1T", 1ull << 40},      {"1P", 1ull << 50},
      {"18446744073709551615", UINT64_MAX}, {"16777215T", 16777215ull << 40}};
  for (const auto& [text, want] : cases) {
    uint64_t v = 1;
    EXPECT_EQ(parse_size(text, &v), 0) << text;
    EXPECT_EQ(v, want) << text;
  }
}

TEST(ParseSize, RejectsJunk) {
  for (const char* text : {"", "-1", "+1", "12Q", "1.5G", "G", "64 M", " 64", "64 ", "64iB",
                           "64MBB", "64Mi", "0x10", "1e9", "64%"}) {
    uint64_t v = 7;
    EXPECT_EQ(parse_size(text, &v), -EINVAL) << '"' << text << '"';
    EXPECT_EQ(v, 7u) << text;
  }
}

TEST(ParseSize, RejectsOverflow) {
  for (const char* text : {"18446744073709551616", "99999999999999999999999", "16777216T",
                           "16384P"}) {
    uint64_t v = 7;
    EXPECT_EQ(parse_size(text, &v), -ERANGE) << text;
    EXPECT_EQ(v, 7u);
  }
}

// ---- set(): good values ----------------------------------------------

TEST(Set, GoodValuesAndSource) {
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.set("dram_bytes", "2G", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("high_watermark", "90%", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("low_watermark", "70", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("dram_node", "-1", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("queue_depth", "64", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("scan_rate", "4294967296", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("store_path", "/mnt/nvme/x y", OptionSource::kApi, &why), 0) << why;
  ASSERT_EQ(o.set("min_bytes", "4K", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, 2 * kGiB);
  EXPECT_EQ(o.get().high_watermark, 90u);
  EXPECT_EQ(o.get().low_watermark, 70u);
  EXPECT_EQ(o.get().dram_node, -1);
  EXPECT_EQ(o.get().queue_depth, 64u);
  EXPECT_EQ(o.get().scan_rate, 1ull << 32);
  EXPECT_EQ(o.get().store_path, "/mnt/nvme/x y");
  EXPECT_EQ(o.get().min_bytes, 4096u);
  EXPECT_EQ(o.source("dram_bytes"), OptionSource::kApi);
  EXPECT_EQ(o.source("pmem_bytes"), OptionSource::kDefault);
  EXPECT_EQ(o.source("no_such_option"), OptionSource::kDefault);
}

TEST(Set, DramBytesAsShareOfPhysicalMemory) {
  uint64_t mem = sys::physical_memory();
  if (mem == 0) GTEST_SKIP() << "physical memory size unknown";
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.set("dram_bytes", "25%", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, mem * 25 / 100 / sys::kPageSize * sys::kPageSize);
  ASSERT_EQ(o.set("dram_bytes", "100%", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, mem);
}

TEST(Set, BoolSpellings) {
  for (const char* t : {"1", "yes", "true", "on", "YES", "True", "ON"}) {
    OptionSet o;
    ASSERT_EQ(o.set("verbose", t, OptionSource::kApi, nullptr), 0) << t;
    EXPECT_TRUE(o.get().verbose) << t;
  }
  for (const char* f : {"0", "no", "false", "off", "NO", "False", "Off"}) {
    OptionSet o;
    o.mutable_get().verbose = true;
    ASSERT_EQ(o.set("verbose", f, OptionSource::kApi, nullptr), 0) << f;
    EXPECT_FALSE(o.get().verbose) << f;
  }
}

TEST(Set, EmptyStringIsAllowedForStrings) {
  OptionSet o;
  ASSERT_EQ(o.set("names", "", OptionSource::kApi, nullptr), 0);
  EXPECT_EQ(o.get().names, "");
}

// ---- set(): every kind of bad value --------------------------------------

TEST(SetErrors, BadSize) {
  EXPECT_EQ(set_error("dram_bytes", "12Q"),
            "dram_bytes: \"12Q\" is not a size (use e.g. 4096, 64M, 2G or 25%)");
  EXPECT_EQ(set_error("store_bytes", "lots"),
            "store_bytes: \"lots\" is not a size (use e.g. 4096, 64M, 2G)");
  EXPECT_EQ(set_error("region_bytes", ""),
            "region_bytes: \"\" is not a size (use e.g. 4096, 64M, 2G)");
  EXPECT_EQ(set_error("pmem_bytes", "-1"),
            "pmem_bytes: \"-1\" is not a size (use e.g. 4096, 64M, 2G)");
  std::string frac = set_error("region_bytes", "1.5G");
  EXPECT_TRUE(contains(frac, "region_bytes: \"1.5G\" is not a size")) << frac;
  EXPECT_TRUE(contains(frac, "fractions are not accepted")) << frac;
  EXPECT_EQ(set_error("store_bytes", "25%"),
            "store_bytes: \"25%\" is not a size (use e.g. 4096, 64M, 2G)");
}

TEST(SetErrors, SizeOutOfRangeOrOverflow) {
  EXPECT_EQ(set_error("min_bytes", "1K"), "min_bytes: \"1K\" is out of range (4K to 1P)");
  EXPECT_EQ(set_error("region_bytes", "1P"), "region_bytes: \"1P\" is out of range (0 to 128T)");
  EXPECT_EQ(set_error("dram_bytes", "99999999999999999999"),
            "dram_bytes: \"99999999999999999999\" is too large (at most 1P)");
  EXPECT_EQ(set_error("store_bytes", "16384P"),
            "store_bytes: \"16384P\" is too large (at most 256T)");
}

TEST(SetErrors, BadShareOfMemory) {
  EXPECT_EQ(set_error("dram_bytes", "0%"),
            "dram_bytes: \"0%\" is out of range (1% to 100% of physical memory)");
  EXPECT_EQ(set_error("dram_bytes", "101%"),
            "dram_bytes: \"101%\" is out of range (1% to 100% of physical memory)");
  EXPECT_EQ(set_error("dram_bytes", "x%"), "dram_bytes: \"x%\" is not a share (use 1% to 100%)");
  EXPECT_EQ(set_error("dram_bytes", "%"), "dram_bytes: \"%\" is not a share (use 1% to 100%)");
  EXPECT_EQ(set_error("dram_bytes", "-5%"), "dram_bytes: \"-5%\" is not a share (use 1% to 100%)");
}

TEST(SetErrors, BadPercent) {
  EXPECT_EQ(set_error("high_watermark", "150"),
            "high_watermark: \"150\" is out of range (1 to 100%)");
  EXPECT_EQ(set_error("high_watermark", "0%"),
            "high_watermark: \"0%\" is out of range (1 to 100%)");
  EXPECT_EQ(set_error("low_watermark", "100"),
            "low_watermark: \"100\" is out of range (0 to 99%)");
  EXPECT_EQ(set_error("high_watermark", "9x5"),
            "high_watermark: \"9x5\" is not a percentage (use an integer 1 to 100, optionally "
            "followed by %)");
  EXPECT_TRUE(contains(set_error("low_watermark", ""), "is not a percentage"));
  EXPECT_TRUE(contains(set_error("low_watermark", "50%%"), "is not a percentage"));
  EXPECT_TRUE(contains(set_error("low_watermark", "-5"), "is not a percentage"));
  EXPECT_TRUE(contains(set_error("high_watermark", "99999999999999999999999"), "out of range"));
}

TEST(SetErrors, BadUnsigned) {
  EXPECT_EQ(set_error("queue_depth", "0"), "queue_depth: \"0\" is out of range (1 to 32768)");
  EXPECT_EQ(set_error("queue_depth", "65536"),
            "queue_depth: \"65536\" is out of range (1 to 32768)");
  EXPECT_EQ(set_error("evict_batch", "lots"),
            "evict_batch: \"lots\" is not a number (use an integer 1 to 4096)");
  EXPECT_EQ(set_error("prefetch_pages", "-3"),
            "prefetch_pages: \"-3\" is not a number (use an integer 0 to 512)");
  EXPECT_EQ(set_error("scan_rate", "99999999999999999999999"),
            "scan_rate: \"99999999999999999999999\" is out of range (0 to 4294967296)");
  EXPECT_EQ(set_error("queue_depth", "64K"),
            "queue_depth: \"64K\" is not a number (use an integer 1 to 32768)");
}

TEST(SetErrors, BadInt) {
  EXPECT_EQ(set_error("dram_node", "-2"), "dram_node: \"-2\" is out of range (-1 to 1023)");
  EXPECT_EQ(set_error("dram_node", "1024"), "dram_node: \"1024\" is out of range (-1 to 1023)");
  EXPECT_EQ(set_error("dram_node", "node0"),
            "dram_node: \"node0\" is not an integer (use -1 to 1023)");
  EXPECT_EQ(set_error("dram_node", "-"), "dram_node: \"-\" is not an integer (use -1 to 1023)");
  EXPECT_TRUE(contains(set_error("dram_node", "-99999999999999999999"), "out of range"));
}

TEST(SetErrors, BadBool) {
  EXPECT_EQ(set_error("verbose", "maybe"),
            "verbose: \"maybe\" is not a boolean (use 1/0, yes/no, true/false or on/off)");
  EXPECT_TRUE(contains(set_error("verbose", ""), "is not a boolean"));
  EXPECT_TRUE(contains(set_error("verbose", "2"), "is not a boolean"));
}

TEST(SetErrors, UnknownOption) {
  EXPECT_EQ(set_error("dram_byte", "1G"),
            "unknown option \"dram_byte\" (did you mean \"dram_bytes\"?)");
  EXPECT_EQ(set_error("DRAM_BYTES", "1G"),
            "unknown option \"DRAM_BYTES\" (did you mean \"dram_bytes\"?)");
  EXPECT_EQ(set_error("frobnicate", "1"), "unknown option \"frobnicate\"");
}

TEST(SetErrors, WatermarkInversionNamesBothAndChangesNothing) {
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.set("high_watermark", "90", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.set("low_watermark", "95", OptionSource::kApi, &why), -EINVAL);
  EXPECT_EQ(why, "low_watermark = 95 (API) must be below high_watermark = 90 (API)");
  EXPECT_EQ(o.get().low_watermark, 88u) << "the default, 2 below the high mark set";
  EXPECT_EQ(o.source("low_watermark"), OptionSource::kDefault);
  ASSERT_EQ(o.set("low_watermark", "60", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.set("high_watermark", "50", OptionSource::kApi, &why), -EINVAL);
  EXPECT_TRUE(contains(why, "low_watermark = 60 (API)")) << why;
  EXPECT_TRUE(contains(why, "high_watermark = 50 (API)")) << why;
  EXPECT_EQ(o.get().high_watermark, 90u);
}

TEST(Set, AWatermarkLeftAtItsDefaultKeepsClearOfOneSet) {
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.get().high_watermark, kDefaultHighWatermark);
  EXPECT_EQ(o.get().low_watermark, kDefaultLowWatermark);
  ASSERT_EQ(o.set("high_watermark", "1", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.get().low_watermark, 0u);
  ASSERT_EQ(o.set("high_watermark", "99", OptionSource::kApi, &why), 0) << why;
  EXPECT_EQ(o.get().low_watermark, kDefaultLowWatermark) << "back to its default: 96 < 99";
  OptionSet p;
  ASSERT_EQ(p.set("low_watermark", "99", OptionSource::kEnv, &why), 0) << why;
  EXPECT_EQ(p.get().high_watermark, 100u);
  EXPECT_EQ(p.source("high_watermark"), OptionSource::kDefault);
}

TEST(SetErrors, FailedSetChangesNothing) {
  OptionSet o;
  ASSERT_EQ(o.set("queue_depth", "8", OptionSource::kEnv, nullptr), 0);
  EXPECT_EQ(o.set("queue_depth", "0", OptionSource::kApi, nullptr), -EINVAL);
  EXPECT_EQ(o.get().queue_depth, 8u);
  EXPECT_EQ(o.source("queue_depth"), OptionSource::kEnv);
}

// ---- load_text -------------------------------------------------------------

TEST(LoadText, LinesCommentsBlanksWhitespace) {
  OptionSet o;
  std::string why;
  const char* text =
      "# mtier configuration\n"
      "\n"
      "   dram_bytes=1G   \n"
      "\tqueue_depth = 16\t# deeper queue\r\n"
      "store_path = /mnt/a#b   # '#' inside a word is kept\n"
      "names = emb0,emb1, emb2\n"
      "pmem_path = \"  spaced  \"\n"
      "verbose = on";  // no final newline
  ASSERT_EQ(o.load_text(text, OptionSource::kFile, &why), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, kGiB);
  EXPECT_EQ(o.get().queue_depth, 16u);
  EXPECT_EQ(o.get().store_path, "/mnt/a#b");
  EXPECT_EQ(o.get().names, "emb0,emb1, emb2");
  EXPECT_EQ(o.get().pmem_path, "  spaced  ");
  EXPECT_TRUE(o.get().verbose);
  EXPECT_EQ(o.source("queue_depth"), OptionSource::kFile);
  EXPECT_EQ(o.source("min_bytes"), OptionSource::kDefault);
}

TEST(LoadText, OneLineCommaSeparated) {
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_text("queue_depth=64, prefetch_pages=8,names=a,b,verbose=1",
                        OptionSource::kConf, &why), 0)
      << why;
  EXPECT_EQ(o.get().queue_depth, 64u);
  EXPECT_EQ(o.get().prefetch_pages, 8u);
  EXPECT_EQ(o.get().names, "a,b");
  EXPECT_TRUE(o.get().verbose);
  ASSERT_EQ(o.load_text("store_path=\"/x,y=1\",evict_batch=2", OptionSource::kConf, &why), 0)
      << why;
  EXPECT_EQ(o.get().store_path, "/x,y=1");
  EXPECT_EQ(o.get().evict_batch, 2u);
}

TEST(LoadText, EmptyTextIsFine) {
  OptionSet o;
  EXPECT_EQ(o.load_text("", OptionSource::kConf, nullptr), 0);
  EXPECT_EQ(o.load_text("\n\n# only a comment\n", OptionSource::kConf, nullptr), 0);
}

TEST(LoadText, MalformedLineNamesTheLine) {
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_text("dram_bytes = 1G\n\nthis is not a setting\n", OptionSource::kConf, &why),
            -EINVAL);
  EXPECT_EQ(why, "MTIER_CONF:3: expected \"name = value\", got \"this is not a setting\"");
  EXPECT_EQ(o.load_text("queue_depth=4, oops", OptionSource::kConf, &why), -EINVAL);
  EXPECT_EQ(why, "MTIER_CONF:1: queue_depth: \"4, oops\" is not a number (use an integer 1 "
                 "to 32768)");
  EXPECT_EQ(o.load_text(" = 5", OptionSource::kConf, &why), -EINVAL);
  EXPECT_EQ(why, "MTIER_CONF:1: unknown option \"\"");
}

TEST(LoadText, BadValueAndUnknownNameCarryTheLine) {
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_text("# c\nqueue_depth = 0\n", OptionSource::kFile, &why), -EINVAL);
  EXPECT_EQ(why, std::string(kSystemConfigPath) +
                     ":2: queue_depth: \"0\" is out of range (1 to 32768)");
  EXPECT_EQ(o.load_text("dram_bytes=1G\nlow_watermrk = 5\n", OptionSource::kConf, &why), -EINVAL);
  EXPECT_EQ(why, "MTIER_CONF:2: unknown option \"low_watermrk\" (did you mean \"low_watermark\"?)");
}

TEST(LoadText, ErrorAppliesNothing) {
  OptionSet o;
  EXPECT_EQ(o.load_text("dram_bytes = 1G\nqueue_depth = 0\n", OptionSource::kConf, nullptr),
            -EINVAL);
  EXPECT_EQ(o.get().dram_bytes, 0u);
  EXPECT_EQ(o.source("dram_bytes"), OptionSource::kDefault);
}

TEST(LoadText, WatermarksCheckedAfterTheWholeText) {
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_text("high_watermark = 80\nlow_watermark = 70\n", OptionSource::kConf, &why),
            0)
      << why;
  EXPECT_EQ(o.get().high_watermark, 80u);
  EXPECT_EQ(o.load_text("low_watermark = 90\nhigh_watermark = 85\n", OptionSource::kFile, &why),
            -EINVAL);
  EXPECT_EQ(why,
            "low_watermark = 90 (" MTIER_SYSCONFDIR "/mtier.conf) must be below "
            "high_watermark = 85 (" MTIER_SYSCONFDIR "/mtier.conf)");
  EXPECT_EQ(o.get().low_watermark, 70u);
}

// ---- load_file -----------------------------------------------------------

TEST(LoadFile, ReadsAndNamesFileAndLine) {
  TempDir dir;
  std::string good = dir.write("good.conf", "dram_bytes = 3G\n");
  std::string bad = dir.write("bad.conf", "dram_bytes = 3G\n# fine\nverbose = perhaps\n");
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_file(good, OptionSource::kFile, true, &why), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, 3 * kGiB);
  EXPECT_EQ(o.load_file(bad, OptionSource::kFile, false, &why), -EINVAL);
  EXPECT_EQ(why, bad + ":3: verbose: \"perhaps\" is not a boolean (use 1/0, yes/no, "
                       "true/false or on/off)");
}

TEST(LoadFile, MissingIsFineUnlessRequired) {
  TempDir dir;
  std::string missing = dir.path() + "/missing.conf";
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_file(missing, OptionSource::kFile, false, &why), 0);
  EXPECT_EQ(o.load_file(missing, OptionSource::kConf, true, &why), -ENOENT);
  EXPECT_TRUE(contains(why, missing + ": cannot read")) << why;
  EXPECT_EQ(o.load_file(dir.path(), OptionSource::kFile, false, &why), -EISDIR);
  EXPECT_TRUE(contains(why, dir.path())) << why;
}

// ---- load_env --------------------------------------------------------------

TEST(LoadEnv, AppliesMtierVariables) {
  Env env{"PATH=/usr/bin", "MTIER_DRAM_BYTES=1G", "MTIER_VERBOSE=yes", "MTIERX=1",
          "MTIER_STORE_PATH=/a=b", "HOME=/root"};
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_env(env.envp(), &why), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, kGiB);
  EXPECT_TRUE(o.get().verbose);
  EXPECT_EQ(o.get().store_path, "/a=b");
  EXPECT_EQ(o.source("dram_bytes"), OptionSource::kEnv);
}

TEST(LoadEnv, SkipsVariablesOfOtherComponents) {
  Env env{"MTIER_CONF=not options", "MTIER_LOG_FD=3", "MTIER_TEST_ANYTHING=1", "MTIER_TEST_=1",
          "MTIER_LOOKAHEAD=2", "MTIER_TORCH=0", "MTIER_JOB=ctr-model"};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_env(env.envp(), &why), 0) << why;
  EXPECT_EQ(o.load_env(nullptr, &why), 0);
}

TEST(LoadEnv, DaemonSocketIsAnOption) {
  Env env{"MTIER_DAEMON_SOCKET=/run/mtier/s", "MTIER_DAEMON_WEIGHT=3"};
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_env(env.envp(), &why), 0) << why;
  EXPECT_EQ(o.get().daemon_socket, "/run/mtier/s");
  EXPECT_EQ(o.get().daemon_weight, 3u);
  Env bad{"MTIER_DAEMON_WEIGHT=0"};
  EXPECT_EQ(o.load_env(bad.envp(), &why), -EINVAL);
}

TEST(LoadEnv, UnknownVariableIsAnError) {
  OptionSet o;
  std::string why;
  Env typo{"MTIER_DRAM_BYTE=1G"};
  EXPECT_EQ(o.load_env(typo.envp(), &why), -EINVAL);
  EXPECT_EQ(why, "unknown variable MTIER_DRAM_BYTE (did you mean MTIER_DRAM_BYTES?)");
  Env junk{"MTIER_FROB=1"};
  EXPECT_EQ(o.load_env(junk.envp(), &why), -EINVAL);
  EXPECT_EQ(why, "unknown variable MTIER_FROB");
  Env lower{"MTIER_dram_bytes=1G"};
  EXPECT_EQ(o.load_env(lower.envp(), &why), -EINVAL);
  EXPECT_EQ(why, "unknown variable MTIER_dram_bytes (did you mean MTIER_DRAM_BYTES?)");
}

TEST(LoadEnv, BadValueNamesTheVariableAndAppliesNothing) {
  Env env{"MTIER_DRAM_BYTES=1G", "MTIER_QUEUE_DEPTH=0"};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_env(env.envp(), &why), -EINVAL);
  EXPECT_EQ(why, "MTIER_QUEUE_DEPTH: \"0\" is out of range (1 to 32768)");
  EXPECT_EQ(o.get().dram_bytes, 0u);
}

// ---- load_all: precedence ------------------------------------------------

TEST(LoadAll, FileThenConfThenEnv) {
  TempDir dir;
  std::string etc = dir.write("mtier.conf",
                              "dram_bytes = 1G\nqueue_depth = 8\nprefetch_pages = 2\n");
  Env env{"MTIER_CONF=dram_bytes=2G,queue_depth=16", "MTIER_DRAM_BYTES=3G"};
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_all(env.envp(), &why, etc.c_str()), 0) << why;
  EXPECT_EQ(o.get().dram_bytes, 3 * kGiB);
  EXPECT_EQ(o.source("dram_bytes"), OptionSource::kEnv);
  EXPECT_EQ(o.get().queue_depth, 16u);
  EXPECT_EQ(o.source("queue_depth"), OptionSource::kConf);
  EXPECT_EQ(o.get().prefetch_pages, 2u);
  EXPECT_EQ(o.source("prefetch_pages"), OptionSource::kFile);
  EXPECT_EQ(o.get().evict_batch, Options{}.evict_batch);
  EXPECT_EQ(o.source("evict_batch"), OptionSource::kDefault);
}

TEST(LoadAll, ConfNamingAFileReadsIt) {
  TempDir dir;
  std::string conf = dir.write("job.conf", "queue_depth = 128\n");
  Env env{"MTIER_CONF=" + conf};
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_all(env.envp(), &why, (dir.path() + "/absent.conf").c_str()), 0) << why;
  EXPECT_EQ(o.get().queue_depth, 128u);
  EXPECT_EQ(o.source("queue_depth"), OptionSource::kConf);
}

TEST(LoadAll, ConfFileErrorsNameTheFile) {
  TempDir dir;
  std::string conf = dir.write("job.conf", "queue_depth = 128\nqueue_depth: 4\n");
  Env env{"MTIER_CONF=" + conf};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_all(env.envp(), &why, nullptr), -EINVAL);
  EXPECT_EQ(why, conf + ":2: expected \"name = value\", got \"queue_depth: 4\"");
}

TEST(LoadAll, ConfThatIsNeitherFileNorText) {
  Env env{"MTIER_CONF=/nonexistent/mtier.conf"};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_all(env.envp(), &why, nullptr), -EINVAL);
  EXPECT_EQ(why,
            "MTIER_CONF: \"/nonexistent/mtier.conf\" is neither an existing file nor option text "
            "(name=value,name=value)");
}

// MTIER_CONF naming something that is not a regular file: one line that
// names it, nothing read (mtier.conf(5); the reader: read_file_test).
TEST(LoadAll, ConfNamingADeviceIsAnErrorThatNamesIt) {
  Env env{"MTIER_CONF=/dev/zero"};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_all(env.envp(), &why, nullptr), -EINVAL);
  EXPECT_EQ(why, "/dev/zero: not a regular file (a character device)");
  EXPECT_EQ(o.describe(), OptionSet().describe());
}

TEST(LoadAll, MissingEtcFileAndEmptyConfAreFine) {
  TempDir dir;
  Env env{"MTIER_CONF="};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_all(env.envp(), &why, (dir.path() + "/absent.conf").c_str()), 0) << why;
  EXPECT_EQ(o.describe(), OptionSet().describe());
}

TEST(LoadAll, WatermarksCheckedAcrossSources) {
  TempDir dir;
  std::string etc = dir.write("mtier.conf", "high_watermark = 80\n");
  OptionSet o;
  std::string why;
  Env none{};
  ASSERT_EQ(o.load_all(none.envp(), &why, etc.c_str()), 0) << why;
  EXPECT_EQ(o.get().low_watermark, 78u) << "the low default follows the high mark set";
  Env bad{"MTIER_LOW_WATERMARK=85"};
  EXPECT_EQ(o.load_all(bad.envp(), &why, etc.c_str()), -EINVAL);
  EXPECT_EQ(why,
            "low_watermark = 85 (environment) must be below high_watermark = 80 "
            "(" MTIER_SYSCONFDIR "/mtier.conf)");
  Env fix{"MTIER_LOW_WATERMARK=70"};
  ASSERT_EQ(o.load_all(fix.envp(), &why, etc.c_str()), 0) << why;
  EXPECT_EQ(o.get().high_watermark, 80u);
  EXPECT_EQ(o.get().low_watermark, 70u);
}

TEST(LoadAll, AnErrorAnywhereAppliesNothing) {
  TempDir dir;
  std::string etc = dir.write("mtier.conf", "dram_bytes = 1G\n");
  Env env{"MTIER_CONF=queue_depth=4", "MTIER_NAMEZ=a"};
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.load_all(env.envp(), &why, etc.c_str()), -EINVAL);
  EXPECT_EQ(why, "unknown variable MTIER_NAMEZ (did you mean MTIER_NAMES?)");
  EXPECT_EQ(o.describe(), OptionSet().describe());
}

// ---- describe, source names --------------------------------------------------

TEST(Describe, OneLinePerOptionWithSource) {
  OptionSet o;
  ASSERT_EQ(o.set("verbose", "1", OptionSource::kApi, nullptr), 0);
  std::string d = o.describe();
  EXPECT_TRUE(contains(d, "dram_bytes = 0 (default)\n")) << d;
  EXPECT_TRUE(contains(d, "min_bytes = 64M (default)\n")) << d;
  EXPECT_TRUE(contains(d, "dram_node = -1 (default)\n")) << d;
  EXPECT_TRUE(contains(d, "store_path = \"\" (default)\n")) << d;
  EXPECT_TRUE(contains(d, "verbose = true (API)\n")) << d;
  size_t lines = 0;
  for (char c : d) lines += c == '\n';
  EXPECT_EQ(lines, option_table().size());
}

// describe() minus the sources: "name = value" lines, which load_text reads back.
std::string values_only(const OptionSet& o) {
  std::istringstream in(o.describe());
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(" (")) + "\n";
  return out;
}

TEST(Describe, ValuesReadBackUnchanged) {
  OptionSet o;
  std::string why;
  ASSERT_EQ(o.load_text("dram_bytes=12345\nregion_bytes=3G\nstore_path=/a b\nnames=x,y\n"
                        "dram_node=2\nverbose=1\nhigh_watermark=60\nlow_watermark=0",
                        OptionSource::kApi, &why),
            0)
      << why;
  OptionSet copy;
  ASSERT_EQ(copy.load_text(values_only(o), OptionSource::kFile, &why), 0) << why;
  EXPECT_EQ(values_only(copy), values_only(o));
}

TEST(SourceName, AllSources) {
  EXPECT_STREQ(option_source_name(OptionSource::kDefault), "default");
  // configure's --sysconfdir, not a fixed /etc (the packages configure /etc).
  EXPECT_STREQ(option_source_name(OptionSource::kFile), MTIER_SYSCONFDIR "/mtier.conf");
  EXPECT_STREQ(option_source_name(OptionSource::kConf), "MTIER_CONF");
  EXPECT_STREQ(option_source_name(OptionSource::kEnv), "environment");
  EXPECT_STREQ(option_source_name(OptionSource::kApi), "API");
}

// ---- the table ---------------------------------------------------------------

TEST(Table, NamesAreUniqueAndLowerCase) {
  std::set<std::string> seen;
  for (const OptionInfo& info : option_table()) {
    std::string name = info.name;
    EXPECT_TRUE(seen.insert(name).second) << name;
    for (char c : name) EXPECT_TRUE(islower(c) || c == '_') << name;
    EXPECT_NE(std::string(info.help), "") << name;
  }
  EXPECT_EQ(seen.size(), 33u) << "a field of Options without a table entry?";
}

// The documented default, parsed, is the struct's default, for every option.
TEST(Table, DefaultTextMatchesStructDefaults) {
  OptionSet parsed;
  for (const OptionInfo& info : option_table()) {
    std::string text = info.default_text;
    if (text == "\"\"") text = "";
    std::string why;
    EXPECT_EQ(parsed.set(info.name, text, OptionSource::kApi, &why), 0) << why;
  }
  EXPECT_EQ(values_only(parsed), values_only(OptionSet()));
}

TEST(Table, EveryOptionHasAVariable) {
  for (const OptionInfo& info : option_table()) {
    std::string var = "MTIER_";
    for (const char* p = info.name; *p; ++p) var += static_cast<char>(toupper(*p));
    std::string text = info.default_text;
    Env env{var + "=" + (text == "\"\"" ? "" : text)};
    OptionSet o;
    std::string why;
    EXPECT_EQ(o.load_env(env.envp(), &why), 0) << why;
    EXPECT_EQ(o.source(info.name), OptionSource::kEnv) << var;
  }
}

// mtier.conf(5) lists each option as "\fBname\fR (type) default" and its variable.
TEST(ManPage, DocumentsEveryOption) {
  std::ifstream in(MTIER_SRCDIR "/man/mtier.conf.5");
  ASSERT_TRUE(in) << "cannot read " MTIER_SRCDIR "/man/mtier.conf.5";
  std::stringstream buf;
  buf << in.rdbuf();
  std::string man = buf.str();
  for (size_t p; (p = man.find("\\-")) != std::string::npos;) man.replace(p, 2, "-");
  for (const OptionInfo& info : option_table()) {
    std::string term = std::string("\n\\fB") + info.name + "\\fR (" + config::type_name(info.type) +
                       ") " + info.default_text + "\n";
    EXPECT_TRUE(contains(man, term)) << "mtier.conf.5 lacks the entry" << term;
    std::string var = "MTIER_";
    for (const char* p = info.name; *p; ++p) var += static_cast<char>(toupper(*p));
    EXPECT_TRUE(contains(man, ".BR " + var + " .\n")) << "mtier.conf.5 lacks " << var;
  }
}

TEST(SizeRanges, ParsesClosedOpenAndExactRanges) {
  std::vector<SizeRange> r;
  std::string why;
  ASSERT_EQ(parse_size_ranges("3M-5M, 8M-,-2K,4096", &r, &why), 0) << why;
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].lo, 3u << 20);
  EXPECT_EQ(r[0].hi, 5u << 20);
  EXPECT_EQ(r[1].lo, 8u << 20);
  EXPECT_EQ(r[1].hi, UINT64_MAX);
  EXPECT_EQ(r[2].lo, 0u);
  EXPECT_EQ(r[2].hi, 2048u);
  EXPECT_EQ(r[3].lo, 4096u);
  EXPECT_EQ(r[3].hi, 4096u);
  EXPECT_TRUE(any_contains(r, 4u << 20));
  EXPECT_TRUE(any_contains(r, 5u << 20));
  EXPECT_FALSE(any_contains(r, (5u << 20) + 1));
  EXPECT_FALSE(any_contains(r, 4097));
  ASSERT_EQ(parse_size_ranges("", &r, &why), 0);
  EXPECT_TRUE(r.empty());
}

TEST(SizeRanges, RejectsWhatIsNotARange) {
  std::vector<SizeRange> r;
  for (const char* bad : {"foo", "1M-2M-3M", "-", "5M-3M", "1M,,2M", "1M-x", "1.5M"}) {
    std::string why;
    EXPECT_EQ(parse_size_ranges(bad, &r, &why), -EINVAL) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(SizeRanges, OptionNamesItselfInTheError) {
  OptionSet o;
  std::string why;
  EXPECT_EQ(o.set("exclude_sizes", "foo", OptionSource::kEnv, &why), -EINVAL);
  EXPECT_NE(why.find("exclude_sizes"), std::string::npos) << why;
  EXPECT_NE(why.find("foo"), std::string::npos) << why;
  EXPECT_EQ(o.set("include_sizes", "512K-600K", OptionSource::kEnv, &why), 0) << why;
  EXPECT_EQ(o.get().include_sizes, "512K-600K");
}

}  // namespace
}  // namespace mtier
