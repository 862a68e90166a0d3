// SPDX-License-Identifier: Apache-2.0
// mtier bench setup: a DLRM trainer's set-up - each table initialised the
// usual way: a float64 temporary written front to back, read back into the
// float32 table, freed - with tables bigger than the DRAM budget, run all in
// DRAM, under the kernel's swap in a memory cgroup of the budget, and under
// mtier at that budget, beside the device's own sequential write bandwidth
// measured in the same run. What it answers: does a set-up under mtier
// write at disk bandwidth, and is it at least as fast as the kernel's swap?
// Each configuration runs in a child of its own (demo_child.h), interleaved,
// --runs times; the table (or, with --json, one JSON object) gives medians.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/options.h"
#include "cli.h"
#include "demo_child.h"
#include "demo_swap.h"
#include "mtier.h"
#include "quantile.h"
#include "sys/page_size.h"
#include "units.h"
#include "util/json.h"
#include "util/progress.h"

namespace mtier::tools {
namespace {

const cli::Command kCmd("bench setup");

struct Args {
  uint64_t table_bytes = 1ull << 30;  // all tables
  unsigned tables = 4;
  unsigned budget_pct = 25;
  unsigned runs = 3;
  unsigned timeout_s = 900;
  std::string dir = "/var/tmp";
  bool json = false;
  bool quiet = false;
};

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench setup [--tables SIZE] [--count N] [--budget PCT%%] [--runs N]\n"
          "                         [--dir DIR] [--timeout S] [--json] [-q]\n\n"
          "A DLRM trainer's set-up with tables bigger than the DRAM budget: each of N\n"
          "tables (SIZE in all) is initialised the usual way - a float64 temporary of\n"
          "twice its size written front to back, read back into the float32 table,\n"
          "freed - then every table is read once. Runs it all in DRAM, under the\n"
          "kernel's swap (a memory cgroup of the budget, a swap file in DIR; root, else\n"
          "skipped with the reason) and under mtier (store in DIR) at PCT%% of the table\n"
          "bytes, interleaved, RUNS times each, and measures the sequential write\n"
          "bandwidth of DIR's device (4 MiB O_DIRECT writes) once per run. Prints the\n"
          "workload and a row per configuration: median set-up and read-back seconds,\n"
          "bytes the device wrote (from its /sys/dev/block statistics), the set-up's\n"
          "write rate and its ratio to the device's bandwidth, the ratio of set-up\n"
          "times to swap's, and whether the tables' data matched.\n\n"
          "  --tables SIZE  bytes of all tables (K, M, G; default 1G)\n"
          "  --count N      number of tables (default 4)\n"
          "  --budget PCT%%  DRAM budget as a share of the table bytes, 1%% to 100%%\n"
          "                 (default 25%%)\n"
          "  --runs N       runs of each configuration (default 3)\n"
          "  --dir DIR      store and swap file directory, on the disk to measure\n"
          "                 (default /var/tmp)\n"
          "  --timeout S    seconds a run may take before it is killed (default 900)\n"
          "  --json         print one JSON object instead: \"workload\" (tables,\n"
          "                 table_bytes, budget_bytes, budget_percent, dir, runs),\n"
          "                 \"swap\" (skipped: why, or null; environment),\n"
          "                 \"device\" (write_bytes_per_second, null when unknown,\n"
          "                 and why), \"configurations\" (per row: name, skipped,\n"
          "                 failed (why, or null), setup_seconds, readback_seconds,\n"
          "                 written_bytes, write_bytes_per_second, of_device, vs_swap,\n"
          "                 vs_dram (null when not measured), same_data) and \"ok\"\n"
          "                 (the exit status is 0)\n"
          "  -q, --quiet    no progress on stderr (otherwise a line per run; and when\n"
          "                 stderr is a terminal, the runs done of all and the time left)\n"
          "  -h, --help     this text\n\n"
          "Exit status: 0, 1 when a run failed or the data differed, 2 for a usage error.\n");
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

using bench::mib;

// ---- The set-up, in the child --------------------------------------------

using Alloc = std::function<void*(const char* name, uint64_t bytes)>;
using Free = std::function<void(void*)>;

// Writes "setup_s readback_s checksum" to fd. Values depend on the index
// only, so every configuration must get the same checksum.
int set_up_and_send(int fd, const Args& a, const Alloc& alloc, const Free& release) {
  const uint64_t per = a.table_bytes / a.tables / 4 * 4, n = per / 4;
  std::vector<float*> tables;
  double t0 = now_s();
  for (unsigned t = 0; t < a.tables; t++) {
    std::string tmp_name = "init" + std::to_string(t), name = "emb" + std::to_string(t);
    auto* tmp = static_cast<double*>(alloc(tmp_name.c_str(), n * sizeof(double)));
    if (!tmp) return 1;
    for (uint64_t k = 0; k < n; k++)
      tmp[k] = static_cast<double>((k * 2654435761u + t) % 1000) / 1000.0;
    auto* table = static_cast<float*>(alloc(name.c_str(), per));
    if (!table) return 1;
    for (uint64_t k = 0; k < n; k++) table[k] = static_cast<float>(tmp[k]);
    release(tmp);
    tables.push_back(table);
  }
  double t1 = now_s();
  uint64_t sum = 0;
  for (float* table : tables)
    for (uint64_t k = 0; k < n; k++) sum = sum * 31 + static_cast<uint64_t>(table[k] * 1000.0f);
  double t2 = now_s();
  char out[128];
  int len = snprintf(out, sizeof out, "%.3f %.3f %016llx", t1 - t0, t2 - t1,
                     static_cast<unsigned long long>(sum));
  return write(fd, out, static_cast<size_t>(len)) == len ? 0 : 1;
}

// ---- The device ------------------------------------------------------------

// Sectors the device under `dir` has written, or -1 (no block device:
// tmpfs, overlay on none...).
int64_t sectors_written(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return -1;
  std::ifstream f("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                  std::to_string(minor(st.st_dev)) + "/stat");
  uint64_t v[7] = {};
  for (uint64_t& x : v)
    if (!(f >> x)) return -1;
  return static_cast<int64_t>(v[6]);
}

// MB/s of `bytes` written to a new file in dir in 4 MiB O_DIRECT writes,
// then fdatasync; -1 with *why when it cannot be measured.
double sequential_write_mbs(const std::string& dir, uint64_t bytes, std::string* why) {
  std::string path = dir + "/mtier-bench-setup-" + std::to_string(getpid()) + ".bw";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = path + ": " + strerror(errno);
    return -1;
  }
  unlink(path.c_str());
  constexpr size_t kChunk = 4 << 20;
  void* buf = nullptr;
  if (posix_memalign(&buf, kPageSize, kChunk) != 0) {
    close(fd);
    *why = "out of memory";
    return -1;
  }
  memset(buf, 0x5a, kChunk);
  double t0 = now_s();
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t w = pwrite(fd, buf, kChunk, static_cast<off_t>(done));
    if (w <= 0) break;
    done += static_cast<uint64_t>(w);
  }
  bool ok = done >= bytes && fdatasync(fd) == 0;
  double t = now_s() - t0;
  if (!ok) *why = std::string("writing the probe file: ") + strerror(errno);
  free(buf);
  close(fd);
  return ok ? static_cast<double>(done) / 1e6 / t : -1;
}

