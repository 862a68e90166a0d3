// The daemon's settings table, its value parsers and the config file reader.
#include "daemon_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>
#include <variant>

#include "config/options.h"  // parse_size
#include "config/parse_text.h"
#include "sys/text_file.h"

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
// sockaddr_un::sun_path holds the path and its NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;

using T = DaemonOptionType;
using C = DaemonConfig;
// The one table: every field of DaemonConfig, in declaration order.
constexpr Def kDefs[] = {
    {{"socket", T::kPath, "/run/mtier/mtierd.sock", 0, 0,
      "unix socket on which processes register and mtier(1) connects"},
     &C::socket},
    {{"policy", T::kName, "lfu", 0, 0,
      "placement policy: lfu, lru, hot-promote or static (mtier(7))"},
     &C::policy},
    {{"policy_params", T::kParams, "\"\"", 0, 0,
      "parameters of the policy (each policy's keys are in mtier(7))"},
     &C::policy_params},
    {{"dram_bytes", T::kSize, "0", 0, kPiB,
      "node-wide DRAM budget shared by the registered processes; 0 = none (each keeps its own)"},
     &C::dram_bytes},
    {{"slow_bytes", T::kSize, "0", 0, kPiB,
      "the same for the slow memory tier; 0 = none (each keeps its own)"},
     &C::slow_bytes},
    {{"migrate_rate", T::kSize, "256M", 0, kPiB,
      "bytes migrated per second, all processes together; 0 = unlimited"},
     &C::migrate_rate},
    {{"sources", T::kSources, "auto", 0, 0,
      "heat sources; auto = those this machine has, none = the runtimes' own sampler only"},
     &C::sources},
    {{"sample_period", T::kUnsigned, "10007", 1, 1000000000,
      "hardware sources: events between two samples"},
     &C::sample_period},
    {{"max_samples", T::kUnsigned, "50000", 1, 10000000,
      "samples processed per second, at most; the rest wait in the perf buffers, lost when full"},
     &C::max_samples},
    {{"heat_granularity", T::kUnsigned, "1", 1, 512, "pages per heat extent"},
     &C::heat_granularity},
    {{"tick_ms", T::kUnsigned, "100", 10, 1000,
      "policy period in milliseconds: migration orders are computed this often"},
     &C::tick_ms},
    {{"log_level", T::kLogLevel, "notice", 0, 0,
      "least severe message level written"},
     &C::log_level},
    {{"stale_ms", T::kUnsigned, "5000", 100, 3600000,
      "a runtime whose heartbeat is older than this many milliseconds is considered gone"},
     &C::stale_ms},
};

struct SourceName {
  const char* name;
  unsigned bit;
};
constexpr SourceName kSourceNames[] = {
    {"pebs", kSourcePebs}, {"ibs", kSourceIbs}, {"page-faults", kSourcePageFaults}};

constexpr log::Level kLevels[] = {log::Level::kError, log::Level::kWarning, log::Level::kNotice,
                                  log::Level::kInfo, log::Level::kDebug};

using config_text::fail;

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

using config_text::trim;

using config_text::strip_comment;
using config_text::unquote;

const Def* find_def(std::string_view name) {
  for (const Def& d : kDefs)
    if (name == d.info.name) return &d;
  return nullptr;
}

// "64M"-style rendering: the largest binary unit that divides v exactly.
std::string human_size(uint64_t v) {
  static constexpr char kUnits[] = "KMGTP";
  for (int u = 4; u >= 0 && v != 0; --u) {
    unsigned shift = 10 * static_cast<unsigned>(u + 1);
    if (v % (1ull << shift) == 0) return std::to_string(v >> shift) + kUnits[u];
  }
  return std::to_string(v);
}

// Parses digits only. Returns 0, -EINVAL (empty or not a digit) or -ERANGE.
int parse_decimal(std::string_view s, uint64_t* out) {
  if (s.empty()) return -EINVAL;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -EINVAL;
    unsigned d = static_cast<unsigned>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return -ERANGE;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// A policy name: lower-case letters, digits and '-', starting with a letter.
// Whether such a policy exists is the policy module's check, at start.
bool valid_name(std::string_view s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s)
    if (!is_lower_alnum(c) && c != '-') return false;
  return true;
}

bool is_separator(char c) { return c == ',' || isspace(static_cast<unsigned char>(c)); }

// "key=value key=value" (spaces or commas between pairs, as the policies'
// configure() takes them): keys as policy names (also '_'), values
// non-empty; "" is no parameters. The policy checks keys and values.
bool valid_params(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (is_separator(s[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && !is_separator(s[end])) ++end;
    std::string_view item = s.substr(i, end - i);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) return false;
    if (item[0] < 'a' || item[0] > 'z') return false;
    for (char c : item.substr(0, eq))
      if (!is_lower_alnum(c) && c != '-' && c != '_') return false;
    i = end;
  }
  return true;
}

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

// A value parsed for one setting, ready to store in its field.
struct Parsed {
  uint64_t u = 0;
  std::string s;
  log::Level level = log::Level::kNotice;
};

