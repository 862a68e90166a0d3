// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: running the configurations (see bench_suite.h).
#include "bench_suite.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <functional>
#include <memory>

#include "cgroup.h"
#include "locality.h"
#include "quantile.h"
#include "swap_file.h"
#include "sys/page_size.h"
#include "units.h"
#include "util/progress.h"

namespace mtier::tools::suite {
namespace {

constexpr uint64_t kPage = kPageSize;

// SIGINT, SIGTERM, SIGHUP: the run in progress is killed and the suite
// tears down its swap file, cgroups and scratch files before it exits.
volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

using bench::median;
using bench::mib;

std::string machine_line(const std::string& dir) {
  std::string cpu = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / (1ull << 30);
  utsname u{};
  uname(&u);
  struct statfs fs {};
  std::string fstype = "?";
  if (statfs(dir.c_str(), &fs) == 0) {
    switch (static_cast<unsigned long>(fs.f_type)) {
      case 0xEF53: fstype = "ext4"; break;
      case 0x58465342: fstype = "xfs"; break;
      case 0x01021994: fstype = "tmpfs"; break;
      case 0x794c7630: fstype = "overlayfs"; break;
      case 0x9123683E: fstype = "btrfs"; break;
      default: {
        char b[32];
        snprintf(b, sizeof b, "fs type 0x%lx", static_cast<unsigned long>(fs.f_type));
        fstype = b;
      }
    }
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s, %ld CPUs, %.1f GiB RAM, Linux %s; store, page-cache file and swap file in %s (%s)",
           cpu.c_str(), cpus, ram, u.release, dir.c_str(), fstype.c_str());
  return buf;
}

// The whole context every configuration shares.
struct Context {
  explicit Context(const SuiteOptions& opts) : o(opts) {}
  const SuiteOptions& o;
  std::string trace_path;
  uint64_t table_bytes = 0;
  uint64_t trace_bytes = 0;
  bench::CgroupSupport cg;
  bench::SwapFile swap;
  std::string work;          // scratch directory for this run
  unsigned seq = 0;
  uint64_t batches = 0, lookups = 0;  // what every run must replay
  std::function<void()> tick;         // called about every second while a run goes on
};

std::vector<std::string> child_args(Context& c, Config cfg, unsigned lookahead, uint64_t budget,
                                    std::string* file) {
  std::vector<std::string> a{c.o.self, "bench", "replay", "--trace", c.trace_path, "--threads",
                             std::to_string(c.o.threads)};
  if (lookahead) a.insert(a.end(), {"--lookahead", std::to_string(lookahead)});
  switch (cfg) {
    case Config::kDram: a.insert(a.end(), {"--backing", "malloc"}); break;
    case Config::kMtier:
    case Config::kMtierPmem: {
      // A directory: the store's file is unlinked as soon as it is made, so
      // nothing is left behind by a run that is killed. With PMem, the PMem
      // store comes first and the file store takes what it cannot.
      std::string opts = "dram_bytes=" + std::to_string(budget) + ",store_path=" + c.work +
                         ",store_bytes=" + std::to_string(c.table_bytes + (64ull << 20));
      if (cfg == Config::kMtierPmem)
        opts += ",pmem_path=" + c.o.pmem + ",pmem_bytes=" + std::to_string(c.table_bytes + (64ull << 20));
      if (!c.o.mtier_options.empty()) opts += "," + c.o.mtier_options;
      a.insert(a.end(), {"--backing", "mtier", "--mtier", opts});
      if (lookahead && !c.o.lookahead_sync) a.push_back("--lookahead-async");
      break;
    }
    case Config::kPageCache:
    case Config::kPageCacheRandom:
      *file = c.work + "/tables-" + std::to_string(c.seq);
      a.insert(a.end(), {"--backing", "file", "--file", *file});
      if (cfg == Config::kPageCacheRandom) a.push_back("--madv-random");
      break;
    case Config::kSwap: a.insert(a.end(), {"--backing", "anon"}); break;
  }
  return a;
}

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// Runs one configuration in a child process (inside `cg` when given) and
// collects its result line; kills it after the timeout.
Run run_child(Context& c, Config cfg, unsigned lookahead, uint64_t budget, bench::MemoryCgroup* cg) {
  Run run;
  c.seq++;
  std::string file;
  std::vector<std::string> args = child_args(c, cfg, lookahead, budget, &file);
  int out[2] = {-1, -1}, errp[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {out[0], out[1], errp[0], errp[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
    run.failure = std::string("pipe: ") + strerror(errno);
    close_all();
    return run;
  }
  pid_t pid = fork();
  if (pid < 0) {
    run.failure = std::string("fork: ") + strerror(errno);
    close_all();
    return run;
  }
  if (pid == 0) {
    std::string why;
    if (cg && cg->add_pid(getpid(), &why) < 0) {
      dprintf(errp[1], "joining the cgroup: %s\n", why.c_str());
      _exit(1);
    }
    dup2(out[1], 1);
    dup2(errp[1], 2);
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(errp[1]);
  std::string so, se;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(c.o.timeout_s);
  bool timed_out = false, interrupted = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || g_interrupted) {
      (left <= 0 ? timed_out : interrupted) = true;
      kill(pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (c.tick) c.tick();
    if (n < 0 && errno != EINTR) {
      run.failure = std::string("poll: ") + strerror(errno);
      kill(pid, SIGKILL);
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      } else {
        (i ? se : so).append(buf, static_cast<size_t>(got));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!file.empty()) unlink(file.c_str());  // the child removes it unless killed
  if (!run.failure.empty()) {
    // poll failed; the child was killed
  } else if (interrupted) {
    run.failure = "interrupted";
  } else if (timed_out) {
    run.failure = "timed out after " + std::to_string(c.o.timeout_s) + " s";
  } else if (WIFSIGNALED(status)) {
    bool oom = WTERMSIG(status) == SIGKILL && cg && cg->oom_kills() > 0;
    run.failure = oom ? "OOM-killed in its cgroup" : std::string("killed by ") + strsignal(WTERMSIG(status));
  } else if (WEXITSTATUS(status) != 0) {
    run.failure = "exit " + std::to_string(WEXITSTATUS(status)) + ": " + last_line(se);
  } else {
    size_t at = so.rfind("result ");
    std::string line = at == std::string::npos ? "" : so.substr(at + 7, so.find('\n', at) - at - 7);
    if (line.empty() || !bench::parse_result(line, &run.result))
      run.failure = "no result line in the replayer's output";
    else if (run.result.batches != c.batches || run.result.lookups != c.lookups)
      run.failure = "replayed " + std::to_string(run.result.batches) + " of " + std::to_string(c.batches) +
                    " batches, " + std::to_string(run.result.lookups) + " of " + std::to_string(c.lookups) +
                    " lookups";
    else
      run.ok = true;
  }
  return run;
}

void summarise(Cell* cell, uint64_t references, const DeviceSpeed& device) {
  std::vector<double> lps, p99, hit, rd, wr, secs, miss, dev, over;
  for (auto& run : cell->runs) {
    if (!run.ok) continue;
    const auto& r = run.result;
    lps.push_back(r.lookups_per_second());
    p99.push_back(r.p99_ms);
    uint64_t misses = 0, read = 0, written = 0;
    switch (cell->config) {
      case Config::kDram: break;
      case Config::kMtier:
      case Config::kMtierPmem:
        misses = r.mtier_misses;
        read = r.mtier_fetched_pages * kPage;
        written = r.mtier_written_pages * kPage;
        break;
      case Config::kPageCache:
      case Config::kPageCacheRandom:
        misses = r.major_faults;
        read = r.read_bytes;
        written = r.write_bytes;
        break;
      case Config::kSwap:
        misses = r.major_faults;
        read = r.swap_in_pages * kPage;
        written = r.swap_out_pages * kPage;
        break;
    }
    if (references) hit.push_back(1.0 - static_cast<double>(std::min(misses, references)) / references);
    rd.push_back(static_cast<double>(read));
    wr.push_back(static_cast<double>(written));
    secs.push_back(r.seconds);
    if (cell->config == Config::kDram) continue;
    // Reads below DRAM, whatever caused them (a fault, readahead, a hint):
    // what the device had to serve, and what MIN's misses bound.
    miss.push_back(static_cast<double>(read / kPage));
    double bound = device.bound_seconds(read / kPage, written / kPage);
    if (bound > 0) {
      dev.push_back(bound);
      over.push_back(r.seconds / bound);
    }
  }
  cell->lookups_per_second = median(lps);
  cell->p99_ms = median(p99);
  cell->hit_ratio = hit.empty() || cell->config == Config::kDram ? -1 : median(hit);
  cell->read_bytes = median(rd);
  cell->written_bytes = median(wr);
  cell->seconds = median(secs);
  cell->misses = miss.empty() ? -1 : median(miss);
  cell->device_seconds = dev.empty() ? -1 : median(dev);
  cell->over_device = over.empty() ? -1 : median(over);
}

int prepare_trace(const SuiteOptions& o, Context* c, SuiteResults* r, bench::Trace* t,
                  std::string* err) {
  if (!o.trace_file.empty()) {
    if (bench::read_trace(o.trace_file, t, err) < 0) return -1;  // err names the file
    c->trace_path = o.trace_file;
  } else {
    const bench::Preset* p = bench::find_preset(o.preset);
    if (!p) {
      *err = "unknown preset '" + o.preset + "' (mtier bench trace --list shows them)";
      return -1;
    }
    bench::WorkloadSpec spec = p->spec;
    if (o.table_bytes) bench::scale_to_bytes(&spec, o.table_bytes);
    if (o.batches) spec.batches = o.batches;
    if (o.seed) spec.seed = o.seed;
    if (bench::check_spec(spec, err) < 0) return -1;
    *t = bench::generate(spec);
    c->trace_path = c->work + "/trace";
    if (bench::write_trace(*t, c->trace_path, err) < 0) return -1;  // err names the file
  }
  struct stat st {};
  stat(c->trace_path.c_str(), &st);
  c->trace_bytes = static_cast<uint64_t>(st.st_size);
  r->spec = t->spec;
  r->lookups = t->lookups();
  c->lookups = r->lookups;
  c->batches = t->batches.size();
  r->locality = bench::describe(bench::compute_locality(*t));
  // Budgets are shares of the tables' pages: at 100% every page fits.
  c->table_bytes = bench::layout_tables(t->spec, kPage).total_pages * kPage;
  return 0;
}

// The oracle's reference string is what the replayer touches, in its
// single-thread order: first every page once in address order (the tables'
// initialisation, which leaves the cache warm for every configuration),
// then each batch's forward lookups and the same lookups again (the
// backward pass updates the rows it read, in the same order). The
// initialisation touches each page once, so it holds no hits under any
// policy: hits over the whole string are the replay's hits, and the hit
// ratio is taken over the replay's references only (*replay_refs).
std::vector<uint64_t> replay_references(const bench::Trace& t, uint64_t* replay_refs) {
  bench::Trace twice;
  twice.spec = t.spec;
  twice.batches.reserve(2 * t.batches.size());
  for (auto& b : t.batches) {
    twice.batches.push_back(b);
    twice.batches.push_back(b);
  }
  bench::TableLayout layout = bench::layout_tables(t.spec, kPage);
  std::vector<uint64_t> replay = bench::page_references(twice, layout);
  *replay_refs = replay.size();
  std::vector<uint64_t> refs(layout.total_pages);
  for (uint64_t p = 0; p < layout.total_pages; p++) refs[p] = p;
  refs.insert(refs.end(), replay.begin(), replay.end());
  return refs;
}

// The runs still to come from cell i of budget b in repeat `rep` on (each
// repeat starts with the all-DRAM run when there is one): the progress
// line's total shrinks as cells time out and are not run again.
uint64_t runs_from(const SuiteResults& r, bool dram, unsigned repeats, unsigned rep, size_t b,
                   size_t i) {
  uint64_t n = 0;
  for (unsigned k = rep; k <= repeats; k++) {
    if (k > rep && dram) n++;
    for (size_t bi = k == rep ? b : 0; bi < r.budgets.size(); bi++) {
      const std::vector<Cell>& cells = r.budgets[bi].cells;
      for (size_t ci = k == rep && bi == b ? i : 0; ci < cells.size(); ci++)
        n += cells[ci].skipped.empty() && !cells[ci].stopped;
    }
  }
  return n;
}

std::string run_line(const Run& run) {
  if (!run.ok) return run.failure;
  char buf[96];
  snprintf(buf, sizeof buf, "%.0f lookups/s, %.1f s", run.result.lookups_per_second(), run.result.seconds);
  return buf;
}

}  // namespace

const char* config_name(Config c) {
  switch (c) {
    case Config::kDram: return "dram";
    case Config::kMtier: return "mtier";
    case Config::kMtierPmem: return "mtier-pmem";
    case Config::kPageCache: return "pagecache";
    case Config::kPageCacheRandom: return "pagecache-random";
    case Config::kSwap: return "swap";
  }
  return "?";
}

std::string config_what(Config c) {
  switch (c) {
    case Config::kDram: return "all tables in DRAM (malloc), no mtier, no limit: the upper bound";
    case Config::kMtier: return "mtier, DRAM budget B, file store (O_DIRECT, io_uring)";
    case Config::kMtierPmem: return "mtier, DRAM budget B, PMem store (libpmem2) on --pmem, then the file store";
    case Config::kPageCache: return "tables in a file mapped MAP_SHARED, kernel page cache, default readahead";
    case Config::kPageCacheRandom: return "the same with madvise(MADV_RANDOM): no readahead";
    case Config::kSwap: return "anonymous tables, kernel swap to a swap file in the same directory";
  }
  return "";
}

bool parse_config(const std::string& s, Config* out) {
  for (Config c : {Config::kDram, Config::kMtier, Config::kMtierPmem, Config::kPageCache,
                   Config::kPageCacheRandom, Config::kSwap})
    if (s == config_name(c)) {
      *out = c;
      return true;
    }
  return false;
}

std::string Cell::name() const {
  return std::string(config_name(config)) + (lookahead ? "+lookahead" : "");
}

bool Cell::complete() const {
  if (runs.empty() || !skipped.empty()) return false;
  for (auto& r : runs)
    if (!r.ok || r.result.batches == 0) return false;
  return true;
}

int run_suite(const SuiteOptions& o, SuiteResults* r, std::string* err) {
  // Declared before the context, so destroyed after it: the swap file is
  // off before its directory goes.
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } cleanup;
  Context c(o);
  char tmpl[512];
  snprintf(tmpl, sizeof tmpl, "%s/mtier-bench-XXXXXX", o.dir.c_str());
  if (!mkdtemp(tmpl)) {
    *err = o.dir + ": cannot make a scratch directory: " + strerror(errno);
    return 1;
  }
  c.work = tmpl;
  cleanup.dir = c.work;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

  // Log lines on stderr (unless -q); on a terminal, a live line under
  // them with the oracle's and then the runs' done/total and time left.
  progress::Progress pr(progress::stderr_io(), o.quiet);
  bench::Trace trace;
  if (prepare_trace(o, &c, r, &trace, err) < 0) return 1;
  r->machine = machine_line(o.dir);
  pr.line("mtier bench suite: workload " + r->spec.describe());
  pr.line("mtier bench suite: trace " + r->locality);

  // The oracle, at every budget.
  std::vector<uint64_t> refs = replay_references(trace, &r->references);
  std::vector<uint64_t> caps;
  for (unsigned pct : o.budgets) caps.push_back(std::max<uint64_t>(1, c.table_bytes * pct / 100 / kPage));  // = BudgetResult::bytes
  pr.start("mtier bench suite: oracle (MIN and LRU)", 0, "page references");
  bench::OracleProgress on_oracle;
  if (pr.live()) on_oracle = [&pr](uint64_t done, uint64_t total) { pr.update(done, total); };
  std::vector<bench::OracleResult> oracle = bench::simulate(refs, caps, on_oracle);
  pr.clear();
  for (auto& res : oracle) res.references = r->references;  // the replay's: see replay_references
  // MIN again from the start every configuration has: the initialisation's
  // last pages (address order) resident, as many as the budget holds.
  std::vector<int64_t> min_same_start;
  {
    const uint64_t init = refs.size() - r->references;
    const std::span<const uint64_t> all(refs);
    for (uint64_t cap : caps) {
      const uint64_t kept = std::min(cap, init);
      min_same_start.push_back(
          bench::min_misses_from(all.subspan(init - kept, kept), all.subspan(init), cap));
    }
  }
  refs.clear();
  refs.shrink_to_fit();
  trace = bench::Trace{};

  // The device, before anything else uses the disk; without it the
  // device-bound times (and the goal on them) are not given.
  if (o.device_bytes) {
    pr.line("mtier bench suite: measuring the device: QD32 random 4 KiB writes and reads of a " +
            mib(o.device_bytes) + " file in " + o.dir);
    r->device = measure_device(c.work, o.device_bytes);
    if (!r->device.ok) r->notes.push_back("device: " + r->device.failure);
  } else {
    r->device.failure = "not measured (--device-bytes 0)";
  }

  // The kernel's set-up: a memory cgroup, and a swap file for the swap
  // configuration. Refusals are notes; the other configurations still run.
  bool want_kernel = std::any_of(o.configs.begin(), o.configs.end(), is_kernel);
  c.cg = bench::detect_memory_cgroup();
  std::string cg_name = c.cg.version == bench::CgroupVersion::kV2 ? "cgroup v2 at " + c.cg.mount
                        : c.cg.version == bench::CgroupVersion::kV1 ? "cgroup v1 at " + c.cg.mount
                                                                      : "no memory cgroup (" + c.cg.reason_if_none + ")";
  bool cg_ok = c.cg.version != bench::CgroupVersion::kNone && geteuid() == 0;
  if (c.cg.version != bench::CgroupVersion::kNone && geteuid() != 0) cg_name += " (not usable: not root)";
  if (c.cg.version != bench::CgroupVersion::kNone) bench::remove_stale_cgroups(c.cg);
  if (want_kernel && !cg_ok) {
    *err = "the kernel configurations (pagecache, pagecache-random, swap) need a memory cgroup and root: " +
           cg_name + "; run as root, or leave them out with --configs dram,mtier";
    return 1;
  }
  bool want_swap = cg_ok && std::find(o.configs.begin(), o.configs.end(), Config::kSwap) != o.configs.end();
  if (want_swap) {
    uint64_t swap_bytes = c.table_bytes + c.table_bytes / 4 + (64ull << 20);
    pr.line("mtier bench suite: making a " + mib(swap_bytes) + " swap file in " + c.work);
    std::string why;
    if (bench::SwapFile::create(c.work + "/swapfile", swap_bytes, &c.swap, &why) < 0) {
      *err = "the swap configuration needs a swap file: " + why + "; leave it out with --configs";
      return 1;
    }
  }
  uint64_t active = bench::active_swap_bytes(), ours = c.swap.path().empty() ? 0 : c.swap.bytes();
  uint64_t other_swap = active > ours ? active - ours : 0;
  std::string swap_line = "; swap: " +
                          (c.swap.path().empty() ? std::string("none made") : mib(c.swap.bytes()) + " swap file") +
                          (other_swap ? ", " + mib(other_swap) + " of other swap active" : "") +
                          "; mtier runs in the same cgroup as the kernel configurations" +
                          (cg_ok ? "" : " (none here)");
  // The cgroup's slack is what the process needs besides its tables: given,
  // or measured on the first all-DRAM run (see set_slack).
  uint64_t slack = 0;
  auto set_slack = [&](uint64_t bytes, const std::string& how) {
    slack = bytes;
    for (auto& b : r->budgets) b.cgroup_limit = b.bytes + slack;
    r->environment = cg_name + "; cgroup limit = budget + " + mib(slack) + " (" + how + ")" + swap_line;
  };
  r->budgets.clear();
  for (size_t i = 0; i < o.budgets.size(); i++) {
    BudgetResult b;
    b.pct = o.budgets[i];
    b.bytes = std::max(kPage, c.table_bytes * b.pct / 100 / kPage * kPage);
    b.oracle = oracle[i];
    b.min_misses_same_start = min_same_start[i];
    for (Config cfg : o.configs)
      if (cfg != Config::kDram) {
        b.cells.emplace_back(cfg, b.pct);
        if (o.lookahead) b.cells.emplace_back(cfg, b.pct, o.lookahead);
      }
    for (auto& cell : b.cells)
      if (cell.config == Config::kMtierPmem && o.pmem.empty())
        cell.skipped = "no PMem given (--pmem PATH); none on this machine?";
    r->budgets.push_back(b);
  }
  bool want_dram = std::find(o.configs.begin(), o.configs.end(), Config::kDram) != o.configs.end();
  r->dram = Cell(Config::kDram, 100);
  if (!want_dram) r->dram.skipped = "not asked for (--configs)";
  if (o.slack) set_slack(o.slack, "--slack");

  uint64_t done = 0;
  pr.start("mtier bench suite: runs", (want_dram ? 1 : 0) + runs_from(*r, want_dram, o.repeats, 1, 0, 0), "");
  c.tick = [&] { pr.update(done); };  // the times go on during a long run
  for (unsigned rep = 1; rep <= o.repeats; rep++) {
    std::string tag = "run " + std::to_string(rep) + "/" + std::to_string(o.repeats);
    if (want_dram) {
      r->dram.runs.push_back(run_child(c, Config::kDram, 0, 0, nullptr));
      // The count first: the live line drawn again under the log line has it.
      done++;
      pr.update(done, done + runs_from(*r, want_dram, o.repeats, rep, 0, 0));
      pr.line("mtier bench suite: " + tag + " dram: " + run_line(r->dram.runs.back()));
    }
    if (!slack) {
      const Run& first = r->dram.runs.empty() ? Run() : r->dram.runs.front();
      if (first.ok && first.result.peak_rss_bytes > c.table_bytes)
        set_slack(first.result.peak_rss_bytes - c.table_bytes + (8ull << 20),
                  "the all-DRAM run's peak RSS beyond its tables, " +
                      mib(first.result.peak_rss_bytes - c.table_bytes) + ", + 8.0 MiB");
      else
        set_slack((16ull << 20) + 2 * c.trace_bytes, "16 MiB + 2x the trace: no all-DRAM run to measure");
    }
    for (size_t bi = 0; bi < r->budgets.size(); bi++) {
      BudgetResult& b = r->budgets[bi];
      for (size_t ci = 0; ci < b.cells.size(); ci++) {
        Cell& cell = b.cells[ci];
        if (!cell.skipped.empty() || cell.stopped || g_interrupted) continue;
        std::unique_ptr<bench::MemoryCgroup> cg;
        if (cg_ok) {
          cg = std::make_unique<bench::MemoryCgroup>();
          std::string why;
          bool swap = cell.config == Config::kSwap;
          std::string cg_tag = std::string(config_name(cell.config)) + (cell.lookahead ? "-lookahead-" : "-");
          if (bench::MemoryCgroup::create(c.cg, cg_tag + std::to_string(b.pct),
                                          b.cgroup_limit, swap, swap ? 60 : 0, cg.get(), &why) < 0) {
            cell.runs.push_back(Run{false, "cgroup: " + why, {}});
            done++;
            pr.update(done, done + runs_from(*r, want_dram, o.repeats, rep, bi, ci + 1));
            continue;
          }
        }
        cell.runs.push_back(run_child(c, cell.config, cell.lookahead, b.bytes, cg.get()));
        // A run that timed out is not repeated, nor run at smaller budgets.
        if (!cell.runs.back().ok && cell.runs.back().failure.rfind("timed out", 0) == 0) {
          cell.stopped = true;
          for (auto& later : r->budgets)
            if (later.pct < b.pct)
              for (auto& lc : later.cells)
                if (lc.config == cell.config && lc.lookahead == cell.lookahead && lc.skipped.empty())
                  lc.skipped = "timed out at the " + std::to_string(b.pct) + "% budget";
        }
        done++;
        pr.update(done, done + runs_from(*r, want_dram, o.repeats, rep, bi, ci + 1));
        pr.line("mtier bench suite: " + tag + " " + cell.name() + " at " + std::to_string(b.pct) + "%: " +
                run_line(cell.runs.back()));
      }
    }
  }
  pr.clear();
  c.tick = nullptr;
  std::string why;
  if (!c.swap.path().empty() && c.swap.destroy(&why) < 0) r->notes.push_back("swap file: " + why);
  if (g_interrupted) {
    *err = "interrupted: the run in progress was killed; the swap file, cgroups and scratch files are removed";
    return 1;
  }

  // Every run must compute the same losses and leave the same tables.
  summarise(&r->dram, r->references, r->device);
  const Run* ref = nullptr;
  for (auto& run : r->dram.runs)
    if (run.ok) { ref = &run; break; }
  for (auto& b : r->budgets)
    for (auto& cell : b.cells) {
      summarise(&cell, r->references, r->device);
      uint64_t hint_errors = 0;
      for (auto& run : cell.runs) {
        if (!run.ok) continue;
        hint_errors += run.result.hint_errors;
        if (!ref) { ref = &run; continue; }
        if (run.result.checksum != ref->result.checksum ||
            memcmp(&run.result.loss, &ref->result.loss, sizeof(double)) != 0) {
          r->data_identical = false;
          r->notes.push_back("DATA MISMATCH: " + cell.name() + " at " + std::to_string(b.pct) +
                             "% computed other losses or tables than the first run");
        }
      }
      if (hint_errors)
        r->notes.push_back(cell.name() + " at " + std::to_string(b.pct) + "%: " + std::to_string(hint_errors) +
                           " lookahead hints failed (advisory: those pages were demand-faulted)");
    }
  evaluate_goals(r);
  return 0;
}

}  // namespace mtier::tools::suite
