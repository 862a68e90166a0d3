// SPDX-License-Identifier: Apache-2.0
// The command line of every `mtier` subcommand: one parser for flags
// ("--flag VALUE", "--flag=VALUE", "-f VALUE", "-fVALUE", switches, "--"),
// whose values go through the config module's value parsers (sizes, shares
// of memory, counts: config/option_table.h), and one way of saying what is
// wrong: "mtier SUB: ..." naming the flag and the value as typed, then
// "Try 'mtier SUB --help'." after a usage error, which exits 2.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "config/option_table.h"

namespace mtier::tools::cli {

// A subcommand as its messages name it: "status", "bench suite".
class Command {
 public:
  explicit Command(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  // "mtier NAME: text" on stderr.
  void say(const std::string& text) const;
  // say(text); returns 1 (a failure).
  int fail(const std::string& text) const;
  // say(text), then "Try 'mtier NAME --help'."; returns 2 (a usage error).
  int usage_error(const std::string& text) const;
  // The pointer to the help alone (getopt-style callers that said the rest).
  void try_help() const;

 private:
  std::string name_;
};

// A value handler gets the flag as typed ("--dram", "-o") and its value;
// returns "" if it took the value, else the message, which names the flag:
// "--dram: \"12X\" is not a size (use e.g. 4096, 64M, 2G or 25%)".
using Handler = std::function<std::string(const std::string& flag, const std::string& value)>;
// That message: FLAG: "VALUE" what (what: "is not a process id").
std::string bad_value(const std::string& flag, const std::string& value, const std::string& what);

class Parser {
 public:
  // `help` is printed on stdout for -h and --help (then parse returns 0).
  Parser(const Command& cmd, std::function<void(FILE*)> help)
      : cmd_(cmd), help_(std::move(help)) {}

  // `names`: "-q, --quiet", "--json", "-o". A switch sets *out (or calls on).
  Parser& flag(const char* names, bool* out);
  Parser& flag(const char* names, std::function<void()> on);
  // A flag with a value, checked by `handle`.
  Parser& value(const char* names, Handler handle);
  // Text as given; empty refused unless allow_empty.
  Parser& text(const char* names, std::string* out, bool allow_empty = false);
  // A size ("4096", "64K", "2G") from min to max.
  Parser& size(const char* names, uint64_t* out, uint64_t min, uint64_t max = kMaxSize);
  // A DRAM budget: a size, or "25%" of physical memory (mtier.conf's
  // dram_bytes, with its parser and range): the same in every command.
  Parser& dram(const char* names, uint64_t* out);
  // A whole number from lo to hi.
  Parser& count(const char* names, uint64_t* out, uint64_t lo, uint64_t hi);
  Parser& count(const char* names, unsigned* out, uint64_t lo, uint64_t hi);
  // A percentage from lo to hi, "%" optional ("25", "25%").
  Parser& percent(const char* names, unsigned* out, uint64_t lo, uint64_t hi);
  // A decimal number (fractions allowed) from lo to hi; unit names it in
  // the message ("seconds").
  Parser& number(const char* names, double* out, double lo, double hi, const char* unit);

  // Parses argv[1..argc). Flags and operands may be mixed (operands go to
  // *operands in order; nullptr: none are accepted); after "--" all is an
  // operand. With stop_at_operand the first operand ends the flags: it
  // and the rest are the program (mtier run, record -- COMMAND) and
  // *first_operand is its index (argc if none).
  // Returns -1 to go on, 0 after --help, 2 after a usage error (said).
  int parse(int argc, char** argv, std::vector<std::string>* operands);
  int parse_until_operand(int argc, char** argv, int* first_operand);

  static constexpr uint64_t kMaxSize = 1ull << 50;  // 1P

 private:
  struct Flag {
    std::vector<std::string> names;
    bool takes_value;
    std::function<void()> on;
    Handler handle;
  };
  Parser& add(const char* names, bool takes_value, std::function<void()> on, Handler handle);
  Parser& typed(const char* names, config::OptionType type, uint64_t lo, uint64_t hi,
                std::function<void(uint64_t)> store);
  const Flag* find(const std::string& name) const;
  // One flag at argv[*i]; advances *i past a separate value. -1 or 0/2 as parse.
  int parse_flag(int argc, char** argv, int* i);
  int parse_short(int argc, char** argv, int* i);
  int apply(const Flag& f, const std::string& typed, const std::string& value);
  int unknown(const std::string& typed) const;

  const Command& cmd_;
  std::function<void(FILE*)> help_;
  std::vector<Flag> flags_;
};

// Checks that several commands share. A process id, 1 to 2^31-1: 0, or
// -EINVAL with *why the message naming `what` (a flag, or "PID").
int parse_pid(const std::string& what, const std::string& value, long* out, std::string* why);
// --job NAME, as mtierd takes one (1 to ipc::kMaxNameBytes bytes).
Handler job_name(std::string* out);

}  // namespace mtier::tools::cli
