// The option table, the value parsers and the sources of mtier's configuration.
#include "config/options.h"
#include "config/size_ranges.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>
#include <variant>

#include "config/parse_text.h"
#include "sys/text_file.h"
#include "sys/vm.h"

namespace mtier {
namespace {

// Where an option's value lives in Options; its alternative matches OptionInfo::type.
using Field = std::variant<uint64_t Options::*, unsigned Options::*, int Options::*,
                           bool Options::*, std::string Options::*>;

struct Def {
  OptionInfo info;
  Field field;
};

constexpr uint64_t kPiB = 1ull << 50;
constexpr uint64_t kMaxRegion = 1ull << 47;  // x86-64 user address space (4-level paging)
constexpr uint64_t kIntMin(int64_t v) { return static_cast<uint64_t>(v); }

using T = OptionType;
// The one table: every field of Options, in declaration order.
constexpr Def kDefs[] = {
    {{"region_bytes", T::kSize, "0", 0, kMaxRegion, false,
      "virtual address space reserved for all tables; 0 = RAM + stores, at least 64G"},
     &Options::region_bytes},
    {{"dram_bytes", T::kSize, "0", 0, kPiB, true,
      "DRAM budget for table pages, bytes or N% of physical memory; 0 = 50%"},
     &Options::dram_bytes},
    {{"high_watermark", T::kPercent, "95", 1, 100, false,
      "% of the DRAM budget at which eviction starts"},
     &Options::high_watermark},
    {{"low_watermark", T::kPercent, "85", 0, 99, false,
      "% of the DRAM budget eviction brings residency down to"},
     &Options::low_watermark},
    {{"dram_node", T::kInt, "-1", kIntMin(-1), 1023, false,
      "NUMA node for DRAM pages; -1 = the kernel's choice"},
     &Options::dram_node},
    {{"slow_node", T::kInt, "-1", kIntMin(-1), 1023, false,
      "NUMA node of the slow memory tier (CXL, PMem as KMEM); -1 = none"},
     &Options::slow_node},
    {{"slow_bytes", T::kSize, "0", 0, kPiB, false,
      "budget of the slow memory tier; cold DRAM pages are demoted there before a store"},
     &Options::slow_bytes},
    {{"store_path", T::kString, "\"\"", 0, 0, false,
      "file store: a file, or a directory to create it in; \"\" = /var/tmp"},
     &Options::store_path},
    {{"store_bytes", T::kSize, "0", 0, kPiB, false,
      "file store capacity; 0 = twice physical memory"},
     &Options::store_bytes},
    {{"pmem_path", T::kString, "\"\"", 0, 0, false,
      "PMem store: a DAX device or a file on a DAX filesystem; \"\" = none"},
     &Options::pmem_path},
    {{"pmem_bytes", T::kSize, "0", 0, kPiB, false, "PMem store capacity; 0 = device size"},
     &Options::pmem_bytes},
    {{"queue_depth", T::kUnsigned, "64", 1, 32768, false,
      "io_uring queue depth for batched eviction and prefetch"},
     &Options::queue_depth},
    {{"prefetch_pages", T::kUnsigned, "0", 0, 512, false,
      "adjacent absent pages fetched together with a missing one"},
     &Options::prefetch_pages},
    {{"zero_ahead_pages", T::kUnsigned, "15", 0, 512, false,
      "first touch: following never-written pages zero-filled with it, below the low watermark"},
     &Options::zero_ahead_pages},
    {{"scan_rate", T::kUnsigned, "128", 0, 1ull << 32, false,
      "access sampler: upper bound on pages zapped per second; 0 = sampler off"},
     &Options::scan_rate},
    {{"scan_idle", T::kBool, "false", 0, 1, false,
      "sampler also runs while DRAM residency is below the low watermark"},
     &Options::scan_idle},
    {{"evict_batch", T::kUnsigned, "256", 1, 4096, false, "pages written back per eviction batch"},
     &Options::evict_batch},
    {{"min_bytes", T::kSize, "64M", 4096, kPiB, false,
      "preload: allocations of at least this size become managed tables"},
     &Options::min_bytes},
    {{"names", T::kString, "\"\"", 0, 0, false,
      "preload: comma-separated table names, in allocation order"},
     &Options::names},
    {{"include_sizes", T::kSizeRanges, "\"\"", 0, 0, false,
      "preload: size ranges (LO-HI,...) managed even below min_bytes"},
     &Options::include_sizes},
    {{"exclude_sizes", T::kSizeRanges, "\"\"", 0, 0, false,
      "preload: size ranges (LO-HI,...) never managed; wins over the others"},
     &Options::exclude_sizes},
    {{"daemon_socket", T::kString, "/run/mtier/mtierd.sock", 0, 0, false,
      "mtierd's socket: register there for node-wide policies; \"none\" = local policy only"},
     &Options::daemon_socket},
    {{"daemon_weight", T::kUnsigned, "1", 1, 1000, false,
      "this process's weight in the daemon's share of a node DRAM budget"},
     &Options::daemon_weight},
    {{"stats", T::kBool, "false", 0, 1, false, "print a summary at exit (tables, residency, faults)"},
     &Options::stats},
    {{"verbose", T::kBool, "false", 0, 1, false,
      "print the options in effect at start and a summary at exit"},
     &Options::verbose},
};
constexpr size_t kCount = sizeof kDefs / sizeof kDefs[0];

using config_text::fail;

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

using config_text::trim;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string env_name(const char* name) {
  std::string out = "MTIER_";
  for (const char* p = name; *p; ++p) out += static_cast<char>(toupper(static_cast<unsigned char>(*p)));
  return out;
}

// Index of the option called `name` (exact), or -1.
int find_option(std::string_view name) {
  for (size_t i = 0; i < kCount; ++i)
    if (name == kDefs[i].info.name) return static_cast<int>(i);
  return -1;
}

// Edit distance between a and b, case-insensitive (for "did you mean").
size_t distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      bool same = tolower(static_cast<unsigned char>(a[i - 1])) ==
                  tolower(static_cast<unsigned char>(b[j - 1]));
      size_t next = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

// The known option closest to `name`, or -1 if none is close.
int closest_option(std::string_view name) {
  int best = -1;
  size_t best_d = 3;  // suggest only within two edits
  for (size_t i = 0; i < kCount; ++i) {
    size_t d = distance(name, kDefs[i].info.name);
    if (d < best_d) best = static_cast<int>(i), best_d = d;
  }
  return best;
}

std::string unknown_option(const std::string& name) {
  int near = closest_option(name);
  return "unknown option " + quoted(name) +
         (near < 0 ? "" : " (did you mean " + quoted(kDefs[near].info.name) + "?)");
}

// Index of the option whose variable is `var` ("MTIER_DRAM_BYTES"), or -1.
int find_variable(const std::string& var) {
  for (size_t i = 0; i < kCount; ++i)
    if (env_name(kDefs[i].info.name) == var) return static_cast<int>(i);
  return -1;
}

std::string unknown_variable(const std::string& var) {
  int near = closest_option(lower(std::string_view(var).substr(strlen("MTIER_"))));
  return "unknown variable " + var +
         (near < 0 ? "" : " (did you mean " + env_name(kDefs[near].info.name) + "?)");
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

// Shift of a size suffix ("", "b", "k", "kb", "kib", ... "p"), or -1.
int unit_shift(std::string_view suffix) {
  std::string s = lower(suffix);
  if (s.empty() || s == "b") return 0;
  static constexpr std::string_view kUnits = "kmgtp";
  size_t u = kUnits.find(s[0]);
  if (u == std::string_view::npos) return -1;
  std::string_view rest = std::string_view(s).substr(1);
  if (!rest.empty() && rest != "b" && rest != "ib") return -1;
  return 10 * static_cast<int>(u + 1);
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

std::string show_bound(const OptionInfo& info, uint64_t v) {
  if (info.type == T::kSize) return human_size(v);
  if (info.type == T::kInt) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

std::string range_text(const OptionInfo& info) {
  return show_bound(info, info.min) + " to " + show_bound(info, info.max);
}

std::string out_of_range(const std::string& label, const std::string& value, const OptionInfo& info) {
  return label + ": " + quoted(value) + " is out of range (" + range_text(info) + ")";
}

int check_range(const std::string& label, const std::string& value, const OptionInfo& info,
                uint64_t v, std::string* why) {
  if (v < info.min || v > info.max) return fail(why, out_of_range(label, value, info));
  return 0;
}

// Resolves "N%" of physical memory, rounded down to whole pages.
int parse_share(const std::string& label, const std::string& value, uint64_t* out,
                std::string* why) {
  uint64_t pct = 0;
  std::string_view digits = std::string_view(value).substr(0, value.size() - 1);
  if (parse_decimal(digits, &pct) == -EINVAL)
    return fail(why, label + ": " + quoted(value) + " is not a share (use 1% to 100%)");
  if (pct < 1 || pct > 100)
    return fail(why, label + ": " + quoted(value) +
                         " is out of range (1% to 100% of physical memory)");
  uint64_t mem = sys::physical_memory();
  if (mem == 0)
    return fail(why, label + ": " + quoted(value) +
                         " cannot be used: physical memory size is unknown (give a size, e.g. 64G)");
  uint64_t share = mem / 100 * pct + mem % 100 * pct / 100;  // mem * pct / 100, no overflow
  *out = share / sys::kPageSize * sys::kPageSize;
  return 0;
}

int parse_size_value(const std::string& label, const std::string& value, const OptionInfo& info,
                     uint64_t* out, std::string* why) {
  if (info.allow_percent && !value.empty() && value.back() == '%') {
    if (int rc = parse_share(label, value, out, why)) return rc;
    return check_range(label, value, info, *out, why);
  }
  int rc = parse_size(value, out);
  if (rc == -ERANGE)
    return fail(why, label + ": " + quoted(value) + " is too large (at most " +
                         human_size(info.max) + ")");
  if (rc != 0 && value.find('.') != std::string::npos)
    return fail(why, label + ": " + quoted(value) +
                         " is not a size (fractions are not accepted: use a whole number "
                         "with a smaller unit, e.g. 1536M for 1.5G)");
  if (rc != 0)
    return fail(why, label + ": " + quoted(value) + " is not a size (use e.g. 4096, 64M, 2G" +
                         (info.allow_percent ? " or 25%)" : ")"));
  return check_range(label, value, info, *out, why);
}

int parse_unsigned_value(const std::string& label, const std::string& value,
                         const OptionInfo& info, uint64_t* out, std::string* why) {
  int rc = parse_decimal(value, out);
  if (rc == -ERANGE) return fail(why, out_of_range(label, value, info));
  if (rc != 0)
    return fail(why, label + ": " + quoted(value) + " is not a number (use an integer " +
                         range_text(info) + ")");
  return check_range(label, value, info, *out, why);
}

int parse_percent_value(const std::string& label, const std::string& value,
                        const OptionInfo& info, uint64_t* out, std::string* why) {
  std::string_view digits = value;
  if (!digits.empty() && digits.back() == '%') digits.remove_suffix(1);
  int rc = parse_decimal(digits, out);
  if (rc == -EINVAL)
    return fail(why, label + ": " + quoted(value) + " is not a percentage (use an integer " +
                         range_text(info) + ", optionally followed by %)");
  if (rc != 0 || *out < info.min || *out > info.max)
    return fail(why, label + ": " + quoted(value) + " is out of range (" + range_text(info) +
                         "%)");
  return 0;
}

int parse_int_value(const std::string& label, const std::string& value, const OptionInfo& info,
                    int64_t* out, std::string* why) {
  bool neg = !value.empty() && value[0] == '-';
  uint64_t mag = 0;
  int rc = parse_decimal(std::string_view(value).substr(neg ? 1 : 0), &mag);
  if (rc == -EINVAL)
    return fail(why, label + ": " + quoted(value) + " is not an integer (use " +
                         range_text(info) + ")");
  int64_t lo = static_cast<int64_t>(info.min), hi = static_cast<int64_t>(info.max);
  if (rc != 0 || mag > (1ull << 62)) return fail(why, out_of_range(label, value, info));
  *out = neg ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
  if (*out < lo || *out > hi) return fail(why, out_of_range(label, value, info));
  return 0;
}

int parse_bool_value(const std::string& label, const std::string& value, bool* out,
                     std::string* why) {
  std::string v = lower(value);
  bool yes = v == "1" || v == "yes" || v == "true" || v == "on";
  bool no = v == "0" || v == "no" || v == "false" || v == "off";
  *out = yes;
  if (yes || no) return 0;
  return fail(why, label + ": " + quoted(value) +
                       " is not a boolean (use 1/0, yes/no, true/false or on/off)");
}

int parse_ranges_value(const std::string& label, const std::string& value, std::string* out,
                       std::string* why) {
  std::vector<SizeRange> ranges;
  std::string reason;
  if (parse_size_ranges(value, &ranges, &reason) < 0) return fail(why, label + ": " + reason);
  *out = value;
  return 0;
}

// A value parsed for one option, ready to store in its field.
struct Parsed {
  uint64_t u = 0;
  int64_t i = 0;
  bool b = false;
  std::string s;
};

int parse_value(const std::string& label, const std::string& value, const OptionInfo& info,
                Parsed* p, std::string* why) {
  switch (info.type) {
    case T::kSize: return parse_size_value(label, value, info, &p->u, why);
    case T::kPercent: return parse_percent_value(label, value, info, &p->u, why);
    case T::kUnsigned: return parse_unsigned_value(label, value, info, &p->u, why);
    case T::kInt: return parse_int_value(label, value, info, &p->i, why);
    case T::kBool: return parse_bool_value(label, value, &p->b, why);
    case T::kString: p->s = value; return 0;
    case T::kSizeRanges: return parse_ranges_value(label, value, &p->s, why);
  }
  return fail(why, label + ": unknown option type");
}

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// Stores p in the field of `def` (ranges were checked, so the casts are exact).
void store(Options* o, const Def& def, Parsed&& p) {
  std::visit(Overload{[&](uint64_t Options::*f) { o->*f = p.u; },
                      [&](unsigned Options::*f) { o->*f = static_cast<unsigned>(p.u); },
                      [&](int Options::*f) { o->*f = static_cast<int>(p.i); },
                      [&](bool Options::*f) { o->*f = p.b; },
                      [&](std::string Options::*f) { o->*f = std::move(p.s); }},
             def.field);
}

// The value of `def` in o, as describe() and mtier.conf(5) write it.
std::string show_value(const Options& o, const Def& def) {
  return std::visit(
      Overload{[&](uint64_t Options::*f) {
                 return def.info.type == T::kSize ? human_size(o.*f) : std::to_string(o.*f);
               },
               [&](unsigned Options::*f) { return std::to_string(o.*f); },
               [&](int Options::*f) { return std::to_string(o.*f); },
               [&](bool Options::*f) { return std::string(o.*f ? "true" : "false"); },
               [&](std::string Options::*f) { return quoted(o.*f); }},
      def.field);
}

using config_text::strip_comment;
using config_text::unquote;

// True if s (after spaces) starts with "identifier =": a comma before it starts a new item.
bool starts_item(std::string_view s) {
  s = trim(s);
  size_t n = 0;
  while (n < s.size() && (isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  return n > 0 && trim(s.substr(n)).starts_with('=');
}

// Splits "a=1,b=2" into items; a comma not followed by "name=" stays in the
// value ("names = emb0,emb1"), as does one inside double quotes.
std::vector<std::string_view> split_items(std::string_view line) {
  std::vector<std::string_view> items;
  bool in_quotes = false;
  size_t start = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') in_quotes = !in_quotes;
    if (line[i] != ',' || in_quotes || !starts_item(line.substr(i + 1))) continue;
    items.push_back(line.substr(start, i - start));
    start = i + 1;
  }
  items.push_back(line.substr(start));
  return items;
}

bool has_prefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// MTIER_ variables that belong to other components.
bool reserved_variable(std::string_view name) {
  return name == "MTIER_CONF" || name == "MTIER_LOG_FD" ||
         name == "MTIER_LIBRARY" || name == "MTIER_INTERPOSE" ||
         has_prefix(name, "MTIER_TEST_");
}

// secure_getenv semantics: a setuid/setgid program ignores the environment.
bool environment_trusted() { return getauxval(AT_SECURE) == 0; }

}  // namespace

const char* option_source_name(OptionSource s) {
  switch (s) {
    case OptionSource::kDefault: return "default";
    case OptionSource::kFile: return "/etc/mtier.conf";
    case OptionSource::kConf: return "MTIER_CONF";
    case OptionSource::kEnv: return "environment";
    case OptionSource::kApi: return "API";
  }
  return "unknown";
}

const std::vector<OptionInfo>& option_table() {
  static const std::vector<OptionInfo> table = [] {
    std::vector<OptionInfo> t;
    for (const Def& d : kDefs) t.push_back(d.info);
    return t;
  }();
  return table;
}

int parse_size(const std::string& text, uint64_t* out) {
  size_t n = 0;
  while (n < text.size() && isdigit(static_cast<unsigned char>(text[n]))) ++n;
  uint64_t v = 0;
  if (int rc = parse_decimal(std::string_view(text).substr(0, n), &v)) return rc;
  int shift = unit_shift(std::string_view(text).substr(n));
  if (shift < 0) return -EINVAL;
  if (v > (UINT64_MAX >> shift)) return -ERANGE;
  *out = v << shift;
  return 0;
}

OptionSet::OptionSet() : sources_(kCount, OptionSource::kDefault) {}

OptionSource OptionSet::source(const std::string& name) const {
  int i = find_option(name);
  return i < 0 ? OptionSource::kDefault : sources_[static_cast<size_t>(i)];
}

std::string OptionSet::describe() const {
  std::string out;
  for (size_t i = 0; i < kCount; ++i)
    out += std::string(kDefs[i].info.name) + " = " + show_value(opts_, kDefs[i]) + " (" +
           option_source_name(sources_[i]) + ")\n";
  return out;
}

template <class Step>
int OptionSet::transaction(std::string* why, Step&& step) {
  Options saved = opts_;
  std::vector<OptionSource> saved_sources = sources_;
  int rc = step();
  if (rc == 0) rc = check_consistency(why);
  if (rc != 0) {
    opts_ = std::move(saved);
    sources_ = std::move(saved_sources);
  }
  return rc;
}

int OptionSet::check_consistency(std::string* why) const {
  if (opts_.low_watermark < opts_.high_watermark) return 0;
  size_t lo = static_cast<size_t>(find_option("low_watermark"));
  size_t hi = static_cast<size_t>(find_option("high_watermark"));
  return fail(why, "low_watermark = " + std::to_string(opts_.low_watermark) + " (" +
                       option_source_name(sources_[lo]) + ") must be below high_watermark = " +
                       std::to_string(opts_.high_watermark) + " (" +
                       option_source_name(sources_[hi]) + ")");
}

int OptionSet::apply(size_t index, const std::string& value, OptionSource src,
                     const std::string& label, std::string* why) {
  Parsed p;
  if (int rc = parse_value(label, value, kDefs[index].info, &p, why)) return rc;
  store(&opts_, kDefs[index], std::move(p));
  sources_[index] = src;
  return 0;
}

int OptionSet::set(const std::string& name, const std::string& value, OptionSource src,
                   std::string* why) {
  int i = find_option(name);
  if (i < 0) return fail(why, unknown_option(name));
  return transaction(why, [&] { return apply(static_cast<size_t>(i), value, src, name, why); });
}

int OptionSet::parse_line(const std::string& line, OptionSource src, const std::string& prefix,
                          std::string* why) {
  std::string_view text = trim(strip_comment(line));
  if (text.empty()) return 0;
  for (std::string_view item : split_items(text)) {
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail(why, prefix + "expected \"name = value\", got " + quoted(trim(item)));
    std::string name(trim(item.substr(0, eq)));
    int i = find_option(name);
    if (i < 0) return fail(why, prefix + unknown_option(name));
    std::string msg;
    std::string value(unquote(trim(item.substr(eq + 1))));
    if (apply(static_cast<size_t>(i), value, src, name, &msg) != 0) return fail(why, prefix + msg);
  }
  return 0;
}

int OptionSet::parse_text(const std::string& text, OptionSource src, const std::string& where,
                          std::string* why) {
  std::string msg;
  size_t pos = 0;
  for (size_t lineno = 1; pos <= text.size(); ++lineno) {
    size_t end = std::min(text.find('\n', pos), text.size());
    std::string prefix = where + ":" + std::to_string(lineno) + ": ";
    if (parse_line(text.substr(pos, end - pos), src, prefix, &msg) != 0) return fail(why, msg);
    pos = end + 1;
  }
  return 0;
}

int OptionSet::parse_file(const std::string& path, OptionSource src, bool required,
                          std::string* why) {
  std::string text;
  int rc = sys::read_text_file(path, &text);
  if (rc == -ENOENT && !required) return 0;
  if (rc != 0) {
    if (why) *why = path + ": cannot read: " + sys::error_text(-rc);
    return rc;
  }
  return parse_text(text, src, path, why);
}

int OptionSet::parse_conf(const std::string& value, std::string* why) {
  if (trim(value).empty()) return 0;
  struct stat st {};
  if (stat(value.c_str(), &st) == 0) return parse_file(value, OptionSource::kConf, true, why);
  if (value.find('=') == std::string::npos)
    return fail(why, "MTIER_CONF: " + quoted(value) +
                         " is neither an existing file nor option text (name=value,name=value)");
  return parse_text(value, OptionSource::kConf, "MTIER_CONF", why);
}

int OptionSet::parse_env(char** envp, std::string* why) {
  if (!environment_trusted()) return 0;
  for (char** e = envp; e && *e; ++e) {
    std::string_view entry = *e;
    size_t eq = entry.find('=');
    if (!has_prefix(entry, "MTIER_") || eq == std::string_view::npos) continue;
    std::string var(entry.substr(0, eq));
    if (reserved_variable(var)) continue;
    int i = find_variable(var);
    if (i < 0) return fail(why, unknown_variable(var));
    std::string value(entry.substr(eq + 1));
    if (int rc = apply(static_cast<size_t>(i), value, OptionSource::kEnv, var, why)) return rc;
  }
  return 0;
}

int OptionSet::load_text(const std::string& text, OptionSource src, std::string* why) {
  return transaction(why, [&] { return parse_text(text, src, option_source_name(src), why); });
}

int OptionSet::load_file(const std::string& path, OptionSource src, bool required,
                         std::string* why) {
  return transaction(why, [&] { return parse_file(path, src, required, why); });
}

int OptionSet::load_env(char** envp, std::string* why) {
  return transaction(why, [&] { return parse_env(envp, why); });
}

int OptionSet::load_all(char** envp, std::string* why, const char* etc_path) {
  return transaction(why, [&] {
    if (int rc = etc_path ? parse_file(etc_path, OptionSource::kFile, false, why) : 0) return rc;
    for (char** e = envp; environment_trusted() && e && *e; ++e) {
      if (!has_prefix(*e, "MTIER_CONF=")) continue;
      if (int rc = parse_conf(*e + strlen("MTIER_CONF="), why)) return rc;
      break;  // the first one, as getenv(3) finds it
    }
    return parse_env(envp, why);
  });
}

}  // namespace mtier
