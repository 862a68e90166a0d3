// SPDX-License-Identifier: Apache-2.0
// mtierd's option table, argv parser, --help text and config loading.
#include "cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "config.h"  // PACKAGE_VERSION
#include "policy/policy.h"

namespace mtier::daemon {
namespace {

enum class Kind { kSetting, kConfig, kCheckConfig, kFuse, kVerbose, kDebug, kHelp, kVersion };

// One command-line option; kSetting options set the config key `key`.
struct Flag {
  const char* name;   // "--socket"
  const char* alias;  // "-v", or nullptr
  const char* arg;    // "PATH" (required), "[FILE]" (optional), or nullptr
  Kind kind;
  const char* key;
  const char* help;
};

// The one table of options: the parser and --help both read it.
constexpr Flag kFlags[] = {
    {"--config", nullptr, "FILE", Kind::kConfig, nullptr,
     "read settings from FILE (default " MTIER_SYSCONFDIR "/mtier/mtierd.conf,\n"
     "which may be missing)"},
    {"--check-config", nullptr, "[FILE]", Kind::kCheckConfig, nullptr,
     "check FILE (default: the --config file) and the options;\n"
     "print \"FILE: ok\" or the first error, exit 0 or 1"},
    {"--socket", nullptr, "PATH", Kind::kSetting, "socket", "socket (unix socket path)"},
    {"--policy", nullptr, "NAME", Kind::kSetting, "policy",
     "policy: lfu, lru, hot-promote or static"},
    {"--policy-params", nullptr, "\"K=V ...\"", Kind::kSetting, "policy_params",
     "policy_params: the policy's parameters"},
    {"--dram-bytes", nullptr, "SIZE", Kind::kSetting, "dram_bytes",
     "dram_bytes: node-wide DRAM budget (64G, ...)"},
    {"--fuse", nullptr, "MOUNTPOINT", Kind::kFuse, nullptr,
     "also serve mtierfs(8) on MOUNTPOINT (started and\nunmounted with the daemon)"},
    {"--verbose", "-v", nullptr, Kind::kVerbose, nullptr, "log_level = info"},
    {"--debug", nullptr, nullptr, Kind::kDebug, nullptr, "log_level = debug"},
    {"--help", "-h", nullptr, Kind::kHelp, nullptr, "print this help and exit"},
    {"--version", nullptr, nullptr, Kind::kVersion, nullptr, "print the version and exit"},
};

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// Sets the usage-error result and returns -EINVAL.
int usage_error(CliResult* out, std::string* why, const std::string& reason) {
  out->action = CliAction::kUsageError;
  if (why) *why = reason;
  return -EINVAL;
}

// The flag spelled `name` ("--socket" or "-v"), or nullptr.
const Flag* find_flag(std::string_view name) {
  for (const Flag& f : kFlags)
    if (name == f.name || (f.alias && name == f.alias)) return &f;
  return nullptr;
}

}  // namespace

std::string usage_text() {
  std::string out =
      "usage: mtierd [OPTIONS]\n"
      "       mtierd --check-config [FILE]\n"
      "       mtierd --help | --version\n"
      "\n"
      "The mtier node daemon: processes running under libmtier register on its socket;\n"
      "it samples their heat and orders migrations under one node-wide policy.\n"
      "\noptions:\n";
  for (const Flag& f : kFlags) {
    std::string head = f.alias ? std::string(f.alias) + ", " + f.name : std::string(f.name);
    if (f.arg) head += std::string(" ") + f.arg;
    std::string pad(head.size() < 28 ? 28 - head.size() : 1, ' ');
    out += "  " + head + pad;
    for (const char* p = f.help; *p; ++p) {
      if (*p == '\n') out += "\n" + std::string(30, ' ');  // continuation lines line up
      else out += *p;
    }
    out += "\n";
  }
  out +=
      "\nOptions override the config file. Its keys, \"name = value\" a line, with\n"
      "their defaults:\n";
  out += daemon_table().help_listing();
  out += "\nSee mtierd(8), mtier(7).\n";
  return out;
}

int parse_cli(int argc, char** argv, CliResult* out, std::string* why) {
  *out = CliResult{};
  DaemonConfig scratch;  // validates each setting as it is read
  int verbosity = 0;     // 1 = -v, 2 = --debug
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-')
      return usage_error(out, why, "unexpected argument " + quoted(arg));
    size_t eq = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
    std::string_view name = arg.substr(0, eq);
    const Flag* f = find_flag(name);
    if (f == nullptr) return usage_error(out, why, "unknown option " + quoted(name));
    bool has_inline = eq != std::string_view::npos;
    std::string value = has_inline ? std::string(arg.substr(eq + 1)) : std::string();
    bool takes_value = f->arg != nullptr;
    bool optional = takes_value && f->arg[0] == '[';
    if (!takes_value && has_inline)
      return usage_error(out, why, "option " + quoted(f->name) + " takes no value");
    bool has_value = has_inline;
    if (takes_value && !has_inline && i + 1 < argc && (!optional || argv[i + 1][0] != '-')) {
      value = argv[++i];
      has_value = true;
    }
    if (takes_value && !optional && !has_value)
      return usage_error(out, why, "option " + quoted(f->name) + " requires an argument");
    switch (f->kind) {
      case Kind::kSetting: {
        std::string reason;
        if (set_option(f->key, value, &scratch, &reason, f->name) != 0)
          return usage_error(out, why, reason);
        out->overrides.emplace_back(f->key, value);
        break;
      }
      case Kind::kConfig:
      case Kind::kCheckConfig:
        if (f->kind == Kind::kCheckConfig) check = true;
        if (!has_value) break;
        if (value.empty())
          return usage_error(out, why, "option " + quoted(f->name) + " needs a file name");
        out->config_path = value;
        out->config_required = true;
        break;
      case Kind::kFuse:
        if (value.empty() || value[0] != '/')
          return usage_error(out, why, "option '--fuse' needs an absolute mount point");
        out->fuse_mount = value;
        break;
      case Kind::kVerbose: verbosity = std::max(verbosity, 1); break;
      case Kind::kDebug: verbosity = 2; break;
      case Kind::kHelp:
        out->action = CliAction::kHelp;
        out->text = usage_text();
        return 0;
      case Kind::kVersion:
        out->action = CliAction::kVersion;
        out->text = std::string("mtierd ") + PACKAGE_VERSION + "\nLicense: " PACKAGE_LICENSE
                    " (the Apache License, Version 2.0)\n";
        return 0;
    }
  }
  if (verbosity > 0) out->overrides.emplace_back("log_level", verbosity == 1 ? "info" : "debug");
  out->action = check ? CliAction::kCheckConfig : CliAction::kRun;
  return 0;
}

