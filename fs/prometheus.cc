// SPDX-License-Identifier: Apache-2.0
// mtierd's status as Prometheus text (see prometheus.h).
#include "prometheus.h"

#include <cmath>
#include <utility>
#include <vector>

#include "fs_tree.h"

namespace mtier::fs {
namespace {

using Value = json::Json;
using Labels = std::vector<std::pair<const char*, std::string>>;

// The families in the order they are first declared; samples are appended
// to their family, so each family's lines come out together, after its
// HELP and TYPE (the format requires both).
class Exposition {
 public:
  struct Family {
    std::string name;
    const char* type;
    const char* help;
    std::string samples;
  };

  // Declares (once) and returns the family `name`.
  Family& family(const std::string& name, const char* type, const char* help) {
    for (Family& f : families_)
      if (f.name == name) return f;
    families_.push_back({name, type, help, ""});
    return families_.back();
  }

  void gauge(const std::string& name, const char* help, const Labels& labels, double v) {
    add(family(name, "gauge", help), labels, v);
  }
  void counter(const std::string& name, const char* help, const Labels& labels, double v) {
    add(family(name, "counter", help), labels, v);
  }
  // buckets: (upper bound, cumulative count) in rising order; +Inf is added.
  void histogram(const char* name, const char* help,
                 const std::vector<std::pair<double, double>>& buckets, double count, double sum) {
    Family& f = family(name, "histogram", help);
    std::string n = name;
    for (const auto& [le, c] : buckets) add_line(f, n + "_bucket", {{"le", sample_value(le)}}, c);
    add_line(f, n + "_bucket", {{"le", "+Inf"}}, count);
    add_line(f, n + "_sum", {}, sum);
    add_line(f, n + "_count", {}, count);
  }

  // Families without samples are left out.
  std::string text() const {
    std::string out;
    for (const Family& f : families_) {
      if (f.samples.empty()) continue;
      out += "# HELP " + f.name + " " + escape_help(f.help) + "\n# TYPE " + f.name +
             " " + f.type + "\n" + f.samples;
    }
    return out;
  }

 private:
  static void add(Family& f, const Labels& labels, double v) { add_line(f, f.name, labels, v); }
  static void add_line(Family& f, const std::string& name, const Labels& labels, double v) {
    f.samples += name;
    for (size_t i = 0; i < labels.size(); i++)
      f.samples += std::string(i ? "," : "{") + labels[i].first + "=\"" +
                   escape_label_value(labels[i].second) + "\"";
    f.samples += (labels.empty() ? " " : "} ") + sample_value(v) + "\n";
  }