// ---- Runs ------------------------------------------------------------------

struct Sample {
  double setup_s = -1, readback_s = -1;
  int64_t written = -1;  // bytes the device wrote during the run
  std::string sum;
  std::string failure;
};

Sample run_config(const Args& a, bench::MemoryCgroup* cg,
                  const std::function<int(int, demo::ChildProgress*)>& body) {
  Sample s;
  int64_t before = sectors_written(a.dir);
  demo::ChildOutcome c = demo::run_in_child(body, cg, a.timeout_s);
  int64_t after = sectors_written(a.dir);
  if (before >= 0 && after >= before) s.written = (after - before) * 512;
  char sum[32] = "";
  if (!c.ok || sscanf(c.output.c_str(), "%lf %lf %31s", &s.setup_s, &s.readback_s, sum) != 3) {
    s.failure = c.failure.empty() ? "no result" : c.failure;
    s.setup_s = -1;
  }
  s.sum = sum;
  return s;
}

int mtier_child(int fd, const Args& a, uint64_t budget) {
  std::string opts = "dram_bytes=" + std::to_string(budget) + ",store_path=" + a.dir +
                     ",store_bytes=" + std::to_string(4 * a.table_bytes + (64 << 20));
  if (int rc = mtier_init(opts.c_str()); rc < 0) {
    fprintf(stderr, "mtier bench setup: cannot start mtier: %s\n", strerror(-rc));
    return 1;
  }
  std::map<void*, int> ids;
  auto alloc = [&](const char* name, uint64_t bytes) -> void* {
    void* addr = nullptr;
    int id = mtier_table_create(name, bytes, &addr);
    if (id < 0) {
      fprintf(stderr, "mtier bench setup: table %s: %s\n", name, strerror(-id));
      return nullptr;
    }
    ids[addr] = id;
    return addr;
  };
  auto release = [&](void* p) { (void)mtier_table_free(ids[p]); };
  return set_up_and_send(fd, a, alloc, release);
}

