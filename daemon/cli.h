// SPDX-License-Identifier: Apache-2.0
// mtierd's command line: parsing (no exit() here, so tests can drive it),
// the --help text, and the config loading the command line asks for: the
// file (default SYSCONFDIR/mtier/mtierd.conf), then the settings given as options,
// which win. The policy is named with --policy NAME and its parameters given
// separately with --policy-params "k=v k=v", as the config file's keys
// policy and policy_params are.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "daemon_config.h"

namespace mtier::daemon {

// configure's --sysconfdir: /etc/mtier/mtierd.conf in the packages.
inline constexpr const char* kDefaultConfigPath = MTIER_SYSCONFDIR "/mtier/mtierd.conf";

// What main does after parse_cli; the exit status is main's:
// kRun: run the daemon; kCheckConfig: check_config(), print, exit 0 or 1;
// kHelp / kVersion: print CliResult::text to stdout, exit 0;
// kUsageError: print "mtierd: " + *why and "Try 'mtierd --help'.", exit 2.
enum class CliAction { kRun, kCheckConfig, kHelp, kVersion, kUsageError };

struct CliResult {
  CliAction action = CliAction::kRun;
  std::string config_path = kDefaultConfigPath;
  // Named on the command line (--config FILE, --check-config FILE): a
  // missing file is then an error; the default file may be missing.
  bool config_required = false;
  // Settings given as options, as (config key, value) in the order given
  // (each already validated). load_config applies them after the file, on
  // start and on every SIGHUP re-read, so the command line always wins.
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string text;  // kHelp: usage text; kVersion: "mtierd VERSION\n"
  std::string fuse_mount;  // --fuse MOUNTPOINT: serve mtierfs there; "" = no
};

// Parses argv (argv[0] is skipped). Options: --config FILE, --check-config
// [FILE], --socket PATH, --policy NAME, --policy-params "K=V ...",
// --dram-bytes SIZE, --fuse MOUNTPOINT (absolute), -v/--verbose (log_level info), --debug (log_level
// debug; the more verbose of the two wins), -h/--help, --version. A value
// may follow as the next argument or after '=' (--socket=/run/x.sock);
// --check-config takes FILE only as a next argument that does not start
// with '-', or after '='. --help and --version act at once: later arguments
// are not read. Returns 0 (out->action says what to do), or -EINVAL with
// out->action = kUsageError and *why = the reason in one line, without
// prefix ("unknown option '--foo'"): main prints "mtierd: REASON" and
// "Try 'mtierd --help'." and exits 2.
[[nodiscard]] int parse_cli(int argc, char** argv, CliResult* out, std::string* why);

// The --help text: usage, every option, every config key with its default.
std::string usage_text();

// The settings in effect: built-in defaults, then cli.config_path (missing
// is fine unless cli.config_required), then cli.overrides. All-or-nothing:
// *cfg is replaced only on success, so a SIGHUP re-read that fails keeps the
// old settings. A key removed from the file goes back to its default.
// Returns 0, or -errno / -EINVAL with *why naming the file, line and key.
[[nodiscard]] int load_config(const CliResult& cli, DaemonConfig* cfg, std::string* why);

// Makes the policy cfg names, as the daemon does at start. Returns 0, or
// -EINVAL with *why = where it was named and what is wrong: the command
// line's flags as typed ("--policy 'nosuch': unknown policy ..."), which win,
// else the config file. *usage (if given): the command line named it.
[[nodiscard]] int check_policy(const CliResult& cli, const DaemonConfig& cfg, std::string* why,
                               bool* usage = nullptr);

// --check-config: load_config and check_policy without keeping the result. Returns 0 with
// *message = "FILE: ok" ("FILE: ok (not found, the defaults apply)" for a
// missing default file), or < 0 with *message = the first error.
[[nodiscard]] int check_config(const CliResult& cli, std::string* message);

}  // namespace mtier::daemon
