// mtier status [PID | --job NAME] [--json] [--socket PATH]: what mtierd knows: its policy
// and heat sources, and each registered process's budget, residency per tier
// and tables. The daemon answers with JSON (docs/protocol.md); --json prints
// it as it came, otherwise it is laid out as text.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "client/daemon_client.h"
#include "commands.h"
#include "util/json_value.h"

namespace mtier::tools {
namespace {

const char kUsage[] =
    "usage: mtier status [PID | --job NAME] [--json] [--socket PATH]\n"
    "\n"
    "Asks mtierd for its state: policy and parameters, heat sources, the node\n"
    "budgets; the tiers (DRAM, slow memory, store: nodes, capacity, budget, use,\n"
    "MiB/s in and out); and per registered process (all of them, or PID) its DRAM\n"
    "budget, residency per tier, faults/s, samples and orders, its lookahead\n"
    "(pages named, read ahead, late, already in DRAM; the window's pinned MiB),\n"
    "and per table its\n"
    "MiB in DRAM, the slow tier and the store, its heat, pages faulted in per\n"
    "second (faults/s: from the store or first touch, prefetches included) and\n"
    "pages moved between tiers per second (migr/s). Without root, only your\n"
    "processes; the tiers are node-wide. Ranks of a job (torch.distributed's\n"
    "MASTER_ADDR:MASTER_PORT or TORCHELASTIC_RUN_ID, or MTIER_JOB) show their\n"
    "job and rank, and each job its ranks and the DRAM budget they share.\n"
    "\n"
    "  --job NAME     only the ranks of this job\n"
    "  --json         the daemon's JSON reply as it is (format: docs/protocol.md)\n"
    "  --socket PATH  the daemon's socket (default $MTIER_DAEMON_SOCKET, else\n"
    "                 /run/mtier/mtierd.sock)\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0; 1 when no daemon answers, or PID or no rank of the job is\n"
    "registered; 2 usage.\n";

double mib(double pages_or_bytes, double unit) { return pages_or_bytes * unit / 1048576.0; }

// Pages per second of a table's moves, summed over the kinds named.
double rate(const json::Value& t, std::initializer_list<const char*> kinds) {
  double sum = 0;
  for (const char* k : kinds) sum += t["moves_per_s"].num(k);
  return sum;
}

void print_tiers(const json::Value& v) {
  printf("%-6s %-12s %-6s %10s %10s %10s %10s %10s\n", "tier", "kind", "nodes", "cap MiB",
         "budget MiB", "used MiB", "in MiB/s", "out MiB/s");
  for (const auto& t : v["tiers"].items) {
    std::string nodes = t.str("nodes").empty() ? "-" : t.str("nodes");
    char cap[32] = "-";
    if (t.num("capacity_bytes") > 0)
      snprintf(cap, sizeof cap, "%.0f", mib(t.num("capacity_bytes"), 1));
    char budget[32] = "-";
    if (t.num("budget_bytes") > 0)
      snprintf(budget, sizeof budget, "%.1f", mib(t.num("budget_bytes"), 1));
    printf("%-6s %-12s %-6s %10s %10s %10.1f %10.2f %10.2f\n", t.str("name").c_str(),
           t.str("kind").c_str(), nodes.c_str(), cap, budget, mib(t.num("used_bytes"), 1),
           mib(t.num("in_bytes_per_s"), 1), mib(t.num("out_bytes_per_s"), 1));
  }
}

void print_text(const json::Value& v) {
  const json::Value& d = v["daemon"];
  printf("mtierd pid %.0f on %s\n", d.num("pid"), d.str("socket").c_str());
  printf("policy: %s %s\n", d.str("policy").c_str(), d.str("policy_params").c_str());
  printf("heat source in use: %s\n", d.str("heat_source").c_str());
  for (const auto& s : d["sources"].items)
    printf("  %-12s %s\n", s.str("name").c_str(),
           s["available"].b ? "available" : ("unavailable: " + s.str("reason")).c_str());
  if (d.num("dram_bytes") > 0)
    printf("node DRAM budget: %.1f MiB, shared by weight\n", mib(d.num("dram_bytes"), 1));
  else
    printf("node DRAM budget: none (each process keeps its own)\n");
  if (d.num("migrate_rate") > 0)
    printf("migration limit: %.0f MiB/s\n", mib(d.num("migrate_rate"), 1));
  else
    printf("migration limit: none\n");
  printf("\n");
  print_tiers(v);
  for (const auto& job : v["jobs"].items) {
    std::string ranks;
    for (const auto& r : job["ranks"].items)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(static_cast<long>(r.num("pid")));
    printf("\njob %s: %zu rank(s) (pids %s): DRAM %.1f MiB resident, budget %.1f MiB "
           "(their own, summed), assigned %.1f MiB by need\n",
           job.str("name").c_str(), job["ranks"].items.size(), ranks.c_str(),
           mib(job.num("dram_resident_bytes"), 1), mib(job.num("dram_budget_bytes"), 1),
           mib(job.num("dram_assigned_bytes"), 1));
  }
  const auto& procs = v["processes"].items;
  if (procs.empty()) printf("\nno registered processes\n");
  for (const auto& p : procs) {
    std::string job;
    if (!p.str("job").empty()) {
      job = " job " + p.str("job");
      if (p.num("rank") >= 0) job += " rank " + std::to_string(static_cast<long>(p.num("rank")));
    }
    printf("\npid %.0f (%s)%s weight %.0f%s: DRAM %.1f / %.1f MiB", p.num("pid"),
           p.str("name").c_str(), job.c_str(), p.num("weight"), p["stale"].b ? " STALE" : "",
           mib(p.num("dram_resident_bytes"), 1), mib(p.num("dram_budget_bytes"), 1));
    if (p.num("dram_assigned_bytes") > 0)
      printf(" (assigned %.1f MiB)", mib(p.num("dram_assigned_bytes"), 1));
    printf(", slow tier %.1f MiB; %.0f faults/s; %.0f samples, %.0f orders\n",
           mib(p.num("slow_resident_bytes"), 1), p.num("faults_per_s"), p.num("samples"),
           p.num("orders_sent"));
    if (p.num("prefetch_pages") > 0)
      printf("  lookahead: %.0f pages named, %.0f read ahead (%.0f late: the access came first), "
             "%.0f in DRAM already; window %.1f MiB pinned\n",
             p.num("prefetch_pages"), p.num("prefetch_reads"), p.num("prefetch_late"),
             p.num("prefetch_hits"), mib(p.num("pinned_bytes"), 1));
    if (p.num("store_errors") > 0 || p.num("store_full") > 0)
      printf("  store: %.0f errors (failed reads and writes, checksum mismatches), %.0f evictions "
             "refused by a full store: see the process's log\n",
             p.num("store_errors"), p.num("store_full"));
    printf("  %-4s %-20s %9s %9s %9s %9s %9s %9s %9s\n", "id", "table", "MiB", "dram MiB",
           "slow MiB", "store MiB", "heat", "faults/s", "migr/s");
    for (const auto& t : p["tables"].items) {
      double in = rate(t, {"new>dram", "new>slow", "store>dram", "store>slow"});
      double moved = rate(t, {"slow>dram", "dram>slow", "dram>store", "slow>store"});
      printf("  %-4.0f %-20s %9.1f %9.1f %9.1f %9.1f %9.1f %9.0f %9.0f\n", t.num("id"),
             t.str("name").c_str(), mib(t.num("bytes"), 1), mib(t.num("dram_pages"), 4096),
             mib(t.num("slow_pages"), 4096), mib(t.num("store_pages"), 4096), t.num("heat"), in,
             moved);
    }
  }
}

}  // namespace

int cmd_status(int argc, char** argv) {
  static const struct option longs[] = {{"json", no_argument, nullptr, 'j'},
                                        {"job", required_argument, nullptr, 'J'},
                                        {"socket", required_argument, nullptr, 's'},
                                        {"help", no_argument, nullptr, 'h'},
                                        {nullptr, 0, nullptr, 0}};
  bool as_json = false;
  const char* socket = nullptr;
  std::string job;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "h", longs, nullptr)) != -1;) {
    if (c == 'j')
      as_json = true;
    else if (c == 's')
      socket = optarg;
    else if (c == 'J' && *optarg)
      job = optarg;
    else if (c == 'J')
      return fputs("mtier status: --job wants a name\nTry 'mtier status --help'.\n", stderr), 2;
    else if (c == 'h')
      return fputs(kUsage, stdout), 0;
    else
      return fputs("Try 'mtier status --help'.\n", stderr), 2;
  }
  unsigned long pid = 0;
  if (optind < argc) {
    char* end;
    pid = strtoul(argv[optind], &end, 10);
    if (*end || pid == 0 || pid > 0x7fffffff || optind + 1 < argc) {
      fprintf(stderr, "mtier status: '%s' is not a process id\nTry 'mtier status --help'.\n",
              argv[optind]);
      return 2;
    }
  }
  ipc::Reply reply;
  std::string why;
  std::string path = daemon_socket_path(socket);
  if (pid && !job.empty())
    return fputs("mtier status: give a PID or --job, not both\nTry 'mtier status --help'.\n",
                 stderr),
           2;
  if (job.size() > ipc::kMaxNameBytes)
    return fprintf(stderr, "mtier status: a job name is at most %zu bytes\n", ipc::kMaxNameBytes), 2;
  ipc::StatusRequest req{static_cast<uint32_t>(pid), job};
  if (daemon_request(path, ipc::Message{req}, &reply, &why) < 0) {
    fprintf(stderr, "mtier status: %s\n", why.c_str());
    return 1;
  }
  if (reply.status < 0) {
    fprintf(stderr, "mtier status: %s\n", reply.message.c_str());
    return 1;
  }
  if (as_json) return printf("%s\n", reply.message.c_str()) < 0;
  json::Value v;
  if (json::parse(reply.message, &v, &why) < 0) {
    fprintf(stderr, "mtier status: mtierd's reply does not parse (%s)\n", why.c_str());
    return 1;
  }
  print_text(v);
  return 0;
}

}  // namespace mtier::tools
