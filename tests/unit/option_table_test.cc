// SPDX-License-Identifier: Apache-2.0
// Unit tests for the shared option mechanism (src/config/option_table): one
// table type, one value parser, the "name = value" text and environment
// parsers, the help listing, and the two dialects (mtier.conf, mtierd.conf)
// reading the same values the same way.
#include "config/option_table.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/options.h"

namespace mtier::config {
namespace {

using T = OptionType;
constexpr uint64_t kPiB = 1ull << 50;

constexpr OptionInfo kInfos[] = {
    {"budget", T::kSize, "0", 0, kPiB, false, "a size"},
    {"depth", T::kUnsigned, "64", 1, 512, false, "a number"},
    {"node", T::kInt, "-1", static_cast<uint64_t>(int64_t{-1}), 7, false, "an int"},
    {"mark", T::kPercent, "95", 1, 100, false, "a percentage"},
    {"on", T::kBool, "false", 0, 1, false, "a flag"},
    {"names", T::kString, "\"\"", 0, 0, false, "text"},
    {"socket", T::kPath, "/run/x.sock", 0, 0, false, "a path"},
    {"policy", T::kName, "lfu", 0, 0, false, "a name"},
    {"params", T::kParams, "\"\"", 0, 0, false, "key=value pairs"},
    {"level", T::kLogLevel, "notice", 0, 0, false, "a word"},
};

int parse_level(const OptionInfo&, std::string_view v, uint64_t* out) {
  if (v == "low") return *out = 1, 0;
  if (v == "high") return *out = 2, 0;
  return -EINVAL;
}
std::string level_words(const OptionInfo&) { return "low or high"; }

constexpr Dialect kConf{'"', true, true, true};       // mtier.conf's
constexpr Dialect kDaemon{'\'', false, false, false};  // mtierd.conf's

Table conf_table() {
  return Table(kInfos, std::size(kInfos), kConf, "TEST_", {parse_level, level_words});
}
Table daemon_table() {
  return Table(kInfos, std::size(kInfos), kDaemon, nullptr, {parse_level, level_words});
}

// The message of parsing `value` for `name` ("" if it parsed).
std::string error_of(const Table& t, const std::string& name, const std::string& value) {
  Value v;
  std::string why;
  int rc = t.parse_value(static_cast<size_t>(t.find(name)), value, name, &v, &why);
  EXPECT_EQ(rc == 0, why.empty()) << why;
  return rc == 0 ? "" : why;
}

TEST(OptionTable, TypeNamesAsTheManPagesWriteThem) {
  EXPECT_STREQ(type_name(T::kSize), "size");
  EXPECT_STREQ(type_name(T::kSizeRanges), "size ranges");
  EXPECT_STREQ(type_name(T::kPath), "path");
  EXPECT_STREQ(type_name(T::kLogLevel), "level");
}

TEST(OptionTable, ValuesOfEveryType) {
  Table t = conf_table();
  Value v;
  std::string why;
  ASSERT_EQ(t.parse_value(0, "2G", "budget", &v, &why), 0) << why;
  EXPECT_EQ(v.u, 2ull << 30);
  ASSERT_EQ(t.parse_value(2, "-1", "node", &v, &why), 0) << why;
  EXPECT_EQ(v.i, -1);
  ASSERT_EQ(t.parse_value(3, "60%", "mark", &v, &why), 0) << why;
  EXPECT_EQ(v.u, 60u);
  ASSERT_EQ(t.parse_value(4, "ON", "on", &v, &why), 0) << why;
  EXPECT_TRUE(v.b);
  ASSERT_EQ(t.parse_value(8, " a=1,b=2 ", "params", &v, &why), 0) << why;
  EXPECT_EQ(v.s, "a=1,b=2");
  ASSERT_EQ(t.parse_value(9, "high", "level", &v, &why), 0) << why;
  EXPECT_EQ(v.u, 2u);
}

// One parser: the dialects differ in how a message reads, never in what is accepted.
TEST(OptionTable, BothDialectsAcceptTheSameValues) {
  Table conf = conf_table(), daemon = daemon_table();
  const char* values[] = {"0",  "4096", "64M", "2g",    "1P",   "1.5G", "2P", "-1",  "",
                          "x",  "1k",   "512", "513",   "7",    "8",    "100%", "0%", "yes",
                          "no", "/a",   "a",   "LFU",   "hot-promote", "k=", "k=v", "high", "mid"};
  for (const OptionInfo& info : conf)
    for (const char* value : values)
      EXPECT_EQ(error_of(conf, info.name, value).empty(),
                error_of(daemon, info.name, value).empty())
          << info.name << " = " << value;
}

TEST(OptionTable, MessagesOfBothDialects) {
  EXPECT_EQ(error_of(conf_table(), "budget", "1.5G"),
            "budget: \"1.5G\" is not a size (fractions are not accepted: use a whole number "
            "with a smaller unit, e.g. 1536M for 1.5G)");
  EXPECT_EQ(error_of(daemon_table(), "budget", "1.5G"),
            "bad value '1.5G' for 'budget' (expected a size from 0 to 1P, e.g. 64M or 2G)");
  EXPECT_EQ(error_of(conf_table(), "depth", "0"), "depth: \"0\" is out of range (1 to 512)");
  EXPECT_EQ(error_of(daemon_table(), "depth", "0"),
            "bad value '0' for 'depth' (expected an integer from 1 to 512)");
  EXPECT_EQ(error_of(daemon_table(), "level", "mid"),
            "bad value 'mid' for 'level' (expected low or high)");
  EXPECT_EQ(error_of(conf_table(), "level", "mid"),
            "level: \"mid\" is not accepted (use low or high)");
  EXPECT_EQ(conf_table().unknown_option("dept"), "unknown option \"dept\" (did you mean \"depth\"?)");
  EXPECT_EQ(daemon_table().unknown_option("dept"), "unknown option 'dept'");
}

// The runtime's and the daemon's tables: the same type and range read a
// bad value the same way when the dialect is the same.
TEST(OptionTable, RuntimeAndDaemonOptionsShareTheParser) {
  const Table& runtime = runtime_option_table();
  const OptionInfo& slow = runtime[static_cast<size_t>(runtime.find("slow_bytes"))];
  ASSERT_EQ(slow.type, T::kSize);
  // The daemon's dram_bytes (0 to 1P, no share) in each dialect.
  const OptionInfo daemon_dram[] = {{"dram_bytes", T::kSize, "0", 0, kPiB, false, "budget"}};
  Table as_conf(daemon_dram, 1, runtime.dialect(), nullptr);
  for (const char* bad : {"1.5G", "2P", "x", "99999999999999999999"}) {
    Value v;
    std::string a, b;
    EXPECT_EQ(runtime.parse_value(static_cast<size_t>(runtime.find("slow_bytes")), bad, "X", &v,
                                  &a),
              -EINVAL);
    EXPECT_EQ(as_conf.parse_value(0, bad, "X", &v, &b), -EINVAL);
    EXPECT_EQ(a, b) << bad;
  }
}

TEST(OptionTable, LinesAndText) {
  std::vector<Setting> out;
  std::string why;
  ASSERT_EQ(conf_table().parse_text("# c\ndepth = 8, names = a,b\n\n  on=1 # x\n", "f", &out, &why),
            0)
      << why;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].value.u, 8u);
  EXPECT_EQ(out[1].value.s, "a,b");
  EXPECT_EQ(out[1].label, "names");
  EXPECT_TRUE(out[2].value.b);
  // mtierd.conf: one setting a line, the comma stays in the value.
  out.clear();
  EXPECT_EQ(daemon_table().parse_text("params = a=1,b=2\n", "f", &out, &why), 0) << why;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.s, "a=1,b=2");
  EXPECT_EQ(daemon_table().parse_text("\ndepth 8", "f", &out, &why), -EINVAL);
  EXPECT_EQ(why, "f:2: expected 'name = value', got 'depth 8'");
  EXPECT_EQ(conf_table().parse_text("depth 8", "f", &out, &why), -EINVAL);
  EXPECT_EQ(why, "f:1: expected \"name = value\", got \"depth 8\"");
  EXPECT_EQ(conf_table().parse_text("depth = \"9\"\nbogus = 1", "f", &out, &why), -EINVAL);
  EXPECT_EQ(why, "f:2: unknown option \"bogus\"");
}

