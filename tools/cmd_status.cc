// SPDX-License-Identifier: Apache-2.0
// mtier status [PID | --job NAME] [--json] [--socket PATH]: what mtierd knows: its policy
// and heat sources, and each registered process's budget, residency per tier
// and tables. The daemon answers with JSON (docs/protocol.md); --json prints
// it as it came, otherwise it is laid out as text.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "cli.h"
#include "client/daemon_client.h"
#include "commands.h"
#include "util/json.h"

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
double rate(const json::Json& t, std::initializer_list<const char*> kinds) {
  double sum = 0;
  for (const char* k : kinds) sum += json::num(json::at(t, "moves_per_second"), k);
  return sum;
}

void print_tiers(const json::Json& v) {
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
    printf("%-6s %-12s %-6s %10s %10s %10.1f %10.2f %10.2f\n", json::str(t, "name").c_str(),
           json::str(t, "kind").c_str(), nodes.c_str(), cap, budget, mib(json::num(t, "used_bytes"), 1),
           mib(json::num(t, "in_bytes_per_second"), 1), mib(json::num(t, "out_bytes_per_second"), 1));
  }
}

void print_text(const json::Json& v) {
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
  print_tiers(v);
  for (const auto& job : json::items(json::at(v, "jobs"))) {
    std::string ranks;
    for (const auto& r : json::items(json::at(job, "ranks")))
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(static_cast<long>(json::num(r, "pid")));
    printf("\njob %s: %zu rank(s) (pids %s): DRAM %.1f MiB resident, budget %.1f MiB "
           "(their own, summed), assigned %.1f MiB by need\n",
           json::str(job, "name").c_str(), json::items(json::at(job, "ranks")).size(), ranks.c_str(),
           mib(json::num(job, "dram_resident_bytes"), 1), mib(json::num(job, "dram_budget_bytes"), 1),
           mib(json::num(job, "dram_assigned_bytes"), 1));
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
    printf(", slow tier %.1f MiB; %.0f faults/s; %.0f samples, %.0f orders\n",
           mib(json::num(p, "slow_resident_bytes"), 1), json::num(p, "faults_per_second"), json::num(p, "samples"),
           json::num(p, "orders_sent"));
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
    for (const auto& t : json::items(json::at(p, "tables"))) {
      double in = rate(t, {"new>dram", "new>slow", "store>dram", "store>slow"});
      double moved = rate(t, {"slow>dram", "dram>slow", "dram>store", "slow>store"});
      printf("  %-4.0f %-20s %9.1f %9.1f %9.1f %9.1f %9.1f %9.0f %9.0f\n", json::num(t, "id"),
             json::str(t, "name").c_str(), mib(json::num(t, "bytes"), 1), mib(json::num(t, "dram_pages"), 4096),
             mib(json::num(t, "slow_pages"), 4096), mib(json::num(t, "store_pages"), 4096), json::num(t, "heat"), in,
             moved);
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
  p.flag("--json", &as_json).text("--socket", &socket).value("--job", cli::job_name(&job));
  if (int rc = p.parse(argc, argv, &operands); rc >= 0) return rc;
  long pid = 0;
  std::string why;
  if (operands.size() > 1) return cmd.usage_error("one PID at most ('" + operands[1] + "' is extra)");
  if (!operands.empty() && cli::parse_pid("PID", operands[0], &pid, &why) < 0)
    return cmd.usage_error(why);
  if (pid && !job.empty()) return cmd.usage_error("give a PID or --job, not both");
  ipc::Reply reply;
  std::string path = daemon_socket_path(socket.empty() ? nullptr : socket.c_str());
  ipc::StatusRequest req{static_cast<uint32_t>(pid), job};
  if (daemon_request(path, ipc::Message{req}, &reply, &why) < 0) return cmd.fail(why);
  if (reply.status < 0) return cmd.fail(reply.message);
  if (as_json) return printf("%s\n", reply.message.c_str()) < 0;
  json::Json v;
  if (json::parse(reply.message, &v, &why) < 0)
    return cmd.fail("mtierd's reply does not parse (" + why + ")");
  print_text(v);
  return 0;
}

}  // namespace mtier::tools
