// mtier bench trace: generates an embedding lookup trace from a preset,
// prints its statistics beside the preset's targets, and writes it to a file
// that `mtier bench replay` and `mtier bench suite --trace` replay.
#include <getopt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/options.h"
#include "locality.h"
#include "trace.h"

namespace mtier::tools {
namespace {

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench trace [--preset NAME] [OPTIONS] [-o FILE]\n"
          "       mtier bench trace --list\n"
          "       mtier bench trace --stats FILE\n\n"
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

}  // namespace

int bench_trace(int argc, char** argv) {
  enum { kPreset = 256, kTableBytes, kBatches, kSeed, kStats, kList };
  static const option longopts[] = {
      {"preset", required_argument, nullptr, kPreset}, {"table-bytes", required_argument, nullptr, kTableBytes},
      {"batches", required_argument, nullptr, kBatches}, {"seed", required_argument, nullptr, kSeed},
      {"stats", required_argument, nullptr, kStats}, {"list", no_argument, nullptr, kList},
      {"help", no_argument, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
  std::string preset = "meta2022", out, stats_file;
  uint64_t table_bytes = 0, seed = 0, batches = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "o:h", longopts, nullptr)) != -1) {
    char* end = nullptr;
    switch (c) {
      case kPreset: preset = optarg; break;
      case kTableBytes:
        if (parse_size(optarg, &table_bytes) < 0 || table_bytes < (1u << 20)) {
          fprintf(stderr, "mtier bench trace: --table-bytes '%s': want a size of at least 1M\n", optarg);
          return 2;
        }
        break;
      case kBatches:
      case kSeed: {
        uint64_t v = strtoull(optarg, &end, 10);
        if (*end || !v || (c == kBatches && v > 100000000)) {
          fprintf(stderr, "mtier bench trace: %s '%s': want a positive integer\n",
                  c == kBatches ? "--batches" : "--seed", optarg);
          return 2;
        }
        (c == kBatches ? batches : seed) = v;
        break;
      }
      case kStats: stats_file = optarg; break;
      case kList:
        for (auto& p : bench::presets()) printf("%-14s %s\n", p.name, p.what);
        return 0;
      case 'o': out = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "mtier bench trace: unexpected argument '%s' (try --help)\n", argv[optind]);
    return 2;
  }
  std::string err;
  if (!stats_file.empty()) {
    bench::Trace t;
    if (bench::read_trace(stats_file, &t, &err) < 0) {
      fprintf(stderr, "mtier bench trace: %s\n", err.c_str());
      return 1;
    }
    print_stats(t, nullptr);
    return 0;
  }
  const bench::Preset* p = bench::find_preset(preset);
  if (!p) {
    fprintf(stderr, "mtier bench trace: unknown preset '%s' (--list shows them)\n", preset.c_str());
    return 2;
  }
  bench::WorkloadSpec spec = p->spec;
  if (table_bytes) bench::scale_to_bytes(&spec, table_bytes);
  if (batches) spec.batches = static_cast<uint32_t>(batches);
  if (seed) spec.seed = seed;
  if (bench::check_spec(spec, &err) < 0) {
    fprintf(stderr, "mtier bench trace: %s\n", err.c_str());
    return 2;
  }
  bench::Trace t = bench::generate(spec);
  print_stats(t, &p->targets);
  if (!out.empty()) {
    if (bench::write_trace(t, out, &err) < 0) {
      fprintf(stderr, "mtier bench trace: %s\n", err.c_str());
      return 1;
    }
    printf("written: %s (%llu lookups)\n", out.c_str(), static_cast<unsigned long long>(t.lookups()));
  }
  return 0;
}

}  // namespace mtier::tools