bool skip_reserved(std::string_view var) { return var == "TEST_CONF"; }

TEST(OptionTable, Environment) {
  std::string a = "TEST_DEPTH=9", b = "TEST_CONF=x", c = "OTHER=1", d = "TEST_NAMEZ=1";
  char* env[] = {a.data(), b.data(), c.data(), nullptr, nullptr};
  std::vector<Setting> out;
  std::string why;
  ASSERT_EQ(conf_table().parse_env(env, skip_reserved, &out, &why), 0) << why;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.u, 9u);
  EXPECT_EQ(out[0].label, "TEST_DEPTH");
  env[3] = d.data();
  EXPECT_EQ(conf_table().parse_env(env, skip_reserved, &out, &why), -EINVAL);
  EXPECT_EQ(why, "unknown variable TEST_NAMEZ (did you mean TEST_NAMES?)");
  // A table without variables reads none.
  out.clear();
  EXPECT_EQ(daemon_table().parse_env(env, nullptr, &out, &why), 0);
  EXPECT_TRUE(out.empty());
}

TEST(OptionTable, HelpListing) {
  const OptionInfo two[] = {kInfos[1], kInfos[9]};
  Table t(two, 2, kDaemon, nullptr, {parse_level, level_words});
  EXPECT_EQ(t.help_listing(),
            "  depth = 64\n      a number\n      accepted: 1 to 512\n"
            "  level = notice\n      a word\n      accepted: low or high\n");
}

}  // namespace
}  // namespace mtier::config
