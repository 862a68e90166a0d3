// SPDX-License-Identifier: Apache-2.0
// The shared option table: value parsers, line, text and environment
// parsers, the messages of both dialects.
#include "config/option_table.h"

#include <sys/un.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "config/options.h"  // parse_size
#include "config/parse_text.h"
#include "config/size_ranges.h"
#include "sys/vm.h"

namespace mtier::config {
namespace {

using T = OptionType;
using config_text::fail;
using config_text::strip_comment;
using config_text::trim;
using config_text::unquote;

// sockaddr_un::sun_path holds the path and its NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return out;
}

bool has_prefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

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

std::string show_bound(const OptionInfo& info, uint64_t v) {
  if (info.type == T::kSize) return human_size(v);
  if (info.type == T::kInt) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

std::string range_text(const OptionInfo& info) {
  return show_bound(info, info.min) + " to " + show_bound(info, info.max);
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

// ---- value parsers: 0, or -EINVAL with *why = "LABEL: "V" what is wrong" ----

// The detailed messages are the runtime's (mtier.conf(5)), always in double quotes.
std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string out_of_range(const std::string& label, const std::string& value,
                         const OptionInfo& info) {
  return label + ": " + dq(value) + " is out of range (" + range_text(info) + ")";
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
    return fail(why, label + ": " + dq(value) + " is not a share (use 1% to 100%)");
  if (pct < 1 || pct > 100)
    return fail(why, label + ": " + dq(value) + " is out of range (1% to 100% of physical memory)");
  uint64_t mem = sys::physical_memory();
  if (mem == 0)
    return fail(why, label + ": " + dq(value) +
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
    return fail(why, label + ": " + dq(value) + " is too large (at most " + human_size(info.max) +
                         ")");
  if (rc != 0 && value.find('.') != std::string::npos)
    return fail(why, label + ": " + dq(value) +
                         " is not a size (fractions are not accepted: use a whole number "
                         "with a smaller unit, e.g. 1536M for 1.5G)");
  if (rc != 0)
    return fail(why, label + ": " + dq(value) + " is not a size (use e.g. 4096, 64M, 2G" +
                         (info.allow_percent ? " or 25%)" : ")"));
  return check_range(label, value, info, *out, why);
}

int parse_unsigned_value(const std::string& label, const std::string& value,
                         const OptionInfo& info, uint64_t* out, std::string* why) {
  int rc = parse_decimal(value, out);
  if (rc == -ERANGE) return fail(why, out_of_range(label, value, info));
  if (rc != 0)
    return fail(why, label + ": " + dq(value) + " is not a number (use an integer " +
                         range_text(info) + ")");
  return check_range(label, value, info, *out, why);
}

int parse_percent_value(const std::string& label, const std::string& value,
                        const OptionInfo& info, uint64_t* out, std::string* why) {
  std::string_view digits = value;
  if (!digits.empty() && digits.back() == '%') digits.remove_suffix(1);
  int rc = parse_decimal(digits, out);
  if (rc == -EINVAL)
    return fail(why, label + ": " + dq(value) + " is not a percentage (use an integer " +
                         range_text(info) + ", optionally followed by %)");
  if (rc != 0 || *out < info.min || *out > info.max)
    return fail(why, label + ": " + dq(value) + " is out of range (" + range_text(info) + "%)");
  return 0;
}

int parse_int_value(const std::string& label, const std::string& value, const OptionInfo& info,
                    int64_t* out, std::string* why) {
  bool neg = !value.empty() && value[0] == '-';
  uint64_t mag = 0;
  int rc = parse_decimal(std::string_view(value).substr(neg ? 1 : 0), &mag);
  if (rc == -EINVAL)
    return fail(why, label + ": " + dq(value) + " is not an integer (use " + range_text(info) +
                         ")");
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
  return fail(why, label + ": " + dq(value) +
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

}  // namespace

const char* type_name(OptionType type) {
  switch (type) {
    case T::kSize: return "size";
    case T::kPercent: return "percent";
    case T::kUnsigned: return "unsigned";
    case T::kInt: return "int";
    case T::kBool: return "bool";
    case T::kString: return "string";
    case T::kSizeRanges: return "size ranges";
    case T::kPath: return "path";
    case T::kName: return "name";
    case T::kParams: return "params";
    case T::kSources: return "sources";
    case T::kLogLevel: return "level";
  }
  return "unknown";
}

std::string human_size(uint64_t v) {
  static constexpr char kUnits[] = "KMGTP";
  for (int u = 4; u >= 0 && v != 0; --u) {
    unsigned shift = 10 * static_cast<unsigned>(u + 1);
    if (v % (1ull << shift) == 0) return std::to_string(v >> shift) + kUnits[u];
  }
  return std::to_string(v);
}

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

// ---- Table ----

std::string Table::quoted(std::string_view s) const {
  return dialect_.quote + std::string(s) + dialect_.quote;
}

int Table::find(std::string_view name) const {
  for (size_t i = 0; i < count_; ++i)
    if (name == options_[i].name) return static_cast<int>(i);
  return -1;
}

int Table::closest(std::string_view name) const {
  int best = -1;
  size_t best_d = 3;  // suggest only within two edits
  for (size_t i = 0; i < count_; ++i) {
    size_t d = distance(name, options_[i].name);
    if (d < best_d) best = static_cast<int>(i), best_d = d;
  }
  return best;
}

std::string Table::unknown_option(std::string_view name) const {
  int near = dialect_.suggest ? closest(name) : -1;
  return "unknown option " + quoted(name) +
         (near < 0 ? "" : " (did you mean " + quoted(options_[near].name) + "?)");
}

int Table::find_variable(std::string_view var) const {
  for (size_t i = 0; i < count_; ++i)
    if (std::string(env_prefix_) + upper(options_[i].name) == var) return static_cast<int>(i);
  return -1;
}

std::string Table::unknown_variable(const std::string& var) const {
  int near = dialect_.suggest ? closest(lower(std::string_view(var).substr(strlen(env_prefix_))))
                              : -1;
  return "unknown variable " + var +
         (near < 0 ? "" : " (did you mean " + std::string(env_prefix_) + upper(options_[near].name) + "?)");
}

std::string Table::accepted_values(const OptionInfo& info) const {
  switch (info.type) {
    case T::kSize:
      return range_text(info) + (info.allow_percent ? ", or 1% to 100% of physical memory" : "");
    case T::kPercent: return range_text(info) + "%";
    case T::kUnsigned:
    case T::kInt: return range_text(info);
    case T::kBool: return "1/0, yes/no, true/false or on/off";
    case T::kString: return "any text, \"\" for none";
    case T::kSizeRanges: return "size ranges LO-HI separated by commas, or \"\"";
    case T::kPath:
      return "an absolute path of at most " + std::to_string(kMaxSocketPath) + " bytes";
    case T::kName: return "lower-case letters, digits and '-', starting with a letter";
    case T::kParams: return "key=value pairs separated by spaces or commas, or \"\"";
    case T::kSources:
    case T::kLogLevel: return hooks_.accepted ? hooks_.accepted(info) : "";
  }
  return "";
}

// The "expected ..." of a bad value message.
std::string Table::expected_text(const OptionInfo& info) const {
  switch (info.type) {
    case T::kSize: return "a size from " + accepted_values(info) + ", e.g. 64M or 2G";
    case T::kUnsigned: return "an integer from " + accepted_values(info);
    default: return accepted_values(info);
  }
}

int Table::parse_detailed(const OptionInfo& info, const std::string& value,
                          const std::string& label, Value* out, std::string* why) const {
  auto not_accepted = [&] {
    return fail(why, label + ": " + dq(value) + " is not accepted (use " +
                         accepted_values(info) + ")");
  };
  switch (info.type) {
    case T::kSize: return parse_size_value(label, value, info, &out->u, why);
    case T::kPercent: return parse_percent_value(label, value, info, &out->u, why);
    case T::kUnsigned: return parse_unsigned_value(label, value, info, &out->u, why);
    case T::kInt: return parse_int_value(label, value, info, &out->i, why);
    case T::kBool: return parse_bool_value(label, value, &out->b, why);
    case T::kString: out->s = value; return 0;
    case T::kSizeRanges: return parse_ranges_value(label, value, &out->s, why);
    case T::kPath:
      if (value.empty() || value[0] != '/' || value.size() > kMaxSocketPath) return not_accepted();
      out->s = value;
      return 0;
    case T::kName:
      if (!valid_name(value)) return not_accepted();
      out->s = value;
      return 0;
    case T::kParams:
      if (!valid_params(value)) return not_accepted();
      out->s = std::string(trim(value));
      return 0;
    case T::kSources:
    case T::kLogLevel:
      if (!hooks_.parse || hooks_.parse(info, value, &out->u) != 0) return not_accepted();
      return 0;
  }
  return fail(why, label + ": unknown option type");
}

int Table::parse_value(size_t i, const std::string& value, const std::string& label, Value* out,
                       std::string* why) const {
  const OptionInfo& info = options_[i];
  if (dialect_.detailed_values) return parse_detailed(info, value, label, out, why);
  if (parse_detailed(info, value, label, out, nullptr) == 0) return 0;
  return fail(why, "bad value " + quoted(value) + " for " + quoted(label) + " (expected " +
                       expected_text(info) + ")");
}

int Table::parse_line(std::string_view line, const std::string& prefix, std::vector<Setting>* out,
                      std::string* why) const {
  std::string_view text = trim(strip_comment(line));
  if (text.empty()) return 0;
  std::vector<std::string_view> items =
      dialect_.items_per_line ? split_items(text) : std::vector<std::string_view>{text};
  for (std::string_view item : items) {
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail(why, prefix + "expected " + quoted("name = value") + ", got " +
                           quoted(trim(item)));
    std::string name(trim(item.substr(0, eq)));
    int i = find(name);
    if (i < 0) return fail(why, prefix + unknown_option(name));
    Setting s{static_cast<size_t>(i), {}, name};
    std::string msg;
    if (parse_value(s.index, std::string(unquote(trim(item.substr(eq + 1)))), name, &s.value,
                    &msg) != 0)
      return fail(why, prefix + msg);
    out->push_back(std::move(s));
  }
  return 0;
}

int Table::parse_text(const std::string& text, const std::string& where, std::vector<Setting>* out,
                      std::string* why) const {
  size_t pos = 0;
  for (size_t lineno = 1; pos <= text.size(); ++lineno) {
    size_t end = std::min(text.find('\n', pos), text.size());
    std::string prefix = where + ":" + std::to_string(lineno) + ": ";
    if (int rc = parse_line(std::string_view(text).substr(pos, end - pos), prefix, out, why))
      return rc;
    pos = end + 1;
  }
  return 0;
}

int Table::parse_env(char** envp, bool (*skip)(std::string_view var), std::vector<Setting>* out,
                     std::string* why) const {
  if (env_prefix_ == nullptr) return 0;
  for (char** e = envp; e && *e; ++e) {
    std::string_view entry = *e;
    size_t eq = entry.find('=');
    if (!has_prefix(entry, env_prefix_) || eq == std::string_view::npos) continue;
    std::string var(entry.substr(0, eq));
    if (skip && skip(var)) continue;
    int i = find_variable(var);
    if (i < 0) return fail(why, unknown_variable(var));
    Setting s{static_cast<size_t>(i), {}, var};
    if (int rc = parse_value(s.index, std::string(entry.substr(eq + 1)), var, &s.value, why))
      return rc;
    out->push_back(std::move(s));
  }
  return 0;
}

std::string Table::help_listing() const {
  std::string out;
  for (const OptionInfo& info : *this)
    out += "  " + std::string(info.name) + " = " + info.default_text + "\n      " + info.help +
           "\n      accepted: " + accepted_values(info) + "\n";
  return out;
}

}  // namespace mtier::config

namespace mtier {

int parse_size(const std::string& text, uint64_t* out) {
  size_t n = 0;
  while (n < text.size() && isdigit(static_cast<unsigned char>(text[n]))) ++n;
  uint64_t v = 0;
  if (int rc = config::parse_decimal(std::string_view(text).substr(0, n), &v)) return rc;
  int shift = config::unit_shift(std::string_view(text).substr(n));
  if (shift < 0) return -EINVAL;
  if (v > (UINT64_MAX >> shift)) return -ERANGE;
  *out = v << shift;
  return 0;
}

}  // namespace mtier
