// mtier demo: the sample trainer twice over the same generated workload,
// first with every table in DRAM (malloc), then with the tables under mtier
// at a DRAM budget (default 25% of the table bytes) and a file store. Prints
// the throughput ratio, whether losses and final weights are bit-identical,
// the residency, and a heat map of every table.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "config/options.h"
#include "heatmap_text.h"
#include "mtier.h"
#include "sample_trainer.h"

namespace mtier::tools {
namespace {

struct DemoArgs {
  std::string dram = "25%";  // of table bytes
  std::string store = "/var/tmp";
  unsigned steps = 0;
  unsigned columns = 64;
};

void demo_help(FILE* out) {
  fprintf(out,
          "usage: mtier demo [--dram SIZE|PCT] [--store DIR] [--steps N] [--columns N]\n\n"
          "Trains the built-in DLRM-style sample model twice on the same generated\n"
          "workload: all tables in DRAM, then under mtier with a DRAM budget and a file\n"
          "store. Prints steps/s of both and their ratio, checks that losses and final\n"
          "weights are bit-identical, and draws a heat map of every table.\n\n"
          "  --dram SIZE|PCT  DRAM budget for the tables: bytes (64M, 1G) or a share of\n"
          "                   the table bytes (default 25%%)\n"
          "  --store DIR      directory for the file store (default /var/tmp)\n"
          "  --steps N        training steps (default 200)\n"
          "  --columns N      heat-map extents per table (default 64)\n");
}

int parse_args(int argc, char** argv, DemoArgs* a) {
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      demo_help(stdout);
      exit(0);
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "mtier demo: %s needs a value (see --help)\n", k.c_str());
      return -1;
    }
    std::string v = argv[++i];
    char* end = nullptr;
    if (k == "--dram") a->dram = v;
    else if (k == "--store") a->store = v;
    else if (k == "--steps" || k == "--columns") {
      unsigned long n = strtoul(v.c_str(), &end, 10);
      if (*end || n == 0 || n > 1000000) {
        fprintf(stderr, "mtier demo: %s: '%s' is not a count from 1 to 1000000\n", k.c_str(),
                v.c_str());
        return -1;
      }
      (k == "--steps" ? a->steps : a->columns) = static_cast<unsigned>(n);
    } else {
      fprintf(stderr, "mtier demo: unknown option '%s' (see --help)\n", k.c_str());
      return -1;
    }
  }
  return 0;
}

// Bytes of DRAM budget from "25%" (of the tables) or a size.
int budget_bytes(const std::string& text, uint64_t table_bytes, uint64_t* out) {
  if (!text.empty() && text.back() == '%') {
    char* end = nullptr;
    double pct = strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || pct <= 0 || pct > 1000) return -EINVAL;
    *out = static_cast<uint64_t>(table_bytes * pct / 100) & ~uint64_t{4095};
    return 0;
  }
  return parse_size(text, out);
}

void progress(const char* label, unsigned step, unsigned steps) {
  if (!isatty(2)) return;
  fprintf(stderr, "\r  %s: step %u/%u", label, step + 1, steps);
  if (step + 1 == steps) fprintf(stderr, "\r%60s\r", "");
}

// The heat map as text, taken right after the last training step (before
// the weights are hashed, which reads every table once).
std::string heatmap(const std::vector<int>& ids, unsigned columns) {
  bool color = isatty(1);
  std::string out;
  char line[512];
  std::vector<std::vector<mtier_extent>> maps;
  double max = 0;
  for (int id : ids) {
    std::vector<mtier_extent> ext(columns);
    int n = mtier_table_map(id, ext.data(), columns);
    ext.resize(n > 0 ? n : 0);
    for (auto& e : ext)
      if (e.bytes) max = std::max(max, e.heat / double(e.bytes));
    maps.push_back(ext);
  }
  snprintf(line, sizeof line,
           "\nheat map at the end of training (%u extents per table, table start on the left):\n",
           columns);
  out += line;
  for (size_t i = 0; i < ids.size(); i++) {
    struct mtier_table_stats st;
    if (mtier_table_stats(ids[i], &st) < 0) continue;
    out += "  " + std::string(st.name) + std::string(st.name[5] ? 1 : 9 - strlen(st.name), ' ');
    snprintf(line, sizeof line, "%7.1f MiB |", st.bytes / 1048576.0);
    out += line + heat_row(maps[i], max, color);
    snprintf(line, sizeof line, "| %5.1f%% in DRAM, %llu fetches\n",
             100.0 * st.resident_bytes / st.bytes,
             static_cast<unsigned long long>(st.fetches + st.prefetches));
    out += line;
    out += std::string(22, ' ') + "|" + residency_row(maps[i]) + "|\n";
  }
  return out + "  " + heat_legend(max, color) + "\n";
}

}  // namespace

