// mtier bench suite: the goals, the text table, JSON and the plot.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "bench_suite.h"
#include "plot/line_chart.h"
#include "util/json.h"

namespace mtier::tools::suite {
namespace {

const Cell* find(const BudgetResult& b, Config c) {
  for (auto& cell : b.cells)
    if (cell.config == c) return &cell;
  return nullptr;
}

unsigned ok_runs(const Cell& c) {
  unsigned n = 0;
  for (auto& r : c.runs) n += r.ok;
  return n;
}

// The fastest kernel configuration, by the median of its runs that replayed
// the whole trace (one failed run does not hide a fast configuration).
const Cell* best_kernel(const BudgetResult& b) {
  const Cell* best = nullptr;
  for (auto& cell : b.cells)
    if (is_kernel(cell.config) && ok_runs(cell) > 0 &&
        (!best || cell.lookups_per_second > best->lookups_per_second))
      best = &cell;
  return best;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A JSON string literal (the shared writer's escaping, valid UTF-8).
std::string json_str(const std::string& s) { return json::quote(s); }

std::string hex64(uint64_t v) {
  char buf[20];
  snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string json_num(double v) { return std::isfinite(v) ? fmt("%.6g", v) : "null"; }

std::string cell_status(const Cell& c) {
  if (!c.skipped.empty()) return "not run: " + c.skipped;
  for (auto& r : c.runs)
    if (!r.ok) return r.failure;
  return c.runs.empty() ? "not run" : "ok";
}

}  // namespace

void evaluate_goals(SuiteResults* r) {
  r->goals.clear();
  double dram = r->dram.complete() ? r->dram.lookups_per_second : 0;
  Goal g25("mtier >= 2x the best kernel configuration at the 25% budget");
  Goal never("mtier never below the best kernel configuration at any budget");
  Goal hit("mtier's page hit ratio within 10% (relative) of Belady's MIN at every budget");
  Goal full("mtier at the 100% budget at most 3% below all-DRAM");
  bool never_ok = true, hit_ok = true;
  std::string never_fig, hit_fig;
  for (auto& b : r->budgets) {
    const Cell* m = find(b, Config::kMtier);
    const Cell* k = best_kernel(b);
    if (!m) continue;
    if (!m->complete()) {
      // mtier failed where it ran: every goal that covers this budget is missed.
      if (m->runs.empty() && !m->skipped.empty()) continue;
      std::string why = std::to_string(b.pct) + "%: mtier did not complete (" + cell_status(*m) + ")";
      never.evaluated = hit.evaluated = true;
      never_ok = hit_ok = false;
      never_fig += (never_fig.empty() ? "" : ", ") + why;
      hit_fig += (hit_fig.empty() ? "" : ", ") + why;
      if (b.pct == 25) g25.evaluated = true, g25.met = false, g25.figure = why;
      if (b.pct == 100) full.evaluated = true, full.met = false, full.figure = why;
      continue;
    }
    if (k && k->lookups_per_second > 0) {
      double x = m->lookups_per_second / k->lookups_per_second;
      never.evaluated = true;
      never_ok &= x >= 1.0;
      never_fig += (never_fig.empty() ? "" : ", ") + std::to_string(b.pct) + "%: " + fmt("%.2fx", x);
      if (b.pct == 25) {
        g25.evaluated = true;
        g25.met = x >= 2.0;
        g25.figure = fmt("%.2fx", x) + " (best kernel: " + config_name(k->config) + ")";
      }
    }
    if (m->hit_ratio >= 0 && b.oracle.min_hit_ratio() > 0) {
      double rel = (b.oracle.min_hit_ratio() - m->hit_ratio) / b.oracle.min_hit_ratio();
      hit.evaluated = true;
      hit_ok &= rel <= 0.10;
      hit_fig += (hit_fig.empty() ? "" : ", ") + std::to_string(b.pct) + "%: " +
                 fmt("%.3f", m->hit_ratio) + " vs " + fmt("%.3f", b.oracle.min_hit_ratio());
    }
    if (b.pct == 100 && dram > 0) {
      double x = m->lookups_per_second / dram;
      full.evaluated = true;
      full.met = x >= 0.97;
      full.figure = fmt("%.3f of all-DRAM", x);
    }
  }
  never.met = never_ok;
  never.figure = never_fig;
  hit.met = hit_ok;
  hit.figure = hit_fig;
  r->goals = {g25, never, hit, full};
}

void print_text(FILE* out, const SuiteOptions& o, const SuiteResults& r) {
  fprintf(out, "mtier bench suite: %s\n", o.trace_file.empty() ? ("preset " + o.preset).c_str()
                                                               : ("trace " + o.trace_file).c_str());
  fprintf(out, "  workload: %s\n", r.spec.describe().c_str());
  fprintf(out, "  trace:    %s\n", r.locality.c_str());
  fprintf(out, "            %" PRIu64 " lookups; %" PRIu64 " page references (forward + backward), the oracle's input\n",
          r.lookups, r.references);
  fprintf(out, "  machine:  %s\n", r.machine.c_str());
  fprintf(out, "  setup:    %s\n", r.environment.c_str());
  fprintf(out, "  runs:     %u per configuration, interleaved, each in its own process, %u thread%s; figures are medians\n",
          o.repeats, o.threads, o.threads == 1 ? "" : "s");
  fprintf(out, "configurations:\n");
  for (Config c : o.configs) fprintf(out, "  %-17s %s\n", config_name(c), config_what(c).c_str());
  double dram = r.dram.complete() ? r.dram.lookups_per_second : 0;
  if (r.dram.complete())
    fprintf(out, "\nall in DRAM: %.0f lookups/s, p99 batch %.2f ms (%u runs)\n", dram, r.dram.p99_ms, ok_runs(r.dram));
  else
    fprintf(out, "\nall in DRAM: %s (ratios to it are not given)\n", cell_status(r.dram).c_str());
  for (auto& b : r.budgets) {
    fprintf(out, "\nbudget %u%% (%.1f MiB; cgroup limit %.1f MiB); oracle: MIN hit ratio %.4f, LRU %.4f (%" PRIu64
            " pages)\n",
            b.pct, b.bytes / 1048576.0, b.cgroup_limit / 1048576.0, b.oracle.min_hit_ratio(),
            b.oracle.lru_hit_ratio(), b.oracle.capacity_pages);
    fprintf(out, "  %-17s %12s %9s %9s %8s %10s %10s %8s %5s\n", "config", "lookups/s", "x DRAM",
            "hit ratio", "/ MIN", "read MiB", "write MiB", "p99 ms", "runs");
    for (auto& cell : b.cells) {
      std::string status = cell_status(cell);
      if (ok_runs(cell) == 0) {
        fprintf(out, "  %-17s %s\n", config_name(cell.config), status.c_str());
        continue;
      }
      std::string hr = cell.hit_ratio >= 0 ? fmt("%.4f", cell.hit_ratio) : "-";
      std::string vs = cell.hit_ratio >= 0 && b.oracle.min_hit_ratio() > 0
                           ? fmt("%.3f", cell.hit_ratio / b.oracle.min_hit_ratio()) : "-";
      fprintf(out, "  %-17s %12.0f %9s %9s %8s %10.1f %10.1f %8.2f %2u/%-2zu%s\n", config_name(cell.config),
              cell.lookups_per_second, dram > 0 ? fmt("%.4f", cell.lookups_per_second / dram).c_str() : "-",
              hr.c_str(), vs.c_str(), cell.read_bytes / 1048576.0, cell.written_bytes / 1048576.0, cell.p99_ms,
              ok_runs(cell), cell.runs.size(), status == "ok" ? "" : ("  " + status).c_str());
    }
    const Cell* m = find(b, Config::kMtier);
    const Cell* k = best_kernel(b);
    if (m && m->complete() && k && k->lookups_per_second > 0)
      fprintf(out, "  mtier / best kernel configuration (%s): %.2fx\n", config_name(k->config),
              m->lookups_per_second / k->lookups_per_second);
  }
  fprintf(out, "\ngoals:\n");
  for (auto& g : r.goals)
    fprintf(out, "  %-5s %s: %s\n", !g.evaluated ? "-" : g.met ? "PASS" : "MISS", g.what.c_str(),
            g.evaluated ? g.figure.c_str() : "not measured (a configuration or budget missing)");
  fprintf(out, "data: %s\n", r.data_identical ? "every run computed the same losses and left the same tables (checksums equal)"
                                              : "MISMATCH: see the notes");
  for (auto& n : r.notes) fprintf(out, "note: %s\n", n.c_str());
}

void print_json(FILE* out, const SuiteOptions& o, const SuiteResults& r) {
  auto cell_json = [&](const Cell& c) {
    std::string s = "{\"config\":" + json_str(config_name(c.config)) + ",\"status\":" + json_str(cell_status(c)) +
                     ",\"complete\":" + (c.complete() ? "true" : "false") +
                     ",\"lookups_per_second\":" + json_num(c.lookups_per_second) +
                     ",\"ratio_to_dram\":" +
                     (r.dram.complete() && r.dram.lookups_per_second > 0
                          ? json_num(c.lookups_per_second / r.dram.lookups_per_second) : "null") +
                     ",\"hit_ratio\":" + (c.hit_ratio >= 0 ? json_num(c.hit_ratio) : "null") +
                     ",\"read_bytes\":" + json_num(c.read_bytes) + ",\"written_bytes\":" + json_num(c.written_bytes) +
                     ",\"p99_batch_ms\":" + json_num(c.p99_ms) + ",\"runs\":[";
    for (size_t i = 0; i < c.runs.size(); i++) {
      auto& run = c.runs[i];
      s += (i ? "," : "") + std::string("{\"ok\":") + (run.ok ? "true" : "false");
      if (run.ok)
        s += ",\"lookups\":" + std::to_string(run.result.lookups) + ",\"batches\":" + std::to_string(run.result.batches) +
             ",\"seconds\":" + json_num(run.result.seconds) + ",\"lookups_per_second\":" +
             json_num(run.result.lookups_per_second()) + ",\"major_faults\":" + std::to_string(run.result.major_faults) +
             ",\"mtier_misses\":" + std::to_string(run.result.mtier_misses) + ",\"checksum\":\"" + hex64(run.result.checksum) + "\"";
      else
        s += ",\"failure\":" + json_str(run.failure);
      s += "}";
    }
    return s + "]}";
  };
  fprintf(out, "{\"suite\":\"mtier bench suite\",\"preset\":%s,\"workload\":%s,\"trace\":%s,\"lookups\":%" PRIu64
          ",\"batches\":%u,\"page_references\":%" PRIu64 ",\"table_bytes\":%" PRIu64 ",\"machine\":%s,\"setup\":%s,\"repeats\":%u,\"threads\":%u,",
          json_str(o.trace_file.empty() ? o.preset : "").c_str(), json_str(r.spec.describe()).c_str(),
          json_str(r.locality).c_str(), r.lookups, r.spec.batches, r.references, r.spec.table_bytes(), json_str(r.machine).c_str(),
          json_str(r.environment).c_str(), o.repeats, o.threads);
  fprintf(out, "\"dram\":%s,\"budgets\":[", cell_json(r.dram).c_str());
  for (size_t i = 0; i < r.budgets.size(); i++) {
    auto& b = r.budgets[i];
    fprintf(out, "%s{\"percent\":%u,\"bytes\":%" PRIu64 ",\"cgroup_limit\":%" PRIu64
            ",\"oracle\":{\"capacity_pages\":%" PRIu64 ",\"min_hit_ratio\":%s,\"lru_hit_ratio\":%s},\"configs\":[",
            i ? "," : "", b.pct, b.bytes, b.cgroup_limit, b.oracle.capacity_pages,
            json_num(b.oracle.min_hit_ratio()).c_str(), json_num(b.oracle.lru_hit_ratio()).c_str());
    for (size_t j = 0; j < b.cells.size(); j++) fprintf(out, "%s%s", j ? "," : "", cell_json(b.cells[j]).c_str());
    const Cell* m = find(b, Config::kMtier);
    const Cell* k = best_kernel(b);
    fprintf(out, "],\"mtier_over_best_kernel\":%s}",
            m && m->complete() && k && k->lookups_per_second > 0
                ? json_num(m->lookups_per_second / k->lookups_per_second).c_str() : "null");
  }
  fprintf(out, "],\"goals\":[");
  for (size_t i = 0; i < r.goals.size(); i++)
    fprintf(out, "%s{\"goal\":%s,\"evaluated\":%s,\"met\":%s,\"figure\":%s}", i ? "," : "",
            json_str(r.goals[i].what).c_str(), r.goals[i].evaluated ? "true" : "false",
            r.goals[i].met ? "true" : "false", json_str(r.goals[i].figure).c_str());
  fprintf(out, "],\"data_identical\":%s,\"notes\":[", r.data_identical ? "true" : "false");
  for (size_t i = 0; i < r.notes.size(); i++) fprintf(out, "%s%s", i ? "," : "", json_str(r.notes[i]).c_str());
  fprintf(out, "]}\n");
}

int write_plot(const SuiteResults& r, const std::string& path, std::string* err) {
  plot::LineChart chart;
  chart.title = "mtier bench suite: " + r.spec.name + ", " + fmt("%.0f MiB of tables", r.spec.table_bytes() / 1048576.0);
  chart.x_label = "DRAM budget (% of table bytes)";
  chart.y_label = "lookups/s (log scale)";
  chart.log_y = true;
  chart.x_reversed = true;
  for (auto& b : r.budgets) {
    chart.x_ticks.push_back(b.pct);
    chart.x_tick_labels.push_back(std::to_string(b.pct) + "%");
  }
  if (r.dram.complete()) {
    plot::Series s{"all in DRAM", {}};
    for (auto& b : r.budgets) s.points.push_back({double(b.pct), r.dram.lookups_per_second});
    chart.series.push_back(s);
  }
  if (!r.budgets.empty())
    for (auto& first : r.budgets.front().cells) {
      plot::Series s{config_name(first.config), {}};
      for (auto& b : r.budgets) {
        const Cell* c = find(b, first.config);
        if (c && c->lookups_per_second > 0) s.points.push_back({double(b.pct), c->lookups_per_second});
      }
      if (!s.points.empty()) chart.series.push_back(s);
    }
  return plot::render_png(chart, path, err);
}

}  // namespace mtier::tools::suite
