// SPDX-License-Identifier: Apache-2.0
// mtier run: a launcher in the manner of numactl and heaptrack. It puts
// the runtime, libmtier.so.0 (its soname: the runtime package installs no
// libmtier.so, which is the -dev package's link), first in LD_PRELOAD and mtier's options in MTIER_* variables,
// then execvp's the program, so the program's exit status is mtier run's.
// Option names and values are checked against the option table first, so
// that a typo fails here (exit 2) and not in the program.
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "config/options.h"

namespace mtier::tools {
namespace {

using Assignment = std::pair<std::string, std::string>;  // variable, value

struct RunArgs {
  std::vector<Assignment> options;  // option name, value; in command-line order
  std::string config;               // --config FILE ("" = not given)
  bool dry_run = false;
  std::string lookahead;  // MTIER_LOOKAHEAD for the torch integration ("": its default)
  bool torch = true;      // false: MTIER_TORCH=0
  int report = -1;        // the start line and summary: 1 --stats or -v, 0 -q, -1 on a terminal
  char** program = nullptr;  // PROGRAM [ARGS...], nullptr-terminated (argv's tail)
};

void run_help(FILE* out) {
  fprintf(out,
          "usage: mtier run [OPTIONS] [--] PROGRAM [ARGS...]\n\n"
          "Runs PROGRAM with libmtier.so.0 preloaded: its allocations of at least\n"
          "min_bytes become tables managed by mtier. The options below become MTIER_*\n"
          "variables (see mtier.conf(5)); mtier run then executes PROGRAM, so its exit\n"
          "status is PROGRAM's (127: not found, 126: cannot be executed).\n"
          "On a terminal, mtier says in one line at start what it manages the tables\n"
          "with (the DRAM budget and where it came from, the store file, its size and\n"
          "place, the tiers, mtierd or not, the lookahead) and at exit sums up the run\n"
          "(elapsed time, faults, bytes fetched and evicted, peak DRAM, hit ratio,\n"
          "lookahead hits); -q says neither, -v adds the options.\n\n"
          "  --dram SIZE|PCT%%    DRAM budget (MTIER_DRAM_BYTES)\n"
          "  --store PATH        file store: a file or a directory (MTIER_STORE_PATH)\n"
          "  --store-bytes SIZE  file store capacity (MTIER_STORE_BYTES)\n"
          "  --pmem PATH         PMem store (MTIER_PMEM_PATH)\n"
          "  --min-bytes SIZE    smallest allocation that becomes a table (MTIER_MIN_BYTES)\n"
          "  --names LIST        comma-separated table names, in allocation order\n"
          "                      (MTIER_NAMES)\n"
          "  --config FILE       options file (MTIER_CONF)\n"
          "  -o NAME=VALUE       any option of mtier.conf(5) (MTIER_<NAME>); repeatable\n"
          "  --lookahead K       PyTorch: batches a DataLoader is kept ahead and named\n"
          "                      to the lookahead, 0..64 (MTIER_LOOKAHEAD; default 1;\n"
          "                      0: only each embedding op's own ids)\n"
          "  --no-torch          no PyTorch integration (MTIER_TORCH=0)\n"
          "  --strict            an engine that cannot start (no userfaultfd permission,\n"
          "                      a store that cannot be opened) ends the program with\n"
          "                      exit status 2 and the reason, instead of an unmanaged\n"
          "                      run (MTIER_STRICT=1)\n"
          "  --stats             the start line and the summary at exit, terminal or not\n"
          "                      (MTIER_STATS=1)\n"
          "  -q, --quiet         neither (MTIER_STATS=0); warnings and errors still show\n"
          "  -v, --verbose       also the options in effect and where each came from, and\n"
          "                      the engine's full start line (MTIER_VERBOSE=1)\n"
          "  --dry-run           print the variables and the command, run nothing\n"
          "  -h, --help          this help\n\n"
          "libmtier.so.0 is $MTIER_LIBRARY if set; else the build tree's lib/.libs\n"
          "when this mtier is the build tree's; else %s when this mtier is\n"
          "the installed %s/mtier; else ../lib beside this program, then %s.\n"
          "A Python program also gets mtier's directory first on PYTHONPATH: its\n"
          "sitecustomize hands an unmodified PyTorch trainer's embedding ids and\n"
          "next batches to the lookahead (see mtier-run(1), \"PyTorch\").\n",
          MTIER_LIBDIR, MTIER_BINDIR, MTIER_LIBDIR);
}

// ---- Options -------------------------------------------------------------

std::string variable_of(const std::string& option) {
  std::string var = "MTIER_";
  for (char c : option) var += static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return var;
}

const cli::Command kCmd("run");

// A flag that sets one runtime option: its value is checked with that
// option's parser (mtier.conf(5)), the message naming the flag.
cli::Handler option_flag(const char* option, RunArgs* a) {
  return [option, a](const std::string& flag, const std::string& value) {
    const config::Table& table = runtime_option_table();
    config::Value parsed;
    std::string why;
    int i = table.find(option);
    if (table.parse_value(static_cast<size_t>(i), value, flag, &parsed, &why) != 0) return why;
    a->options.emplace_back(option, value);
    return std::string();
  };
}

// -o NAME=VALUE: any runtime option, checked as the flags are.
cli::Handler any_option(RunArgs* a) {
  return [a](const std::string& flag, const std::string& text) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) return cli::bad_value(flag, text, "is not NAME=VALUE");
    std::string name = text.substr(0, eq);
    for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    const config::Table& table = runtime_option_table();
    if (table.find(name) < 0) return flag + ": " + table.unknown_option(name) + " (see mtier.conf(5))";
    return option_flag(table[static_cast<size_t>(table.find(name))].name, a)(flag + " " + name,
                                                                            text.substr(eq + 1));
  };
}

