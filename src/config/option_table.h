// SPDX-License-Identifier: Apache-2.0
// The one option mechanism of the runtime (mtier.conf, MTIER_*) and the
// daemon (mtierd.conf, mtierd's command line): a table type (name, type,
// default, range, help line), one value parser, one "name = value" text and
// environment parser, and the help listing (mimalloc options.c). Each
// component keeps its own table and the struct its values are stored in
// (src/config/options.cc, daemon/daemon_config.cc); a Dialect says how its
// messages read, which tests and man pages hold as they are. No exceptions:
// every parser returns 0 or -errno with *why set. Allocates (std::string),
// runs at start only (and on mtierd's SIGHUP), never on the fault path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtier::config {

// kSize: bytes ("64M"), with allow_percent also "25%" of physical memory;
// kPercent: 0..100, "%" optional; kInt: int64_t range (min/max cast);
// kSizeRanges: "LO-HI,..." (size_ranges.h); kPath: an absolute socket path;
// kName: a policy name; kParams: "key=value ..."; kSources, kLogLevel:
// words the table's Hooks parse (mtierd's heat sources, log levels).
enum class OptionType {
  kSize, kPercent, kUnsigned, kInt, kBool, kString, kSizeRanges,
  kPath, kName, kParams, kSources, kLogLevel,
};

// The type as the man pages name it: "size", "percent", "unsigned", "int",
// "bool", "string", "size ranges", "path", "name", "params", "sources", "level".
const char* type_name(OptionType type);

struct OptionInfo {
  const char* name;          // lower-case; the variable is env_prefix + NAME upper-case
  OptionType type;
  const char* default_text;  // as shown in help and the man page
  uint64_t min, max;         // accepted range of numeric types (kInt: int64_t values, cast)
  bool allow_percent;        // a kSize that also accepts "N%" of physical memory
  const char* help;
};

// A parsed value, ready for the component to store in its field: u for
// kSize, kPercent, kUnsigned, kSources, kLogLevel; i for kInt; b for kBool;
// s for the text types.
struct Value {
  uint64_t u = 0;
  int64_t i = 0;
  bool b = false;
  std::string s;
};

// How a table's messages read.
struct Dialect {
  char quote;            // around names and values: '"' (mtier.conf) or '\'' (mtierd.conf)
  bool items_per_line;   // "a=1,b=2" on one line is two settings (MTIER_CONF as a string)
  bool suggest;          // "unknown option "x" (did you mean "y"?)"
  // A bad value: true: LABEL: "V" is not a size (use e.g. 4096, 64M, 2G)
  // (what is wrong with it); false: bad value 'V' for 'LABEL' (expected ...).
  bool detailed_values;
};

// Types only a component knows (kSources, kLogLevel): its parser, returning
// 0 or -EINVAL, and what it accepts (accepted_values()).
struct Hooks {
  int (*parse)(const OptionInfo& info, std::string_view value, uint64_t* out);
  std::string (*accepted)(const OptionInfo& info);
};

// A value given for option `index` of a table.
struct Setting {
  size_t index;
  Value value;
  std::string label;  // the name as given: "dram_bytes", "MTIER_DRAM_BYTES", "--dram-bytes"
};

class Table {
 public:
  // `options` must outlive the table; env_prefix "MTIER_" or nullptr (no variables).
  Table(const OptionInfo* options, size_t count, Dialect dialect, const char* env_prefix,
        Hooks hooks = {nullptr, nullptr})
      : options_(options), count_(count), dialect_(dialect), env_prefix_(env_prefix),
        hooks_(hooks) {}

  size_t size() const { return count_; }
  const OptionInfo& operator[](size_t i) const { return options_[i]; }
  const OptionInfo* begin() const { return options_; }
  const OptionInfo* end() const { return options_ + count_; }
  const Dialect& dialect() const { return dialect_; }

  // Index of the option called `name` (exact), or -1.
  int find(std::string_view name) const;
  // "unknown option 'x'" (with the dialect's quotes and suggestion).
  std::string unknown_option(std::string_view name) const;
  // `s` in the dialect's quotes.
  std::string quoted(std::string_view s) const;

  // Parses `value` for option i. Returns 0, or -EINVAL with *why (if given)
  // naming `label`, the value and what is accepted, as the dialect writes it.
  [[nodiscard]] int parse_value(size_t i, const std::string& value, const std::string& label,
                                Value* out, std::string* why) const;
  // One "name = value" line ('#' comments, blank lines, a value in double
  // quotes; several "name=value" separated by commas where the dialect
  // allows): appends its settings to *out. Returns 0 or -EINVAL with *why =
  // prefix + the reason (unknown name, no '=', bad value).
  [[nodiscard]] int parse_line(std::string_view line, const std::string& prefix,
                               std::vector<Setting>* out, std::string* why) const;
  // Config text, line by line; *why starts "WHERE:LINE: ".
  [[nodiscard]] int parse_text(const std::string& text, const std::string& where,
                               std::vector<Setting>* out, std::string* why) const;
  // The env_prefix variables of envp (nullptr-terminated), in order, except
  // those for which skip(name) is true; an unknown one is an error ("unknown
  // variable MTIER_X (did you mean MTIER_Y?)"), a typo must not pass silently.
  [[nodiscard]] int parse_env(char** envp, bool (*skip)(std::string_view var),
                              std::vector<Setting>* out, std::string* why) const;

  // What option i accepts, as mtierd(8) writes it after "Accepted:" and a
  // bad value message after "expected": "10 to 10000", "0 to 1P", ...
  std::string accepted_values(const OptionInfo& info) const;
  // The help listing (mtierd --help): per option "  name = default", its
  // help line and "accepted: ...", indented by six spaces.
  std::string help_listing() const;

 private:
  int find_variable(std::string_view var) const;
  std::string unknown_variable(const std::string& var) const;
  int closest(std::string_view name) const;
  std::string expected_text(const OptionInfo& info) const;
  int parse_detailed(const OptionInfo& info, const std::string& value, const std::string& label,
                     Value* out, std::string* why) const;

  const OptionInfo* options_;
  size_t count_;
  Dialect dialect_;
  const char* env_prefix_;
  Hooks hooks_;
};

// "64M"-style rendering: the largest binary unit that divides v exactly.
std::string human_size(uint64_t v);
// Parses digits only. Returns 0, -EINVAL (empty or not a digit) or -ERANGE.
[[nodiscard]] int parse_decimal(std::string_view s, uint64_t* out);

}  // namespace mtier::config
