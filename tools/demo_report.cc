// SPDX-License-Identifier: Apache-2.0
#include "demo_report.h"

#include <cmath>
#include <cstring>

#include "demo_heat.h"
#include "util/json.h"
#include "units.h"

namespace mtier::tools::demo {
namespace {

constexpr double kGoalBudgetPct = 25, kGoalVsDram = 0.1, kGoalVsSwap = 3;

std::string fmt(const char* f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

using bench::mib;

const ConfigResult* find(const Report& r, const std::string& name) {
  for (auto& c : r.configs)
    if (c.name == name) return &c;
  return nullptr;
}

double budget_pct(const Setup& s) {
  uint64_t t = s.workload.table_bytes();
  return t ? 100.0 * s.budget / t : 0;
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Why a configuration has no figure, or "" when it has one.
std::string missing(const ConfigResult* c, const char* name) {
  if (!c) return std::string(name) + " was not run";
  if (!c->skipped.empty()) return std::string(name) + " skipped: " + c->skipped;
  if (!c->failure.empty()) return std::string(name) + " failed: " + c->failure;
  return "";
}

std::string lookahead_what(const LookaheadOptions& la) {
  std::string k = la.depth == 1 ? "the next step's rows" : "the next " + std::to_string(la.depth) + " steps' rows";
  return k + " named before each step (mtier_prefetch_rows, " + (la.async ? "async" : "sync") + ")";
}

}  // namespace

bool bit_identical(const ConfigResult& r, const ConfigResult& dram) {
  if (!r.ok() || !dram.ok() || r.train.losses.size() != dram.train.losses.size()) return false;
  return memcmp(r.train.losses.data(), dram.train.losses.data(),
                r.train.losses.size() * sizeof(double)) == 0 &&
         r.train.weights_hash == dram.train.weights_hash;
}

std::vector<GoalPart> evaluate_goal(const Report& r) {
  const ConfigResult *dram = find(r, "dram"), *swap = find(r, "swap"), *la = find(r, "mtier+lookahead");
  GoalPart vs_dram{"mtier+lookahead >= " + fmt("%g", kGoalVsDram) + "x dram", "not measured", ""};
  GoalPart vs_swap{"mtier+lookahead >= " + fmt("%g", kGoalVsSwap) + "x swap", "not measured", ""};
  double pct = budget_pct(r.setup);
  std::string why;
  if (std::lround(pct) != kGoalBudgetPct)
    why = "the goal is at the 25% budget, this run is at " + fmt("%.0f%%", pct);
  else if (!(why = missing(la, "mtier+lookahead")).empty()) {
  } else if (dram && dram->ok() && !bit_identical(*la, *dram))
    why = "mtier+lookahead's results differ from dram's";
  if (!why.empty()) {
    vs_dram.detail = vs_swap.detail = why;
    return {vs_dram, vs_swap};
  }
  double sps = la->train.steps_per_second();
  if (std::string w = missing(dram, "dram"); !w.empty()) {
    vs_dram.detail = w;
  } else {
    double ratio = sps / dram->train.steps_per_second();
    vs_dram.status = ratio >= kGoalVsDram ? "PASS" : "MISS";
    vs_dram.detail = fmt("%.3gx", ratio);
  }
  if (swap && swap->ok()) {
    double ratio = sps / swap->train.steps_per_second();
    vs_swap.status = ratio >= kGoalVsSwap ? "PASS" : "MISS";
    vs_swap.detail = fmt("%.3gx", ratio);
  } else if (swap && swap->sps_upper_bound > 0) {
    // Killed at its timeout: swap ran at most the bound.
    double ratio = sps / swap->sps_upper_bound;
    std::string how = "swap timed out at step " + std::to_string(swap->steps_done) + "/" +
                      std::to_string(r.setup.workload.steps) + ", at most " +
                      fmt("%.3g", swap->sps_upper_bound) + " steps/s";
    if (ratio >= kGoalVsSwap) {
      vs_swap.status = "PASS";
      vs_swap.detail = "at least " + fmt("%.3gx", ratio) + " (" + how + ")";
    } else {
      vs_swap.detail = how;
    }
  } else {
    vs_swap.detail = missing(swap, "swap");
  }
  return {vs_dram, vs_swap};
}

int exit_status(const Report& r) {
  const ConfigResult* dram = find(r, "dram");
  if (!dram || !dram->ok()) return 1;
  for (auto& c : r.configs) {
    bool baseline = c.name == "swap";
    if (!c.ok() && !baseline) return 1;
    if (c.ok() && !bit_identical(c, *dram)) return 1;
  }
  return 0;
}

void print_text(FILE* out, const Report& r, bool color) {
  const Setup& s = r.setup;
  const ConfigResult* dram = find(r, "dram");
  double base = dram && dram->ok() ? dram->train.steps_per_second() : 0;
  double base_steady = dram && dram->ok() ? dram->train.steady_steps_per_second() : 0;
  fprintf(out, "\nresults (the same workload, seed and ids; each configuration in a process of its own):\n");
  fprintf(out, "  %-16s %9s %7s %12s %7s  %s\n", "configuration", "steps/s", "ratio", "steady st/s", "ratio",
          "bit-identical to dram");
  for (auto& c : r.configs) {
    if (!c.ok()) {
      fprintf(out, "  %-16s %s: %s\n", c.name.c_str(), c.skipped.empty() ? "FAILED" : "skipped",
              (c.skipped.empty() ? c.failure : c.skipped).c_str());
      if (c.sps_upper_bound > 0)
        fprintf(out, "  %-16s (at step %llu of %u: at most %.3g steps/s over the whole run)\n", "",
                static_cast<unsigned long long>(c.steps_done), s.workload.steps, c.sps_upper_bound);
      continue;
    }
    double sps = c.train.steps_per_second(), steady = c.train.steady_steps_per_second();
    const char* same = &c == dram ? "(the reference)" : dram && bit_identical(c, *dram) ? "yes" : "NO";
    fprintf(out, "  %-16s %9.1f %7.3f %12.1f %7.3f  %s\n", c.name.c_str(), sps, base > 0 ? sps / base : 0,
            steady, base_steady > 0 ? steady / base_steady : 0, same);
  }
  fprintf(out, "  (steady: the second half of the steps, after the warm-up that fetches every hot page once)\n");
  fprintf(out, "  dram: tables malloc'd, no limit\n");
  if (!r.swap_environment.empty())
    fprintf(out, "  swap: tables malloc'd in a memory cgroup of %s (the budget + %s), kernel swap; %s\n",
            mib(r.cgroup_limit).c_str(), r.slack_how.c_str(), r.swap_environment.c_str());
  fprintf(out, "  mtier: DRAM budget %s (%.0f%% of the tables), file store in %s\n", mib(s.budget).c_str(),
          budget_pct(s), s.scratch.c_str());
  fprintf(out, "  mtier+lookahead: the same, %s\n", lookahead_what(s.lookahead).c_str());
  for (auto& c : r.configs) {
    if (!c.ok() || !c.has_stats) continue;
    const struct mtier_stats& st = c.stats;
    fprintf(out, "  %s: peak DRAM residency %s of %s; store holds %s; over-budget placements %llu",
            c.name.c_str(), mib(st.peak_resident_bytes).c_str(), mib(st.budget_bytes).c_str(),
            mib(st.store_used_bytes).c_str(), static_cast<unsigned long long>(st.budget_overruns));
    if (c.train.lookahead.calls)
      fprintf(out, ";\n    lookahead: %llu calls, %llu pages read ahead, %llu already in memory, "
              "%llu not pinned (window full), %.2f s waited, %llu errors%s%s",
              static_cast<unsigned long long>(c.train.lookahead.calls),
              static_cast<unsigned long long>(c.train.lookahead.pages_read),
              static_cast<unsigned long long>(st.prefetch_hits),
              static_cast<unsigned long long>(st.window_overflows), c.train.lookahead.wait_seconds,
              static_cast<unsigned long long>(c.train.lookahead.errors),
              c.train.lookahead.first_error ? ", the first: " : "",
              c.train.lookahead.first_error ? strerror(c.train.lookahead.first_error) : "");
    fprintf(out, "\n");
  }
  if (dram && dram->ok())
    fprintf(out, "  final weights hash (dram) %s\n", hex(dram->train.weights_hash).c_str());
  fprintf(out, "goal at the 25%% budget (steps/s over the whole run):");
  for (auto& g : evaluate_goal(r))
    fprintf(out, "\n  %-12s %s: %s", g.status.c_str(), g.what.c_str(), g.detail.c_str());
  fprintf(out, "\n");
  if (const ConfigResult* h = find(r, r.heat_run); h && h->ok() && !h->heat.empty())
    fputs(draw_heat(h->heat, h->name, color).c_str(), out);
}

void print_json(FILE* out, const Report& r) {
  const Setup& s = r.setup;
  const Workload& w = s.workload;
  const ConfigResult* dram = find(r, "dram");
  double base = dram && dram->ok() ? dram->train.steps_per_second() : 0;
  json::Json configurations = json::Json::array();
  for (auto& c : r.configs) {
    json::Json cj = {{"name", c.name}};
    if (!c.skipped.empty()) {
      cj["skipped"] = c.skipped;
    } else if (!c.failure.empty()) {
      cj["failed"] = c.failure;
      if (c.sps_upper_bound > 0) {
        cj["steps_done"] = c.steps_done;
        cj["steps_per_second_at_most"] = json::number(c.sps_upper_bound);
      }
    } else {
      const TrainResult& t = c.train;
      cj["steps_per_second"] = json::number(t.steps_per_second());
      cj["ratio_to_dram"] = json::number(base > 0 ? t.steps_per_second() / base : 0);
      cj["steady_steps_per_second"] = json::number(t.steady_steps_per_second());
      cj["seconds"] = json::number(t.seconds);
      cj["bit_identical"] = dram && bit_identical(c, *dram);
      cj["weights_hash"] = hex(t.weights_hash);
      cj["peak_rss_bytes"] = c.peak_rss;
      if (c.name == "swap") {
        cj["cgroup_limit_bytes"] = r.cgroup_limit;
        cj["environment"] = r.swap_environment;
      }
      if (c.has_stats) {
        cj["peak_resident_bytes"] = c.stats.peak_resident_bytes;
        cj["budget_overruns"] = c.stats.budget_overruns;
        cj["store_used_bytes"] = c.stats.store_used_bytes;
      }
      if (t.lookahead.calls)
        cj["prefetch"] = {{"calls", t.lookahead.calls},
                          {"pages_read", t.lookahead.pages_read},
                          {"hits", c.stats.prefetch_hits},
                          {"window_overflows", c.stats.window_overflows},
                          {"wait_seconds", json::number(t.lookahead.wait_seconds)},
                          {"errors", t.lookahead.errors}};
    }
    configurations.push_back(std::move(cj));
  }
  bool all_same = dram && dram->ok();
  for (auto& c : r.configs)
    if (c.ok() && all_same) all_same = bit_identical(c, *dram);
  json::Json goal = json::Json::array();
  for (auto& g : evaluate_goal(r)) goal.push_back({{"what", g.what}, {"status", g.status}, {"detail", g.detail}});
  json::Json j = {{"workload",
                   {{"description", w.describe()},
                    {"tables", w.tables.size()},
                    {"table_bytes", w.table_bytes()},
                    {"dim", w.dim},
                    {"pooling", w.pooling},
                    {"batch", w.batch},
                    {"steps", w.steps},
                    {"seed", w.seed}}},
                  {"budget", {{"bytes", s.budget}, {"percent", json::number(budget_pct(s))}}},
                  {"lookahead", {{"depth", s.lookahead.depth}, {"async", s.lookahead.async}}},
                  {"configurations", std::move(configurations)},
                  // Every configuration that ran computed what dram did.
                  {"bit_identical", all_same},
                  {"goal", std::move(goal)}};
  if (const ConfigResult* h = find(r, r.heat_run); h && h->ok() && !h->heat.empty()) {
    json::Json tables = json::Json::array();
    for (auto& t : h->heat) {
      json::Json extents = json::Json::array();
      for (auto& e : t.extents)
        extents.push_back({{"offset", e.offset},
                           {"bytes", e.bytes},
                           {"resident_bytes", e.resident_bytes},
                           {"heat", e.heat}});
      tables.push_back({{"name", std::string(t.stats.name, strnlen(t.stats.name, sizeof t.stats.name))},
                        {"bytes", t.stats.bytes},
                        {"resident_bytes", t.stats.resident_bytes},
                        {"fetches", t.stats.fetches},
                        {"prefetches", t.stats.prefetches},
                        {"extents", std::move(extents)}});
    }
    j["heat_map"] = {{"run", h->name}, {"tables", std::move(tables)}};
  }
  fprintf(out, "%s\n", json::dump(j).c_str());
}

}  // namespace mtier::tools::demo
