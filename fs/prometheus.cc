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
    const char* name;
    const char* type;
    const char* help;
    std::string samples;
  };

  // Declares (once) and returns the family `name`.
  Family& family(const char* name, const char* type, const char* help) {
    for (Family& f : families_)
      if (std::string_view(f.name) == name) return f;
    families_.push_back({name, type, help, ""});
    return families_.back();
  }

  void gauge(const char* name, const char* help, const Labels& labels, double v) {
    add(family(name, "gauge", help), labels, v);
  }
  void counter(const char* name, const char* help, const Labels& labels, double v) {
    add(family(name, "counter", help), labels, v);
  }

  // Families without samples are left out.
  std::string text() const {
    std::string out;
    for (const Family& f : families_) {
      if (f.samples.empty()) continue;
      out += std::string("# HELP ") + f.name + " " + escape_help(f.help) + "\n# TYPE " + f.name +
             " " + f.type + "\n" + f.samples;
    }
    return out;
  }

 private:
  static void add(Family& f, const Labels& labels, double v) {
    f.samples += f.name;
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

void daemon_metrics(const Value& d, Exposition* e) {
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
  e->gauge("mtier_daemon_migrate_rate_bytes_per_second",
           "The migration limit in bytes per second (0: unlimited)", {}, value(json::at(d, "migrate_bytes_per_second")));
}

void tier_metrics(const Value& t, Exposition* e) {
  Labels l = {{"tier", json::str(t, "name")}};
  e->gauge("mtier_tier_capacity_bytes", "The tier's memory in bytes (0: unknown)", l,
           value(json::at(t, "capacity_bytes")));
  e->gauge("mtier_tier_budget_bytes", "The tier's budget in bytes", l, value(json::at(t, "budget_bytes")));
  e->gauge("mtier_tier_used_bytes", "Table pages in the tier, bytes", l, value(json::at(t, "used_bytes")));
  e->gauge("mtier_tier_in_bytes_per_second", "Pages moved into the tier over the last second", l,
           value(json::at(t, "in_bytes_per_second")));
  e->gauge("mtier_tier_out_bytes_per_second", "Pages moved out of the tier over the last second", l,
           value(json::at(t, "out_bytes_per_second")));
}

void process_metrics(const Value& p, const std::string& pid, Exposition* e) {
  Labels l = {{"pid", pid}};
  e->gauge("mtier_process_info", "A registered process: its name and user (value 1)",
           {{"pid", pid}, {"name", json::str(p, "name")}, {"uid", number_text(json::at(p, "uid"))}}, 1);
  e->gauge("mtier_process_weight", "The process's weight in the node budget", l,
           value(json::at(p, "weight")));
  e->gauge("mtier_process_stale", "1 while the process is left out of the plans", l,
           json::at(p, "stale") == true ? 1 : 0);
  e->gauge("mtier_process_dram_budget_bytes", "The process's own DRAM budget, bytes", l,
           value(json::at(p, "dram_budget_bytes")));
  e->gauge("mtier_process_dram_assigned_bytes",
           "The process's share of the node DRAM budget, bytes (0: none sent)", l,
           value(json::at(p, "dram_assigned_bytes")));
  e->gauge("mtier_process_slow_budget_bytes", "The process's slow-tier budget, bytes", l,
           value(json::at(p, "slow_budget_bytes")));
  for (const char* tier : {"dram", "slow"})
    e->gauge("mtier_process_resident_bytes", "The process's table pages in a memory tier, bytes",
             {{"pid", pid}, {"tier", tier}}, value(p[std::string(tier) + "_resident_bytes"]));
  e->gauge("mtier_process_faults_per_second", "Missing faults per second over the last second", l,
           value(json::at(p, "faults_per_second")));
  struct {
    const char *name, *key, *help;
  } counters[] = {
      {"mtier_process_missing_faults_total", "missing_faults", "The runtime's missing faults"},
      {"mtier_process_minor_faults_total", "minor_faults", "The runtime's minor faults"},
      {"mtier_process_evictions_total", "evictions", "The runtime's evictions"},
      {"mtier_process_fetches_total", "fetches", "The runtime's fetches from a store"},
      {"mtier_process_samples_total", "samples", "Heat samples read since registration"},
      {"mtier_process_unattributed_samples_total", "unattributed_samples",
       "Heat samples outside the process's tables"},
      {"mtier_process_orders_sent_total", "orders_sent", "Orders put in the process's ring"},
      {"mtier_process_orders_dropped_total", "orders_dropped", "Orders dropped: ring full"},
      {"mtier_process_pages_ordered_total", "pages_ordered", "Pages in the orders sent"},
  };
  for (const auto& c : counters) e->counter(c.name, c.help, l, value(p[c.key]));
}

void table_metrics(const Value& t, const std::string& pid, Exposition* e) {
  std::string table = table_dir_name(static_cast<uint32_t>(json::num(t, "id")), json::str(t, "name"));
  Labels l = {{"pid", pid}, {"table", table}};
  auto with = [&](const char* key, const std::string& v) {
    Labels m = l;
    m.emplace_back(key, v);
    return m;
  };
  e->gauge("mtier_table_size_bytes", "The table's size, bytes", l, value(json::at(t, "bytes")));
  e->gauge("mtier_table_resident_bytes", "The table's pages in memory (DRAM and slow), bytes", l,
           (value(json::at(t, "dram_pages")) + value(json::at(t, "slow_pages"))) * kPageBytes);
  for (const char* tier : {"dram", "slow", "store", "untouched"})
    e->gauge("mtier_table_bytes", "The table's pages by where they are, bytes", with("tier", tier),
             value(t[std::string(tier) + "_pages"]) * kPageBytes);
  e->gauge("mtier_table_heat", "The table's heat (samples, halved every cooling period)", l,
           value(json::at(t, "heat")));
  e->gauge("mtier_table_samples_per_second", "The table's heat samples per second", l,
           value(json::at(t, "samples_per_second")));
  e->gauge("mtier_table_active_bytes", "Bytes of the table sampled within the window", l,
           value(json::at(t, "active_bytes")));
  for (const std::string& k : move_kinds_of(json::at(t, "moves")))
    e->counter("mtier_table_moves_total", "Pages moved between tiers, by kind", with("kind", k),
               value(json::at(json::at(t, "moves"), k.c_str())));
  for (const std::string& k : move_kinds_of(json::at(t, "moves_per_second")))
    e->gauge("mtier_table_moves_per_second", "Pages moved per second over the last second",
             with("kind", k), value(json::at(json::at(t, "moves_per_second"), k.c_str())));
  double pinned[kTierCount] = {};
  for (const Value& pin : json::items(json::at(t, "pins")))
    for (int i = 0; i < kTierCount; i++)
      if (json::str(pin, "tier") == kTierNames[i]) pinned[i] += json::num(pin, "pages");
  if (json::at(t, "pins").is_array())
    for (int i = 0; i < kTierCount; i++)
      e->gauge("mtier_table_pinned_pages", "Pages of the table pinned to a tier",
               with("tier", kTierNames[i]), pinned[i]);
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
  for (const Value& p : json::items(json::at(*status, "processes"))) {
    std::string pid = number_text(json::at(p, "pid"));
    process_metrics(p, pid, &e);
    for (const Value& t : json::items(json::at(p, "tables"))) table_metrics(t, pid, &e);
  }
  return e.text();
}

}  // namespace mtier::fs
