// SPDX-License-Identifier: Apache-2.0
// The subcommands' argument parser and messages (cli.h).
#include "cli.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "config/option_table.h"
#include "config/options.h"
#include "ipc/wire.h"

namespace mtier::tools::cli {
namespace {

// Messages as mtier.conf(5) words them ("LABEL: "V" is not a size (use
// ...)"), flags in single quotes, the nearest one suggested.
constexpr config::Dialect kDialect{'\'', false, true, true};

// Parses `value` as one option of type `info`, labelled with the flag.
std::string config_value(const config::OptionInfo& info, const std::string& flag,
                         const std::string& value, config::Value* out) {
  config::Table table(&info, 1, kDialect, nullptr);
  std::string why;
  return table.parse_value(0, value, flag, out, &why) == 0 ? "" : why;
}

// "-q, --quiet" -> {"-q", "--quiet"}.
std::vector<std::string> split_names(const char* names) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = names;; ++p) {
    if (*p && *p != ',' && *p != ' ') {
      cur += *p;
      continue;
    }
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
    if (!*p) return out;
  }
}

}  // namespace

// ---- Command ----------------------------------------------------------------

void Command::say(const std::string& text) const {
  fprintf(stderr, "mtier %s: %s\n", name_.c_str(), text.c_str());
}

int Command::fail(const std::string& text) const {
  say(text);
  return 1;
}

int Command::usage_error(const std::string& text) const {
  say(text);
  try_help();
  return 2;
}

void Command::try_help() const { fprintf(stderr, "Try 'mtier %s --help'.\n", name_.c_str()); }

std::string bad_value(const std::string& flag, const std::string& value, const std::string& what) {
  return flag + ": \"" + value + "\" " + what;
}

// ---- Declaring flags -----------------------------------------------------------

Parser& Parser::add(const char* names, bool takes_value, std::function<void()> on,
                    Handler handle) {
  flags_.push_back({split_names(names), takes_value, std::move(on), std::move(handle)});
  return *this;
}

Parser& Parser::flag(const char* names, bool* out) {
  return add(names, false, [out] { *out = true; }, nullptr);
}

Parser& Parser::flag(const char* names, std::function<void()> on) {
  return add(names, false, std::move(on), nullptr);
}

Parser& Parser::value(const char* names, Handler handle) {
  return add(names, true, nullptr, std::move(handle));
}

Parser& Parser::text(const char* names, std::string* out, bool allow_empty) {
  return value(names, [out, allow_empty](const std::string& flag, const std::string& v) {
    if (v.empty() && !allow_empty) return flag + ": wants a value, not \"\"";
    *out = v;
    return std::string();
  });
}

Parser& Parser::size(const char* names, uint64_t* out, uint64_t min, uint64_t max) {
  return typed(names, config::OptionType::kSize, min, max, [out](uint64_t v) { *out = v; });
}

Parser& Parser::dram(const char* names, uint64_t* out) {
  return value(names, [out](const std::string& flag, const std::string& v) {
    const config::Table& table = runtime_option_table();
    config::Value parsed;
    std::string why;
    int i = table.find("dram_bytes");
    if (table.parse_value(static_cast<size_t>(i), v, flag, &parsed, &why) != 0) return why;
    *out = parsed.u;
    return std::string();
  });
}

Parser& Parser::typed(const char* names, config::OptionType type, uint64_t lo, uint64_t hi,
                      std::function<void(uint64_t)> store) {
  return value(names, [=](const std::string& flag, const std::string& v) {
    config::OptionInfo info{"", type, "", lo, hi, false, ""};
    config::Value parsed;
    std::string why = config_value(info, flag, v, &parsed);
    if (why.empty()) store(parsed.u);
    return why;
  });
}

Parser& Parser::count(const char* names, uint64_t* out, uint64_t lo, uint64_t hi) {
  return typed(names, config::OptionType::kUnsigned, lo, hi, [out](uint64_t v) { *out = v; });
}

Parser& Parser::count(const char* names, unsigned* out, uint64_t lo, uint64_t hi) {
  return typed(names, config::OptionType::kUnsigned, lo, hi,
               [out](uint64_t v) { *out = static_cast<unsigned>(v); });
}

Parser& Parser::percent(const char* names, unsigned* out, uint64_t lo, uint64_t hi) {
  return typed(names, config::OptionType::kPercent, lo, hi,
               [out](uint64_t v) { *out = static_cast<unsigned>(v); });
}

