// SPDX-License-Identifier: Apache-2.0
// mtier status [PID | --job NAME] [--json] [--interval S] [--socket PATH]: what mtierd
// knows: its policy and heat sources, and each registered process's budget,
// residency per tier, counters and tables. The daemon answers with JSON
// (docs/protocol.md); --json prints it as it came, otherwise it is laid out
// as text, its rates computed from two readings --interval apart.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "cli.h"
#include "client/daemon_client.h"
#include "commands.h"
#include "sys/page_size.h"
#include "util/json.h"

namespace mtier::tools {
namespace {

const char kUsage[] =
    "usage: mtier status [PID | --job NAME] [--json] [--interval SECONDS] [--socket PATH]\n"
    "\n"
    "Asks mtierd for its state: policy and parameters, heat sources, the node\n"
    "budgets; the tiers (DRAM, slow memory, store: nodes, capacity, budget, use,\n"
    "MiB/s in and out); and per registered process (all of them, or PID) its DRAM\n"
    "budget, residency per tier, missing faults and evictions per second, its\n"
    "counters since it started (faults, fetches, prefetches, evictions, write-backs,\n"
    "demotions, promotions, store errors: those of the exit summary), samples and\n"
    "orders, its lookahead (pages named, read ahead, late, already in DRAM; the\n"
    "window's pinned MiB), and per table its\n"
    "MiB in DRAM, the slow tier and the store, its heat, pages faulted in per\n"
    "second (faults/s: from the store or first touch, prefetches included) and\n"
    "pages moved between tiers per second (migr/s). Rates are the counters'\n"
    "change between two readings --interval apart. Without root, only your\n"
    "processes; the tiers are node-wide. Ranks of a job (torch.distributed's\n"
    "MASTER_ADDR:MASTER_PORT or TORCHELASTIC_RUN_ID, or MTIER_JOB) show their\n"
    "job and rank, and each job its ranks and the DRAM budget they share; a job\n"
    "whose WORLD_SIZE is more than its ranks here has ranks on other nodes (said),\n"
    "and ranks that cannot be one job's (the same rank twice, different\n"
    "WORLD_SIZEs) are flagged.\n"
    "\n"
    "  --job NAME     only the ranks of this job\n"
    "  --json         the daemon's JSON reply as it is (format: docs/protocol.md),\n"
    "                 one reading\n"
    "  --interval S   seconds between the two readings the rates come from\n"
    "                 (default 0.5; 0: one reading, no rates)\n"
    "  --socket PATH  the daemon's socket (default $MTIER_DAEMON_SOCKET, else\n"
    "                 /run/mtier/mtierd.sock)\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0; 1 when no daemon answers, or PID or no rank of the job is\n"
    "registered; 2 usage.\n";

double mib(double pages_or_bytes, double unit) { return pages_or_bytes * unit / 1048576.0; }

// The earlier reading the rates come from, and the seconds between the two
// (no earlier reading: every rate is shown as "-").
struct Before {
  const json::Json* doc = nullptr;
  double seconds = 0;
};

// The element of `list` whose `key` equals that of `like`, or nullptr.
const json::Json* same(const json::Json& list, const char* key, const json::Json& like) {
  for (const auto& e : json::items(list))
    if (json::at(e, key) == json::at(like, key)) return &e;
  return nullptr;
}

// A table's moves summed over the kinds named (pages).
double moved(const json::Json& t, std::initializer_list<const char*> kinds) {
  double sum = 0;
  for (const char* k : kinds) sum += json::num(json::at(t, "moves"), k);
  return sum;
}

// The rate of a counter between two readings, as text ("-": none).
std::string per_s(const json::Json* was, const json::Json& now, double seconds,
                  const std::function<double(const json::Json&)>& count, double scale = 1) {
  if (!was || seconds <= 0) return "-";
  char buf[32];
  snprintf(buf, sizeof buf, "%.*f", scale == 1 ? 0 : 2,
           std::max(0.0, count(now) - count(*was)) * scale / seconds);
  return buf;
}

void print_tiers(const json::Json& v, const Before& b) {
  printf("%-6s %-12s %-6s %10s %10s %10s %10s %10s\n", "tier", "kind", "nodes", "cap MiB",
         "budget MiB", "used MiB", "in MiB/s", "out MiB/s");
  for (const auto& t : json::items(json::at(v, "tiers"))) {
    std::string nodes = json::str(t, "nodes").empty() ? "-" : json::str(t, "nodes");
    char cap[32] = "-";
    if (json::num(t, "capacity_bytes") > 0)
      snprintf(cap, sizeof cap, "%.0f", mib(json::num(t, "capacity_bytes"), 1));
    char budget[32] = "-";
    if (json::num(t, "budget_bytes") > 0)
      snprintf(budget, sizeof budget, "%.1f", mib(json::num(t, "budget_bytes"), 1));
    const json::Json* was = b.doc ? same(json::at(*b.doc, "tiers"), "name", t) : nullptr;
    auto in = [](const json::Json& x) { return json::num(x, "in_bytes"); };
    auto out = [](const json::Json& x) { return json::num(x, "out_bytes"); };
    printf("%-6s %-12s %-6s %10s %10s %10.1f %10s %10s\n", json::str(t, "name").c_str(),
           json::str(t, "kind").c_str(), nodes.c_str(), cap, budget, mib(json::num(t, "used_bytes"), 1),
           per_s(was, t, b.seconds, in, 1.0 / 1048576).c_str(),
           per_s(was, t, b.seconds, out, 1.0 / 1048576).c_str());
  }
}

// The runtime's counters since it started (those of its exit summary),
// each shown when its key is there (a runtime older than the key: not).
void print_counters(const json::Json& p) {
  struct {
    const char *key, *text;
  } counters[] = {{"missing_faults", "missing faults"},
                  {"minor_faults", "minor"},
                  {"wp_faults", "wp"},
                  {"fetches", "fetches"},
                  {"prefetches", "prefetches"},
                  {"evictions", "evictions"},
                  {"writebacks", "written back"},
                  {"demotions", "demotions"},
                  {"promotions", "promotions"},
                  {"evict_cancels", "evictions cancelled"},
                  {"budget_overruns", "over-budget faults"},
                  {"child_faults", "children's faults"}};
  std::string line;
  for (const auto& c : counters)
    if (p.contains(c.key))
      line += (line.empty() ? "" : ", ") + std::string(c.text) + " " +
              std::to_string(static_cast<unsigned long long>(json::num(p, c.key)));
  printf("  counters: %s\n", line.c_str());
}

void print_text(const json::Json& v, const Before& b) {
  const json::Json& d = json::at(v, "daemon");
  printf("mtierd pid %.0f on %s\n", json::num(d, "pid"), json::str(d, "socket").c_str());
  printf("policy: %s %s\n", json::str(d, "policy").c_str(), json::str(d, "policy_params").c_str());
  printf("heat source in use: %s\n", json::str(d, "heat_source").c_str());
  for (const auto& s : json::items(json::at(d, "sources")))
    printf("  %-12s %s\n", json::str(s, "name").c_str(),
           json::at(s, "available") == true ? "available" : ("unavailable: " + json::str(s, "reason")).c_str());
  if (json::num(d, "dram_bytes") > 0)
    printf("node DRAM budget: %.1f MiB, shared by weight\n", mib(json::num(d, "dram_bytes"), 1));
  else
    printf("node DRAM budget: none (each process keeps its own)\n");
  if (json::num(d, "migrate_bytes_per_second") > 0)
    printf("migration limit: %.0f MiB/s\n", mib(json::num(d, "migrate_bytes_per_second"), 1));
  else
    printf("migration limit: none\n");
  printf("\n");
  print_tiers(v, b);
  for (const auto& job : json::items(json::at(v, "jobs"))) {
    std::string ranks;
    for (const auto& r : json::items(json::at(job, "ranks")))
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(static_cast<long>(json::num(r, "pid")));
    const size_t here = json::items(json::at(job, "ranks")).size();
    printf("\njob %s: %zu rank(s) (pids %s): DRAM %.1f MiB resident, budget %.1f MiB "
           "(their own, summed), assigned %.1f MiB by need\n",
           json::str(job, "name").c_str(), here, ranks.c_str(),
           mib(json::num(job, "dram_resident_bytes"), 1), mib(json::num(job, "dram_budget_bytes"), 1),
           mib(json::num(job, "dram_assigned_bytes"), 1));
    // A daemon before wire version 3 says no world_size.
    const double world = json::at(job, "world_size").is_number() ? json::num(job, "world_size") : -1;
    if (world > static_cast<double>(here))
      printf("job %s: world size %.0f: %.0f rank(s) elsewhere (other nodes; this view is this "
             "node's: the job-wide one is Prometheus's, mtier(7) JOBS OF SEVERAL RANKS)\n",
             json::str(job, "name").c_str(), world, world - static_cast<double>(here));
    if (!json::str(job, "conflict").empty())
      printf("job %s: WARNING: %s (set MTIER_JOB to tell jobs apart)\n", json::str(job, "name").c_str(),
             json::str(job, "conflict").c_str());
  }
  const auto& procs = json::items(json::at(v, "processes"));
  if (procs.empty()) printf("\nno registered processes\n");
  for (const auto& p : procs) {
    std::string job;
    if (!json::str(p, "job").empty()) {
      job = " job " + json::str(p, "job");
      if (json::num(p, "rank") >= 0) job += " rank " + std::to_string(static_cast<long>(json::num(p, "rank")));
    }
    printf("\npid %.0f (%s)%s weight %.0f%s: DRAM %.1f / %.1f MiB", json::num(p, "pid"),
           json::str(p, "name").c_str(), job.c_str(), json::num(p, "weight"), json::at(p, "stale") == true ? " STALE" : "",
           mib(json::num(p, "dram_resident_bytes"), 1), mib(json::num(p, "dram_budget_bytes"), 1));
    if (json::num(p, "dram_assigned_bytes") > 0)
      printf(" (assigned %.1f MiB)", mib(json::num(p, "dram_assigned_bytes"), 1));
    const json::Json* was = b.doc ? same(json::at(*b.doc, "processes"), "pid", p) : nullptr;
    auto missing = [](const json::Json& x) { return json::num(x, "missing_faults"); };
    auto evicted = [](const json::Json& x) { return json::num(x, "evictions"); };
    printf(", slow tier %.1f MiB; %s faults/s, %s evictions/s; %.0f samples, %.0f orders\n",
           mib(json::num(p, "slow_resident_bytes"), 1), per_s(was, p, b.seconds, missing).c_str(),
           per_s(was, p, b.seconds, evicted).c_str(), json::num(p, "samples"), json::num(p, "orders_sent"));
    print_counters(p);
    if (json::num(p, "prefetch_pages") > 0)
      printf("  lookahead: %.0f pages named, %.0f read ahead (%.0f late: the access came first), "
             "%.0f in DRAM already; window %.1f MiB pinned\n",
             json::num(p, "prefetch_pages"), json::num(p, "prefetch_reads"), json::num(p, "prefetch_late"),
             json::num(p, "prefetch_hits"), mib(json::num(p, "pinned_bytes"), 1));
    if (json::num(p, "store_errors") > 0 || json::num(p, "store_full") > 0)
      printf("  store: %.0f errors (failed reads and writes, checksum mismatches), %.0f evictions "
             "refused by a full store: see the process's log\n",
             json::num(p, "store_errors"), json::num(p, "store_full"));
    printf("  %-4s %-20s %9s %9s %9s %9s %9s %9s %9s\n", "id", "table", "MiB", "dram MiB",
           "slow MiB", "store MiB", "heat", "faults/s", "migr/s");
    // Pages of the runtime's size (a runtime that does not say: the tools').
    double page = p.contains("page_size_bytes") ? json::num(p, "page_size_bytes") : kPageSize;
    for (const auto& t : json::items(json::at(p, "tables"))) {
      const json::Json* tw = was ? same(json::at(*was, "tables"), "id", t) : nullptr;
      auto in = [](const json::Json& x) { return moved(x, {"new>dram", "new>slow", "store>dram", "store>slow"}); };
      auto between = [](const json::Json& x) { return moved(x, {"slow>dram", "dram>slow", "dram>store", "slow>store"}); };
      printf("  %-4.0f %-20s %9.1f %9.1f %9.1f %9.1f %9.1f %9s %9s\n", json::num(t, "id"),
             json::str(t, "name").c_str(), mib(json::num(t, "bytes"), 1), mib(json::num(t, "dram_pages"), page),
             mib(json::num(t, "slow_pages"), page), mib(json::num(t, "store_pages"), page), json::num(t, "heat"),
             per_s(tw, t, b.seconds, in).c_str(), per_s(tw, t, b.seconds, between).c_str());
    }
  }
}

}  // namespace

int cmd_status(int argc, char** argv) {
  cli::Command cmd("status");
  bool as_json = false;
  std::string socket, job;
  std::vector<std::string> operands;
  cli::Parser p(cmd, [](FILE* out) { fputs(kUsage, out); });
  double interval = 0.5;
  p.flag("--json", &as_json)
      .text("--socket", &socket)
      .value("--job", cli::job_name(&job))
      .number("--interval", &interval, 0, 60, "seconds");
  if (int rc = p.parse(argc, argv, &operands); rc >= 0) return rc;
  long pid = 0;
  std::string why;
  if (operands.size() > 1) return cmd.usage_error("one PID at most ('" + operands[1] + "' is extra)");
  if (!operands.empty() && cli::parse_pid("PID", operands[0], &pid, &why) < 0)
    return cmd.usage_error(why);
  if (pid && !job.empty()) return cmd.usage_error("give a PID or --job, not both");
  std::string path = daemon_socket_path(socket.empty() ? nullptr : socket.c_str());
  ipc::StatusRequest req{static_cast<uint32_t>(pid), job};
  // One reading: the document, or -1 with `why`.
  auto read = [&](json::Json* v, std::string* text) {
    ipc::Reply reply;
    if (daemon_request(path, ipc::Message{req}, &reply, &why) < 0) return -1;
    if (reply.status < 0) return why = reply.message, -1;
    *text = reply.message;
    if (as_json) return 0;
    if (json::parse(reply.message, v, &why) < 0) return why = "mtierd's reply does not parse (" + why + ")", -1;
    return 0;
  };
  json::Json first, v;
  std::string text;
  if (read(&v, &text) < 0) return cmd.fail(why);
  if (as_json) return printf("%s\n", text.c_str()) < 0;
  Before before;
  if (interval > 0) {
    auto t0 = std::chrono::steady_clock::now();
    first = std::move(v);
    timespec ts{static_cast<time_t>(interval), static_cast<long>((interval - static_cast<time_t>(interval)) * 1e9)};
    nanosleep(&ts, nullptr);
    if (read(&v, &text) < 0) return cmd.fail(why);
    before = {&first, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  }
  print_text(v, before);
  return 0;
}

}  // namespace mtier::tools
