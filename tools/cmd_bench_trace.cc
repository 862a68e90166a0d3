// SPDX-License-Identifier: Apache-2.0
// mtier bench trace: generates an embedding lookup trace from a preset,
// prints its statistics beside the preset's targets, and writes it to a file
// that `mtier bench replay` and `mtier bench suite --trace` replay; --json
// gives the same as one JSON object.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cli.h"
#include "locality.h"
#include "trace.h"
#include "util/json.h"

namespace mtier::tools {
namespace {

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench trace [--preset NAME] [OPTIONS] [-o FILE] [--json]\n"
          "       mtier bench trace --list [--json]\n"
          "       mtier bench trace --stats FILE [--json]\n\n"
          "Generates the lookup trace of a workload preset (deterministic for its seed),\n"
          "prints the workload and the trace's locality statistics beside the preset's\n"
          "targets (from Meta's published dlrm_datasets statistics), and with -o writes it.\n\n"
          "  --preset NAME       the preset (default meta2022)\n"
          "  --table-bytes SIZE  scale the tables to about SIZE in all (e.g. 2G)\n"
          "  --batches N         batches in the trace\n"
          "  --seed N            the seed\n"
          "  -o FILE             write the trace to FILE\n"
          "  --stats FILE        read a trace file and print its workload and statistics\n"
          "  --list              the presets, a line each\n"
          "  --json              print one JSON object instead: \"workload\" (its \"name\",\n"
          "                      \"tables\" with rows, dim, zipf, pooling and bytes each,\n"
          "                      \"table_bytes\", \"batch\", \"batches\", \"pooling_dist\",\n"
          "                      \"reuse\", \"seed\", \"describe\"), \"stats\" (share_50,\n"
          "                      share_80, share_90, mean_pooling,\n"
          "                      mean_reuse_per_unique_row_in_batch, once_in_batch_fraction,\n"
          "                      lookups, distinct_rows), \"targets\" (a preset's: tolerance\n"
          "                      and per statistic its value, target and within_tolerance;\n"
          "                      null with --stats), \"file\" (written or read; null when\n"
          "                      none); with --list, \"presets\": name and what of each\n"
          "  -h, --help          this text\n");
}

void print_stats(const bench::Trace& t, const bench::LocalityTargets* targets) {
  bench::LocalityStats s = bench::compute_locality(t);
  printf("workload: %s\n", t.spec.describe().c_str());
  printf("trace:    %s\n", bench::describe(s).c_str());
  if (!targets) return;
  auto row = [](const char* what, double got, double want, double tol) {
    if (want <= 0) return;
    double rel = std::fabs(got - want) / want;
    printf("  %-34s %8.4f  target %8.4f  %s\n", what, got, want, rel <= tol ? "within tolerance" : "OFF TARGET");
  };
  printf("against the preset's targets (tolerance %.0f%% relative):\n", targets->tolerance * 100);
  row("touched rows taking 50% of accesses", s.share_50, targets->share_50, targets->tolerance);
  row("touched rows taking 80% of accesses", s.share_80, targets->share_80, targets->tolerance);
  row("touched rows taking 90% of accesses", s.share_90, targets->share_90, targets->tolerance);
  row("mean pooling (lookups per bag)", s.mean_pooling, targets->mean_pooling, targets->tolerance);
}

json::Json json_workload(const bench::WorkloadSpec& w) {
  json::Json tables = json::Json::array();
  for (const bench::TableSpec& t : w.tables)
    tables.push_back({{"rows", t.rows},
                      {"dim", t.dim},
                      {"zipf", json::number(t.zipf)},
                      {"pooling", json::number(t.pooling)},
                      {"bytes", t.bytes()}});
  return {{"name", w.name},
          {"tables", std::move(tables)},
          {"table_bytes", w.table_bytes()},
          {"batch", w.batch},
          {"batches", w.batches},
          {"pooling_dist", w.pooling_dist},
          {"reuse", json::number(w.reuse)},
          {"seed", w.seed},
          {"describe", w.describe()}};
}

