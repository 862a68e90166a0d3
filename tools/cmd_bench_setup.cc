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
#include "min_traffic.h"
#include "mtier.h"
#include "quantile.h"
#include "setup_patterns.h"
#include "sys/page_size.h"
#include "units.h"
#include "util/json.h"
#include "util/progress.h"

namespace mtier::tools {
namespace {

const cli::Command kCmd("bench setup");

struct Args {
  std::string pattern_name = "float64";
  setup::Pattern pattern = setup::Pattern::kFloat64;
  uint64_t table_bytes = 0;  // all tables; 0: the pattern's default
  unsigned tables = 0;       // 0: the pattern's default
  unsigned budget_pct = 25;
  unsigned runs = 3;
  unsigned timeout_s = 900;
  std::string dir = "/var/tmp";
  bool json = false;
  bool quiet = false;
};

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench setup [--pattern NAME] [--tables SIZE] [--count N] [--budget PCT%%]\n"
          "                         [--runs N] [--dir DIR] [--timeout S] [--json] [-q]\n\n"
          "A DLRM trainer's set-up with tables bigger than the DRAM budget, then every\n"
          "table read once. Two patterns:\n"
          "  float64         each of N tables (SIZE in all) initialised through a float64\n"
          "                  temporary of twice its size written front to back, read back\n"
          "                  into the float32 table, freed (default: 4 tables, 1G)\n"
          "  dlrm-reference  each table made as the public DLRM reference trainer makes it:\n"
          "                  EmbeddingBag's table written, a float64 array of twice its\n"
          "                  size written, its float32 copy, the torch tensor copied from\n"
          "                  it, the first table freed unread: 5 table sizes through the\n"
          "                  allocator per table kept (default: 8 tables, 4G)\n"
          "Runs it all in DRAM, under the kernel's swap (a memory cgroup of the budget, a\n"
          "swap file in DIR; root, else skipped with the reason) and under mtier (store\n"
          "in DIR) at PCT%% of the table bytes, interleaved, RUNS times each, and measures\n"
          "the sequential write and read bandwidth of DIR's device (4 MiB O_DIRECT) once\n"
          "per run. Prints the workload, what Belady's MIN would move for the same\n"
          "allocation and access sequence (dlrm-reference), and a row per configuration:\n"
          "median set-up and read-back seconds, bytes the device wrote and read (its\n"
          "/sys/dev/block statistics), the set-up's write rate and its ratio to the\n"
          "device's bandwidth, the set-up's CPU seconds (all threads, /proc/self/stat),\n"
          "the bytes the store wrote and read (mtier's counters; swap: /proc/vmstat),\n"
          "their ratio to MIN's, CPU microseconds per MiB moved, the ratio of set-up\n"
          "times to swap's and to all-DRAM's, and whether the tables' data matched.\n\n"
          "  --pattern NAME float64 or dlrm-reference (default float64)\n"
          "  --tables SIZE  bytes of all tables (K, M, G; at least 16M)\n"
          "  --count N      number of tables\n"
          "  --budget PCT%%  DRAM budget as a share of the table bytes, 1%% to 100%%\n"
          "                 (default 25%%)\n"
          "  --runs N       runs of each configuration (default 3)\n"
          "  --dir DIR      store and swap file directory, on the disk to measure\n"
          "                 (default /var/tmp)\n"
          "  --timeout S    seconds a run may take before it is killed (default 900)\n"
          "  --json         print one JSON object instead: \"workload\" (pattern, tables,\n"
          "                 table_bytes, budget_bytes, budget_percent, dir, runs),\n"
          "                 \"swap\" (skipped: why, or null; environment),\n"
          "                 \"device\" (write_bytes_per_second, read_bytes_per_second,\n"
          "                 null when unknown, and why), \"min\" (written_bytes,\n"
          "                 read_bytes: Belady's MIN's, null for float64),\n"
          "                 \"configurations\" (per row: name, skipped, failed (why, or\n"
          "                 null), setup_seconds, readback_seconds, written_bytes,\n"
          "                 read_bytes, write_bytes_per_second, of_device, cpu_seconds,\n"
          "                 moved_written_bytes, moved_read_bytes, vs_min,\n"
          "                 cpu_us_per_mib, vs_swap, vs_dram (null when not measured),\n"
          "                 same_data) and \"ok\" (the exit status is 0)\n"
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

// Runs the pattern and writes "setup_s readback_s checksum cpu_s
// written_pages read_pages" to fd (pages the store moved; -1 when the
// configuration does not count them). Values depend on the index only, so
// every configuration must get the same checksum.
int set_up_and_send(int fd, const Args& a, const setup::Allocator& alloc,
                    const std::function<void(int64_t*, int64_t*)>& moved) {
  setup::Result r;
  if (setup::run(a.pattern, a.tables, a.table_bytes, alloc, &r) != 0) return 1;
  int64_t w = -1, rd = -1;
  if (moved) moved(&w, &rd);
  char out[160];
  int len = snprintf(out, sizeof out, "%.3f %.3f %016llx %.3f %lld %lld", r.setup_s, r.readback_s,
                     static_cast<unsigned long long>(r.checksum), r.setup_cpu_s,
                     static_cast<long long>(w), static_cast<long long>(rd));
  return write(fd, out, static_cast<size_t>(len)) == len ? 0 : 1;
}

// ---- The device ------------------------------------------------------------

// Sectors the device under `dir` has read and written so far, or -1 (no
// block device: tmpfs, overlay on none...).
struct Sectors {
  int64_t read = -1, written = -1;
};
Sectors device_sectors(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return {};
  std::ifstream f("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                  std::to_string(minor(st.st_dev)) + "/stat");
  uint64_t v[7] = {};
  for (uint64_t& x : v)
    if (!(f >> x)) return {};
  return {static_cast<int64_t>(v[2]), static_cast<int64_t>(v[6])};
}

// Pages the kernel swapped out and in so far (/proc/vmstat), or -1.
Sectors swapped_pages() {
  std::ifstream f("/proc/vmstat");
  std::string key;
  int64_t v = 0;
  Sectors s;
  while (f >> key >> v) {
    if (key == "pswpin") s.read = v;
    if (key == "pswpout") s.written = v;
  }
  return s;
}

// MB/s of `bytes` written to a new file in dir in 4 MiB O_DIRECT writes,
// then fdatasync; -1 with *why when it cannot be measured.
double sequential_write_mbs(const std::string& dir, uint64_t bytes, std::string* why,
                            double* read_mbs) {
  std::string path = dir + "/mtier-bench-setup-" + std::to_string(getpid()) + ".bw";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
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
  // Then read it back the same way: the device's sequential read bandwidth.
  *read_mbs = -1;
  double r0 = now_s();
  uint64_t got = 0;
  while (ok && got < done) {
    ssize_t r = pread(fd, buf, kChunk, static_cast<off_t>(got));
    if (r <= 0) break;
    got += static_cast<uint64_t>(r);
  }
  if (ok && got >= done) *read_mbs = static_cast<double>(got) / 1e6 / (now_s() - r0);
  free(buf);
  close(fd);
  return ok ? static_cast<double>(done) / 1e6 / t : -1;
}

// ---- Runs ------------------------------------------------------------------

struct Sample {
  double setup_s = -1, readback_s = -1, cpu_s = -1;
  int64_t written = -1, read = -1;        // bytes the device wrote and read during the run
  int64_t moved_w = -1, moved_r = -1;     // pages the store (or swap) wrote and read
  std::string sum;
  std::string failure;
};

Sample run_config(const Args& a, bench::MemoryCgroup* cg, bool swap,
                  const std::function<int(int, demo::ChildProgress*)>& body) {
  Sample s;
  Sectors before = device_sectors(a.dir), swapped0 = swapped_pages();
  demo::ChildOutcome c = demo::run_in_child(body, cg, a.timeout_s);
  Sectors after = device_sectors(a.dir), swapped1 = swapped_pages();
  if (before.written >= 0 && after.written >= before.written)
    s.written = (after.written - before.written) * 512;
  if (before.read >= 0 && after.read >= before.read) s.read = (after.read - before.read) * 512;
  char sum[32] = "";
  long long w = -1, r = -1;
  if (!c.ok || sscanf(c.output.c_str(), "%lf %lf %31s %lf %lld %lld", &s.setup_s, &s.readback_s,
                      sum, &s.cpu_s, &w, &r) != 6) {
    s.failure = c.failure.empty() ? "no result" : c.failure;
    s.setup_s = -1;
  }
  s.moved_w = w;
  s.moved_r = r;
  if (swap && swapped0.read >= 0 && swapped1.read >= 0) {
    // The whole machine's swap traffic: only this run's while it runs alone.
    s.moved_w = swapped1.written - swapped0.written;
    s.moved_r = swapped1.read - swapped0.read;
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
  int64_t written = 0, read = 0;  // pages, of the tables freed so far
  auto count = [&](int id) {
    struct mtier_table_stats st {};
    if (mtier_table_stats(id, &st) != 0) return;
    written += static_cast<int64_t>(st.writebacks);
    read += static_cast<int64_t>(st.fetches + st.prefetches);
  };
  setup::Allocator alloc;
  alloc.alloc = [&](const char* name, uint64_t bytes) -> void* {
    void* addr = nullptr;
    int id = mtier_table_create(name, bytes, &addr);
    if (id < 0) {
      fprintf(stderr, "mtier bench setup: table %s: %s\n", name, strerror(-id));
      return nullptr;
    }
    ids[addr] = id;
    return addr;
  };
  alloc.release = [&](void* p) {
    count(ids[p]);
    (void)mtier_table_free(ids[p]);
    ids.erase(p);
  };
  return set_up_and_send(fd, a, alloc, [&](int64_t* w, int64_t* r) {
    for (auto& [addr, id] : ids) count(id);
    *w = written;
    *r = read;
  });
}

int plain_child(int fd, const Args& a) {
  setup::Allocator alloc;
  alloc.alloc = [](const char*, uint64_t bytes) { return malloc(bytes); };
  alloc.release = [](void* p) { free(p); };
  return set_up_and_send(fd, a, alloc, {});
}

// The median of v, or -1 (not measured) when v is empty.
double median_or_none(const std::vector<double>& v) { return v.empty() ? -1 : bench::median(v); }

int parse_args(int argc, char** argv, Args* a) {
  cli::Parser p(kCmd, usage);
  p.value("--pattern",
          [a](const std::string& flag, const std::string& v) {
            a->pattern_name = v;
            return setup::parse_pattern(v, &a->pattern)
                       ? std::string()
                       : cli::bad_value(flag, v, "is not a pattern (float64, dlrm-reference)");
          })
      .size("--tables", &a->table_bytes, 16u << 20)
      .count("--count", &a->tables, 1, 4096)
      .percent("--budget", &a->budget_pct, 1, 100)
      .count("--runs", &a->runs, 1, 100)
      .count("--timeout", &a->timeout_s, 1, 86400)
      .text("--dir", &a->dir)
      .flag("--json", &a->json)
      .flag("-q, --quiet", &a->quiet);
  int rc = p.parse(argc, argv, nullptr);
  // The store, the swap file and the bandwidth probe all go in --dir: a
  // missing one is said now, not after the first runs went without them.
  if (rc < 0) {
    int fd = open(a->dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return kCmd.usage_error("--dir " + a->dir + ": " + strerror(errno));
    close(fd);
  }
  const bool reference = a->pattern == setup::Pattern::kDlrmReference;
  if (a->table_bytes == 0) a->table_bytes = reference ? 4ull << 30 : 1ull << 30;
  if (a->tables == 0) a->tables = reference ? 8 : 4;
  return rc;
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
  double read = -1, cpu_s = -1;        // device bytes read, CPU seconds of the set-up
  double moved_w = -1, moved_r = -1;   // bytes the store (swap) wrote and read
  double vs_min = -1;                  // (moved_w + moved_r) over MIN's
  double cpu_us_per_mib = -1;          // set-up CPU per MiB moved
};

std::vector<Row> rows_of(const Args& a, const char* const (&names)[3],
                         std::map<std::string, std::vector<Sample>>& samples, double bw,
                         double min_bytes) {
  auto med = [&](const std::string& n, double Sample::*f) {
    std::vector<double> v;
    for (const Sample& s : samples[n])
      if (s.setup_s >= 0) v.push_back(s.*f);
    return median_or_none(v);
  };
  auto med_count = [&](const std::string& n, int64_t Sample::*f, double scale) {
    std::vector<double> v;
    for (const Sample& s : samples[n])
      if (s.setup_s >= 0 && s.*f >= 0) v.push_back(static_cast<double>(s.*f) * scale);
    return median_or_none(v);
  };
  const double page = static_cast<double>(kPageSize);
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
    r.written = med_count(r.name, &Sample::written, 1);
    r.read = med_count(r.name, &Sample::read, 1);
    r.moved_w = med_count(r.name, &Sample::moved_w, page);
    r.moved_r = med_count(r.name, &Sample::moved_r, page);
    r.cpu_s = med(r.name, &Sample::cpu_s);
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
    const double moved = r.moved_w + r.moved_r;
    if (r.moved_w >= 0 && r.moved_r >= 0 && min_bytes > 0) r.vs_min = moved / min_bytes;
    if (r.moved_w >= 0 && r.moved_r >= 0 && moved > 0 && r.cpu_s >= 0)
      r.cpu_us_per_mib = r.cpu_s * 1e6 / (moved / (1 << 20));
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
  printf("%-22s %8s %10s %9s %8s %11s %10s %6s %9s %9s %7s %9s %8s %9s\n", "configuration", "setup_s",
         "readback_s", "written", "read", "write_MB/s", "of_device", "cpu_s", "moved_w", "moved_r",
         "vs_min", "us/MiB", "vs_swap", "vs_dram same_data");
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
    char dr[16] = "?", mw[16] = "-", mr[16] = "-", vm[16] = "-", us[16] = "-", cpu[16] = "?";
    if (r.read >= 0) snprintf(dr, sizeof dr, "%.0fM", r.read / (1 << 20));
    if (r.moved_w >= 0) snprintf(mw, sizeof mw, "%.0fM", r.moved_w / (1 << 20));
    if (r.moved_r >= 0) snprintf(mr, sizeof mr, "%.0fM", r.moved_r / (1 << 20));
    if (r.vs_min >= 0) snprintf(vm, sizeof vm, "%.2f", r.vs_min);
    if (r.cpu_us_per_mib >= 0) snprintf(us, sizeof us, "%.0f", r.cpu_us_per_mib);
    if (r.cpu_s >= 0) snprintf(cpu, sizeof cpu, "%.2f", r.cpu_s);
    if (r.written >= 0) snprintf(wbuf, sizeof wbuf, "%.0fM", r.written / (1 << 20));
    if (r.rate >= 0) snprintf(rbuf, sizeof rbuf, "%.0f", r.rate);
    if (r.of_device >= 0) snprintf(obuf, sizeof obuf, "%.3f", r.of_device);
    if (r.vs_swap >= 0) snprintf(sbuf, sizeof sbuf, "%.3f", r.vs_swap);
    printf("%-22s %8.2f %10.2f %9s %8s %11s %10s %6s %9s %9s %7s %9s %8s %8.3f %9s\n",
           r.label.c_str(), r.setup_s, r.readback_s, wbuf, dr, rbuf, obuf, cpu, mw, mr, vm, us, sbuf,
           r.vs_dram, r.failed ? "failed" : r.same ? "yes" : "NO");
  }
  printf("(written, read: the device's bytes during the run, set-up and read-back; cpu_s: CPU\n"
         " seconds of the set-up, all threads, /proc/self/stat; moved_w, moved_r: pages the\n"
         " store wrote and read (mtier's counters; swap: /proc/vmstat pswpout, pswpin); vs_min:\n"
         " moved over Belady's MIN's; us/MiB: set-up CPU per MiB moved; vs_swap, vs_dram: that\n"
         " configuration's set-up time over this one's: above 1 is faster)\n");
}

// A figure, or null when not measured (< 0).
json::Json num_or_null(double v) { return v < 0 ? json::Json(nullptr) : json::number(v); }

// `s`, or null when empty.
json::Json str_or_null(const std::string& s) { return s.empty() ? json::Json(nullptr) : json::Json(s); }

// What Belady's MIN would move for the pattern at this budget.
struct MinMoved {
  double written = -1, read = -1;  // bytes; -1: not computed
  double total() const { return written < 0 ? -1 : written + read; }
};

MinMoved min_moved(const Args& a, uint64_t budget) {
  const uint64_t page = static_cast<uint64_t>(kPageSize);
  if (a.pattern != setup::Pattern::kDlrmReference) return {};
  std::vector<bench::PageRef> refs =
      bench::dlrm_reference_refs(a.tables, a.table_bytes / a.tables, page);
  bench::Traffic t = bench::min_traffic(refs, std::max<uint64_t>(1, budget / page));
  return {static_cast<double>(t.writes * page), static_cast<double>(t.reads * page)};
}

void print_json(const Args& a, uint64_t budget, const demo::SwapBaseline& sb, double bw,
                double read_bw, const MinMoved& mm, const std::string& bw_why,
                const std::vector<Row>& rows) {
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
                              {"read_bytes", num_or_null(r.read)},
                              {"cpu_seconds", num_or_null(r.cpu_s)},
                              {"moved_written_bytes", num_or_null(r.moved_w)},
                              {"moved_read_bytes", num_or_null(r.moved_r)},
                              {"vs_min", num_or_null(r.vs_min)},
                              {"cpu_us_per_mib", num_or_null(r.cpu_us_per_mib)},
                              {"same_data", !r.skipped && r.failure.empty() && !r.failed && r.same}});
  bool swap_ran = sb.skipped().empty();
  json::Json j = {
      {"workload",
       {{"pattern", a.pattern_name},
        {"tables", a.tables},
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
        {"read_bytes_per_second", num_or_null(read_bw > 0 ? read_bw * 1e6 : -1)},
        {"why", bw > 0 ? json::Json(nullptr) : json::Json(bw_why)}}},
      {"min", {{"written_bytes", num_or_null(mm.written)}, {"read_bytes", num_or_null(mm.read)}}},
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
  const bool reference = a.pattern == setup::Pattern::kDlrmReference;
  // The tables, the temporaries alive at once (float64: 2 tables' worth;
  // dlrm-reference: A, B, C, the previous C: 5) and room to spare.
  sb.prepare_file(a.dir + "/mtier-bench-setup-" + std::to_string(getpid()) + ".swap",
                  a.table_bytes + (reference ? 5 : 2) * per + (256ull << 20));
  const MinMoved mm = min_moved(a, budget);
  if (!a.json) {
    if (reference)
      printf("workload: DLRM reference set-up: %u tables, %s in all, each made as the public\n"
             "  DLRM reference trainer makes it: EmbeddingBag's table A written, a float64 array B\n"
             "  of twice its size written, its float32 copy C written while B is read (B freed,\n"
             "  the previous C freed), the final table D copied from C, A freed unread; then\n"
             "  every table read once; %s through the allocator; DRAM budget %s (%u%% of the\n"
             "  tables); store and swap in %s; %u runs each, medians\n",
             a.tables, mib(a.table_bytes).c_str(), mib(5 * a.table_bytes).c_str(),
             mib(budget).c_str(), a.budget_pct, a.dir.c_str(), a.runs);
    else
      printf("workload: DLRM set-up: %u tables, %s in all, each initialised through a float64\n"
             "  temporary of twice its size (written front to back, read into the float32 table,\n"
             "  freed), then every table read once; the program writes %s; DRAM budget %s\n"
             "  (%u%% of the tables); store and swap in %s; %u runs each, medians\n",
             a.tables, mib(a.table_bytes).c_str(), mib(3 * a.table_bytes).c_str(),
             mib(budget).c_str(), a.budget_pct, a.dir.c_str(), a.runs);
    if (mm.written >= 0)
      printf("oracle: Belady's MIN at the budget writes %s and reads %s (set-up and read-back)\n",
             mib(static_cast<uint64_t>(mm.written)).c_str(), mib(static_cast<uint64_t>(mm.read)).c_str());
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
  std::vector<double> bandwidth, read_bandwidth;
  std::string bw_why;
  for (unsigned run = 0; run < a.runs && !demo::interrupted(); run++) {
    double rbw = -1;
    double bw = sequential_write_mbs(a.dir, std::min<uint64_t>(a.table_bytes, 1ull << 30), &bw_why,
                                     &rbw);
    if (bw > 0) bandwidth.push_back(bw);
    if (rbw > 0) read_bandwidth.push_back(rbw);
    for (const char* name : names) {
      if (demo::interrupted()) break;
      std::string n = name;
      if (n == "swap" && !sb.skipped().empty()) continue;
      pr.line("mtier bench setup: run " + std::to_string(run + 1) + "/" + std::to_string(a.runs) +
              ": " + name + "...");
      Sample s;
      if (n == "dram") {
        s = run_config(a, nullptr, false,
                       [&](int fd, demo::ChildProgress*) { return plain_child(fd, a); });
      } else if (n == "swap") {
        bench::MemoryCgroup cg;
        std::string why;
        if (sb.make_cgroup("setup", budget + (16ull << 20), &cg, &why) < 0) {
          s.failure = "the cgroup: " + why;
        } else {
          s = run_config(a, &cg, true,
                         [&](int fd, demo::ChildProgress*) { return plain_child(fd, a); });
          (void)cg.destroy(&why);
        }
      } else {
        s = run_config(a, nullptr, false,
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

  double bw = median_or_none(bandwidth), rbw = median_or_none(read_bandwidth);
  std::vector<Row> rows = rows_of(a, names, samples, bw, mm.total());
  if (a.json) {
    print_json(a, budget, sb, bw, rbw, mm, bw_why, rows);
    return status_of(rows);
  }
  if (bw > 0)
    printf("device: sequential write %.0f MB/s, read %.0f MB/s (4 MiB O_DIRECT, fdatasync; median)\n",
           bw, rbw);
  else printf("device: sequential write bandwidth unknown: %s\n", bw_why.c_str());
  print_rows(rows);
  return status_of(rows);
}

}  // namespace mtier::tools