int plain_child(int fd, const Args& a) {
  auto alloc = [](const char*, uint64_t bytes) { return malloc(bytes); };
  auto release = [](void* p) { free(p); };
  return set_up_and_send(fd, a, alloc, release);
}

// The median of v, or -1 (not measured) when v is empty.
double median_or_none(const std::vector<double>& v) { return v.empty() ? -1 : bench::median(v); }

int parse_args(int argc, char** argv, Args* a) {
  cli::Parser p(kCmd, usage);
  p.size("--tables", &a->table_bytes, 16u << 20)
      .count("--count", &a->tables, 1, 4096)
      .percent("--budget", &a->budget_pct, 1, 100)
      .count("--runs", &a->runs, 1, 100)
      .count("--timeout", &a->timeout_s, 1, 86400)
      .text("--dir", &a->dir)
      .flag("--json", &a->json)
      .flag("-q, --quiet", &a->quiet);
  return p.parse(argc, argv, nullptr);
}

// One configuration's row of the report: medians over its runs that
// completed; -1 where not measured.
struct Row {
  std::string name, label;
  bool skipped = false;       // never run (swap without root, ...)
  std::string failure;        // every run failed: the first one's reason
  bool failed = false;        // some run failed
  bool same = true;           // every completed run left dram's data
  double setup_s = -1, readback_s = -1, written = -1, rate = -1, of_device = -1;
  double vs_swap = -1, vs_dram = -1;
};

std::vector<Row> rows_of(const Args& a, const char* const (&names)[3],
                         std::map<std::string, std::vector<Sample>>& samples, double bw) {
  auto med = [&](const std::string& n, double Sample::*f) {
    std::vector<double> v;
    for (const Sample& s : samples[n])
      if (s.setup_s >= 0) v.push_back(s.*f);
    return median_or_none(v);
  };
  auto written = [&](const std::string& n) {
    std::vector<double> v;
    for (const Sample& s : samples[n])
      if (s.setup_s >= 0 && s.written >= 0) v.push_back(static_cast<double>(s.written));
    return median_or_none(v);
  };
  const std::string want = samples["dram"].empty() ? "" : samples["dram"][0].sum;
  double swap_setup = med("swap", &Sample::setup_s), dram_setup = med("dram", &Sample::setup_s);
  std::vector<Row> rows;
  for (const char* name : names) {
    Row r;
    r.name = name;
    r.label = r.name == "dram" ? "dram (all in DRAM)" : r.name + " " + std::to_string(a.budget_pct) + "%";
    if (samples[r.name].empty()) {
      r.skipped = true;
      rows.push_back(r);
      continue;
    }
    r.setup_s = med(r.name, &Sample::setup_s);
    r.readback_s = med(r.name, &Sample::readback_s);
    r.written = written(r.name);
    for (const Sample& s : samples[r.name]) {
      r.failed |= s.setup_s < 0;
      r.same &= s.setup_s < 0 || s.sum == want;
    }
    if (r.setup_s < 0) {
      r.failure = samples[r.name][0].failure;
      rows.push_back(r);
      continue;
    }
    r.rate = r.written >= 0 ? r.written / 1e6 / r.setup_s : -1;
    if (r.rate >= 0 && bw > 0 && r.name != "dram") r.of_device = r.rate / bw;
    if (swap_setup > 0) r.vs_swap = swap_setup / r.setup_s;
    if (dram_setup > 0) r.vs_dram = dram_setup / r.setup_s;
    rows.push_back(r);
  }
  return rows;
}

