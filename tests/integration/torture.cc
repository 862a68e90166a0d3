// SPDX-License-Identifier: Apache-2.0
// Integrity torture through the public C API (libmtier.so): several threads
// write and verify checksummed pages over tables 4x larger than the DRAM
// budget, with uniform and skewed (Zipf) access, while eviction, fetch and
// the sampler run. A monitor thread measures residency from the kernel
// (mincore on the tables, Rss in /proc/self/smaps) the whole time.
// Usage: torture [OPTIONS [OPS [forks]]]. OPTIONS are added to the runtime
// options (torture_clustered.test: cluster_writes=1; one with store_path=
// uses that directory instead of a fresh one); OPS is each thread's
// operations (default 25000; crash_writeback.test runs it long and kills
// it). With `forks` (torture_fork.test) a fifth thread forks children all
// along that read pages of the tables while the writers go on, checking
// every word against the page's own key (never another page's data, never
// a torn store read) and a generation at least the one at the fork, then
// write and read back pages of their own copy (the writers, checking
// theirs, see none of it); every third child is SIGKILLed mid-read.
// Exit 0: no mismatch and within budget; 1: failure; 77: skipped (why printed).
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mtier.h"
#include "sys/vm.h"

namespace {

constexpr uint64_t kPage = 4096;
constexpr int kThreads = 4;

struct TableInfo {
  int id;
  char* base;
  uint64_t pages;
};

uint64_t word_of(uint64_t key, uint64_t gen, size_t i) {
  uint64_t x = key * 0x9E3779B97F4A7C15ull + gen * 0xBF58476D1CE4E5B9ull + i;
  x ^= x >> 31;
  return x * 0x94D049BB133111EBull;
}

void write_page(char* p, uint64_t key, uint64_t gen) {
  auto* w = reinterpret_cast<uint64_t*>(p);
  for (size_t i = 0; i < kPage / 8; i++) w[i] = word_of(key, gen, i);
}

bool page_ok(const char* p, uint64_t key, uint64_t gen) {
  auto* w = reinterpret_cast<const uint64_t*>(p);
  if (gen == 0) {  // never written: zeros
    for (size_t i = 0; i < kPage / 8; i++)
      if (w[i]) return false;
    return true;
  }
  for (size_t i = 0; i < kPage / 8; i++)
    if (w[i] != word_of(key, gen, i)) return false;
  return true;
}

// Zipf(s) over n items by inverse CDF on a precomputed table.
class Zipf {
 public:
  Zipf(uint64_t n, double s) : cdf_(n) {
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) cdf_[i] = (sum += 1.0 / std::pow(double(i + 1), s));
    for (auto& c : cdf_) c /= sum;
  }
  uint64_t operator()(std::mt19937_64& rng) const {
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
  }

 private:
  std::vector<double> cdf_;
};

std::atomic<long> g_mismatches{0};
// Each writer's page generations, for forked children to read their copy of.
std::atomic<const uint64_t*> g_gens[kThreads];
std::atomic<long> g_prefetch_errors{0};  // lookahead calls that returned -errno
std::atomic<long> g_max_resident{0}, g_max_resident_raw{0}, g_max_rss{0};
std::atomic<bool> g_stop{false};

// Pages evicted from the tables so far (the engine's counts).
uint64_t evictions(const std::vector<TableInfo>& tables) {
  uint64_t n = 0;
  for (auto& t : tables) {
    struct mtier_table_stats ts;
    if (mtier_table_stats(t.id, &ts) == 0) n += ts.evictions;
  }
  return n;
}

void raise_max(std::atomic<long>& max, long v) {
  long cur = max.load();
  while (v > cur && !max.compare_exchange_weak(cur, v)) {}
}

