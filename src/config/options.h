// SPDX-License-Identifier: Apache-2.0
// The runtime's option table (mimalloc options.c): every option has a name, a
// type, a default, an accepted range and a help line; the table type and its
// parsers are shared with mtierd (config/option_table.h). Sources, later wins: built-in
// defaults, kSystemConfigPath (SYSCONFDIR/mtier.conf), the MTIER_CONF file or string, MTIER_<NAME>
// variables (jemalloc's order). Parsing allocates only std::string/vector and
// is done once at init; nothing here runs on the fault path.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/option_table.h"

namespace mtier {

// The system's file, read first: configure's --sysconfdir (/etc in the
// packages, /usr/local/etc by default) and mtier.conf.
inline constexpr const char* kSystemConfigPath = MTIER_SYSCONFDIR "/mtier.conf";

enum class OptionSource { kDefault, kFile, kConf, kEnv, kApi };
const char* option_source_name(OptionSource s);  // "default", kSystemConfigPath, ...

// The options in effect. Sizes are bytes; a size option may be given as
// "64M", "2G", "4096", and where the table allows it as "25%" of a base
// (physical memory for dram_bytes).
// The watermarks' defaults, and how far a mark left at its default keeps
// from one that was set (OptionSet::settle_watermarks). Measured (suite,
// 512 MiB of tables, 25% budget): 98/96 0.59x and 99/97 0.61x the kernel's
// swap, against 0.53x at 95/85 - a fuller DRAM misses less.
constexpr unsigned kDefaultHighWatermark = 98, kDefaultLowWatermark = 96, kWatermarkGap = 2;

struct Options {
  uint64_t region_bytes = 0;        // virtual reservation; 0 = auto (RAM + stores, >= 64 GiB)
  uint64_t dram_bytes = 0;          // DRAM budget; 0 = auto (50% of physical memory)
  unsigned high_watermark = kDefaultHighWatermark;  // % of budget at which eviction starts
  unsigned low_watermark = kDefaultLowWatermark;    // % eviction brings residency down to
  int dram_node = -1;               // NUMA node for DRAM pages (-1 = kernel's choice)
  int slow_node = -1;               // NUMA node of the slow memory tier (-1 = none)
  uint64_t slow_bytes = 0;          // its budget; cold DRAM pages are demoted there first
  std::string store_path;           // file store: file or directory ("" = /var/tmp)
  uint64_t store_bytes = 0;         // file store capacity; 0 = auto (what the tables can need)
  bool store_force = false;         // take a block device that holds a filesystem or partitions
  std::string pmem_path;            // PMem store ("" = none)
  uint64_t pmem_bytes = 0;          // PMem store capacity; 0 = device size
  unsigned queue_depth = 64;        // io_uring depth for batched eviction / reads
  unsigned prefetch_pages = 0;      // the read-around: adjacent absent pages fetched with a missing one
  unsigned zero_ahead_pages = 15;   // first touch: following new pages zero-filled with it
  unsigned stream_pages = 256;      // a front-to-back walk's most pages brought with a fault
  bool evict_lfu = false;           // victims by decayed access frequency (GCLOCK), not CLOCK
  bool scan_resistant = false;      // a walk's pages placed unreferenced (first victims)
  bool predict_writes = true;       // fetched pages mapped writable where writes are the rule
  unsigned pin_limit_pct = 75;      // lookahead: most of the DRAM budget pinned at once
  uint64_t scan_rate = 128;         // sampler: pages zapped per second, upper bound
  bool scan_idle = false;           // sampler also runs below the low watermark
  unsigned evict_batch = 256;       // pages written back per eviction batch
  bool cluster_writes = false;      // scattered dirty pages to consecutive slots (a write a run)
  uint64_t min_bytes = 64ull << 20; // preload: allocations >= this become tables
  std::string names;                // preload: comma-separated table names, allocation order
  std::string include_sizes;        // preload: size ranges managed even below min_bytes
  std::string exclude_sizes;        // preload: size ranges never managed
  std::string daemon_socket = "/run/mtier/mtierd.sock";  // "none": do not register
  unsigned daemon_weight = 1;       // share of a node budget, relative to other processes
  bool strict = false;              // an engine that cannot start ends the program (exit 2)
  bool stats = false;               // print a start line and a summary at exit
  bool verbose = false;             // print options in effect and an exit summary
};

// The table type, its value parser and help listing are shared with mtierd
// (config/option_table.h).
using OptionType = config::OptionType;
using OptionInfo = config::OptionInfo;

// The table itself, for help output, the man page test and `mtier config`.
const std::vector<OptionInfo>& option_table();
// The same as the shared mechanism reads it (mtier.conf's dialect: double
// quotes, "did you mean", several name=value on a line, MTIER_<NAME>).
const config::Table& runtime_option_table();

class OptionSet {
 public:
  OptionSet();  // built-in defaults
  // Every loader below is all-or-nothing: on error the set is left as it was.
  // `why` may be nullptr. After each change low_watermark < high_watermark
  // is checked (after the whole load for the loaders, so order in a file
  // does not matter).
  // Applies one name=value. Returns 0, or -EINVAL with *why set to a message
  // that names the option, the value and the accepted range.
  [[nodiscard]] int set(const std::string& name, const std::string& value, OptionSource src,
                        std::string* why);
  // Parses config text: "name = value" lines, '#' comments, blank lines;
  // also accepts "name=value,name=value" on one line (MTIER_CONF as a string).
  // Returns 0 or -EINVAL (*why names the line, option and value).
  [[nodiscard]] int load_text(const std::string& text, OptionSource src, std::string* why);
  // Reads a config file; a missing file is not an error (returns 0) unless
  // `required`. Returns 0, -errno if it cannot be read, or -EINVAL.
  [[nodiscard]] int load_file(const std::string& path, OptionSource src, bool required,
                              std::string* why);
  // Applies MTIER_<NAME> variables from envp (nullptr-terminated); unknown
  // MTIER_ names are reported as errors too (a typo must not pass silently).
  // Skipped: MTIER_CONF, MTIER_LOG_FD, MTIER_LIBRARY, MTIER_INTERPOSE,
  // MTIER_LOOKAHEAD, MTIER_TORCH, MTIER_JOB, MTIER_TEST_*.
  // The environment is ignored for setuid/setgid programs (AT_SECURE).
  [[nodiscard]] int load_env(char** envp, std::string* why);
  // All sources in order: kSystemConfigPath (or `etc_path`), MTIER_CONF
  // (a path if it names a readable file, else option text), MTIER_* env.
  [[nodiscard]] int load_all(char** envp, std::string* why,
                             const char* etc_path = kSystemConfigPath);