// Checks the options' values together, as the program's MTIER_* variables
// (the rules across options), and --config. Returns 0, or 2 after saying
// what is wrong.
int check_options(const RunArgs& a) {
  OptionSet set;
  std::string why;
  for (const auto& [name, value] : a.options)
    if (set.set(name, value, OptionSource::kApi, &why) != 0) {
      // The rules across options name where each came from: here, what was typed.
      for (size_t at; (at = why.find("(API)")) != std::string::npos;) why.replace(at, 5, "(given)");
      return kCmd.usage_error(why);
    }
  if (!a.config.empty() && OptionSet().load_file(a.config, OptionSource::kConf, true, &why) != 0)
    return kCmd.usage_error("--config " + why);
  return 0;
}

// Flags up to the first operand or "--"; the rest is the program.
// Returns -1 to go on, else the exit status.
int parse_args(int argc, char** argv, RunArgs* a) {
  uint64_t lookahead = UINT64_MAX;  // not given
  bool quiet = false, stats = false, verbose = false;
  cli::Parser p(kCmd, run_help);
  p.value("--dram", option_flag("dram_bytes", a))
      .value("--store", option_flag("store_path", a))
      .value("--store-bytes", option_flag("store_bytes", a))
      .value("--pmem", option_flag("pmem_path", a))
      .value("--min-bytes", option_flag("min_bytes", a))
      .value("--names", option_flag("names", a))
      .value("-o", any_option(a))
      .text("--config", &a->config)
      .count("--lookahead", &lookahead, 0, 64)
      .flag("--no-torch", [a] { a->torch = false; })
      .flag("--strict", [a] { a->options.emplace_back("strict", "1"); })
      .flag("--stats", &stats)
      .flag("-q, --quiet", &quiet)
      .flag("-v, --verbose", &verbose)
      .flag("--dry-run", &a->dry_run);
  int first = argc;
  if (int rc = p.parse_until_operand(argc, argv, &first); rc >= 0) return rc;
  if (lookahead != UINT64_MAX) a->lookahead = std::to_string(lookahead);
  if (quiet && (stats || verbose)) return kCmd.usage_error("give -q or --stats/-v, not both");
  if (quiet) a->report = 0;
  if (stats || verbose) a->report = 1;
  if (stats) a->options.emplace(a->options.begin(), "stats", "1");
  if (verbose) a->options.emplace(a->options.begin(), "verbose", "1");
  if (first >= argc)
    return kCmd.usage_error("no program given (usage: mtier run [OPTIONS] [--] PROGRAM [ARGS...])");
  a->program = argv + first;
  return -1;
}

