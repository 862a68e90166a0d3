// SPDX-License-Identifier: Apache-2.0
// The runtime's option table and the sources of its configuration; the
// parsers are the shared ones (config/option_table.h).
#include "config/options.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>
#include <variant>

#include "config/parse_text.h"
#include "config/read_file.h"

namespace mtier {
namespace {

// Where an option's value lives in Options; its alternative matches OptionInfo::type.
using Field = std::variant<uint64_t Options::*, unsigned Options::*, int Options::*,
                           bool Options::*, std::string Options::*>;

struct Def {
  OptionInfo info;
  Field field;
};

constexpr uint64_t kPiB = 1ull << 50;
// 256 TiB: 2^36 slots of 4 KiB, the most a page word names
// (PageWord::kMaxSlots in page/page_state.h, which asserts it).
constexpr uint64_t kMaxStoreBytes = 1ull << 48;
constexpr uint64_t kMaxRegion = 1ull << 47;  // x86-64 user address space (4-level paging)
constexpr uint64_t kIntMin(int64_t v) { return static_cast<uint64_t>(v); }

using T = OptionType;
// The one table: every field of Options, in declaration order.
constexpr Def kDefs[] = {
    {{"region_bytes", T::kSize, "0", 0, kMaxRegion, false,
      "virtual address space reserved for all tables; 0 = RAM + stores, at least 64G, at most "
      "a quarter of what RLIMIT_AS leaves"},
     &Options::region_bytes},
    {{"dram_bytes", T::kSize, "0", 0, kPiB, true,
      "DRAM budget for table pages, bytes or N% of physical memory; 0 = half of the least of "
      "RAM and the cgroup limit, per LOCAL_WORLD_SIZE rank, less what the process uses"},
     &Options::dram_bytes},
    {{"high_watermark", T::kPercent, "98", 1, 100, false,
      "% of the DRAM budget at which eviction starts; set alone to 96 or less, the low mark "
      "follows 2 below it"},
     &Options::high_watermark},
    {{"low_watermark", T::kPercent, "96", 0, 99, false,
      "% of the DRAM budget eviction brings residency down to; set alone to 98 or more, the high "
      "mark follows 2 above it (at most 100)"},
     &Options::low_watermark},
    {{"dram_node", T::kInt, "-1", kIntMin(-1), 1023, false,
      "NUMA node for DRAM pages; -1 = the kernel's choice"},
     &Options::dram_node},
    {{"slow_node", T::kInt, "-1", kIntMin(-1), 1023, false,
      "NUMA node of the slow memory tier (CXL, PMem as KMEM); -1 = none"},
     &Options::slow_node},
    {{"slow_bytes", T::kSize, "0", 0, kPiB, false,
      "budget of the slow memory tier; cold DRAM pages are demoted there before a store"},
     &Options::slow_bytes},
    {{"store_path", T::kString, "\"\"", 0, 0, false,
      "file store: a file, or a directory to create it in; \"\" = /var/tmp"},
     &Options::store_path},
    {{"store_bytes", T::kSize, "0", 0, kMaxStoreBytes, false,
      "file store capacity, refused if its filesystem has less free; 0 = what the tables can "
      "need (the region less the DRAM budget, sparse)"},
     &Options::store_bytes},
    {{"store_force", T::kBool, "false", 0, 1, false,
      "use a block device store_path or pmem_path even if it holds a filesystem, partition "
      "table or swap (destroys it); a mounted device is always refused"},
     &Options::store_force},
    {{"pmem_path", T::kString, "\"\"", 0, 0, false,
      "PMem store: a DAX device or a file on a DAX filesystem; \"\" = none"},
     &Options::pmem_path},
    {{"pmem_bytes", T::kSize, "0", 0, kMaxStoreBytes, false, "PMem store capacity; 0 = device size"},
     &Options::pmem_bytes},
    {{"queue_depth", T::kUnsigned, "64", 1, 32768, false,
      "io_uring queue depth for batched eviction and store reads"},
     &Options::queue_depth},
    {{"prefetch_pages", T::kUnsigned, "0", 0, 512, false,
      "read-around: adjacent absent pages fetched together with a missing one"},
     &Options::prefetch_pages},
    {{"pin_limit_pct", T::kUnsigned, "75", 1, 95, false,
      "lookahead: the share of the DRAM budget its window may pin (the rest is for eviction)"},
     &Options::pin_limit_pct},
    {{"zero_ahead_pages", T::kUnsigned, "15", 0, 512, false,
      "first touch: following never-written pages zero-filled with it, below the low watermark"},
     &Options::zero_ahead_pages},
    {{"stream_pages", T::kUnsigned, "256", 0, 4096, false,
      "a fault that continues a front-to-back walk over missing pages brings up to this many "
      "following ones (doubling from 4); 0 = off"},
     &Options::stream_pages},
    {{"scan_rate", T::kUnsigned, "128", 0, 1ull << 32, false,
      "access sampler: upper bound on pages zapped per second; 0 = sampler off"},
     &Options::scan_rate},
    {{"scan_idle", T::kBool, "false", 0, 1, false,
      "sampler also runs while DRAM residency is below the low watermark"},
     &Options::scan_idle},
    {{"evict_lfu", T::kBool, "false", 0, 1, false,
      "eviction by decayed access frequency (GCLOCK: heat halved per rotation) instead of CLOCK"},
     &Options::evict_lfu},
    {{"scan_resistant", T::kBool, "false", 0, 1, false,
      "pages a front-to-back walk brings in are evicted before pages faulted in one by one: a "
      "scan's pages go out before the hot ones"},
     &Options::scan_resistant},
    {{"predict_writes", T::kBool, "true", 0, 1, false,
      "map a page fetched for a read writable while its table's pages mostly get written "
      "(saves the write fault; a wrong guess costs one write-back)"},
     &Options::predict_writes},
    {{"evict_batch", T::kUnsigned, "256", 1, 4096, false, "pages written back per eviction batch"},
     &Options::evict_batch},
    {{"cluster_writes", T::kBool, "false", 0, 1, false,
      "write-back: a batch's dirty pages that are scattered in the store move to consecutive "
      "slots (one large write a run, old slots freed); false = every page keeps its slot"},
     &Options::cluster_writes},
    {{"min_bytes", T::kSize, "64M", 4096, kPiB, false,
      "preload: allocations of at least this size become managed tables"},
     &Options::min_bytes},
    {{"names", T::kString, "\"\"", 0, 0, false,
      "preload: comma-separated table names, in allocation order"},
     &Options::names},
    {{"include_sizes", T::kSizeRanges, "\"\"", 0, 0, false,
      "preload: size ranges (LO-HI,...) managed even below min_bytes"},
     &Options::include_sizes},
    {{"exclude_sizes", T::kSizeRanges, "\"\"", 0, 0, false,
      "preload: size ranges (LO-HI,...) never managed; wins over the others"},
     &Options::exclude_sizes},
    {{"daemon_socket", T::kString, "/run/mtier/mtierd.sock", 0, 0, false,
      "mtierd's socket: register there for node-wide policies; \"none\" = local policy only"},
     &Options::daemon_socket},
    {{"daemon_weight", T::kUnsigned, "1", 1, 1000, false,
      "this process's weight in the daemon's share of a node DRAM budget"},
     &Options::daemon_weight},
    {{"strict", T::kBool, "false", 0, 1, false,
      "an engine that cannot start ends the program (exit status 2, the reason said) "
      "instead of running it with plain allocation"},
     &Options::strict},
    {{"stats", T::kBool, "false", 0, 1, false,
      "print a start line and a summary at exit (tables, residency, faults)"},
     &Options::stats},
    {{"verbose", T::kBool, "false", 0, 1, false,
      "print the options in effect at start and a summary at exit"},
     &Options::verbose},
};
constexpr size_t kCount = sizeof kDefs / sizeof kDefs[0];

using config::human_size;
using config::Value;
using config_text::fail;
using config_text::trim;

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// Stores p in the field of `def` (ranges were checked, so the casts are exact).
void store(Options* o, const Def& def, Value&& p) {
  std::visit(Overload{[&](uint64_t Options::*f) { o->*f = p.u; },
                      [&](unsigned Options::*f) { o->*f = static_cast<unsigned>(p.u); },
                      [&](int Options::*f) { o->*f = static_cast<int>(p.i); },
                      [&](bool Options::*f) { o->*f = p.b; },
                      [&](std::string Options::*f) { o->*f = std::move(p.s); }},
             def.field);
}

// The value of `def` in o, as describe() and mtier.conf(5) write it.
std::string show_value(const Options& o, const Def& def) {
  return std::visit(
      Overload{[&](uint64_t Options::*f) {
                 return def.info.type == T::kSize ? human_size(o.*f) : std::to_string(o.*f);
               },
               [&](unsigned Options::*f) { return std::to_string(o.*f); },
               [&](int Options::*f) { return std::to_string(o.*f); },
               [&](bool Options::*f) { return std::string(o.*f ? "true" : "false"); },
               [&](std::string Options::*f) { return quoted(o.*f); }},
      def.field);
}

bool has_prefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// MTIER_ variables that belong to other components.
bool reserved_variable(std::string_view name) {
  return name == "MTIER_CONF" || name == "MTIER_LOG_FD" ||
         name == "MTIER_LIBRARY" || name == "MTIER_INTERPOSE" ||
         name == "MTIER_LOOKAHEAD" || name == "MTIER_TORCH" ||  // python/mtier
         name == "MTIER_JOB" ||  // engine/job_identity.h
         has_prefix(name, "MTIER_TEST_");
}

// secure_getenv semantics: a setuid/setgid program ignores the environment.
bool environment_trusted() { return getauxval(AT_SECURE) == 0; }

// mtier.conf's dialect: double quotes, "did you mean", "a=1,b=2" on a line,
// detailed value messages.
constexpr config::Dialect kDialect{'"', true, true, true};

int find_option(std::string_view name) { return runtime_option_table().find(name); }

}  // namespace

const char* option_source_name(OptionSource s) {
  switch (s) {
    case OptionSource::kDefault: return "default";
    case OptionSource::kFile: return kSystemConfigPath;
    case OptionSource::kConf: return "MTIER_CONF";
    case OptionSource::kEnv: return "environment";
    case OptionSource::kApi: return "API";
  }
  return "unknown";
}

const std::vector<OptionInfo>& option_table() {
  static const std::vector<OptionInfo> table = [] {
    std::vector<OptionInfo> t;
    for (const Def& d : kDefs) t.push_back(d.info);
    return t;
  }();
  return table;
}

const config::Table& runtime_option_table() {
  static const config::Table table(option_table().data(), kCount, kDialect, "MTIER_");
  return table;
}

OptionSet::OptionSet() : sources_(kCount, OptionSource::kDefault) {}

OptionSource OptionSet::source(const std::string& name) const {
  int i = find_option(name);
  return i < 0 ? OptionSource::kDefault : sources_[static_cast<size_t>(i)];
}

std::string OptionSet::describe() const {
  std::string out;
  for (size_t i = 0; i < kCount; ++i)
    out += std::string(kDefs[i].info.name) + " = " + show_value(opts_, kDefs[i]) + " (" +
           option_source_name(sources_[i]) + ")\n";
  return out;
}

template <class Step>
int OptionSet::transaction(std::string* why, Step&& step) {
  Options saved = opts_;
  std::vector<OptionSource> saved_sources = sources_;
  int rc = step();
  if (rc == 0) settle_watermarks();
  if (rc == 0) rc = check_consistency(why);
  if (rc != 0) {
    opts_ = std::move(saved);
    sources_ = std::move(saved_sources);
  }
  return rc;
}

void OptionSet::settle_watermarks() {
  bool low_set = sources_[static_cast<size_t>(find_option("low_watermark"))] != OptionSource::kDefault;
  bool high_set = sources_[static_cast<size_t>(find_option("high_watermark"))] != OptionSource::kDefault;
  if (!low_set) opts_.low_watermark = kDefaultLowWatermark;
  if (!high_set) opts_.high_watermark = kDefaultHighWatermark;
  if (opts_.low_watermark < opts_.high_watermark) return;
  if (high_set && !low_set)
    opts_.low_watermark = opts_.high_watermark > kWatermarkGap ? opts_.high_watermark - kWatermarkGap : 0;
  else if (low_set && !high_set)
    opts_.high_watermark = std::min(100u, opts_.low_watermark + kWatermarkGap);
}

int OptionSet::check_consistency(std::string* why) const {
  if (opts_.low_watermark < opts_.high_watermark) return 0;
  size_t lo = static_cast<size_t>(find_option("low_watermark"));
  size_t hi = static_cast<size_t>(find_option("high_watermark"));
  return fail(why, "low_watermark = " + std::to_string(opts_.low_watermark) + " (" +
                       option_source_name(sources_[lo]) + ") must be below high_watermark = " +
                       std::to_string(opts_.high_watermark) + " (" +
                       option_source_name(sources_[hi]) + ")");
}

void OptionSet::store_all(std::vector<config::Setting>&& settings, OptionSource src) {
  for (config::Setting& st : settings) {
    store(&opts_, kDefs[st.index], std::move(st.value));
    sources_[st.index] = src;
  }
}

int OptionSet::apply(size_t index, const std::string& value, OptionSource src,
                     const std::string& label, std::string* why) {
  Value v;
  if (int rc = runtime_option_table().parse_value(index, value, label, &v, why)) return rc;
  store(&opts_, kDefs[index], std::move(v));
  sources_[index] = src;
  return 0;
}

int OptionSet::set(const std::string& name, const std::string& value, OptionSource src,
                   std::string* why) {
  int i = find_option(name);
  if (i < 0) return fail(why, runtime_option_table().unknown_option(name));
  return transaction(why, [&] { return apply(static_cast<size_t>(i), value, src, name, why); });
}

int OptionSet::parse_text(const std::string& text, OptionSource src, const std::string& where,
                          std::string* why) {
  std::vector<config::Setting> settings;
  if (int rc = runtime_option_table().parse_text(text, where, &settings, why)) return rc;
  store_all(std::move(settings), src);
  return 0;
}

int OptionSet::parse_file(const std::string& path, OptionSource src, bool required,
                          std::string* why) {
  std::string text;
  if (int rc = config::read_config_file(path, required, &text, why)) return rc;
  return parse_text(text, src, path, why);
}

int OptionSet::parse_conf(const std::string& value, std::string* why) {
  if (trim(value).empty()) return 0;
  struct stat st {};
  if (stat(value.c_str(), &st) == 0) return parse_file(value, OptionSource::kConf, true, why);
  if (value.find('=') == std::string::npos)
    return fail(why, "MTIER_CONF: " + quoted(value) +
                         " is neither an existing file nor option text (name=value,name=value)");
  return parse_text(value, OptionSource::kConf, "MTIER_CONF", why);
}

int OptionSet::parse_env(char** envp, std::string* why) {
  if (!environment_trusted()) return 0;
  std::vector<config::Setting> settings;
  if (int rc = runtime_option_table().parse_env(envp, reserved_variable, &settings, why))
    return rc;
  store_all(std::move(settings), OptionSource::kEnv);
  return 0;
}

int OptionSet::load_text(const std::string& text, OptionSource src, std::string* why) {
  return transaction(why, [&] { return parse_text(text, src, option_source_name(src), why); });
}

int OptionSet::load_file(const std::string& path, OptionSource src, bool required,
                         std::string* why) {
  return transaction(why, [&] { return parse_file(path, src, required, why); });
}

int OptionSet::load_env(char** envp, std::string* why) {
  return transaction(why, [&] { return parse_env(envp, why); });
}

int OptionSet::load_all(char** envp, std::string* why, const char* etc_path) {
  return transaction(why, [&] {
    if (int rc = etc_path ? parse_file(etc_path, OptionSource::kFile, false, why) : 0) return rc;
    for (char** e = envp; environment_trusted() && e && *e; ++e) {
      if (!has_prefix(*e, "MTIER_CONF=")) continue;
      if (int rc = parse_conf(*e + strlen("MTIER_CONF="), why)) return rc;
      break;  // the first one, as getenv(3) finds it
    }
    return parse_env(envp, why);
  });
}

}  // namespace mtier