// 0 when every configuration that ran completed with dram's data, else 1.
int status_of(const std::vector<Row>& rows) {
  int rc = 0;
  for (const Row& r : rows)
    if (!r.skipped) rc |= !r.failure.empty() || r.failed || !r.same;
  return rc;
}

void print_rows(const std::vector<Row>& rows) {
  printf("%-22s %8s %10s %9s %11s %10s %9s %8s %9s\n", "configuration", "setup_s", "readback_s",
         "written", "write_MB/s", "of_device", "vs_swap", "vs_dram", "same_data");
  for (const Row& r : rows) {
    if (r.skipped) {
      printf("%-22s skipped\n", r.label.c_str());
      continue;
    }
    if (!r.failure.empty()) {
      printf("%-22s failed: %s\n", r.label.c_str(), r.failure.c_str());
      continue;
    }
    char wbuf[16] = "?", rbuf[16] = "?", obuf[16] = "-", sbuf[16] = "-";
    if (r.written >= 0) snprintf(wbuf, sizeof wbuf, "%.0fM", r.written / (1 << 20));
    if (r.rate >= 0) snprintf(rbuf, sizeof rbuf, "%.0f", r.rate);
    if (r.of_device >= 0) snprintf(obuf, sizeof obuf, "%.3f", r.of_device);
    if (r.vs_swap >= 0) snprintf(sbuf, sizeof sbuf, "%.3f", r.vs_swap);
    printf("%-22s %8.2f %10.2f %9s %11s %10s %9s %8.3f %9s\n", r.label.c_str(), r.setup_s,
           r.readback_s, wbuf, rbuf, obuf, sbuf, r.vs_dram, r.failed ? "failed" : r.same ? "yes" : "NO");
  }
  printf("(vs_swap, vs_dram: that configuration's set-up time over this one's: above 1 is faster)\n");
}

// A figure, or null when not measured (< 0).
json::Json num_or_null(double v) { return v < 0 ? json::Json(nullptr) : json::number(v); }

// `s`, or null when empty.
json::Json str_or_null(const std::string& s) { return s.empty() ? json::Json(nullptr) : json::Json(s); }

void print_json(const Args& a, uint64_t budget, const demo::SwapBaseline& sb, double bw,
                const std::string& bw_why, const std::vector<Row>& rows) {
  json::Json configurations = json::Json::array();
  for (const Row& r : rows)
    configurations.push_back({{"name", r.name},
                              {"skipped", r.skipped},
                              {"failed", str_or_null(r.failure)},
                              {"setup_seconds", num_or_null(r.setup_s)},
                              {"readback_seconds", num_or_null(r.readback_s)},
                              {"written_bytes", num_or_null(r.written)},
                              {"write_bytes_per_second", num_or_null(r.rate < 0 ? -1 : r.rate * 1e6)},
                              {"of_device", num_or_null(r.of_device)},
                              {"vs_swap", num_or_null(r.vs_swap)},
                              {"vs_dram", num_or_null(r.vs_dram)},
                              {"same_data", !r.skipped && r.failure.empty() && !r.failed && r.same}});
  bool swap_ran = sb.skipped().empty();
  json::Json j = {
      {"workload",
       {{"tables", a.tables},
        {"table_bytes", a.table_bytes},
        {"budget_bytes", budget},
        {"budget_percent", a.budget_pct},
        {"dir", a.dir},
        {"runs", a.runs}}},
      {"swap",
       {{"skipped", str_or_null(sb.skipped())},
        {"environment", swap_ran ? json::Json(sb.environment()) : json::Json(nullptr)}}},
      {"device",
       {{"write_bytes_per_second", num_or_null(bw > 0 ? bw * 1e6 : -1)},
        {"why", bw > 0 ? json::Json(nullptr) : json::Json(bw_why)}}},
      {"configurations", std::move(configurations)},
      {"ok", status_of(rows) == 0}};
  printf("%s\n", json::dump(j).c_str());
}

}  // namespace

