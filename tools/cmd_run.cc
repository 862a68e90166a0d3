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
  char** program = nullptr;  // PROGRAM [ARGS...], nullptr-terminated (argv's tail)
};

// The flags that set one option each, and that option.
struct ValueFlag {
  const char* flag;
  const char* option;
};
constexpr ValueFlag kValueFlags[] = {
    {"--dram", "dram_bytes"},   {"--store", "store_path"},   {"--store-bytes", "store_bytes"},
    {"--pmem", "pmem_path"},    {"--min-bytes", "min_bytes"}, {"--names", "names"},
};

void run_help(FILE* out) {
  fprintf(out,
          "usage: mtier run [OPTIONS] [--] PROGRAM [ARGS...]\n\n"
          "Runs PROGRAM with libmtier.so.0 preloaded: its allocations of at least\n"
          "min_bytes become tables managed by mtier. The options below become MTIER_*\n"
          "variables (see mtier.conf(5)); mtier run then executes PROGRAM, so its exit\n"
          "status is PROGRAM's (127: not found, 126: cannot be executed).\n\n"
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
          "  --stats             print a summary at exit (MTIER_STATS=1)\n"
          "  -v, --verbose       print the options in effect at start (MTIER_VERBOSE=1)\n"
          "  --dry-run           print the variables and the command, run nothing\n"
          "  -h, --help          this help\n\n"
          "libmtier.so.0 is $MTIER_LIBRARY if set; else the build tree's lib/.libs\n"
          "when this mtier is the build tree's; else %s when this mtier is\n"
          "the installed %s/mtier; else ../lib beside this program, then %s.\n"
          "A Python program also gets mtier's directory first on PYTHONPATH: its\n"
          "sitecustomize hands an unmodified PyTorch trainer's embedding ids and\n"
          "next batches to the lookahead (see mtier(1), \"PyTorch\").\n",
          MTIER_LIBDIR, MTIER_BINDIR, MTIER_LIBDIR);
}

// ---- Options -------------------------------------------------------------

bool is_option(const std::string& name) {
  for (const OptionInfo& o : option_table())
    if (name == o.name) return true;
  return false;
}

std::string variable_of(const std::string& option) {
  std::string var = "MTIER_";
  for (char c : option) var += static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return var;
}

// Checks NAME=VALUE of -o and appends it. Returns 0, or -1 after printing why.
int add_o_option(const std::string& text, RunArgs* a) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    fprintf(stderr, "mtier run: -o '%s': expected NAME=VALUE\n", text.c_str());
    return -1;
  }
  std::string name = text.substr(0, eq);
  for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  if (!is_option(name)) {
    std::string why;  // the library's "unknown option" message, with its "did you mean"
    if (OptionSet().set(name, text.substr(eq + 1), OptionSource::kApi, &why) != 0)
      fprintf(stderr, "mtier run: -o: %s (see mtier.conf(5))\n", why.c_str());
    return -1;
  }
  a->options.emplace_back(name, text.substr(eq + 1));
  return 0;
}

// Checks the options' values together, as the program's MTIER_* variables
// (cross-option rules included), and --config. Returns 0, or -1 after
// printing one line that names the variable or file.
int check_options(const RunArgs& a) {
  std::vector<std::string> vars;
  for (const auto& [name, value] : a.options) vars.push_back(variable_of(name) + "=" + value);
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string why;
  if (OptionSet().load_env(envp.data(), &why) != 0) {
    fprintf(stderr, "mtier run: %s\n", why.c_str());
    return -1;
  }
  if (!a.config.empty() &&
      OptionSet().load_file(a.config, OptionSource::kConf, true, &why) != 0) {
    fprintf(stderr, "mtier run: --config: %s\n", why.c_str());
    return -1;
  }
  return 0;
}

// ---- Command line ----------------------------------------------------------

// Applies flag (with its value, if it takes one) to *a. Returns 0, or -1
// after printing why.
int apply_flag(const std::string& flag, const std::string& value, RunArgs* a) {
  if (flag == "-o") return add_o_option(value, a);
  if (flag == "--config") {
    a->config = value;
    return 0;
  }
  if (flag == "--lookahead") {
    char* end = nullptr;
    errno = 0;
    long k = strtol(value.c_str(), &end, 10);
    if (value.empty() || *end || errno || k < 0 || k > 64) {
      fprintf(stderr, "mtier run: --lookahead '%s': want a number of batches, 0 to 64\n",
              value.c_str());
      return -1;
    }
    a->lookahead = std::to_string(k);
    return 0;
  }
  for (const ValueFlag& f : kValueFlags)
    if (flag == f.flag) {
      a->options.emplace_back(f.option, value);
      return 0;
    }
  fprintf(stderr, "mtier run: unknown option '%s' (see mtier run --help)\n", flag.c_str());
  return -1;
}

// Applies a flag without a value. Returns 1 if `flag` is one, 0 if not.
int apply_switch(const std::string& flag, RunArgs* a) {
  if (flag == "--help" || flag == "-h") {
    run_help(stdout);
    exit(0);
  }
  if (flag == "--dry-run") a->dry_run = true;
  else if (flag == "--stats") a->options.emplace_back("stats", "1");
  else if (flag == "--no-torch") a->torch = false;
  else if (flag == "-v" || flag == "--verbose") a->options.emplace_back("verbose", "1");
  else return 0;
  return 1;
}

// Parses the flag at argv[*i] ("--flag value", "--flag=value" or a switch);
// advances *i past a separate value. Returns 0, or -1 after printing why.
int parse_flag(int argc, char** argv, int* i, RunArgs* a) {
  std::string flag = argv[*i];
  size_t eq = flag.find('=');
  bool inline_value = flag.starts_with("--") && eq != std::string::npos;
  std::string value = inline_value ? flag.substr(eq + 1) : "";
  if (inline_value) flag.resize(eq);
  if (apply_switch(flag, a)) {
    if (!inline_value) return 0;
    fprintf(stderr, "mtier run: %s takes no value\n", flag.c_str());
    return -1;
  }
  if (!inline_value && *i + 1 >= argc) {
    fprintf(stderr, "mtier run: %s needs a value (see mtier run --help)\n", flag.c_str());
    return -1;
  }
  return apply_flag(flag, inline_value ? value : argv[++*i], a);
}

// Flags up to the first non-flag argument or "--"; the rest is the program.
// Returns 0, or -1 after printing why.
int parse_args(int argc, char** argv, RunArgs* a) {
  int i = 1;
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--")) {
      i++;
      break;
    }
    if (argv[i][0] != '-' || !strcmp(argv[i], "-")) break;
    if (parse_flag(argc, argv, &i, a) != 0) return -1;
  }
  if (i >= argc) {
    fprintf(stderr, "mtier run: no program given (usage: mtier run [OPTIONS] [--] PROGRAM "
                    "[ARGS...])\n");
    return -1;
  }
  a->program = argv + i;
  return 0;
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
      fprintf(stderr, "mtier run: cannot set %s: %s\n", var.c_str(), strerror(errno));
      return 1;
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
  if (parse_args(argc, argv, &args) != 0 || check_options(args) != 0) return 2;
  std::string lib;
  if (find_library(&lib) != 0) return 1;
  std::vector<Assignment> env = program_env(args, lib);
  return args.dry_run ? print_dry_run(env, args.program) : exec_program(env, args.program);
}

}  // namespace mtier::tools