int cmd_demo(int argc, char** argv) {
  DemoArgs args;
  if (parse_args(argc, argv, &args) < 0) return 2;
  Workload w = default_workload();
  if (args.steps) w.steps = args.steps;
  uint64_t budget = 0;
  if (budget_bytes(args.dram, w.table_bytes(), &budget) < 0 || budget < 4096) {
    fprintf(stderr, "mtier demo: --dram: '%s' is not a size (64M, 1G) or a share (25%%)\n",
            args.dram.c_str());
    return 2;
  }
  printf("mtier demo: workload: %s\n", w.describe().c_str());

  printf("[1/2] all tables in DRAM (malloc)\n");
  std::vector<void*> dram_tables;
  TrainResult base = train(
      w, [&](unsigned, uint64_t b) { return static_cast<float*>(dram_tables.emplace_back(malloc(b))); },
      [&](unsigned s) { progress("all-DRAM", s, w.steps); });
  for (void* p : dram_tables) free(p);
  printf("      %u steps in %.2f s: %.1f steps/s\n", w.steps, base.seconds, base.steps_per_second());

  std::string opts = "dram_bytes=" + std::to_string(budget) + ",store_path=" + args.store +
                     ",store_bytes=" + std::to_string(2 * w.table_bytes() + (64 << 20));
  int rc = mtier_init(opts.c_str());
  if (rc < 0) {
    fprintf(stderr, "mtier demo: cannot start mtier: %s\n", strerror(-rc));
    return 1;
  }
  char desc[512];
  mtier_describe(desc, sizeof desc);
  printf("[2/2] under mtier: DRAM budget %.1f MiB (%.0f%% of the tables)\n      %s\n",
         budget / 1048576.0, 100.0 * budget / w.table_bytes(), desc);
  std::vector<int> ids;
  std::string map_text;
  TrainResult tiered = train(
      w,
      [&](unsigned t, uint64_t b) {
        void* addr = nullptr;
        std::string name = "emb" + std::to_string(t);
        int id = mtier_table_create(name.c_str(), b, &addr);
        if (id < 0) {
          fprintf(stderr, "mtier demo: table %s: %s\n", name.c_str(), strerror(-id));
          exit(1);
        }
        ids.push_back(id);
        return static_cast<float*>(addr);
      },
      [&](unsigned s) {
        progress("mtier", s, w.steps);
        if (s + 1 == w.steps) map_text = heatmap(ids, args.columns);
      });
  printf("      %u steps in %.2f s: %.1f steps/s\n", w.steps, tiered.seconds,
         tiered.steps_per_second());

  struct mtier_stats st;
  mtier_stats(&st);
  bool same_losses = base.losses == tiered.losses;
  bool same_weights = base.weights_hash == tiered.weights_hash;
  printf("\nresults (workload above, same seed, same trace):\n");
  printf("  %-34s %9s %7s %12s %7s\n", "configuration", "steps/s", "ratio", "steady st/s",
         "ratio");
  printf("  %-34s %9.1f %7.2f %12.1f %7.2f\n", "all tables in DRAM", base.steps_per_second(), 1.0,
         base.steady_steps_per_second(), 1.0);
  char label[64];
  snprintf(label, sizeof label, "mtier, DRAM budget %.0f%% of tables", 100.0 * budget / w.table_bytes());
  printf("  %-34s %9.1f %7.2f %12.1f %7.2f\n", label, tiered.steps_per_second(),
         tiered.steps_per_second() / base.steps_per_second(), tiered.steady_steps_per_second(),
         tiered.steady_steps_per_second() / base.steady_steps_per_second());
  printf("  (steady: the second half of the steps, after the warm-up that fetches every hot page "
         "once)\n");
  printf("  losses bit-identical at all %u steps: %s; final weights hash %016llx %s\n", w.steps,
         same_losses ? "yes" : "NO", static_cast<unsigned long long>(tiered.weights_hash),
         same_weights ? "identical" : "DIFFERS");
  printf("  peak DRAM residency %.1f MiB of %.1f MiB budget; store holds %.1f MiB; "
         "over-budget placements %llu\n",
         st.peak_resident_bytes / 1048576.0, st.budget_bytes / 1048576.0,
         st.store_used_bytes / 1048576.0, static_cast<unsigned long long>(st.budget_overruns));
  fputs(map_text.c_str(), stdout);
  return same_losses && same_weights ? 0 : 1;
}

}  // namespace mtier::tools