int bench_setup(int argc, char** argv) {
  Args a;
  if (int rc = parse_args(argc, argv, &a); rc >= 0) return rc;
  const uint64_t budget = a.table_bytes * a.budget_pct / 100;
  const uint64_t per = a.table_bytes / a.tables;
  demo::catch_interrupts();
  demo::SwapBaseline sb;
  // The tables, one temporary and room to spare.
  sb.prepare_file(a.dir + "/mtier-bench-setup-" + std::to_string(getpid()) + ".swap",
                  a.table_bytes + 2 * per + (256ull << 20));
  if (!a.json) {
    printf("workload: DLRM set-up: %u tables, %s in all, each initialised through a float64\n"
           "  temporary of twice its size (written front to back, read into the float32 table,\n"
           "  freed), then every table read once; the program writes %s; DRAM budget %s\n"
           "  (%u%% of the tables); store and swap in %s; %u runs each, medians\n",
           a.tables, mib(a.table_bytes).c_str(), mib(3 * a.table_bytes).c_str(), mib(budget).c_str(),
           a.budget_pct, a.dir.c_str(), a.runs);
    if (!sb.skipped().empty()) printf("swap: skipped: %s\n", sb.skipped().c_str());
    else printf("swap: %s\n", sb.environment().c_str());
    fflush(stdout);
  }

  const char* const names[] = {"dram", "swap", "mtier"};
  // Lines per run on stderr (unless -q); on a terminal a live line under
  // them: the runs done of all, the time left.
  progress::Progress pr(progress::stderr_io(), a.quiet);
  const unsigned per_round = sb.skipped().empty() ? 3 : 2;
  unsigned done = 0;
  pr.start("mtier bench setup: runs", a.runs * per_round, "");
  std::map<std::string, std::vector<Sample>> samples;
  std::vector<double> bandwidth;
  std::string bw_why;
  for (unsigned run = 0; run < a.runs && !demo::interrupted(); run++) {
    double bw = sequential_write_mbs(a.dir, std::min<uint64_t>(a.table_bytes, 1ull << 30), &bw_why);
    if (bw > 0) bandwidth.push_back(bw);
    for (const char* name : names) {
      if (demo::interrupted()) break;
      std::string n = name;
      if (n == "swap" && !sb.skipped().empty()) continue;
      pr.line("mtier bench setup: run " + std::to_string(run + 1) + "/" + std::to_string(a.runs) +
              ": " + name + "...");
      Sample s;
      if (n == "dram") {
        s = run_config(a, nullptr, [&](int fd, demo::ChildProgress*) { return plain_child(fd, a); });
      } else if (n == "swap") {
        bench::MemoryCgroup cg;
        std::string why;
        if (sb.make_cgroup("setup", budget + (16ull << 20), &cg, &why) < 0) {
          s.failure = "the cgroup: " + why;
        } else {
          s = run_config(a, &cg, [&](int fd, demo::ChildProgress*) { return plain_child(fd, a); });
          (void)cg.destroy(&why);
        }
      } else {
        s = run_config(a, nullptr,
                       [&](int fd, demo::ChildProgress*) { return mtier_child(fd, a, budget); });
      }
      pr.update(++done);
      if (!s.failure.empty()) pr.line("mtier bench setup: " + n + " failed: " + s.failure);
      samples[n].push_back(s);
    }
  }
  pr.clear();
  std::string why;
  (void)sb.teardown(&why);

  double bw = median_or_none(bandwidth);
  std::vector<Row> rows = rows_of(a, names, samples, bw);
  if (a.json) {
    print_json(a, budget, sb, bw, bw_why, rows);
    return status_of(rows);
  }
  if (bw > 0) printf("device: sequential write %.0f MB/s (4 MiB O_DIRECT writes, fdatasync; median)\n", bw);
  else printf("device: sequential write bandwidth unknown: %s\n", bw_why.c_str());
  print_rows(rows);
  return status_of(rows);
}

}  // namespace mtier::tools