  std::vector<Family> families_;  // few (tens): a linear search is fine
};

// Backslash and line feed escaped, and double quote too in a label value
// (the format's two escaping rules).
std::string escape(std::string_view v, bool quote) {
  std::string out;
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '"':
        out += quote ? "\\\"" : "\"";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A JSON number, or NaN for the null the daemon writes for a heat that is
// not finite (and for a key it did not send).
double value(const Value& v) { return v.is_number() ? v.get<double>() : NAN; }

// A move kind of the status document ("store>dram") as its two ends.
std::pair<std::string, std::string> move_ends(const std::string& kind) {
  size_t gt = kind.find('>');
  if (gt == std::string::npos) return {kind, ""};
  return {kind.substr(0, gt), kind.substr(gt + 1)};
}

// Page moves of `moves` (pages by kind) in bytes: between two tiers as
// <prefix>_moved_bytes_total{from,to}, and first touches ("new>dram": a
// page placed, from nowhere) as <prefix>_placed_bytes_total{tier}.
void move_metrics(const Value& moves, const std::string& prefix, const Labels& l, double page,
                  Exposition* e) {
  for (const std::string& k : move_kinds_of(moves)) {
    auto [from, to] = move_ends(k);
    Labels m = l;
    double bytes = value(json::at(moves, k.c_str())) * page;
    if (from == "new") {
      m.emplace_back("tier", to);
      e->counter(prefix + "_placed_bytes_total",
                 "Bytes of pages touched for the first time, by the tier they were placed in", m,
                 bytes);
    } else {
      m.emplace_back("from", from);
      m.emplace_back("to", to);
      e->counter(prefix + "_moved_bytes_total", "Bytes of pages moved between tiers", m,
                 bytes);
    }
  }
}

void daemon_metrics(const Value& d, Exposition* e) {
  e->gauge("mtier_build_info", "mtierd's version and license (value 1)",
           {{"version", json::str(d, "version")}, {"license", json::str(d, "license")}}, 1);
  e->gauge("mtier_daemon_info",
           "The daemon's policy, its parameters and the heat source in use (value 1)",
           {{"policy", json::str(d, "policy")},
            {"policy_params", json::str(d, "policy_params")},
            {"heat_source", json::str(d, "heat_source")}},
           1);
  for (const Value& s : json::items(json::at(d, "sources")))
    e->gauge("mtier_heat_source_available", "1 if the heat source is available on this node",
             {{"source", json::str(s, "name")}}, json::at(s, "available") == true ? 1 : 0);
  e->gauge("mtier_daemon_dram_budget_bytes", "The node DRAM budget in bytes (0: none)", {},
           value(json::at(d, "dram_bytes")));
  e->gauge("mtier_daemon_slow_budget_bytes", "The node slow-tier budget in bytes (0: none)", {},
           value(json::at(d, "slow_bytes")));
  e->gauge("mtier_daemon_migrate_limit_bytes_per_second",
           "The configured migration limit in bytes per second (0: unlimited)", {},
           value(json::at(d, "migrate_bytes_per_second")));
  e->gauge("mtier_daemon_tick_interval_seconds", "The configured policy tick interval", {},
           value(json::at(d, "tick_seconds")));
  const Value& ticks = json::at(d, "tick_duration");
  if (ticks.is_object()) {
    std::vector<std::pair<double, double>> buckets;
    for (const Value& b : json::items(json::at(ticks, "buckets")))
      buckets.emplace_back(value(json::at(b, "le")), value(json::at(b, "count")));
    e->histogram("mtier_daemon_tick_duration_seconds",
                 "How long the daemon's ticks took (reading heat and pages, planning, ordering)",
                 buckets, value(json::at(ticks, "count")), value(json::at(ticks, "sum_seconds")));
  }
  if (json::at(d, "moves").is_object())
    move_metrics(json::at(d, "moves"), "mtier", {}, value(json::at(d, "page_size_bytes")), e);
}

void tier_metrics(const Value& t, Exposition* e) {
  Labels l = {{"tier", json::str(t, "name")}};
  e->gauge("mtier_tier_capacity_bytes", "The tier's memory in bytes (0: unknown)", l,
           value(json::at(t, "capacity_bytes")));
  e->gauge("mtier_tier_budget_bytes", "The tier's budget in bytes", l, value(json::at(t, "budget_bytes")));
  e->gauge("mtier_tier_used_bytes", "Table pages in the tier, bytes", l, value(json::at(t, "used_bytes")));
}

void job_metrics(const Value& j, Exposition* e) {
  // "job_name": Prometheus gives every scraped sample a `job` label of its own.
  Labels l = {{"job_name", json::str(j, "name")}, {"uid", number_text(json::at(j, "uid"))}};
  e->gauge("mtier_job_ranks", "Registered ranks of the job", l,
           static_cast<double>(json::items(json::at(j, "ranks")).size()));
  e->gauge("mtier_job_dram_budget_bytes", "The ranks' own DRAM budgets summed, bytes", l,
           value(json::at(j, "dram_budget_bytes")));
  e->gauge("mtier_job_dram_assigned_bytes", "The job's DRAM assigned to its ranks by need, bytes",
           l, value(json::at(j, "dram_assigned_bytes")));
  e->gauge("mtier_job_dram_resident_bytes", "The ranks' table pages in DRAM, bytes", l,
           value(json::at(j, "dram_resident_bytes")));
  if (json::at(j, "world_size").is_number() && json::num(j, "world_size") > 0)
    e->gauge("mtier_job_world_size",
             "The job's ranks on every node (their WORLD_SIZE); more than mtier_job_ranks: ranks elsewhere",
             l, value(json::at(j, "world_size")));
}

// The runtime's counters (segment header), by status key: each a _total
// counter, in bytes where it counts pages (`pages` true). The keys of a
// version-2 runtime are absent from an older one's status: left out.
struct ProcessCounter {
  const char *name, *key, *help;
  bool pages;
};
constexpr ProcessCounter kProcessCounters[] = {
    {"mtier_process_missing_faults_total", "missing_faults",
     "Missing faults served (first touches and reads from the store)", false},
    {"mtier_process_minor_faults_total", "minor_faults",
     "Minor faults served (pages in memory, mapped again: the access sampler's)", false},
    {"mtier_process_wp_faults_total", "wp_faults", "Write-protect faults served (first writes)",
     false},
    {"mtier_process_child_faults_total", "child_faults", "Faults served for forked children",
     false},
    {"mtier_process_budget_overruns_total", "budget_overruns",
     "Faults served over the DRAM budget (no page could be evicted in time)", false},
    {"mtier_process_zero_filled_bytes_total", "zero_fills", "Bytes of pages filled with zeros",
     true},
    {"mtier_process_evicted_bytes_total", "evictions", "Bytes evicted from DRAM to the store",
     true},
    {"mtier_process_fetched_bytes_total", "fetches", "Bytes read from the store on a fault", true},
    {"mtier_process_prefetched_bytes_total", "prefetches",
     "Bytes read from the store ahead of the access", true},
    {"mtier_process_written_back_bytes_total", "writebacks",
     "Bytes written to the store by evictions (dirty pages)", true},
    {"mtier_process_demoted_bytes_total", "demotions", "Bytes moved from DRAM to the slow tier",
     true},
    {"mtier_process_promoted_bytes_total", "promotions", "Bytes moved from the slow tier to DRAM",
     true},
    {"mtier_process_evictions_cancelled_total", "evict_cancels",
     "Evictions cancelled (the page was touched while it was written out)", false},
    {"mtier_process_store_errors_total", "store_errors",
     "Store errors: failed reads and writes, checksum mismatches", false},
    {"mtier_process_store_full_refusals_total", "store_full",
     "Evictions refused by a full store", false},
    {"mtier_process_lookahead_named_bytes_total", "prefetch_pages",
     "Bytes the lookahead was told would be read next", true},
    {"mtier_process_lookahead_read_bytes_total", "prefetch_reads",
     "Bytes the lookahead read ahead from the store", true},
    {"mtier_process_lookahead_late_bytes_total", "prefetch_late",
     "Bytes the lookahead read too late (the access waited for the read)", true},
    {"mtier_process_lookahead_resident_bytes_total", "prefetch_hits",
     "Bytes the lookahead found in DRAM already", true},
    {"mtier_process_samples_total", "samples", "Heat samples read since registration", false},
    {"mtier_process_unattributed_samples_total", "unattributed_samples",
     "Heat samples outside the process's tables", false},
    {"mtier_process_orders_sent_total", "orders_sent", "Orders put in the process's ring", false},
    {"mtier_process_orders_dropped_total", "orders_dropped", "Orders dropped: ring full", false},
    {"mtier_process_ordered_bytes_total", "pages_ordered", "Bytes of pages in the orders sent",
     true},
};

void process_metrics(const Value& p, const std::string& pid, double page, Exposition* e) {
  Labels l = {{"pid", pid}};
  Labels info = {{"pid", pid}, {"name", json::str(p, "name")}, {"uid", number_text(json::at(p, "uid"))}};
  if (!json::str(p, "job").empty()) {
    info.emplace_back("job_name", json::str(p, "job"));
    info.emplace_back("rank", number_text(json::at(p, "rank")));
  }
  e->gauge("mtier_process_info",
           "A registered process: its name, user, and job and rank if it is a rank of one (value 1)",
           info, 1);
  e->gauge("mtier_process_weight", "The process's weight in the node budget", l,
           value(json::at(p, "weight")));
  e->gauge("mtier_process_stale", "1 while the process is left out of the plans", l,
           json::at(p, "stale") == true ? 1 : 0);
  e->gauge("mtier_process_page_size_bytes", "The page size of the process's tables", l, page);
  e->gauge("mtier_process_dram_budget_bytes", "The process's own DRAM budget, bytes", l,
           value(json::at(p, "dram_budget_bytes")));
  e->gauge("mtier_process_dram_assigned_bytes",
           "The process's share of the node DRAM budget, bytes (0: none sent)", l,
           value(json::at(p, "dram_assigned_bytes")));
  e->gauge("mtier_process_slow_budget_bytes", "The process's slow-tier budget, bytes", l,
           value(json::at(p, "slow_budget_bytes")));
  for (const char* tier : {"dram", "slow"})
    e->gauge("mtier_process_resident_bytes", "The process's table pages in a memory tier, bytes",
             {{"pid", pid}, {"tier", tier}}, value(json::at(p, (std::string(tier) + "_resident_bytes").c_str())));
  e->gauge("mtier_process_pinned_bytes", "Bytes pinned in DRAM by the lookahead's window", l,
           value(json::at(p, "pinned_bytes")));
  if (p.contains("held_bytes"))
    e->gauge("mtier_process_held_bytes", "Bytes held in DRAM by locked memory (mlock)", l,
             value(json::at(p, "held_bytes")));
  for (const ProcessCounter& c : kProcessCounters)
    if (p.contains(c.key))
      e->counter(c.name, c.help, l, value(json::at(p, c.key)) * (c.pages ? page : 1));
}

void table_metrics(const Value& t, const std::string& pid, double page, Exposition* e) {
  std::string table = table_dir_name(static_cast<uint32_t>(json::num(t, "id")), json::str(t, "name"));
  Labels l = {{"pid", pid}, {"table", table}};
  auto with = [&](const char* key, const std::string& v) {
    Labels m = l;
    m.emplace_back(key, v);
    return m;
  };
  e->gauge("mtier_table_size_bytes", "The table's size, bytes", l, value(json::at(t, "bytes")));
  e->gauge("mtier_table_resident_bytes", "The table's pages in memory (DRAM and slow), bytes", l,
           (value(json::at(t, "dram_pages")) + value(json::at(t, "slow_pages"))) * page);
  for (const char* tier : kTierNames)
    e->gauge("mtier_table_bytes", "The table's pages by the tier they are in, bytes",
             with("tier", tier), value(json::at(t, (std::string(tier) + "_pages").c_str())) * page);
  e->gauge("mtier_table_heat", "The table's heat (samples, halved every cooling period)", l,
           value(json::at(t, "heat")));
  e->gauge("mtier_table_active_bytes", "Bytes of the table sampled within the window", l,
           value(json::at(t, "active_bytes")));
  move_metrics(json::at(t, "moves"), "mtier_table", l, page, e);
  double pinned[kTierCount] = {};
  for (const Value& pin : json::items(json::at(t, "pins")))
    for (int i = 0; i < kTierCount; i++)
      if (json::str(pin, "tier") == kTierNames[i]) pinned[i] += json::num(pin, "pages");
  if (json::at(t, "pins").is_array())
    for (int i = 0; i < kTierCount; i++)
      e->gauge("mtier_table_pinned_bytes", "Bytes of the table pinned to a tier (mtier pin)",
               with("tier", kTierNames[i]), pinned[i] * page);
}

}  // namespace

std::string escape_label_value(std::string_view v) { return escape(v, true); }

std::string escape_help(std::string_view v) { return escape(v, false); }

std::string sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return number_text(v);
}

std::string prometheus_text(const json::Json* status) {
  Exposition e;
  e.gauge("mtier_daemon_up", "1 if mtierd answered (mtierfs: its last status request), else 0", {},
          status ? 1 : 0);
  if (!status) return e.text();
  daemon_metrics(json::at((*status), "daemon"), &e);
  for (const Value& t : json::items(json::at(*status, "tiers"))) tier_metrics(t, &e);
  for (const Value& j : json::items(json::at(*status, "jobs"))) job_metrics(j, &e);
  double node_page = value(json::at(json::at(*status, "daemon"), "page_size_bytes"));
  if (std::isnan(node_page)) node_page = kPageBytes;  // a daemon before it said
  for (const Value& p : json::items(json::at(*status, "processes"))) {
    std::string pid = number_text(json::at(p, "pid"));
    double page = p.contains("page_size_bytes") ? value(json::at(p, "page_size_bytes")) : node_page;
    process_metrics(p, pid, page, &e);
    for (const Value& t : json::items(json::at(p, "tables"))) table_metrics(t, pid, page, &e);
  }
  return e.text();
}

}  // namespace mtier::fs