  const Options& get() const { return opts_; }
  Options& mutable_get() { return opts_; }
  OptionSource source(const std::string& name) const;
  // One line per option: "name = value (source)", for MTIER_VERBOSE.
  std::string describe() const;

 private:
  // Unchecked steps of the loaders above (no rollback, no cross-option check).
  [[nodiscard]] int apply(size_t index, const std::string& value, OptionSource src,
                          const std::string& label, std::string* why);
  [[nodiscard]] int parse_text(const std::string& text, OptionSource src,
                               const std::string& where, std::string* why);
  [[nodiscard]] int parse_file(const std::string& path, OptionSource src, bool required,
                               std::string* why);
  [[nodiscard]] int parse_env(char** envp, std::string* why);
  [[nodiscard]] int parse_conf(const std::string& value, std::string* why);
  [[nodiscard]] int check_consistency(std::string* why) const;
  // A watermark left at its default keeps kWatermarkGap clear of the other
  // one when that one was set: high_watermark = 90 alone gives 90/88, not
  // a refusal (the low default is 96); low_watermark = 99 alone gives
  // 100/99. Two marks both set are checked as given.
  void settle_watermarks();
  // Stores parsed settings, in order, as coming from src.
  void store_all(std::vector<config::Setting>&& settings, OptionSource src);
  // Runs `step`, then the cross-option check; restores the old state on error.
  template <class Step>
  [[nodiscard]] int transaction(std::string* why, Step&& step);

  Options opts_;
  std::vector<OptionSource> sources_;
};

// Parses "4096", "64K", "64M", "2G", "1T" (binary units, case-insensitive,
// optional trailing 'B' / "iB"). Returns 0 or -EINVAL / -ERANGE.
[[nodiscard]] int parse_size(const std::string& text, uint64_t* out);

}  // namespace mtier
