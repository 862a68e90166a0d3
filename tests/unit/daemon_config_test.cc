// SPDX-License-Identifier: Apache-2.0
// Unit tests for the daemon's leaf parts: the settings table and config
// parser (daemon/daemon_config), the command line (daemon/cli), sd_notify
// (daemon/sd_notify), and man/mtierd.8 against the table.
#include "build_config.h"
#include "cli.h"
#include "daemon_config.h"
#include "metrics_http.h"
#include "sd_notify.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for man/mtierd.8)"
#endif

namespace mtier::daemon {
namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30, kTiB = 1ull << 40;

// A scratch directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mtierd_test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = file(name);
    std::ofstream(p) << text;
    return p;
  }
  // A path in the directory, removed with it.
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// An argv built from strings ("mtierd" first).
class Argv {
 public:
  Argv(std::initializer_list<std::string> args) : args_{"mtierd"} {
    args_.insert(args_.end(), args);
    for (std::string& a : args_) ptrs_.push_back(a.data());
    ptrs_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(args_.size()); }
  char** argv() { return ptrs_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> ptrs_;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Parses one config line; returns the error message ("" if it parsed).
std::string error_of(const std::string& text, DaemonConfig* cfg = nullptr) {
  DaemonConfig scratch;
  std::string why;
  int rc = load_text(text, "f.conf", cfg ? cfg : &scratch, &why);
  EXPECT_EQ(rc == 0, why.empty()) << why;
  return rc == 0 ? "" : why;
}

// ---- daemon_config ----

TEST(DaemonConfig, TableDefaultsMatchTheStruct) {
  std::string described = describe_config(DaemonConfig{});
  std::string expected;
  for (const DaemonOptionInfo& info : daemon_option_table())
    expected += std::string(info.name) + " = " + info.default_text + "\n";
  EXPECT_EQ(described, expected);
  // And each default text parses back to the default.
  DaemonConfig cfg;
  for (const DaemonOptionInfo& info : daemon_option_table()) {
    std::string why, text = info.default_text;
    if (text == "\"\"") text = "";
    EXPECT_EQ(set_option(info.name, text, &cfg, &why), 0) << info.name << ": " << why;
  }
  EXPECT_EQ(describe_config(cfg), expected);
  EXPECT_EQ(daemon_option_table().size(), 18u);
}

// metrics_address: HOST:PORT, [IPV6]:PORT, or none; what does not parse is
// said with the text.
TEST(MetricsAddress, ParsesHostPortAndRefusesTheRest) {
  sockaddr_storage a{};
  socklen_t len = 0;
  std::string why;
  ASSERT_EQ(parse_listen_address("127.0.0.1:9477", &a, &len, &why), 0) << why;
  EXPECT_EQ(a.ss_family, AF_INET);
  EXPECT_EQ(ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port), 9477);
  ASSERT_EQ(parse_listen_address("[::1]:80", &a, &len, &why), 0) << why;
  EXPECT_EQ(a.ss_family, AF_INET6);
  EXPECT_EQ(parse_listen_address("none", &a, &len, &why), 1);
  EXPECT_EQ(parse_listen_address("", &a, &len, &why), 1);
  for (const char* bad : {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:x", ":9477",
                          "[::1]9477", "[::1", "::1:9477", "nosuch.invalid:9477"}) {
    why.clear();
    EXPECT_EQ(parse_listen_address(bad, &a, &len, &why), -EINVAL) << bad;
    EXPECT_NE(why.find(std::string("'") + bad + "'"), std::string::npos) << why;
  }
}

// The endpoint renders only while scraped, at most once a second, and a
// scrape of a stale text waits for the next one (up to a second).
TEST(MetricsAddress, ScrapesAskForRendersAndGetTheFreshText) {
  MetricsHttp m;
  std::string why;
  ASSERT_EQ(m.start("127.0.0.1:0", &why), -EINVAL);  // port 0 is not an address
  ASSERT_EQ(m.start("none", &why), 0);
  EXPECT_FALSE(m.serving());
  EXPECT_FALSE(m.wants_render(5'000'000'000));  // not serving
  // Through the scrape path without a listener: the text published last.
  m.publish("a 1\n", 1'000'000'000);
  EXPECT_EQ(m.scrape(1'500'000'000), "a 1\n");
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m.publish("a 2\n", 9'000'000'000);
  });
  EXPECT_EQ(m.scrape(9'000'000'000), "a 2\n");  // stale: waited for the render
  late.join();
}

// Built without libmicrohttpd, an address is still checked, and then
// refused in one line that names the package; "none" is no endpoint.
TEST(MetricsAddress, WithoutLibmicrohttpdStartNamesThePackage) {
  if (build::kHaveMicrohttpd) GTEST_SKIP() << "built with libmicrohttpd (the daemon tests serve)";
  MetricsHttp m;
  std::string why;
  EXPECT_EQ(m.start("127.0.0.1:", &why), -EINVAL);
  EXPECT_EQ(m.start("none", &why), 0);
  EXPECT_EQ(m.start("127.0.0.1:9477", &why), -ENOTSUP);
  EXPECT_NE(why.find("libmicrohttpd-dev"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_FALSE(m.serving());
}

TEST(DaemonConfig, Defaults) {
  DaemonConfig c;
  EXPECT_EQ(c.socket, "/run/mtier/mtierd.sock");
  EXPECT_EQ(c.policy, "lfu");
  EXPECT_EQ(c.policy_params, "");
  EXPECT_EQ(c.dram_bytes, 0u);
  EXPECT_EQ(c.slow_bytes, 0u);
  EXPECT_EQ(c.migrate_rate, 256 * kMiB);
  EXPECT_EQ(c.sources, kSourcesAuto);
  EXPECT_EQ(c.sample_period, 10007u);
  EXPECT_EQ(c.max_samples, 50000u);
  EXPECT_EQ(c.heat_granularity, 1u);
  EXPECT_EQ(c.tick_ms, 100u);
  EXPECT_EQ(c.scan_pages_per_tick, 1u << 20);
  EXPECT_EQ(c.log_level, log::Level::kNotice);
  EXPECT_EQ(c.stale_ms, 5000u);
  EXPECT_EQ(c.max_connections, 1024u);
  EXPECT_EQ(c.max_connections_per_user, 256u);
  EXPECT_EQ(c.max_region_bytes_per_user, 0u);
}

TEST(DaemonConfig, ConnectionAndRegionCaps) {
  DaemonConfig c;
  EXPECT_EQ(error_of("max_connections = 64\nmax_connections_per_user = 8\n"
                     "max_region_bytes_per_user = 2T\n",
                     &c),
            "");
  EXPECT_EQ(c.max_connections, 64u);
  EXPECT_EQ(c.max_connections_per_user, 8u);
  EXPECT_EQ(c.max_region_bytes_per_user, 2ull << 40);
  EXPECT_NE(error_of("max_connections = 0").find("bad value '0' for 'max_connections'"),
            std::string::npos);
  EXPECT_NE(error_of("max_connections_per_user = 0").find("max_connections_per_user"),
            std::string::npos);
  EXPECT_NE(error_of("max_region_bytes_per_user = 17P").find("max_region_bytes_per_user"),
            std::string::npos);
}

TEST(DaemonConfig, EverySetting) {
  DaemonConfig c;
  std::string why;
  ASSERT_EQ(load_text("# mtierd.conf\n"
                      "\n"
                      "socket = /run/other/d.sock\n"
                      "  policy=hot-promote   # trailing comment\n"
                      "policy_params = threshold=8 window=4\n"
                      "dram_bytes = 64G\n"
                      "slow_bytes = 2T\n"
                      "migrate_rate = 512k\n"
                      "sources = pebs, page-faults\n"
                      "sample_period = 1000000000\n"
                      "max_samples = 1\n"
                      "heat_granularity = 512\n"
                      "tick_ms = 10\n"
                      "log_level = debug\n"
                      "stale_ms = 100\n"
                      "metrics_address = [::1]:9100\n",
                      "f.conf", &c, &why),
            0)
      << why;
  EXPECT_EQ(c.socket, "/run/other/d.sock");
  EXPECT_EQ(c.metrics_address, "[::1]:9100");
  EXPECT_EQ(c.policy, "hot-promote");
  EXPECT_EQ(c.policy_params, "threshold=8 window=4");
  EXPECT_EQ(c.dram_bytes, 64 * kGiB);
  EXPECT_EQ(c.slow_bytes, 2 * kTiB);
  EXPECT_EQ(c.migrate_rate, 512u << 10);
  EXPECT_EQ(c.sources, kSourcePebs | kSourcePageFaults);
  EXPECT_EQ(c.sample_period, 1000000000u);
  EXPECT_EQ(c.max_samples, 1u);
  EXPECT_EQ(c.heat_granularity, 512u);
  EXPECT_EQ(c.tick_ms, 10u);
  EXPECT_EQ(c.log_level, log::Level::kDebug);
  EXPECT_EQ(c.stale_ms, 100u);
  EXPECT_TRUE(contains(describe_config(c), "sources = pebs,page-faults\n"));
  EXPECT_TRUE(contains(describe_config(c), "dram_bytes = 64G\n"));
}

TEST(DaemonConfig, SizesTakeBinarySuffixes) {
  DaemonConfig c;
  std::string why;
  for (auto [text, bytes] : std::initializer_list<std::pair<const char*, uint64_t>>{
           {"4096", 4096}, {"64K", 64 << 10}, {"64M", 64 * kMiB}, {"3g", 3 * kGiB},
           {"1T", kTiB}, {"0", 0}}) {
    ASSERT_EQ(set_option("dram_bytes", text, &c, &why), 0) << text << ": " << why;
    EXPECT_EQ(c.dram_bytes, bytes) << text;
  }
  ASSERT_EQ(load_text("migrate_rate = 0", "x", &c, &why), 0);
  EXPECT_EQ(c.migrate_rate, 0u);  // unlimited
}

TEST(DaemonConfig, SourcesAndLevels) {
  DaemonConfig c;
  std::string why;
  struct Case {
    const char* text;
    unsigned mask;
    const char* shown;
  };
  for (const Case& k : {Case{"none", 0, "none"}, Case{"auto", kSourcesAuto, "auto"},
                        Case{"ibs", kSourceIbs, "ibs"},
                        Case{"page-faults,pebs,ibs,pebs",
                             kSourcePebs | kSourceIbs | kSourcePageFaults, "pebs,ibs,page-faults"}}) {
    ASSERT_EQ(set_option("sources", k.text, &c, &why), 0) << k.text << ": " << why;
    EXPECT_EQ(c.sources, k.mask) << k.text;
    EXPECT_EQ(sources_text(c.sources), k.shown);
  }
  for (log::Level l : {log::Level::kError, log::Level::kWarning, log::Level::kNotice,
                       log::Level::kInfo, log::Level::kDebug}) {
    ASSERT_EQ(set_option("log_level", level_name(l), &c, &why), 0) << why;
    EXPECT_EQ(c.log_level, l);
  }
}

TEST(DaemonConfig, QuotesCommentsAndDuplicates) {
  DaemonConfig c;
  c.policy_params = "a=1";
  std::string why;
  ASSERT_EQ(load_text("policy_params = \"\"\n"
                      "socket = /run/a#b.sock\n"  // '#' not after whitespace: part of the value
                      "tick_ms = 200\n"
                      "tick_ms = 300\n"           // later wins
                      "   # indented comment\n"
                      "\t\n"
                      "policy = lru",             // no final newline
                      "f.conf", &c, &why),
            0)
      << why;
  EXPECT_EQ(c.policy_params, "");
  EXPECT_EQ(c.socket, "/run/a#b.sock");
  EXPECT_EQ(c.tick_ms, 300u);
  EXPECT_EQ(c.policy, "lru");
  ASSERT_EQ(load_text("", "f.conf", &c, &why), 0);
}

TEST(DaemonConfig, ErrorMessages) {
  EXPECT_EQ(error_of("\n\ntick = 100\n"), "f.conf:3: unknown option 'tick'");
  EXPECT_EQ(error_of("tick_ms 100"), "f.conf:1: expected 'name = value', got 'tick_ms 100'");
  EXPECT_EQ(error_of("# c\ntick_ms = 5"),
            "f.conf:2: bad value '5' for 'tick_ms' (expected an integer from 10 to 1000)");
  EXPECT_EQ(error_of("tick_ms = 1001"),
            "f.conf:1: bad value '1001' for 'tick_ms' (expected an integer from 10 to 1000)");
  EXPECT_EQ(error_of("tick_ms = -1"),
            "f.conf:1: bad value '-1' for 'tick_ms' (expected an integer from 10 to 1000)");
  EXPECT_EQ(error_of("tick_ms ="),
            "f.conf:1: bad value '' for 'tick_ms' (expected an integer from 10 to 1000)");
  EXPECT_EQ(error_of("heat_granularity = 1k"),
            "f.conf:1: bad value '1k' for 'heat_granularity' (expected an integer from 1 to 512)");
  EXPECT_EQ(error_of("dram_bytes = 1.5G"),
            "f.conf:1: bad value '1.5G' for 'dram_bytes' (expected a size from 0 to 1P, e.g. 64M "
            "or 2G)");
  EXPECT_EQ(error_of("dram_bytes = 2P"),
            "f.conf:1: bad value '2P' for 'dram_bytes' (expected a size from 0 to 1P, e.g. 64M "
            "or 2G)");
  EXPECT_EQ(error_of("sources = pebs,,ibs"),
            "f.conf:1: bad value 'pebs,,ibs' for 'sources' (expected auto, none, or a comma list "
            "of pebs, ibs, page-faults)");
  EXPECT_EQ(error_of("sources = auto,pebs"),
            "f.conf:1: bad value 'auto,pebs' for 'sources' (expected auto, none, or a comma list "
            "of pebs, ibs, page-faults)");
  EXPECT_EQ(error_of("log_level = warn"),
            "f.conf:1: bad value 'warn' for 'log_level' (expected error, warning, notice, info "
            "or debug)");
  EXPECT_EQ(error_of("socket = run/mtierd.sock"),
            "f.conf:1: bad value 'run/mtierd.sock' for 'socket' (expected an absolute path of at "
            "most 107 bytes)");
  EXPECT_EQ(error_of("socket = /" + std::string(106, 'x')), "");
  EXPECT_TRUE(contains(error_of("socket = /" + std::string(107, 'x')), "for 'socket'"));
  EXPECT_EQ(error_of("policy = LFU"),
            "f.conf:1: bad value 'LFU' for 'policy' (expected lower-case letters, digits and "
            "'-', starting with a letter)");
  EXPECT_EQ(error_of("policy ="),
            "f.conf:1: bad value '' for 'policy' (expected lower-case letters, digits and '-', "
            "starting with a letter)");
  EXPECT_EQ(error_of("policy_params = threshold"),
            "f.conf:1: bad value 'threshold' for 'policy_params' (expected key=value pairs "
            "separated by spaces or commas, or \"\")");
  EXPECT_EQ(error_of("policy_params = hot_threshold=4,cold_ratio=0.25 cool_period_s=2"), "");
  EXPECT_TRUE(contains(error_of("policy_params = a=1 =2"), "for 'policy_params'"));
  EXPECT_TRUE(contains(error_of("policy_params = a="), "for 'policy_params'"));
}

TEST(DaemonConfig, EveryNumericBoundIsChecked) {
  for (const DaemonOptionInfo& info : daemon_option_table()) {
    if (info.type != DaemonOptionType::kUnsigned && info.type != DaemonOptionType::kSize) continue;
    DaemonConfig c;
    std::string why;
    EXPECT_EQ(set_option(info.name, std::to_string(info.min), &c, &why), 0) << info.name << why;
    EXPECT_EQ(set_option(info.name, std::to_string(info.max), &c, &why), 0) << info.name << why;
    EXPECT_EQ(set_option(info.name, std::to_string(info.max + 1), &c, &why), -EINVAL) << info.name;
    EXPECT_EQ(why, "bad value '" + std::to_string(info.max + 1) + "' for '" + info.name +
                       "' (expected " +
                       (info.type == DaemonOptionType::kSize ? "a size from " : "an integer from ") +
                       accepted_values(info) +
                       (info.type == DaemonOptionType::kSize ? ", e.g. 64M or 2G)" : ")"));
    if (info.min > 0) {
      EXPECT_EQ(set_option(info.name, std::to_string(info.min - 1), &c, &why), -EINVAL)
          << info.name;
    }
  }
}

TEST(DaemonConfig, AllOrNothing) {
  DaemonConfig c;
  c.tick_ms = 500;
  std::string before = describe_config(c);
  std::string why;
  EXPECT_EQ(load_text("tick_ms = 200\ndram_bytes = 1G\npolicy = lru\nbogus = 1\n", "f.conf", &c,
                      &why),
            -EINVAL);
  EXPECT_EQ(why, "f.conf:4: unknown option 'bogus'");
  EXPECT_EQ(describe_config(c), before);
  EXPECT_EQ(set_option("tick_ms", "1", &c, &why), -EINVAL);
  EXPECT_EQ(set_option("nope", "1", &c, &why), -EINVAL);
  EXPECT_EQ(why, "unknown option 'nope'");
  EXPECT_EQ(describe_config(c), before);
  EXPECT_EQ(load_text("tick_ms = 1", "f.conf", &c, nullptr), -EINVAL);  // why is optional
}

TEST(DaemonConfig, LoadFile) {
  TempDir dir;
  DaemonConfig c;
  std::string why;
  std::string missing = dir.path() + "/missing.conf";
  EXPECT_EQ(load_file(missing, false, &c, &why), 0);
  EXPECT_EQ(describe_config(c), describe_config(DaemonConfig{}));
  EXPECT_EQ(load_file(missing, true, &c, &why), -ENOENT);
  EXPECT_EQ(why, missing + ": cannot read: No such file or directory");
  EXPECT_EQ(load_file(dir.path(), false, &c, &why), -EISDIR);
  EXPECT_EQ(why, dir.path() + ": not a regular file (a directory)");
  std::string good = dir.write("good.conf", "tick_ms = 50\nsources = none\n");
  ASSERT_EQ(load_file(good, true, &c, &why), 0) << why;
  EXPECT_EQ(c.tick_ms, 50u);
  EXPECT_EQ(c.sources, 0u);
  std::string bad = dir.write("bad.conf", "tick_ms = 70\nlog_level = loud\n");
  EXPECT_EQ(load_file(bad, false, &c, &why), -EINVAL);
  EXPECT_EQ(why, bad + ":2: bad value 'loud' for 'log_level' (expected error, warning, notice, "
                       "info or debug)");
  EXPECT_EQ(c.tick_ms, 50u);
}

// ---- cli ----

CliResult parse_ok(Argv args) {
  CliResult r;
  std::string why;
  EXPECT_EQ(parse_cli(args.argc(), args.argv(), &r, &why), 0) << why;
  return r;
}

std::string usage_error_of(Argv args) {
  CliResult r;
  std::string why;
  EXPECT_EQ(parse_cli(args.argc(), args.argv(), &r, &why), -EINVAL);
  EXPECT_EQ(r.action, CliAction::kUsageError);
  return why;
}

TEST(Cli, NoArgumentsRuns) {
  CliResult r = parse_ok({});
  EXPECT_EQ(r.action, CliAction::kRun);
  EXPECT_EQ(r.config_path, MTIER_SYSCONFDIR "/mtier/mtierd.conf");
  EXPECT_FALSE(r.config_required);
  EXPECT_TRUE(r.overrides.empty());
}

TEST(Cli, HelpListsEveryOptionAndKey) {
  for (const char* flag : {"--help", "-h"}) {
    CliResult r = parse_ok({"--socket", "/x.sock", flag, "--bogus"});  // acts at once
    EXPECT_EQ(r.action, CliAction::kHelp);
    EXPECT_EQ(r.text, usage_text());
  }
  std::string help = usage_text();
  for (const char* opt : {"--config FILE", "--check-config [FILE]", "--socket PATH",
                          "--policy NAME", "--policy-params", "--dram-bytes SIZE",
                          "-v, --verbose", "--debug", "-h, --help", "--version"})
    EXPECT_TRUE(contains(help, opt)) << opt;
  for (const DaemonOptionInfo& info : daemon_option_table())
    EXPECT_TRUE(contains(help, "  " + std::string(info.name) + " = " + info.default_text + "\n"))
        << info.name;
}

TEST(Cli, Version) {
  CliResult r = parse_ok({"--version"});
  EXPECT_EQ(r.action, CliAction::kVersion);
  EXPECT_EQ(r.text.rfind("mtierd ", 0), 0u) << r.text;
  EXPECT_EQ(r.text.back(), '\n');
}

TEST(Cli, CheckConfigForms) {
  CliResult r = parse_ok({"--check-config"});
  EXPECT_EQ(r.action, CliAction::kCheckConfig);
  EXPECT_EQ(r.config_path, MTIER_SYSCONFDIR "/mtier/mtierd.conf");
  EXPECT_FALSE(r.config_required);
  r = parse_ok({"--check-config", "/a.conf"});
  EXPECT_EQ(r.action, CliAction::kCheckConfig);
  EXPECT_EQ(r.config_path, "/a.conf");
  EXPECT_TRUE(r.config_required);
  r = parse_ok({"--check-config=/b.conf"});
  EXPECT_EQ(r.config_path, "/b.conf");
  r = parse_ok({"--config", "/c.conf", "--check-config", "--socket", "/s"});
  EXPECT_EQ(r.action, CliAction::kCheckConfig);
  EXPECT_EQ(r.config_path, "/c.conf");  // --socket was not taken as FILE
  EXPECT_TRUE(r.config_required);
  ASSERT_EQ(r.overrides.size(), 1u);
  r = parse_ok({"--config=/d.conf"});
  EXPECT_EQ(r.action, CliAction::kRun);
  EXPECT_EQ(r.config_path, "/d.conf");
  EXPECT_TRUE(r.config_required);
}

TEST(Cli, VerbosityTheMoreVerboseWins) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(parse_ok({"-v"}).overrides, std::vector<P>{P("log_level", "info")});
  EXPECT_EQ(parse_ok({"--verbose"}).overrides, std::vector<P>{P("log_level", "info")});
  EXPECT_EQ(parse_ok({"--debug", "-v"}).overrides, std::vector<P>{P("log_level", "debug")});
  EXPECT_EQ(parse_ok({"-v", "--debug"}).overrides, std::vector<P>{P("log_level", "debug")});
}

TEST(Cli, CommandLineOverridesTheFile) {
  TempDir dir;
  std::string conf = dir.write("d.conf",
                               "socket = /run/file.sock\ndram_bytes = 1G\ntick_ms = 50\n"
                               "policy = lru\nlog_level = error\n");
  CliResult r = parse_ok({"--config", conf, "--dram-bytes", "2G", "--socket=/run/cli.sock",
                          "--policy", "hot-promote", "--policy-params", "threshold=4 window=2",
                          "-v"});
  EXPECT_EQ(r.action, CliAction::kRun);
  DaemonConfig c;
  std::string why;
  ASSERT_EQ(load_config(r, &c, &why), 0) << why;
  EXPECT_EQ(c.socket, "/run/cli.sock");
  EXPECT_EQ(c.dram_bytes, 2 * kGiB);
  EXPECT_EQ(c.policy, "hot-promote");
  EXPECT_EQ(c.policy_params, "threshold=4 window=2");
  EXPECT_EQ(c.log_level, log::Level::kInfo);
  EXPECT_EQ(c.tick_ms, 50u);  // from the file
  EXPECT_EQ(c.stale_ms, 5000u);  // default

  // A re-read (SIGHUP) that fails keeps the settings; one that succeeds
  // starts from the defaults, so a key removed from the file reverts.
  dir.write("d.conf", "tick_ms = 1\n");
  EXPECT_EQ(load_config(r, &c, &why), -EINVAL);
  EXPECT_EQ(why, conf + ":1: bad value '1' for 'tick_ms' (expected an integer from 10 to 1000)");
  EXPECT_EQ(c.tick_ms, 50u);
  dir.write("d.conf", "# emptied\n");
  ASSERT_EQ(load_config(r, &c, &why), 0) << why;
  EXPECT_EQ(c.tick_ms, 100u);
  EXPECT_EQ(c.scan_pages_per_tick, 1u << 20);
  EXPECT_EQ(c.dram_bytes, 2 * kGiB);  // the command line still applies
}

TEST(Cli, ConfigFileMissing) {
  DaemonConfig c;
  std::string why;
  CliResult def;  // the default path, as if not given
  def.config_path = "/nonexistent/mtierd.conf";
  EXPECT_EQ(load_config(def, &c, &why), 0) << why;
  CliResult r = parse_ok({"--config", "/nonexistent/mtierd.conf"});
  EXPECT_EQ(load_config(r, &c, &why), -ENOENT);
  EXPECT_EQ(why, "/nonexistent/mtierd.conf: cannot read: No such file or directory");
}

TEST(Cli, CheckConfig) {
  TempDir dir;
  std::string good = dir.write("good.conf", "tick_ms = 20\n");
  std::string bad = dir.write("bad.conf", "\ntick = 20\n");
  std::string msg;
  EXPECT_EQ(check_config(parse_ok({"--check-config", good}), &msg), 0);
  EXPECT_EQ(msg, good + ": ok");
  EXPECT_EQ(check_config(parse_ok({"--check-config", bad}), &msg), -EINVAL);
  EXPECT_EQ(msg, bad + ":2: unknown option 'tick'");
  EXPECT_EQ(check_config(parse_ok({"--check-config", dir.path() + "/none.conf"}), &msg), -ENOENT);
  EXPECT_EQ(msg, dir.path() + "/none.conf: cannot read: No such file or directory");
  CliResult def;
  def.action = CliAction::kCheckConfig;
  def.config_path = dir.path() + "/none.conf";
  EXPECT_EQ(check_config(def, &msg), 0);
  EXPECT_EQ(msg, def.config_path + ": ok (not found, the defaults apply)");
  // The policy is made as at start: a name or parameter it refuses fails.
  std::string nosuch = dir.write("nosuch.conf", "policy = nosuch\n");
  EXPECT_EQ(check_config(parse_ok({"--check-config", nosuch}), &msg), -EINVAL);
  EXPECT_EQ(msg.rfind(nosuch + ": unknown policy \"nosuch\" (one of: ", 0), 0u) << msg;
  std::string param = dir.write("param.conf", "policy = lru\npolicy_params = bogus=1\n");
  EXPECT_EQ(check_config(parse_ok({"--check-config", param}), &msg), -EINVAL);
  EXPECT_NE(msg.find("bogus"), std::string::npos) << msg;
  // Named on the command line: the flag as typed is blamed, not the config
  // file (here one that does not exist).
  CliResult flagged = parse_ok({"--policy", "nosuch", "--check-config"});
  flagged.config_path = dir.path() + "/none.conf";
  EXPECT_EQ(check_config(flagged, &msg), -EINVAL);
  EXPECT_EQ(msg.rfind("--policy 'nosuch': unknown policy \"nosuch\" (one of: ", 0), 0u) << msg;
  bool usage = false;
  DaemonConfig cfg;
  ASSERT_EQ(load_config(flagged, &cfg, &msg), 0);
  EXPECT_EQ(check_policy(flagged, cfg, &msg, &usage), -EINVAL);
  EXPECT_TRUE(usage);
  CliResult params = parse_ok({"--policy-params", "bogus=1", "--check-config", param});
  EXPECT_EQ(check_config(params, &msg), -EINVAL);
  EXPECT_EQ(msg.rfind("--policy-params 'bogus=1': ", 0), 0u) << msg;
}

TEST(Cli, UsageErrors) {
  // The reason alone: main adds "mtierd: " and "Try 'mtierd --help'.".
  EXPECT_EQ(usage_error_of({"--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(usage_error_of({"--bogus=1"}), "unknown option '--bogus'");
  EXPECT_EQ(usage_error_of({"-x"}), "unknown option '-x'");
  EXPECT_EQ(usage_error_of({"extra"}), "unexpected argument 'extra'");
  EXPECT_EQ(usage_error_of({"--socket"}), "option '--socket' requires an argument");
  EXPECT_EQ(usage_error_of({"--config"}), "option '--config' requires an argument");
  EXPECT_EQ(usage_error_of({"--config="}), "option '--config' needs a file name");
  EXPECT_EQ(usage_error_of({"--debug=1"}), "option '--debug' takes no value");
  EXPECT_EQ(usage_error_of({"--dram-bytes", "lots"}),
            "bad value 'lots' for '--dram-bytes' (expected a size from 0 to 1P, e.g. 64M or 2G)");
  EXPECT_EQ(usage_error_of({"--socket=relative.sock"}),
            "bad value 'relative.sock' for '--socket' (expected an absolute path of at most 107 "
            "bytes)");
  EXPECT_EQ(usage_error_of({"--policy", "Bad_Name"}),
            "bad value 'Bad_Name' for '--policy' (expected lower-case letters, digits and '-', "
            "starting with a letter)");
  EXPECT_EQ(usage_error_of({"--policy-params", "x"}),
            "bad value 'x' for '--policy-params' (expected key=value pairs separated by spaces "
            "or commas, or \"\")");
  // A usage error before --help wins; the error names the first problem.
  EXPECT_EQ(usage_error_of({"--bogus", "--help"}), "unknown option '--bogus'");
}

// ---- sd_notify ----

// Sets NOTIFY_SOCKET for one test and restores it after.
class NotifyEnv {
 public:
  explicit NotifyEnv(const char* value) {
    if (const char* old = getenv("NOTIFY_SOCKET")) old_ = old, had_ = true;
    if (value) setenv("NOTIFY_SOCKET", value, 1);
    else unsetenv("NOTIFY_SOCKET");
  }
  ~NotifyEnv() {
    if (had_) setenv("NOTIFY_SOCKET", old_.c_str(), 1);
    else unsetenv("NOTIFY_SOCKET");
  }

 private:
  std::string old_;
  bool had_ = false;
};

// A SOCK_DGRAM socket bound to `name` (a path, or '@' + an abstract name).
int bind_dgram(const std::string& name) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, name.data(), name.size());
  if (name[0] == '@') addr.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The next datagram on fd (non-blocking: it must already be there).
std::string receive(int fd) {
  char buf[256];
  ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  return n < 0 ? "<recv: " + std::string(strerror(errno)) + ">" : std::string(buf, size_t(n));
}

TEST(SdNotify, UnsetOrEmptyIsNotSystemd) {
  {
    NotifyEnv env(nullptr);
    EXPECT_EQ(sd_notify_state("READY=1"), 0);
  }
  NotifyEnv env("");
  EXPECT_EQ(sd_notify_state("READY=1"), 0);
}

TEST(SdNotify, SendsToAPathSocket) {
  TempDir dir;
  std::string path = dir.file("notify");
  int fd = bind_dgram(path);
  ASSERT_GE(fd, 0) << strerror(errno);
  NotifyEnv env(path.c_str());
  EXPECT_EQ(sd_notify_state("READY=1"), 1);
  EXPECT_EQ(receive(fd), "READY=1");
  EXPECT_EQ(sd_notify_state("STATUS=3 processes registered\nSTOPPING=1"), 1);
  EXPECT_EQ(receive(fd), "STATUS=3 processes registered\nSTOPPING=1");
  close(fd);
}

TEST(SdNotify, SendsToAnAbstractSocket) {
  std::string name = "@mtierd-test-" + std::to_string(getpid()) + "-" + std::to_string(rand());
  int fd = bind_dgram(name);
  ASSERT_GE(fd, 0) << strerror(errno);
  NotifyEnv env(name.c_str());
  EXPECT_EQ(sd_notify_state("READY=1"), 1);
  EXPECT_EQ(receive(fd), "READY=1");
  close(fd);
}

TEST(SdNotify, Failures) {
  TempDir dir;
  {
    NotifyEnv env("relative/notify");
    EXPECT_EQ(sd_notify_state("READY=1"), -EINVAL);
  }
  {
    std::string long_path = "/" + std::string(sizeof(sockaddr_un::sun_path), 'x');
    NotifyEnv env(long_path.c_str());
    EXPECT_EQ(sd_notify_state("READY=1"), -EINVAL);
  }
  {
    std::string gone = dir.path() + "/gone";
    NotifyEnv env(gone.c_str());
    EXPECT_EQ(sd_notify_state("READY=1"), -ENOENT);
    EXPECT_EQ(sd_notify_state(""), -EINVAL);
    EXPECT_EQ(sd_notify_state(nullptr), -EINVAL);
  }
}

// ---- man page ----

// The text from `head` up to the first of `ends` after it ("" if no head).
std::string man_part(const std::string& man, const std::string& head,
                     std::initializer_list<const char*> ends) {
  size_t start = man.find(head);
  if (start == std::string::npos) return "";
  size_t end = man.size();
  for (const char* next : ends) end = std::min(end, man.find(next, start + head.size()));
  return man.substr(start, end - start);
}

TEST(ManPage, ListsEveryKeyWithItsDefaultAndRange) {
  std::ifstream in(MTIER_SRCDIR "/man/mtierd.8");
  ASSERT_TRUE(in) << "cannot read " MTIER_SRCDIR "/man/mtierd.8";
  std::stringstream buf;
  buf << in.rdbuf();
  std::string man = buf.str();
  for (size_t p; (p = man.find("\\-")) != std::string::npos;) man.replace(p, 2, "-");
  for (size_t p; (p = man.find("\\(aq")) != std::string::npos;) man.replace(p, 4, "'");
  std::string config = man_part(man, "\n.SH CONFIGURATION\n", {"\n.SH"});
  ASSERT_FALSE(config.empty()) << "mtierd.8 has no CONFIGURATION section";
  for (const DaemonOptionInfo& info : daemon_option_table()) {
    std::string head = std::string("\n.TP\n\\fB") + info.name + "\\fR (" + type_name(info.type) +
                       ") " + info.default_text + "\n";
    std::string entry = man_part(config, head, {"\n.TP", "\n.SH", "\n.SS"});
    ASSERT_FALSE(entry.empty()) << "mtierd.8 lacks the entry" << head;
    bool numeric = info.type == DaemonOptionType::kSize || info.type == DaemonOptionType::kUnsigned;
    std::string range = (numeric ? "Range " : "Accepted: ") + accepted_values(info) + ".";
    EXPECT_TRUE(contains(entry, range)) << info.name << " lacks \"" << range << "\"";
  }
  // And no entry for a key the table does not have (one removed from it).
  const std::string entry_head = "\n.TP\n\\fB";
  for (size_t p = config.find(entry_head); p != std::string::npos;
       p = config.find(entry_head, p + 1)) {
    size_t start = p + entry_head.size(), end = config.find("\\fR", start);
    std::string key = config.substr(start, end - start);
    bool known = false;
    for (const DaemonOptionInfo& info : daemon_option_table()) known |= key == info.name;
    EXPECT_TRUE(known) << "mtierd.8 lists '" << key << "', which is not a setting";
  }
  std::string options = man_part(man, "\n.SH OPTIONS\n", {"\n.SH"});
  for (const char* flag : {".BI --config ", ".BR --check-config ", ".BI --socket ",
                           ".BI --policy ", ".BI --policy-params ", ".BI --dram-bytes ",
                           ".BR -v \", \" --verbose", ".B --debug", ".BR -h \", \" --help",
                           ".B --version"})
    EXPECT_TRUE(contains(options, flag)) << "OPTIONS lacks " << flag;
}

}  // namespace
}  // namespace mtier::daemon