// ---- Finding libmtier.so.0 -------------------------------------------------

constexpr const char* kSoname = "libmtier.so.0";  // lib/Makefile.inc: -version-info 0:0:0

// Why `path` cannot be the library, or nullptr if it is a regular file.
const char* file_problem(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return strerror(errno);
  return S_ISREG(st.st_mode) ? nullptr : "not a regular file";
}

bool is_file(const std::string& path) { return file_problem(path) == nullptr; }

// `path` made absolute with its directory canonical and its last component
// kept (so the libmtier.so.0 symlink stays libmtier.so.0). Returns "" if the
// directory cannot be resolved.
std::string absolute(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  char* real = realpath(dir.c_str(), nullptr);
  if (!real) return "";
  std::string out = std::string(real) + (strcmp(real, "/") ? "/" : "") + path.substr(slash + 1);
  free(real);
  return out;
}

// This process's executable, or "" if unknown.
std::string exe_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n <= 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

// The directory of this process's executable, or "" if unknown.
std::string exe_dir() {
  std::string exe = exe_path();
  return exe.empty() ? "" : exe.substr(0, exe.rfind('/'));
}

// Whether a and b name one file (the same path, or the same inode).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (a == b) return true;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The places searched when MTIER_LIBRARY is not set, in order. In the build
// tree (libtool's tools/mtier wraps tools/.libs/mtier) the tree's own
// library; the installed program the configured libdir's (the Debian
// packages': /usr/lib/<triplet>); any other copy (a DESTDIR, a moved
// prefix) the one beside it in ../lib, then the configured libdir.
std::vector<std::string> library_candidates() {
  std::vector<std::string> out;
  const std::string dir = exe_dir(), lib = std::string("/") + kSoname;
  if (dir.ends_with("/tools/.libs")) out.push_back(dir + "/../../lib/.libs" + lib);
  if (!same_file(exe_path(), MTIER_BINDIR "/mtier") && !dir.empty())
    out.push_back(dir + "/../lib" + lib);
  out.push_back(MTIER_LIBDIR + lib);
  return out;
}

// Sets *lib to the absolute path of libmtier.so.0. Returns 0, or -1 after
// printing one line that names what was tried.
int find_library(std::string* lib) {
  if (const char* env = getenv("MTIER_LIBRARY"); env && *env) {
    const char* problem = file_problem(env);
    if (!problem && !(*lib = absolute(env)).empty()) return 0;
    fprintf(stderr, "mtier run: MTIER_LIBRARY=%s: %s\n", env,
            problem ? problem : "cannot resolve its directory");
    return -1;
  }
  std::string tried;
  for (const std::string& c : library_candidates()) {
    if (is_file(c) && !(*lib = absolute(c)).empty()) return 0;
    tried += (tried.empty() ? "" : ", ") + c;
  }
  fprintf(stderr, "mtier run: %s not found (tried %s); set MTIER_LIBRARY to its path\n", kSoname,
          tried.c_str());
  return -1;
}

// ---- The program's environment -------------------------------------------


// ---- The Python side ------------------------------------------------------

// The directory of mtier's sitecustomize.py (and, in the source tree, of the
// mtier package): beside the build tree's library the source tree's;
// installed, <exe>/../share/mtier/python or the configured one
// ($(pkgdatadir)/python: the file is the same on every architecture).
// "" if none.
std::string python_site_dir(const std::string& lib) {
  std::vector<std::string> dirs;
  if (lib.ends_with(std::string("/.libs/") + kSoname)) dirs.push_back(MTIER_SRC_PYTHONDIR);
  if (std::string dir = exe_dir(); !dir.empty()) dirs.push_back(dir + "/../share/mtier/python");
  dirs.push_back(MTIER_PKGDATADIR "/python");
  for (const std::string& d : dirs)
    if (is_file(d + "/sitecustomize.py")) {
      std::string abs = absolute(d + "/sitecustomize.py");
      if (!abs.empty()) return abs.substr(0, abs.rfind('/'));
    }
  return "";
}