// Parses value for info; -EINVAL if it is not accepted (range included).
int parse_value(const DaemonOptionInfo& info, const std::string& value, Parsed* p) {
  switch (info.type) {
    case T::kPath:
      if (value.empty() || value[0] != '/' || value.size() > kMaxSocketPath) return -EINVAL;
      p->s = value;
      return 0;
    case T::kName:
      if (!valid_name(value)) return -EINVAL;
      p->s = value;
      return 0;
    case T::kParams:
      if (!valid_params(value)) return -EINVAL;
      p->s = std::string(trim(value));
      return 0;
    case T::kSize:
      if (parse_size(value, &p->u) != 0) return -EINVAL;
      return p->u >= info.min && p->u <= info.max ? 0 : -EINVAL;
    case T::kUnsigned:
      if (parse_decimal(value, &p->u) != 0) return -EINVAL;
      return p->u >= info.min && p->u <= info.max ? 0 : -EINVAL;
    case T::kSources: {
      unsigned mask = 0;
      if (parse_sources(value, &mask) != 0) return -EINVAL;
      p->u = mask;
      return 0;
    }
    case T::kLogLevel:
      for (log::Level l : kLevels)
        if (value == level_name(l)) return p->level = l, 0;
      return -EINVAL;
  }
  return -EINVAL;
}

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// Stores p in the field of `def` (ranges were checked, so the casts are exact).
void store(DaemonConfig* c, const Def& def, Parsed&& p) {
  std::visit(Overload{[&](std::string C::*f) { c->*f = std::move(p.s); },
                      [&](uint64_t C::*f) { c->*f = p.u; },
                      [&](unsigned C::*f) { c->*f = static_cast<unsigned>(p.u); },
                      [&](log::Level C::*f) { c->*f = p.level; }},
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

// The "expected ..." of a bad value message.
std::string expected_text(const DaemonOptionInfo& info) {
  switch (info.type) {
    case T::kSize: return "a size from " + accepted_values(info) + ", e.g. 64M or 2G";
    case T::kUnsigned: return "an integer from " + accepted_values(info);
    default: return accepted_values(info);
  }
}

int apply(const Def& def, const std::string& value, DaemonConfig* cfg, std::string* why,
          const char* label = nullptr) {
  Parsed p;
  if (parse_value(def.info, value, &p) != 0)
    return fail(why, "bad value " + quoted(value) + " for " + quoted(label ? label : def.info.name) +
                         " (expected " + expected_text(def.info) + ")");
  store(cfg, def, std::move(p));
  return 0;
}

// Applies one line to *cfg (no rollback: load_text works on a copy).
int parse_line(std::string_view line, const std::string& prefix, DaemonConfig* cfg,
               std::string* why) {
  std::string_view text = trim(strip_comment(line));
  if (text.empty()) return 0;
  size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return fail(why, prefix + "expected 'name = value', got " + quoted(text));
  std::string_view name = trim(text.substr(0, eq));
  const Def* def = find_def(name);
  if (def == nullptr) return fail(why, prefix + "unknown option " + quoted(name));
  std::string msg;
  if (apply(*def, std::string(unquote(trim(text.substr(eq + 1)))), cfg, &msg) != 0)
    return fail(why, prefix + msg);
  return 0;
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

const char* type_name(DaemonOptionType type) {
  switch (type) {
    case T::kPath: return "path";
    case T::kName: return "name";
    case T::kParams: return "params";
    case T::kSize: return "size";
    case T::kUnsigned: return "unsigned";
    case T::kSources: return "sources";
    case T::kLogLevel: return "level";
  }
  return "unknown";
}

std::string accepted_values(const DaemonOptionInfo& info) {
  switch (info.type) {
    case T::kPath:
      return "an absolute path of at most " + std::to_string(kMaxSocketPath) + " bytes";
    case T::kName: return "lower-case letters, digits and '-', starting with a letter";
    case T::kParams: return "key=value pairs separated by spaces or commas, or \"\"";
    case T::kSize: return human_size(info.min) + " to " + human_size(info.max);
    case T::kUnsigned: return std::to_string(info.min) + " to " + std::to_string(info.max);
    case T::kSources: return "auto, none, or a comma list of pebs, ibs, page-faults";
    case T::kLogLevel: return "error, warning, notice, info or debug";
  }
  return "";
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
  const Def* def = find_def(name);
  if (def == nullptr) return fail(why, "unknown option " + quoted(label ? label : name));
  return apply(*def, value, cfg, why, label);  // stores only after the value parsed
}

int load_text(const std::string& text, const std::string& origin, DaemonConfig* cfg,
              std::string* why) {
  DaemonConfig next = *cfg;
  std::string_view rest = text;
  for (size_t lineno = 1; !rest.empty(); ++lineno) {
    size_t nl = std::min(rest.find('\n'), rest.size());
    std::string prefix = origin + ":" + std::to_string(lineno) + ": ";
    if (int rc = parse_line(rest.substr(0, nl), prefix, &next, why)) return rc;
    rest.remove_prefix(std::min(nl + 1, rest.size()));
  }
  *cfg = std::move(next);
  return 0;
}

int load_file(const std::string& path, bool required, DaemonConfig* cfg, std::string* why) {
  std::string text;
  int rc = sys::read_text_file(path, &text);
  if (rc == -ENOENT && !required) return 0;
  if (rc != 0) {
    if (why) *why = path + ": cannot read: " + sys::error_text(-rc);
    return rc;
  }
  return load_text(text, path, cfg, why);
}

std::string describe_config(const DaemonConfig& cfg) {
  std::string out;
  for (const Def& d : kDefs) out += std::string(d.info.name) + " = " + show_value(cfg, d) + "\n";
  return out;
}

}  // namespace mtier::daemon