Parser& Parser::number(const char* names, double* out, double lo, double hi, const char* unit) {
  char range[64];
  snprintf(range, sizeof range, "%g to %g", lo, hi);
  std::string want = std::string("is not a number of ") + unit + " (use " + range + ")";
  return value(names, [=](const std::string& flag, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    double d = strtod(v.c_str(), &end);
    bool plain = !v.empty() && (isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.');
    if (!plain || errno || *end || !std::isfinite(d) || d < lo || d > hi)
      return bad_value(flag, v, want);
    *out = d;
    return std::string();
  });
}

// ---- Parsing ----------------------------------------------------------------

const Parser::Flag* Parser::find(const std::string& name) const {
  for (const Flag& f : flags_)
    for (const std::string& n : f.names)
      if (n == name) return &f;
  return nullptr;
}

int Parser::unknown(const std::string& typed) const {
  std::vector<std::string> names = {"--help"};
  for (const Flag& f : flags_)
    for (const std::string& n : f.names) names.push_back(n);
  std::vector<config::OptionInfo> infos;
  for (const std::string& n : names)
    infos.push_back({n.c_str(), config::OptionType::kString, "", 0, 0, false, ""});
  config::Table table(infos.data(), infos.size(), kDialect, nullptr);
  return cmd_.usage_error(table.unknown_option(typed));
}

int Parser::apply(const Flag& f, const std::string& typed, const std::string& value) {
  if (!f.takes_value) {
    f.on();
    return -1;
  }
  std::string why = f.handle(typed, value);
  return why.empty() ? -1 : cmd_.usage_error(why);
}

// "-x", "-xVALUE", "-x VALUE".
int Parser::parse_short(int argc, char** argv, int* i) {
  std::string arg = argv[*i], name = arg.substr(0, 2);
  if (name == "-h") return help_(stdout), 0;
  const Flag* f = find(name);
  if (!f) return unknown(arg.size() > 2 ? name + "' in '" + arg : name);
  if (!f->takes_value && arg.size() > 2) return unknown(arg);
  if (!f->takes_value || arg.size() > 2) return apply(*f, name, arg.substr(2));
  if (*i + 1 >= argc) return cmd_.usage_error(name + " needs a value");
  return apply(*f, name, argv[++*i]);
}

int Parser::parse_flag(int argc, char** argv, int* i) {
  std::string arg = argv[*i];
  if (!arg.starts_with("--")) return parse_short(argc, argv, i);
  size_t eq = arg.find('=');
  std::string name = arg.substr(0, eq);
  if (name == "--help") return help_(stdout), 0;
  const Flag* f = find(name);
  if (!f) return unknown(name);
  if (!f->takes_value && eq != std::string::npos) return cmd_.usage_error(name + " takes no value");
  if (!f->takes_value || eq != std::string::npos)
    return apply(*f, name, eq == std::string::npos ? "" : arg.substr(eq + 1));
  if (*i + 1 >= argc) return cmd_.usage_error(name + " needs a value");
  return apply(*f, name, argv[++*i]);
}

int Parser::parse(int argc, char** argv, std::vector<std::string>* operands) {
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    bool is_flag = arg.size() > 1 && arg[0] == '-';
    if (arg == "--") {
      for (++i; i < argc; i++) {
        if (!operands) return cmd_.usage_error(std::string("unexpected argument '") + argv[i] + "'");
        operands->push_back(argv[i]);
      }
      break;
    }
    if (!is_flag) {
      if (!operands) return cmd_.usage_error("unexpected argument '" + arg + "'");
      operands->push_back(arg);
      continue;
    }
    if (int rc = parse_flag(argc, argv, &i); rc >= 0) return rc;
  }
  return -1;
}

int Parser::parse_until_operand(int argc, char** argv, int* first_operand) {
  int i = 1;
  for (; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--") {
      i++;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;
    if (int rc = parse_flag(argc, argv, &i); rc >= 0) return rc;
  }
  *first_operand = i;
  return -1;
}

// ---- Shared checks -------------------------------------------------------------

int parse_pid(const std::string& what, const std::string& value, long* out, std::string* why) {
  uint64_t v = 0;
  if (config::parse_decimal(value, &v) != 0 || v == 0 || v > 0x7fffffff) {
    *why = bad_value(what, value, "is not a process id");
    return -EINVAL;
  }
  *out = static_cast<long>(v);
  return 0;
}

Handler job_name(std::string* out) {
  return [out](const std::string& flag, const std::string& v) {
    if (v.empty() || v.size() > ipc::kMaxNameBytes)
      return bad_value(flag, v,
                       "is not a job name (1 to " + std::to_string(ipc::kMaxNameBytes) + " bytes)");
    *out = v;
    return std::string();
  };
}

}  // namespace mtier::tools::cli