// PYTHONPATH for the program: mtier's directory first, then what it was.
// (Not the installed package's directory: Python's own path has it, and on
// PYTHONPATH it would come before a virtual environment's packages in every
// Python the program starts.)
std::string python_path(const std::string& site, const char* old) {
  std::string out = site;
  if (old && *old) out += std::string(":") + old;
  return out;
}

// LD_PRELOAD for the program: lib first, then the entries of `old` (space-
// or colon-separated) that are not lib itself, colon-separated.
std::string merged_preload(const std::string& lib, const char* old) {
  std::string out = lib, entry;
  for (const char* p = old ? old : "";; ++p) {
    if (*p && *p != ':' && *p != ' ') {
      entry += *p;
      continue;
    }
    if (!entry.empty() && !same_file(entry, lib)) out += ":" + entry;
    entry.clear();
    if (!*p) return out;
  }
}

// Sets var=value in *env, replacing an earlier value in its place.
void assign(std::vector<Assignment>* env, const std::string& var, const std::string& value) {
  for (Assignment& e : *env)
    if (e.first == var) {
      e.second = value;
      return;
    }
  env->emplace_back(var, value);
}

// The variables mtier run sets for the program, in order.
std::vector<Assignment> program_env(const RunArgs& a, const std::string& lib) {
  std::vector<Assignment> env;
  assign(&env, "LD_PRELOAD", merged_preload(lib, getenv("LD_PRELOAD")));
  if (!a.config.empty()) assign(&env, "MTIER_CONF", a.config);
  if (!a.torch) assign(&env, "MTIER_TORCH", "0");
  else if (std::string site = python_site_dir(lib); !site.empty())
    assign(&env, "PYTHONPATH", python_path(site, getenv("PYTHONPATH")));
  if (!a.lookahead.empty()) assign(&env, "MTIER_LOOKAHEAD", a.lookahead);
  // The start line and the summary: -q none; on a terminal, unless the
  // environment says otherwise; an -o stats= given below wins.
  if (a.report == 0) assign(&env, "MTIER_STATS", "0");
  if (a.report == 0) assign(&env, "MTIER_VERBOSE", "0");
  if (a.report < 0 && isatty(STDERR_FILENO) && !getenv("MTIER_STATS"))
    assign(&env, "MTIER_STATS", "1");
  for (const auto& [name, value] : a.options) assign(&env, variable_of(name), value);
  return env;
}

// s as one POSIX shell word: as is if it needs no quoting, else in single quotes.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && (isalnum(static_cast<unsigned char>(c)) || strchr("@%+=:,./_-", c));
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// --dry-run: one VAR=value line a variable, then the command. Returns 0.
int print_dry_run(const std::vector<Assignment>& env, char** program) {
  for (const auto& [var, value] : env) printf("%s=%s\n", var.c_str(), shell_word(value).c_str());
  for (char** p = program; *p; ++p) printf("%s%s", p == program ? "" : " ", shell_word(*p).c_str());
  printf("\n");
  return 0;
}

// Sets env, drops MTIER_LIBRARY (the library would take it for an unknown
// option) and execs the program. Returns only on failure: 127 if it was not
// found, 126 if it could not be executed, as a shell does.
int exec_program(const std::vector<Assignment>& env, char** program) {
  for (const auto& [var, value] : env)
    if (setenv(var.c_str(), value.c_str(), 1) != 0) {
      return kCmd.fail("cannot set " + var + ": " + strerror(errno));
    }
  unsetenv("MTIER_LIBRARY");
  fflush(nullptr);
  execvp(program[0], program);
  int err = errno;
  bool searched = !strchr(program[0], '/');  // execvp looked it up in PATH
  fprintf(stderr, "mtier run: %s: %s\n", program[0],
          err == ENOENT && searched ? "command not found" : strerror(err));
  return err == ENOENT ? 127 : 126;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  RunArgs args;
  if (int rc = parse_args(argc, argv, &args); rc >= 0) return rc;
  if (int rc = check_options(args); rc != 0) return rc;
  std::string lib;
  if (find_library(&lib) != 0) return 1;
  std::vector<Assignment> env = program_env(args, lib);
  return args.dry_run ? print_dry_run(env, args.program) : exec_program(env, args.program);
}

}  // namespace mtier::tools