// The object of print_stats: `file` the trace written or read ("": none).
int print_json(const bench::Trace& t, const bench::LocalityTargets* targets,
               const std::string& file) {
  bench::LocalityStats s = bench::compute_locality(t);
  json::Json j = {{"workload", json_workload(t.spec)},
                  {"stats",
                   {{"share_50", json::number(s.share_50)},
                    {"share_80", json::number(s.share_80)},
                    {"share_90", json::number(s.share_90)},
                    {"mean_pooling", json::number(s.mean_pooling)},
                    {"mean_reuse_per_unique_row_in_batch", json::number(s.mean_reuse_per_unique_row_in_batch)},
                    {"once_in_batch_fraction", json::number(s.once_in_batch_fraction)},
                    {"lookups", s.lookups},
                    {"distinct_rows", s.distinct_rows}}}};
  json::Json& tj = j["targets"];  // null for a file: it has no preset's targets
  if (targets) {
    tj["tolerance"] = json::number(targets->tolerance);
    // A target of 0 is not checked (workload.h): left out, as in the text.
    auto row = [&](const char* key, double got, double want) {
      if (want <= 0) return;
      tj[key] = {{"value", json::number(got)},
                 {"target", json::number(want)},
                 {"within_tolerance", std::fabs(got - want) / want <= targets->tolerance}};
    };
    row("share_50", s.share_50, targets->share_50);
    row("share_80", s.share_80, targets->share_80);
    row("share_90", s.share_90, targets->share_90);
    row("mean_pooling", s.mean_pooling, targets->mean_pooling);
  }
  j["file"] = file.empty() ? json::Json(nullptr) : json::Json(file);
  return printf("%s\n", json::dump(j).c_str()) < 0;
}

}  // namespace

int bench_trace(int argc, char** argv) {
  const cli::Command cmd("bench trace");
  std::string preset = "meta2022", out, stats_file;
  bool list = false, as_json = false;
  uint64_t table_bytes = 0, seed = 0, batches = 0;
  cli::Parser args(cmd, usage);
  args.text("--preset", &preset)
      .size("--table-bytes", &table_bytes, 1u << 20)
      .count("--batches", &batches, 1, 100000000)
      .count("--seed", &seed, 1, UINT64_MAX)
      .text("--stats", &stats_file)
      .flag("--list", &list)
      .flag("--json", &as_json)
      .text("-o", &out);
  if (int rc = args.parse(argc, argv, nullptr); rc >= 0) return rc;
  if (list && !as_json) {
    for (auto& p : bench::presets()) printf("%-14s %s\n", p.name, p.what);
    return 0;
  }
  if (list) {
    json::Json presets = json::Json::array();
    for (auto& p : bench::presets()) presets.push_back({{"name", p.name}, {"what", p.what}});
    return printf("%s\n", json::dump({{"presets", std::move(presets)}}).c_str()) < 0;
  }
  std::string err;
  if (!stats_file.empty()) {
    bench::Trace t;
    if (bench::read_trace(stats_file, &t, &err) < 0) return cmd.fail(err);
    if (as_json) return print_json(t, nullptr, stats_file);
    print_stats(t, nullptr);
    return 0;
  }
  const bench::Preset* found = bench::find_preset(preset);
  if (!found) return cmd.usage_error("--preset: unknown preset '" + preset + "' (--list shows them)");
  bench::WorkloadSpec spec = found->spec;
  if (table_bytes) bench::scale_to_bytes(&spec, table_bytes);
  if (batches) spec.batches = static_cast<uint32_t>(batches);
  if (seed) spec.seed = seed;
  if (bench::check_spec(spec, &err) < 0) return cmd.usage_error(err);
  bench::Trace t = bench::generate(spec);
  if (!as_json) print_stats(t, &found->targets);
  if (!out.empty()) {
    if (bench::write_trace(t, out, &err) < 0) return cmd.fail(err);
    if (!as_json)
      printf("written: %s (%llu lookups)\n", out.c_str(), static_cast<unsigned long long>(t.lookups()));
  }
  return as_json ? print_json(t, &found->targets, out) : 0;
}

}  // namespace mtier::tools