int load_config(const CliResult& cli, DaemonConfig* cfg, std::string* why) {
  DaemonConfig next;
  if (int rc = load_file(cli.config_path, cli.config_required, &next, why)) return rc;
  for (const auto& [key, value] : cli.overrides) {
    std::string reason;  // parse_cli validated these; kept for a CliResult built by hand
    if (set_option(key, value, &next, &reason) != 0) {
      if (why) *why = "command line: " + reason;
      return -EINVAL;
    }
  }
  *cfg = std::move(next);
  return 0;
}

int check_policy(const CliResult& cli, const DaemonConfig& cfg, std::string* why, bool* usage) {
  std::unique_ptr<policy::Policy> p;
  std::string reason;
  if (usage) *usage = false;
  if (policy::make_policy(cfg.policy, cfg.policy_params, &p, &reason) == 0) return 0;
  std::string flags;  // the command line's, as typed: they win over the file
  for (const auto& [key, value] : cli.overrides)
    if (key == "policy" || key == "policy_params")
      flags += (flags.empty() ? "" : " ") +
               std::string(key == "policy" ? "--policy " : "--policy-params ") + quoted(value);
  if (!flags.empty() && usage) *usage = true;
  *why = (flags.empty() ? cli.config_path : flags) + ": " + reason;
  return -EINVAL;
}

int check_config(const CliResult& cli, std::string* message) {
  DaemonConfig cfg;
  std::string why;
  if (int rc = load_config(cli, &cfg, &why)) {
    *message = why;
    return rc;
  }
  // The policy too, as the daemon will make it at start.
  if (int rc = check_policy(cli, cfg, message)) return rc;
  bool missing = !cli.config_required && access(cli.config_path.c_str(), F_OK) != 0;
  *message = cli.config_path + (missing ? ": ok (not found, the defaults apply)" : ": ok");
  return 0;
}

}  // namespace mtier::daemon
