// SPDX-License-Identifier: Apache-2.0
// The sample config files installed as /etc/mtier.conf and
// /etc/mtier/mtierd.conf (etc/) against the option tables they are written
// from: every option of the table appears once, commented out at its default,
// after its help line; every option named in a sample exists; and each
// line, uncommented, parses. A table change that the samples do not follow
// fails here, as the man page tests do for the man pages.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/option_table.h"
#include "config/options.h"
#include "daemon_config.h"

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for etc/*.conf)"
#endif

namespace mtier {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Checks `path` against `table`.
void check_sample(const std::string& path, const config::Table& table) {
  std::vector<std::string> lines = read_lines(path);
  ASSERT_FALSE(lines.empty()) << "cannot read " << path;
  std::set<std::string> seen;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || l.rfind("# ", 0) == 0 || l == "#") continue;
    ASSERT_EQ(l[0], '#') << path << ":" << i + 1 << ": a setting not commented out: " << l;
    std::string setting = l.substr(1);
    std::string name = setting.substr(0, setting.find(" = "));
    int idx = table.find(name);
    ASSERT_GE(idx, 0) << path << ":" << i + 1 << ": no option '" << name << "'";
    const config::OptionInfo& info = table[idx];
    EXPECT_TRUE(seen.insert(name).second) << path << ": " << name << " twice";
    EXPECT_EQ(setting, name + " = " + info.default_text)
        << path << ":" << i + 1 << ": not the default";
    ASSERT_GT(i, 0u);
    EXPECT_EQ(lines[i - 1], std::string("# ") + info.help)
        << path << ":" << i << ": not its help line";
    std::vector<config::Setting> out;
    std::string why;
    EXPECT_EQ(table.parse_line(setting, path + ": ", &out, &why), 0) << why;
  }
  for (const config::OptionInfo& info : table)
    EXPECT_TRUE(seen.count(info.name)) << path << " lacks " << info.name;
}

TEST(SampleConfig, MtierConfHasEveryRuntimeOptionAtItsDefault) {
  check_sample(MTIER_SRCDIR "/etc/mtier.conf", runtime_option_table());
}

TEST(SampleConfig, MtierdConfHasEveryDaemonSettingAtItsDefault) {
  check_sample(MTIER_SRCDIR "/etc/mtierd.conf", daemon::daemon_table());
}

}  // namespace
}  // namespace mtier
