// SPDX-License-Identifier: Apache-2.0
// The answer to STATUS_REQUEST and HEAT_REQUEST: the daemon (policy,
// sources, budgets), the node's tiers (capacity, budget, use, traffic), and
// each registered process it may show the asker (root: all; another user:
// that user's), with its tables' residency per tier, heat as a row of
// slices, where each slice lives and the page moves seen. The format is
// documented in docs/protocol.md.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config.h"  // PACKAGE_VERSION, PACKAGE_LICENSE
#include "prometheus.h"
#include "server.h"
#include "util/json.h"
#include "word_runs.h"

namespace mtier::daemon {
namespace {

struct Residency {
  uint64_t dram = 0, slow = 0, store = 0, untouched = 0;
  void add(policy::Place p, uint64_t pages = 1) {
    switch (p) {
      case policy::Place::kDram:
        dram += pages;
        break;
      case policy::Place::kSlow:
        slow += pages;
        break;
      case policy::Place::kStore:
        store += pages;
        break;
      case policy::Place::kUntouched:
        untouched += pages;
        break;
    }
  }
  void add(const Residency& o) {
    dram += o.dram;
    slow += o.slow;
    store += o.store;
    untouched += o.untouched;
  }
  // The place char of a slice (docs/protocol.md): one place, mixed or untouched.
  char mark() const {
    int places = (dram > 0) + (slow > 0) + (store > 0);
    if (places == 0) return ' ';
    if (places > 1) return '~';
    return dram ? 'D' : slow ? 'm' : 's';
  }
};

// Where pages [lo, hi) of table t are: the places last read by the ticks
// when the table is tracked (for a table larger than the tick's scan, as of
// the last pass over it; page_scan.h), else read from the words now.
Residency residency_of(const Client& c, const ipc::TableEntry& t, uint64_t lo, uint64_t hi) {
  Residency r;
  auto it = c.tracks.find(t.id);
  if (it != c.tracks.end() && it->second.primed && it->second.place.size() == t.pages) {
    for (uint64_t p = lo; p < hi; p++) r.add(it->second.place[p]);
    return r;
  }
  // Words in segment pages the client never wrote are not read (word_runs.h).
  const std::atomic<uint64_t>* w = c.segment->words() + t.first_page;
  for_each_word_run(w, lo, hi, [&](uint64_t a, uint64_t b, bool held) {
    if (!held) {
      r.add(place_of_word(0), b - a);
      return;
    }
    for (uint64_t p = a; p < b; p++) r.add(place_of_word(w[p].load(std::memory_order_relaxed)));
  });
  return r;
}

struct HeatShape {
  unsigned buckets;
  uint32_t now_tick, window_ticks;
};

void write_moves(json::Json& j, const TableTrack* track) {
  json::Json& moves = j["moves"] = json::Json::object();
  for (unsigned m = 0; m < kPageMoveKinds; m++) moves[page_move_name(m)] = track ? track->moves[m] : 0;
  json::Json& per_s = j["moves_per_second"] = json::Json::object();
  for (unsigned m = 0; m < kPageMoveKinds; m++)
    per_s[page_move_name(m)] = json::number(track ? track->per_s[m] : 0);
}

json::Json table_json(const Client& c, const ipc::TableEntry& t, const HeatShape& s) {
  auto tr = c.tracks.find(t.id);
  const TableTrack* track = tr == c.tracks.end() ? nullptr : &tr->second;
  const policy::HeatModel::Table* heat = c.heat->find(static_cast<int>(t.id));
  uint64_t extent_pages = c.heat->extent_pages();
  size_t extents = heat ? heat->heat.size() : 0;
  // Slices: up to s.buckets equal runs of extents (a slice is never smaller
  // than an extent), each its extents' heat summed and where its pages are.
  // Their residencies summed are the table's where they cover it: one walk
  // of the pages per request, not two (a 2^26-page table's status took 3 s
  // on a loaded machine with two).
  size_t n = std::min<size_t>(s.buckets, extents);
  std::vector<Residency> slices(n);
  for (size_t b = 0; b < n; b++)
    slices[b] = residency_of(c, t, std::min(extents * b / n * extent_pages, t.pages),
                             std::min(extents * (b + 1) / n * extent_pages, t.pages));
  Residency r;
  if (track && track->primed && track->place.size() == t.pages) {  // the track's counts
    using policy::Place;
    r.dram = track->count[static_cast<size_t>(Place::kDram)];
    r.slow = track->count[static_cast<size_t>(Place::kSlow)];
    r.store = track->count[static_cast<size_t>(Place::kStore)];
    r.untouched = track->count[static_cast<size_t>(Place::kUntouched)];
  } else if (n > 0 && std::min(extents * extent_pages, t.pages) == t.pages) {
    for (const Residency& slice : slices) r.add(slice);
  } else {
    r = residency_of(c, t, 0, t.pages);
  }
  uint64_t active = 0;
  for (size_t e = 0; e < extents; e++) {
    uint32_t seen = heat->last_seen[e];
    if (seen == 0 || s.now_tick - seen > s.window_ticks) continue;
    active += std::min(extent_pages, t.pages - e * extent_pages) * c.page_bytes();
  }
  json::Json j = json::table_head({.id = t.id, .name = t.name, .bytes = t.bytes});
  j["pages"] = t.pages;
  j["dram_pages"] = r.dram;
  j["slow_pages"] = r.slow;
  j["store_pages"] = r.store;
  j["untouched_pages"] = r.untouched;
  j["heat"] = json::number(heat ? heat->total_heat : 0);
  j["samples_per_second"] = json::number(heat ? heat->samples_per_s : 0);
  j["active_bytes"] = active;
  write_moves(j, track);
  std::string place;
  json::Json& heat_map = j["heat_map"] = json::Json::array();
  for (size_t b = 0; b < n; b++) {
    size_t lo = extents * b / n, hi = extents * (b + 1) / n;
    double sum = 0;
    for (size_t e = lo; e < hi; e++) sum += heat->heat[e];
    heat_map.push_back(json::number(sum));
    place += slices[b].mark();
  }
  j["place"] = place;
  json::Json& pins = j["pins"] = json::Json::array();
  for (const Pin& pin : c.pins)
    if (pin.table_id == t.id)
      pins.push_back(
          {{"first_page", pin.first_page}, {"pages", pin.pages}, {"tier", pin_tier_name(pin.tier)}});
  return j;
}

json::Json process_json(const Client& c, bool stale, const HeatShape& s) {
  const ipc::SegmentHeader* h = c.segment->header();
  const uint64_t page = c.page_bytes();
  json::Json tables = json::Json::array();
  for (const auto& t : c.tables) tables.push_back(table_json(c, t, s));
  json::Json j = {{"pid", c.pid},
          {"uid", c.uid},
          {"name", c.name},
          {"weight", c.weight},
          {"job", c.job},
          {"rank", c.rank},
          {"world_size", c.world},
          {"stale", stale},
          {"dram_budget_bytes", h->dram_budget_pages.load() * page},
          {"dram_assigned_bytes", c.budget_sent * page},
          {"dram_resident_bytes", h->dram_resident_pages.load() * page},
          {"slow_budget_bytes", h->slow_budget_pages.load() * page},
          {"slow_resident_bytes", h->slow_resident_pages.load() * page},
          {"missing_faults", h->missing_faults.load()},
          {"minor_faults", h->minor_faults.load()},
          {"evictions", h->evictions.load()},
          {"fetches", h->fetches.load()},
          {"prefetch_pages", h->prefetch_pages.load()},
          {"prefetch_reads", h->prefetch_reads.load()},
          {"prefetch_hits", h->prefetch_hits.load()},
          {"prefetch_late", h->prefetch_late.load()},
          {"pinned_bytes", h->pinned_pages.load() * page},
          {"store_errors", h->store_errors.load()},
          {"store_full", h->store_full.load()},
          {"faults_per_second", json::number(c.faults_per_s)},
          {"heat_source", c.source != nullptr},
          {"samples", c.samples},
          {"unattributed_samples", c.unattributed},
          {"orders_sent", c.orders_sent},
          {"orders_dropped", c.orders_dropped},
          {"pages_ordered", c.pages_moved},
          {"tables", std::move(tables)}};
  // The counters a version-2 runtime publishes besides (absent from an
  // older runtime's segment, never read as garbage).
  if (c.segment->version() >= 2) {
    j["page_size_bytes"] = h->page_size.load();
    j["wp_faults"] = h->wp_faults.load();
    j["zero_fills"] = h->zero_fills.load();
    j["prefetches"] = h->prefetches.load();
    j["writebacks"] = h->writebacks.load();
    j["demotions"] = h->demotions.load();
    j["promotions"] = h->promotions.load();
    j["evict_cancels"] = h->evict_cancels.load();
    j["budget_overruns"] = h->budget_overruns.load();
    j["child_faults"] = h->child_faults.load();
    j["held_bytes"] = h->held_pages.load() * page;
  }
  return j;
}

// Node-wide use and traffic of one tier, summed over every process.
struct TierUse {
  uint64_t used = 0, budget = 0;
  double in_pages_per_s = 0, out_pages_per_s = 0;
  uint64_t in_pages = 0, out_pages = 0;  // since the daemon started, node-wide
};

std::string node_list(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

}  // namespace

// What is wrong with a job's ranks on this node, "" nothing: two of them
// say the same rank, they say different WORLD_SIZEs, or more of them are
// here than their WORLD_SIZE - two jobs under one name (a stale run with
// the same MASTER_ADDR:MASTER_PORT), grouped together only by that name.
static std::string job_conflict(const std::vector<const Client*>& ranks) {
  std::map<int32_t, std::vector<pid_t>> by_rank;
  std::set<int32_t> worlds;
  for (const Client* c : ranks) {
    if (c->rank >= 0) by_rank[c->rank].push_back(c->pid);
    if (c->world > 0) worlds.insert(c->world);
  }
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  for (const auto& [rank, pids] : by_rank)
    if (pids.size() > 1) {
      std::string list;
      for (pid_t p : pids) list += (list.empty() ? "" : ", ") + std::to_string(p);
      add("rank " + std::to_string(rank) + " " + std::to_string(pids.size()) + " times (pids " +
          list + ")");
    }
  if (worlds.size() > 1) {
    std::string list;
    for (int32_t w : worlds) list += (list.empty() ? "" : " and ") + std::to_string(w);
    add("the ranks say WORLD_SIZE " + list);
  } else if (worlds.size() == 1 && ranks.size() > static_cast<size_t>(*worlds.begin())) {
    add(std::to_string(ranks.size()) + " ranks here, WORLD_SIZE " + std::to_string(*worlds.begin()));
  }
  return why.empty() ? why : why + ": two jobs under one name?";
}

// Every job with a rank registered (the asker's own unless it is root):
// its ranks, and their budgets and residency summed.
json::Json Server::jobs_json(uid_t asker, const std::string& only) const {
  struct Job {
    std::vector<const Client*> ranks;
    uint64_t own = 0, assigned = 0, resident = 0;
  };
  std::map<std::pair<uid_t, std::string>, Job> jobs;
  for (const auto& [fd, cp] : clients_) {
    const Client& c = *cp;
    if (!c.is_runtime() || c.job.empty() || (asker != 0 && c.uid != asker)) continue;
    if (!only.empty() && c.job != only) continue;
    const ipc::SegmentHeader* h = c.segment->header();
    const uint64_t page = c.page_bytes();
    Job& job = jobs[{c.uid, c.job}];
    job.ranks.push_back(&c);
    job.own += h->dram_budget_pages.load() * page;
    job.assigned += c.budget_sent * page;
    job.resident += h->dram_resident_pages.load() * page;
  }
  json::Json out = json::Json::array();
  for (const auto& [key, job] : jobs) {
    json::Json ranks = json::Json::array();
    int32_t world = -1;
    for (const Client* c : job.ranks) {
      ranks.push_back({{"pid", c->pid}, {"rank", c->rank}});
      world = std::max(world, c->world);
    }
    out.push_back({{"name", key.second},
                   {"world_size", world},
                   {"conflict", job_conflict(job.ranks)},
                   {"uid", key.first},
                   {"dram_budget_bytes", job.own},
                   {"dram_assigned_bytes", job.assigned},
                   {"dram_resident_bytes", job.resident},
                   {"ranks", std::move(ranks)}});
  }
  return out;
}

// Pages moved node-wide since the daemon started, by kind (the tables'
// "moves" summed, those of exited processes and freed tables included).
json::Json Server::node_moves_json() const {
  json::Json moves = json::Json::object();
  for (unsigned m = 0; m < kPageMoveKinds; m++) moves[page_move_name(m)] = node_moves_[m];
  return moves;
}

// The ticks' durations: bucket bounds in seconds with cumulative counts,
// their sum and count (a Prometheus histogram's parts).
json::Json Server::tick_durations_json() const {
  const TickDurations& d = tick_durations_;
  json::Json buckets = json::Json::array();
  uint64_t below = 0;
  for (size_t b = 0; b < TickDurations::kBuckets; b++) {
    below += d.counts[b];
    buckets.push_back({{"le", json::number(TickDurations::kBounds[b])}, {"count", below}});
  }
  return {{"buckets", std::move(buckets)}, {"count", d.count}, {"sum_seconds", json::number(d.sum_s)}};
}

json::Json Server::tiers_json() const {
  // DRAM, slow memory, store: pages in, pages out, by move kind.
  TierUse use[3];
  for (const auto& [fd, cp] : clients_) {
    const Client& c = *cp;
    if (!c.is_runtime()) continue;
    const ipc::SegmentHeader* h = c.segment->header();
    const uint64_t page = c.page_bytes();
    use[0].used += h->dram_resident_pages.load() * page;
    use[0].budget += h->dram_budget_pages.load() * page;
    use[1].used += h->slow_resident_pages.load() * page;
    use[1].budget += h->slow_budget_pages.load() * page;
    for (const auto& [id, track] : c.tracks) {
      const auto& r = track.per_s;
      use[0].in_pages_per_s += r[kNewToDram] + r[kStoreToDram] + r[kSlowToDram];
      use[0].out_pages_per_s += r[kDramToSlow] + r[kDramToStore];
      use[1].in_pages_per_s += r[kNewToSlow] + r[kStoreToSlow] + r[kDramToSlow];
      use[1].out_pages_per_s += r[kSlowToDram] + r[kSlowToStore];
      use[2].in_pages_per_s += r[kDramToStore] + r[kSlowToStore];
      use[2].out_pages_per_s += r[kStoreToDram] + r[kStoreToSlow];
      use[2].used += track.count[static_cast<size_t>(policy::Place::kStore)] * page;
    }
  }
  const auto& n = node_moves_;
  use[0].in_pages = n[kNewToDram] + n[kStoreToDram] + n[kSlowToDram];
  use[0].out_pages = n[kDramToSlow] + n[kDramToStore];
  use[1].in_pages = n[kNewToSlow] + n[kStoreToSlow] + n[kDramToSlow];
  use[1].out_pages = n[kSlowToDram] + n[kSlowToStore];
  use[2].in_pages = n[kDramToStore] + n[kSlowToStore];
  use[2].out_pages = n[kStoreToDram] + n[kStoreToSlow];
  // A node budget, when configured, is what the tier may hold; else each
  // process's own budgets add up.
  if (cfg_.dram_bytes) use[0].budget = cfg_.dram_bytes;
  if (cfg_.slow_bytes) use[1].budget = cfg_.slow_bytes;
  const MemoryTierInfo* fast = nullptr;
  const MemoryTierInfo* slow = nullptr;
  for (const auto& t : topology_.tiers) {
    if (t.kind == TierKind::kDram && !fast) fast = &t;
    if (t.kind == TierKind::kSlowMemory && !slow) slow = &t;
  }
  auto tier = [&](const char* name, const char* kind, const MemoryTierInfo* info,
                  const TierUse& u) {
    return json::Json{{"name", name},
                      {"kind", kind},
                      {"nodes", info ? node_list(info->nodes) : ""},
                      {"capacity_bytes", info ? info->bytes : 0},
                      {"budget_bytes", u.budget},
                      {"used_bytes", u.used},
                      {"in_bytes", u.in_pages * kPageSize},
                      {"out_bytes", u.out_pages * kPageSize},
                      {"in_bytes_per_second", json::number(u.in_pages_per_s * kPageSize)},
                      {"out_bytes_per_second", json::number(u.out_pages_per_s * kPageSize)}};
  };
  return {tier("dram", "dram", fast, use[0]), tier("slow", "slow-memory", slow, use[1]),
          tier("store", "store", nullptr, use[2])};
}

std::string Server::status_json(const Client& asker, pid_t pid, const std::string& job,
                                unsigned buckets, unsigned window_ms, int* status) {
  json::Json doc = status_doc(asker, pid, job, buckets, window_ms, status);
  if (*status == -EPERM) return "pid " + std::to_string(pid) + " belongs to another user";
  if (*status < 0 && !pid) return "no process of job " + job + " is registered with mtierd";
  if (*status < 0)
    return "pid " + std::to_string(pid) + (job.empty() ? "" : " of job " + job) +
           " is not registered with mtierd";
  return json::dump(doc);
}

json::Json Server::status_doc(const Client& asker, pid_t pid, const std::string& job,
                              unsigned buckets, unsigned window_ms, int* status) {
  *status = 0;
  HeatShape shape{std::max(buckets, 1u), tick_,
                  (window_ms + cfg_.tick_ms - 1) / std::max(cfg_.tick_ms, 1u)};
  json::Json sources = json::Json::array();
  for (const auto& s : detected_)
    sources.push_back({{"name", heat_source_name(s.kind)},
                       {"available", s.available},
                       {"reason", s.available ? "" : s.reason}});
  json::Json daemon = {{"pid", getpid()},
                       {"socket", cfg_.socket},
                       {"policy", policy_->name()},
                       {"policy_params", policy_->params_text()},
                       {"heat_source", sources_in_use()},
                       {"sources", std::move(sources)},
                       {"dram_bytes", cfg_.dram_bytes},
                       {"slow_bytes", cfg_.slow_bytes},
                       {"migrate_bytes_per_second", cfg_.migrate_rate},
                       {"tick_seconds", json::number(cfg_.tick_ms / 1000.0)},
                       {"heat_buckets", shape.buckets},
                       {"window_seconds", json::number(window_ms / 1000.0)},
                       {"version", PACKAGE_VERSION},
                       {"license", PACKAGE_LICENSE},
                       {"page_size_bytes", kPageSize},
                       {"moves", node_moves_json()},
                       {"tick_duration", tick_durations_json()}};
  json::Json processes = json::Json::array();
  bool found = pid == 0 && job.empty();
  for (const auto& [fd, c] : clients_) {
    if (!c->is_runtime() || (pid && c->pid != pid) || (!job.empty() && c->job != job)) continue;
    if (asker.uid != 0 && c->uid != asker.uid) {
      if (pid) *status = -EPERM;  // asked by pid: say it is not the asker's
      continue;
    }
    found = true;
    processes.push_back(
        process_json(*c, !c->segment->runtime_alive(uint64_t{cfg_.stale_ms} * 1000000), shape));
  }
  if (*status == 0 && !found) *status = -ESRCH;
  return {{"daemon", std::move(daemon)},
          {"tiers", tiers_json()},
          {"processes", std::move(processes)},
          {"jobs", jobs_json(asker.uid, job)}};
}

int Server::start_metrics(std::string* why) {
  std::string err;
  int rc = metrics_.start(cfg_.metrics_address, &err);
  if (rc == -EINVAL) {
    *why = "metrics_address: " + err;
    return rc;
  }
  if (rc < 0)
    MTIER_LOG_WARN("metrics for Prometheus not served: %s (metrics_address)", err.c_str());
  else if (metrics_.serving())
    MTIER_LOG_NOTICE("metrics for Prometheus at http://%s/metrics", metrics_.address().c_str());
  return 0;
}

// As root sees it (every process): the endpoint is for the node's
// operator, and it listens on localhost unless configured otherwise.
void Server::render_metrics() {
  uint64_t now = ipc::monotonic_ns();
  if (!metrics_.wants_render(now)) return;
  Client root;
  root.uid = 0;
  int status = 0;
  json::Json doc = status_doc(root, 0, "", 1, cfg_.tick_ms * 10, &status);
  metrics_.publish(fs::prometheus_text(status == 0 ? &doc : nullptr), now);
}

}  // namespace mtier::daemon
