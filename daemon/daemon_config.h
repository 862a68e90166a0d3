// SPDX-License-Identifier: Apache-2.0
// The settings of mtierd, the node daemon, and their one table, of the
// table type the runtime's options use (src/config/option_table.h, which
// also parses them): every setting has a name, a type, a default, an
// accepted range or set of values and a help line. Read
// from SYSCONFDIR/mtier/mtierd.conf ("name = value" lines), then overridden from
// the command line (daemon/cli.h). man/mtierd.8 lists the same table;
// tests/unit/daemon_config_test.cc checks that it does. Parsing allocates
// (std::string) and runs at start and on SIGHUP only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/option_table.h"
#include "log/log.h"

namespace mtier::daemon {

// Heat sources, as a bit set in DaemonConfig::sources. kSourcesAuto (alone)
// means every source this machine has, probed at start; 0 means none (the
// runtimes' own access sampler only).
inline constexpr unsigned kSourcePebs = 1u << 0;        // Intel PEBS load latency
inline constexpr unsigned kSourceIbs = 1u << 1;         // AMD IBS op sampling
inline constexpr unsigned kSourcePageFaults = 1u << 2;  // perf page-fault software events
inline constexpr unsigned kSourcesAuto = 1u << 31;

// The settings in effect. Sizes are bytes, periods milliseconds.
struct DaemonConfig {
  std::string socket = "/run/mtier/mtierd.sock";  // registration and control socket
  std::string policy = "lfu";                     // placement policy name
  std::string policy_params;                      // "key=value key=value" for the policy
  uint64_t dram_bytes = 0;              // node-wide DRAM budget; 0 = each process its own
  uint64_t slow_bytes = 0;              // node-wide slow-tier budget; 0 = each process its own
  uint64_t migrate_rate = 256ull << 20; // bytes moved per second, all processes; 0 = unlimited
  unsigned sources = kSourcesAuto;      // heat sources (bit set above)
  unsigned sample_period = 10007;       // hardware sources: events per sample
  unsigned max_samples = 50000;         // samples processed per second, at most
  unsigned heat_granularity = 1;        // pages per heat extent
  unsigned tick_ms = 100;               // policy period
  unsigned scan_pages_per_tick = 1u << 20;  // page words a tick reads, all processes together
  log::Level log_level = log::Level::kNotice;
  unsigned stale_ms = 5000;             // a runtime silent this long is considered gone
  unsigned max_connections = 1024;      // open connections, all users together
  unsigned max_connections_per_user = 256;  // open connections of one user (not root's)
  uint64_t max_region_bytes_per_user = 0;   // regions registered by one user; 0 = 32 x RAM
  std::string metrics_address = "127.0.0.1:9477";  // Prometheus endpoint; "none": off
};

// The table type and its parser are the runtime's (config/option_table.h);
// mtierd's settings use the types kPath, kName, kParams, kSize, kUnsigned,
// kSources and kLogLevel.
using DaemonOptionType = config::OptionType;
using DaemonOptionInfo = config::OptionInfo;

// The table, in DaemonConfig's order, for --help, the man page test and describe_config.
const std::vector<DaemonOptionInfo>& daemon_option_table();
// The same as the shared mechanism reads it (mtierd.conf's dialect: single
// quotes, no suggestion, one setting a line, "bad value ... (expected ...)").
const config::Table& daemon_table();
// The type as mtierd(8) names it: "path", "name", "params", "size", "unsigned",
// "sources", "level".
using config::type_name;
// What a setting accepts, as mtierd(8) writes it after "Accepted:" and a bad
// value message after "expected": "10 to 10000", "0 to 1P", "error, warning,
// notice, info or debug", ...
std::string accepted_values(const DaemonOptionInfo& info);

// Applies one setting. Returns 0, or -EINVAL with *why (if given) set to
// "unknown option 'x'" or "bad value 'y' for 'x' (expected ...)", where x is
// `label` if given (the command line names its flag: '--dram-bytes'); *cfg
// is unchanged on error.
[[nodiscard]] int set_option(const std::string& name, const std::string& value,
                             DaemonConfig* cfg, std::string* why, const char* label = nullptr);

// Parses config text: "name = value" lines, '#' comments (at the start of a
// line or after whitespace), blank lines; a value may be enclosed in double
// quotes (to write "" or keep outer spaces). A name given twice: the later
// line wins. All-or-nothing: *cfg is changed only when every line is valid.
// Returns 0 or -EINVAL with *why = "ORIGIN:LINE: unknown option 'x'",
// "ORIGIN:LINE: bad value 'y' for 'x' (expected ...)" or
// "ORIGIN:LINE: expected 'name = value', got 'z'" (the first error).
[[nodiscard]] int load_text(const std::string& text, const std::string& origin,
                            DaemonConfig* cfg, std::string* why);

// Reads and parses the file at path (origin = path). A missing file is not
// an error unless `required` (returns 0, *cfg unchanged). Returns 0, -errno
// with *why = "PATH: cannot read: REASON", or -EINVAL as load_text.
[[nodiscard]] int load_file(const std::string& path, bool required, DaemonConfig* cfg,
                            std::string* why);

// One line per setting, "name = value\n", for the log at start (info level).
std::string describe_config(const DaemonConfig& cfg);
// "auto", "none" or "pebs,ibs,page-faults" (the sources set, in that order).
std::string sources_text(unsigned sources);
// "error", "warning", "notice", "info" or "debug".
const char* level_name(log::Level level);

}  // namespace mtier::daemon
