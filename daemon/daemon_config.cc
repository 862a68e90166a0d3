// SPDX-License-Identifier: Apache-2.0
// The daemon's settings table, where each value is stored, and the types
// only mtierd has; parsing is the shared mechanism's (config/option_table.h).
#include "daemon_config.h"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <string_view>
#include <utility>
#include <variant>

#include "config/parse_text.h"
#include "config/read_file.h"

namespace mtier::daemon {
namespace {

// Where a setting's value lives in DaemonConfig.
using Field = std::variant<std::string DaemonConfig::*, uint64_t DaemonConfig::*,
                           unsigned DaemonConfig::*, log::Level DaemonConfig::*>;

struct Def {
  DaemonOptionInfo info;
  Field field;
};

constexpr uint64_t kPiB = 1ull << 50;

using T = DaemonOptionType;
using C = DaemonConfig;
// The one table: every field of DaemonConfig, in declaration order.
constexpr Def kDefs[] = {
    {{"socket", T::kPath, "/run/mtier/mtierd.sock", 0, 0, false,
      "unix socket on which processes register and mtier(1) connects"},
     &C::socket},
    {{"policy", T::kName, "lfu", 0, 0, false,
      "placement policy: lfu, lru, hot-promote or static (mtier(7))"},
     &C::policy},
    {{"policy_params", T::kParams, "\"\"", 0, 0, false,
      "parameters of the policy (each policy's keys are in mtier(7))"},
     &C::policy_params},
    {{"dram_bytes", T::kSize, "0", 0, kPiB, false,
      "node-wide DRAM budget shared by the registered processes; 0 = none (each keeps its own)"},
     &C::dram_bytes},
    {{"slow_bytes", T::kSize, "0", 0, kPiB, false,
      "the same for the slow memory tier; 0 = none (each keeps its own)"},
     &C::slow_bytes},
    {{"migrate_rate", T::kSize, "256M", 0, kPiB, false,
      "bytes migrated per second, all processes together; 0 = unlimited"},
     &C::migrate_rate},
    {{"sources", T::kSources, "auto", 0, 0, false,
      "heat sources; auto = those this machine has, none = the runtimes' own sampler only"},
     &C::sources},
    {{"sample_period", T::kUnsigned, "10007", 1, 1000000000, false,
      "hardware sources: events between two samples"},
     &C::sample_period},
    {{"max_samples", T::kUnsigned, "50000", 1, 10000000, false,
      "samples processed per second, at most; the rest wait in the perf buffers, lost when full"},
     &C::max_samples},
    {{"heat_granularity", T::kUnsigned, "1", 1, 512, false, "pages per heat extent"},
     &C::heat_granularity},
    {{"tick_ms", T::kUnsigned, "100", 10, 1000, false,
      "policy period in milliseconds: migration orders are computed this often"},
     &C::tick_ms},
    {{"scan_pages_per_tick", T::kUnsigned, "1048576", 4096, 1u << 30, false,
      "page words a tick reads, all processes together; larger tables take several ticks a pass"},
     &C::scan_pages_per_tick},
    {{"log_level", T::kLogLevel, "notice", 0, 0, false,
      "least severe message level written"},
     &C::log_level},
    {{"stale_ms", T::kUnsigned, "5000", 100, 3600000, false,
      "a runtime whose heartbeat is older than this many milliseconds is considered gone"},
     &C::stale_ms},
    {{"max_connections", T::kUnsigned, "1024", 1, 1000000, false,
      "open connections, all users together; more are refused with an ERROR"},
     &C::max_connections},
    {{"max_connections_per_user", T::kUnsigned, "256", 1, 1000000, false,
      "open connections of one user other than root and mtierd's own; more are refused"},
     &C::max_connections_per_user},
    {{"max_region_bytes_per_user", T::kSize, "0", 0, kPiB * 16, false,
      "the regions one user's processes may register, summed; 0 = 32 times physical memory"},
     &C::max_region_bytes_per_user},
    {{"metrics_address", T::kString, "127.0.0.1:9477", 0, 0, false,
      "HOST:PORT or [IPV6]:PORT where Prometheus scrapes /metrics over HTTP; none = not served"},
     &C::metrics_address},
};

struct SourceName {
  const char* name;
  unsigned bit;
};
constexpr SourceName kSourceNames[] = {
    {"pebs", kSourcePebs}, {"ibs", kSourceIbs}, {"page-faults", kSourcePageFaults}};

constexpr log::Level kLevels[] = {log::Level::kError, log::Level::kWarning, log::Level::kNotice,
                                  log::Level::kInfo, log::Level::kDebug};

using config::human_size;
using config::Value;
using config_text::trim;

int parse_sources(std::string_view s, unsigned* out) {
  if (s == "auto") return *out = kSourcesAuto, 0;
  if (s == "none") return *out = 0, 0;
  unsigned mask = 0;
  for (size_t start = 0; start <= s.size();) {
    size_t comma = std::min(s.find(',', start), s.size());
    std::string_view item = trim(s.substr(start, comma - start));
    unsigned bit = 0;
    for (const SourceName& n : kSourceNames)
      if (item == n.name) bit = n.bit;
    if (bit == 0) return -EINVAL;
    mask |= bit;
    start = comma + 1;
  }
  *out = mask;
  return 0;
}

// The types only mtierd has: heat sources and log levels.
int parse_words(const DaemonOptionInfo& info, std::string_view value, uint64_t* out) {
  if (info.type == T::kSources) {
    unsigned mask = 0;
    if (parse_sources(value, &mask) != 0) return -EINVAL;
    *out = mask;
    return 0;
  }
  for (log::Level l : kLevels)
    if (value == level_name(l)) return *out = static_cast<uint64_t>(l), 0;
  return -EINVAL;
}

std::string accepted_words(const DaemonOptionInfo& info) {
  return info.type == T::kSources ? "auto, none, or a comma list of pebs, ibs, page-faults"
                                  : "error, warning, notice, info or debug";
}

// mtierd.conf's dialect: single quotes, no suggestion, one setting a line,
// "bad value 'V' for 'NAME' (expected ...)".
constexpr config::Dialect kDialect{'\'', false, false, false};

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// Stores p in the field of `def` (ranges were checked, so the casts are exact).
void store(DaemonConfig* c, const Def& def, Value&& p) {
  std::visit(Overload{[&](std::string C::*f) { c->*f = std::move(p.s); },
                      [&](uint64_t C::*f) { c->*f = p.u; },
                      [&](unsigned C::*f) { c->*f = static_cast<unsigned>(p.u); },
                      [&](log::Level C::*f) { c->*f = static_cast<log::Level>(p.u); }},
             def.field);
}

// The value of `def` in c, written as the table's default_text is.
std::string show_value(const DaemonConfig& c, const Def& def) {
  return std::visit(
      Overload{[&](std::string C::*f) { return (c.*f).empty() ? std::string("\"\"") : c.*f; },
               [&](uint64_t C::*f) { return human_size(c.*f); },
               [&](unsigned C::*f) {
                 return def.info.type == T::kSources ? sources_text(c.*f) : std::to_string(c.*f);
               },
               [&](log::Level C::*f) { return std::string(level_name(c.*f)); }},
      def.field);
}

void store_all(DaemonConfig* c, std::vector<config::Setting>&& settings) {
  for (config::Setting& st : settings) store(c, kDefs[st.index], std::move(st.value));
}

}  // namespace

const std::vector<DaemonOptionInfo>& daemon_option_table() {
  static const std::vector<DaemonOptionInfo> table = [] {
    std::vector<DaemonOptionInfo> t;
    for (const Def& d : kDefs) t.push_back(d.info);
    return t;
  }();
  return table;
}

const config::Table& daemon_table() {
  static const config::Table table(daemon_option_table().data(), std::size(kDefs), kDialect,
                                   nullptr, {parse_words, accepted_words});
  return table;
}

std::string accepted_values(const DaemonOptionInfo& info) {
  return daemon_table().accepted_values(info);
}

const char* level_name(log::Level level) {
  switch (level) {
    case log::Level::kError: return "error";
    case log::Level::kWarning: return "warning";
    case log::Level::kNotice: return "notice";
    case log::Level::kInfo: return "info";
    case log::Level::kDebug: return "debug";
  }
  return "unknown";
}

std::string sources_text(unsigned sources) {
  if (sources & kSourcesAuto) return "auto";
  std::string out;
  for (const SourceName& n : kSourceNames)
    if (sources & n.bit) out += (out.empty() ? "" : ",") + std::string(n.name);
  return out.empty() ? "none" : out;
}

int set_option(const std::string& name, const std::string& value, DaemonConfig* cfg,
               std::string* why, const char* label) {
  const config::Table& table = daemon_table();
  int i = table.find(name);
  if (i < 0) return config_text::fail(why, table.unknown_option(label ? label : name));
  Value v;
  if (int rc = table.parse_value(static_cast<size_t>(i), value, label ? label : name, &v, why))
    return rc;
  store(cfg, kDefs[static_cast<size_t>(i)], std::move(v));  // only after the value parsed
  return 0;
}

int load_text(const std::string& text, const std::string& origin, DaemonConfig* cfg,
              std::string* why) {
  std::vector<config::Setting> settings;
  if (int rc = daemon_table().parse_text(text, origin, &settings, why)) return rc;
  store_all(cfg, std::move(settings));
  return 0;
}

int load_file(const std::string& path, bool required, DaemonConfig* cfg, std::string* why) {
  std::string text;
  if (int rc = config::read_config_file(path, required, &text, why)) return rc;
  return load_text(text, path, cfg, why);
}

std::string describe_config(const DaemonConfig& cfg) {
  std::string out;
  for (const Def& d : kDefs) out += std::string(d.info.name) + " = " + show_value(cfg, d) + "\n";
  return out;
}

}  // namespace mtier::daemon