// mincore every 20 ms; /proc/self/smaps (which walks every mapping of the
// process) every 500 ms, so that the monitor does not starve the workers.
// Neither is a snapshot: a scan sees a page resident, the evictor drops it,
// a fetch brings in another page the scan reaches later - both counted, yet
// DRAM never held both (on a loaded machine a scan took long enough to
// count 3121 pages against 3072). So a scan's count is judged less the
// pages evicted while it ran: what it counted of the budget at its end
// (its raw maximum is printed too).
void monitor(const std::vector<TableInfo>& tables) {
  for (unsigned tick = 0; !g_stop.load(); tick++) {
    uint64_t before = evictions(tables);
    long resident = 0;
    for (auto& t : tables) resident += mtier::sys::resident_pages(t.base, t.pages * kPage);
    long long rss = tick % 25 == 0 ? mtier::sys::smaps_rss(tables[0].base) : 0;
    long moved = static_cast<long>(evictions(tables) - before);
    raise_max(g_max_resident_raw, resident);
    raise_max(g_max_resident, resident - moved);
    raise_max(g_max_rss, rss / (long)kPage - moved);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

char* page_addr(const std::vector<TableInfo>& tables, uint64_t global) {
  size_t ti = 0;
  uint64_t page = global;
  while (page >= tables[ti].pages) page -= tables[ti++].pages;
  return tables[ti].base + page * kPage;
}

// Thread `tid` owns pages whose global index % kThreads == tid, so it knows
// the generation each of its pages must hold. Half the threads pick pages
// uniformly, half with Zipf(1.05) over a scrambled page order. Operations
// go in chunks of kChunk; before chunk c a thread names chunk c+1's pages
// to the lookahead (odd threads asynchronously, waiting a chunk later) and
// advances the window to c: prefetches race the other threads' writes,
// faults and the evictor all the time.
constexpr long kChunk = 16;

void worker(int tid, const std::vector<TableInfo>& tables, uint64_t total_pages, long ops) {
  std::mt19937_64 rng(1234 + tid);
  uint64_t mine = total_pages / kThreads;
  std::vector<uint64_t> gen(mine, 0), perm(mine);
  g_gens[tid].store(gen.data());
  for (uint64_t i = 0; i < mine; i++) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  Zipf zipf(mine, 1.05);
  auto next_key = [&] { return tid % 2 ? perm[zipf(rng)] : rng() % mine; };
  std::vector<uint64_t> chunk(kChunk), ahead(kChunk);
  for (auto& k : ahead) k = next_key();
  long ticket = 0;
  for (long c = 0; c * kChunk < ops; c++) {
    chunk.swap(ahead);
    for (auto& k : ahead) k = next_key();
    struct mtier_range r[kChunk];
    for (long i = 0; i < kChunk; i++) r[i] = {page_addr(tables, ahead[i] * kThreads + tid), kPage};
    if (ticket > 0 && mtier_prefetch_wait(ticket, -1) < 0) g_prefetch_errors++;
    mtier_prefetch_advance(c);
    long rc = mtier_prefetch_ranges(r, kChunk, c + 1, tid % 2 ? MTIER_PREFETCH_ASYNC : 0);
    if (rc < 0) g_prefetch_errors++;
    ticket = tid % 2 ? rc : 0;
    for (uint64_t k : chunk) {
      uint64_t global = k * kThreads + tid;
      char* p = page_addr(tables, global);
      if (!page_ok(p, global, gen[k])) {
        if (g_mismatches++ < 5)
          fprintf(stderr, "torture: mismatch page %llu gen %llu\n", (unsigned long long)global,
                  (unsigned long long)gen[k]);
      }
      if (rng() % 3 == 0) write_page(p, global, ++gen[k]);
    }
  }
  if (ticket > 0 && mtier_prefetch_wait(ticket, -1) < 0) g_prefetch_errors++;
  for (uint64_t k = 0; k < mine; k++) {
    uint64_t global = k * kThreads + tid;
    if (!page_ok(page_addr(tables, global), global, gen[k])) g_mismatches++;
  }
  g_gens[tid].store(nullptr);
}

// In a forked child: whether every word of the page is the page's own, of
// a generation in [at_fork - 1, at_fork + kAhead] (the parent's writers go
// on after the fork and a child sees their writes: it may catch a page half
// rewritten, each word of one generation or the next, never a word of
// another page or a zero where data was; and a writer counts a generation
// just before it writes it, so the fork may fall in between).
constexpr uint64_t kAhead = 256;
bool page_plausible(const char* p, uint64_t key, uint64_t at_fork) {
  auto* w = reinterpret_cast<const uint64_t*>(p);
  uint64_t lo = at_fork > 0 ? at_fork - 1 : 0;
  for (size_t i = 0; i < kPage / 8; i++) {
    bool found = lo == 0 && w[i] == 0;
    for (uint64_t g = lo ? lo : 1; !found && g <= at_fork + kAhead; g++)
      found = w[i] == word_of(key, g, i);
    if (!found) return false;
  }
  return true;
}

// A line on stderr from a forked child: no stdio, whose lock another
// thread of the parent may have held at the fork.
template <class... A>
void child_say(const char* fmt, A... args) {
  char line[256];
  int n = snprintf(line, sizeof line, fmt, args...);
  if (n > 0) (void)!write(2, line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
}

// A forked child's work (it is the only thread): reads 400 random pages,
// then writes 40 of its copy and reads them back. Exit 0, or 1 after a line.
[[noreturn]] void child_reads(const std::vector<TableInfo>& tables, uint64_t total, unsigned seed) {
  std::mt19937_64 rng(seed);
  uint64_t mine = total / kThreads;
  for (int i = 0; i < 400; i++) {
    uint64_t global = rng() % (mine * kThreads);
    const uint64_t* gens = g_gens[global % kThreads].load();
    uint64_t at_fork = gens ? gens[global / kThreads] : 0;
    if (gens && !page_plausible(page_addr(tables, global), global, at_fork)) {
      child_say("torture: child %d: page %llu (generation %llu at the fork) holds data of no "
                "generation of its own\n", getpid(), (unsigned long long)global,
                (unsigned long long)at_fork);
      _exit(1);
    }
  }
  for (int i = 0; i < 40; i++) {
    uint64_t global = rng() % (mine * kThreads);
    write_page(page_addr(tables, global), global, 1'000'000 + i);
    if (!page_ok(page_addr(tables, global), global, 1'000'000 + i)) {
      child_say("torture: child %d: its own write to page %llu did not read back\n", getpid(),
                (unsigned long long)global);
      _exit(1);
    }
  }
  _exit(0);
}

std::atomic<long> g_children{0}, g_children_failed{0}, g_children_killed{0};

// Forks a child every 30 ms while the writers run; every third one is
// SIGKILLed 2 ms after its fork, most likely in the middle of its reads.
void forker(const std::vector<TableInfo>& tables, uint64_t total) {
  for (unsigned n = 0; !g_stop.load(); n++) {
    pid_t pid = fork();
    if (pid == 0) child_reads(tables, total, 99 + n);
    if (pid < 0) {
      g_children_failed++;
      fprintf(stderr, "torture: fork: %s\n", strerror(errno));
      return;
    }
    if (n % 3 == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      kill(pid, SIGKILL);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    g_children++;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && n % 3 == 2) g_children_killed++;
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      g_children_failed++;
      fprintf(stderr, "torture: child %u: status %#x\n", n, st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t budget = 12ull << 20;
  const uint64_t sizes[] = {24ull << 20, 16ull << 20, 8ull << 20};  // 4x the budget
  const std::string extra = argc > 1 ? argv[1] : "";
  long ops = 25000;
  if (argc > 2 && (ops = strtol(argv[2], nullptr, 10)) <= 0) {
    fprintf(stderr, "torture: OPS must be a positive number, not '%s'\n", argv[2]);
    return 1;
  }
  // A directory of our own, removed at the end, unless the options name one.
  char dir[] = "/var/tmp/mtier-torture-XXXXXX";
  const bool own_dir = extra.find("store_path=") == std::string::npos;
  if (own_dir && !mkdtemp(dir)) {
    perror("torture: mkdtemp");
    return 1;
  }
  std::string opts = "dram_bytes=" + std::to_string(budget) +
                     ",store_bytes=256M,region_bytes=1G,scan_rate=50000,prefetch_pages=4";
  if (own_dir) opts += std::string(",store_path=") + dir;
  if (!extra.empty()) opts += "," + extra;
  printf("torture: options %s\n", opts.c_str());
  int rc = mtier_init(opts.c_str());
  if (rc == -EPERM || rc == -ENOSYS || rc == -ENOTSUP) {
    printf("SKIP: userfaultfd unavailable here (%s): the engine cannot run\n", strerror(-rc));
    if (own_dir) rmdir(dir);
    return 77;
  }
  if (rc < 0) {
    fprintf(stderr, "torture: mtier_init: %s\n", strerror(-rc));
    return 1;
  }
  std::vector<TableInfo> tables;
  uint64_t total = 0;
  for (uint64_t s : sizes) {
    void* a = nullptr;
    int id = mtier_table_create(nullptr, s, &a);
    if (id < 0) {
      fprintf(stderr, "torture: create: %s\n", strerror(-id));
      return 1;
    }
    tables.push_back({id, static_cast<char*>(a), s / kPage});
    total += s / kPage;
  }
  const bool forks = argc > 3 && strcmp(argv[3], "forks") == 0;
  std::thread mon(monitor, std::cref(tables));
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; t++)
    workers.emplace_back(worker, t, std::cref(tables), total, ops);
  std::thread fork_thread;
  if (forks) fork_thread = std::thread(forker, std::cref(tables), total);
  for (auto& w : workers) w.join();
  g_stop = true;
  mon.join();
  if (forks) fork_thread.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct mtier_stats st;
  mtier_stats(&st);
  uint64_t fetches = 0, writebacks = 0, cancels = 0;
  for (auto& t : tables) {
    struct mtier_table_stats ts;
    mtier_table_stats(t.id, &ts);
    fetches += ts.fetches + ts.prefetches;
    writebacks += ts.writebacks;
    cancels += ts.evict_cancels;
    mtier_table_free(t.id);
  }
  if (own_dir) rmdir(dir);
  long budget_pages = budget / kPage;
  printf("torture: %d threads, %llu pages over %ld-page budget: mismatches %ld, max resident "
         "%ld pages (mincore, less the pages evicted during its scan; raw %ld), max Rss %ld "
         "pages, fetches %llu, writebacks %llu, cancels %llu, overruns %llu, %.1f s\n",
         kThreads, (unsigned long long)total, budget_pages, g_mismatches.load(),
         g_max_resident.load(), g_max_resident_raw.load(), g_max_rss.load(),
         (unsigned long long)fetches,
         (unsigned long long)writebacks, (unsigned long long)cancels,
         (unsigned long long)st.budget_overruns, secs);
  printf("torture: lookahead: %llu calls, %llu pages read ahead, %llu hits, %llu left out "
         "(window full), %ld errors\n",
         (unsigned long long)st.prefetch_calls, (unsigned long long)st.prefetch_reads,
         (unsigned long long)st.prefetch_hits, (unsigned long long)st.window_overflows,
         g_prefetch_errors.load());
  if (forks)
    printf("torture: forked children: %ld, of which %ld killed mid-read, %ld failed\n",
           g_children.load(), g_children_killed.load(), g_children_failed.load());
  bool ok = g_mismatches == 0 && g_max_resident <= budget_pages && g_max_rss <= budget_pages &&
            fetches > 0 && writebacks > 0 && st.prefetch_reads > 0 && g_prefetch_errors == 0 &&
            (!forks || (g_children > 5 && g_children_failed == 0));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
