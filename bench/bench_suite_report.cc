// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: the text table, JSON and the plot.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "bench_suite.h"
#include "bench_suite_cells.h"
#include "plot/line_chart.h"
#include "util/json.h"

namespace mtier::tools::suite {
namespace {

std::string hex64(uint64_t v) {
  char buf[20];
  snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// A figure; null when it is not finite, or when `known` is false.
json::Json json_num(double v, bool known = true) { return known ? json::number(v) : json::Json(nullptr); }

}  // namespace

void print_text(FILE* out, const SuiteOptions& o, const SuiteResults& r) {
  fprintf(out, "mtier bench suite: %s\n", o.trace_file.empty() ? ("preset " + o.preset).c_str()
                                                               : ("trace " + o.trace_file).c_str());
  fprintf(out, "  workload: %s\n", r.spec.describe().c_str());
  if (r.device.ok)
    fprintf(out, "  device:   %.0f read IOPS, %.0f write IOPS (random 4 KiB, 32 in flight, %.0f MiB file in %s, %s; %.1f s)\n",
            r.device.read_iops, r.device.write_iops, r.device.bytes / 1048576.0, o.dir.c_str(), r.device.mode.c_str(),
            r.device.seconds);
  else
    fprintf(out, "  device:   %s\n", r.device.failure.c_str());
  fprintf(out, "  trace:    %s\n", r.locality.c_str());
  fprintf(out, "            %" PRIu64 " lookups; %" PRIu64 " page references (forward + backward), the oracle's input\n",
          r.lookups, r.references);
  fprintf(out, "  machine:  %s\n", r.machine.c_str());
  fprintf(out, "  setup:    %s\n", r.environment.c_str());
  fprintf(out, "  runs:     %u per configuration, interleaved, each in its own process, %u thread%s; figures are medians\n",
          o.repeats, o.threads, o.threads == 1 ? "" : "s");
  fprintf(out, "configurations:\n");
  for (Config c : o.configs) fprintf(out, "  %-17s %s\n", config_name(c), config_what(c).c_str());
  if (o.lookahead)
    fprintf(out, "  <config>+lookahead  the same, hinted: before batch i the pages of %s are named\n"
                 "                      (mtier: mtier_prefetch_rows, %s, pinned until passed; kernel: madvise(MADV_WILLNEED))\n",
            o.lookahead == 1 ? "batch i+1" : ("batches i+1..i+" + std::to_string(o.lookahead)).c_str(),
            o.lookahead_sync ? "synchronous" : "asynchronous (a batch waits for its own hints before it runs)");
  fprintf(out, "columns: hit ratio = 1 - faults that read (a hinted page read ahead is no fault) / references;\n"
               "         misses = pages read below DRAM (by a fault, readahead or a hint); dev s = those pages read\n"
               "         and written at the device's IOPS (the device-bound time); / dev = replay time / dev s\n");
  double dram = r.dram.complete() ? r.dram.lookups_per_second : 0;
  if (r.dram.complete())
    fprintf(out, "\nall in DRAM: %.0f lookups/s, p99 batch %.2f ms (%u runs)\n", dram, r.dram.p99_ms, ok_runs(r.dram));
  else
    fprintf(out, "\nall in DRAM: %s (ratios to it are not given)\n", cell_status(r.dram).c_str());
  for (auto& b : r.budgets) {
    fprintf(out, "\nbudget %u%% (%.1f MiB; cgroup limit %.1f MiB); oracle: MIN hit ratio %.4f (%" PRIu64
            " misses), LRU %.4f (%" PRIu64 " misses), both with %" PRIu64 " pages\n",
            b.pct, b.bytes / 1048576.0, b.cgroup_limit / 1048576.0, b.oracle.min_hit_ratio(),
            b.oracle.min_misses(), b.oracle.lru_hit_ratio(),
            b.oracle.lru_misses(), b.oracle.capacity_pages);
    if (b.min_misses_same_start >= 0)
      fprintf(out, "  (MIN chose which pages the initialisation left in DRAM; from the pages every run starts with,\n"
                   "   the last ones written, MIN misses %" PRId64 ")\n", b.min_misses_same_start);
    fprintf(out, "  %-26s %10s %7s %9s %6s %8s %9s %9s %8s %7s %6s %8s %5s\n", "config", "lookups/s", "x DRAM",
            "hit ratio", "/ MIN", "misses", "read MiB", "write MiB", "replay s", "dev s", "/ dev", "p99 ms", "runs");
    for (auto& cell : b.cells) {
      std::string status = cell_status(cell);
      if (ok_runs(cell) == 0) {
        fprintf(out, "  %-26s %s\n", cell.name().c_str(), status.c_str());
        continue;
      }
      std::string hr = cell.hit_ratio >= 0 ? fmt("%.4f", cell.hit_ratio) : "-";
      std::string vs = cell.hit_ratio >= 0 && b.oracle.min_hit_ratio() > 0
                           ? fmt("%.3f", cell.hit_ratio / b.oracle.min_hit_ratio()) : "-";
      std::string miss = cell.misses >= 0 ? fmt("%.0f", cell.misses) : "-";
      std::string dev = cell.device_seconds >= 0 ? fmt("%.2f", cell.device_seconds) : "-";
      std::string over = cell.over_device >= 0 ? fmt("%.2f", cell.over_device) : "-";
      fprintf(out, "  %-26s %10.0f %7s %9s %6s %8s %9.1f %9.1f %8.2f %7s %6s %8.2f %2u/%-2zu%s\n", cell.name().c_str(),
              cell.lookups_per_second, dram > 0 ? fmt("%.4f", cell.lookups_per_second / dram).c_str() : "-",
              hr.c_str(), vs.c_str(), miss.c_str(), cell.read_bytes / 1048576.0, cell.written_bytes / 1048576.0,
              cell.seconds, dev.c_str(), over.c_str(), cell.p99_ms, ok_runs(cell), cell.runs.size(),
              status == "ok" ? "" : ("  " + status).c_str());
    }
    const Cell* m = find(b, Config::kMtier);
    const Cell* k = best_kernel(b);
    if (m && m->complete() && k && k->lookups_per_second > 0)
      fprintf(out, "  mtier / best kernel configuration (%s): %.2fx\n", k->name().c_str(),
              m->lookups_per_second / k->lookups_per_second);
    const Cell* ml = find(b, Config::kMtier, true);
    const Cell* kl = best_kernel(b, true);
    if (ml && ml->complete() && k && k->lookups_per_second > 0)
      fprintf(out, "  mtier+lookahead / best unhinted kernel configuration (%s): %.2fx\n", k->name().c_str(),
              ml->lookups_per_second / k->lookups_per_second);
    if (ml && ml->complete() && kl && kl->lookups_per_second > 0)
      fprintf(out, "  mtier+lookahead / best hinted kernel configuration (%s): %.2fx\n", kl->name().c_str(),
              ml->lookups_per_second / kl->lookups_per_second);
  }
  fprintf(out, "\ngoals:\n");
  for (auto& g : r.goals)
    fprintf(out, "  %-5s %s: %s\n", !g.evaluated ? "-" : g.met ? "PASS" : "MISS", g.what.c_str(),
            g.evaluated ? g.figure.c_str()
                        : ("not measured: " + (g.reason.empty() ? "a configuration or budget missing" : g.reason)).c_str());
  fprintf(out, "data: %s\n", r.data_identical ? "every run computed the same losses and left the same tables (checksums equal)"
                                              : "MISMATCH: see the notes");
  for (auto& n : r.notes) fprintf(out, "note: %s\n", n.c_str());
}

namespace {

json::Json cell_json(const Cell& c, const SuiteResults& r) {
  json::Json runs = json::Json::array();
  for (const auto& run : c.runs) {
    json::Json rj = {{"ok", run.ok}};
    if (run.ok) {
      const auto& x = run.result;
      rj.update(json::Json{{"lookups", x.lookups},
                           {"batches", x.batches},
                           {"seconds", json_num(x.seconds)},
                           {"lookups_per_second", json_num(x.lookups_per_second())},
                           {"major_faults", x.major_faults},
                           {"mtier_misses", x.mtier_misses},
                           {"mtier_fetched_pages", x.mtier_fetched_pages},
                           {"mtier_prefetch_reads", x.mtier_prefetch_reads},
                           {"mtier_window_overflows", x.mtier_window_overflows},
                           {"hint_calls", x.hint_calls},
                           {"hint_pages", x.hint_pages},
                           {"hint_errors", x.hint_errors},
                           {"loss", fmt("%a", x.loss)},
                           {"checksum", hex64(x.checksum)}});
    } else {
      rj["failure"] = run.failure;
    }
    runs.push_back(std::move(rj));
  }
  bool dram_ok = r.dram.complete() && r.dram.lookups_per_second > 0;
  return {{"config", c.name()},
          {"base_config", config_name(c.config)},
          {"lookahead", c.lookahead},
          {"status", cell_status(c)},
          {"complete", c.complete()},
          {"lookups_per_second", json_num(c.lookups_per_second)},
          {"ratio_to_dram", json_num(c.lookups_per_second / r.dram.lookups_per_second, dram_ok)},
          {"hit_ratio", json_num(c.hit_ratio, c.hit_ratio >= 0)},
          {"read_bytes", json_num(c.read_bytes)},
          {"written_bytes", json_num(c.written_bytes)},
          {"p99_batch_seconds", json_num(c.p99_ms / 1000, c.p99_ms >= 0)},
          {"seconds", json_num(c.seconds)},
          {"misses", json_num(c.misses, c.misses >= 0)},
          {"device_bound_seconds", json_num(c.device_seconds, c.device_seconds >= 0)},
          {"over_device_bound", json_num(c.over_device, c.over_device >= 0)},
          {"runs", std::move(runs)}};
}

}  // namespace

void print_json(FILE* out, const SuiteOptions& o, const SuiteResults& r) {
  json::Json budgets = json::Json::array();
  for (const auto& b : r.budgets) {
    json::Json configs = json::Json::array();
    for (const Cell& c : b.cells) configs.push_back(cell_json(c, r));
    const Cell* m = find(b, Config::kMtier);
    const Cell* k = best_kernel(b);
    const Cell* ml = find(b, Config::kMtier, true);
    const Cell* kl = best_kernel(b, true);
    auto ratio = [](const Cell* a, const Cell* z) {
      bool known = a && a->complete() && z && z->lookups_per_second > 0;
      return known ? json::number(a->lookups_per_second / z->lookups_per_second) : json::Json(nullptr);
    };
    budgets.push_back({{"percent", b.pct},
                       {"bytes", b.bytes},
                       {"cgroup_limit_bytes", b.cgroup_limit},
                       {"oracle",
                        {{"capacity_pages", b.oracle.capacity_pages},
                         {"min_misses", b.oracle.min_misses()},
                         {"lru_misses", b.oracle.lru_misses()},
                         {"min_misses_same_start",
                          b.min_misses_same_start >= 0 ? json::Json(b.min_misses_same_start) : json::Json(nullptr)},
                         {"min_hit_ratio", json_num(b.oracle.min_hit_ratio())},
                         {"lru_hit_ratio", json_num(b.oracle.lru_hit_ratio())}}},
                       {"configs", std::move(configs)},
                       {"mtier_over_best_kernel", ratio(m, k)},
                       {"mtier_lookahead_over_best_kernel", ratio(ml, k)},
                       {"mtier_lookahead_over_best_hinted_kernel", ratio(ml, kl)}});
  }
  json::Json goals = json::Json::array();
  for (const auto& g : r.goals)
    goals.push_back({{"goal", g.what},
                     {"evaluated", g.evaluated},
                     {"met", g.met},
                     {"figure", g.figure},
                     {"reason", g.reason}});
  json::Json j = {{"suite", "mtier bench suite"},
                  {"preset", o.trace_file.empty() ? o.preset : ""},
                  {"workload", r.spec.describe()},
                  {"trace", r.locality},
                  {"lookups", r.lookups},
                  {"batches", r.spec.batches},
                  {"page_references", r.references},
                  {"table_bytes", r.spec.table_bytes()},
                  {"machine", r.machine},
                  {"setup", r.environment},
                  {"repeats", o.repeats},
                  {"threads", o.threads},
                  {"lookahead", o.lookahead},
                  {"lookahead_sync", o.lookahead_sync},
                  {"device",
                   {{"ok", r.device.ok},
                    {"bytes", r.device.bytes},
                    {"mode", r.device.mode},
                    {"reads_per_second", json_num(r.device.read_iops)},
                    {"writes_per_second", json_num(r.device.write_iops)},
                    {"seconds", json_num(r.device.seconds)},
                    {"failure", r.device.failure}}},
                  {"dram", cell_json(r.dram, r)},
                  {"budgets", std::move(budgets)},
                  {"goals", std::move(goals)},
                  {"data_identical", r.data_identical},
                  {"notes", r.notes}};
  fprintf(out, "%s\n", json::dump(j).c_str());
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
      plot::Series s{first.name(), {}};
      for (auto& b : r.budgets) {
        const Cell* c = find(b, first.config, first.lookahead > 0);
        if (c && c->lookups_per_second > 0) s.points.push_back({double(b.pct), c->lookups_per_second});
      }
      if (!s.points.empty()) chart.series.push_back(s);
    }
  return plot::write_line_chart(chart, path, err);
}

}  // namespace mtier::tools::suite
