// SPDX-License-Identifier: Apache-2.0
// The daemon's tick: heat from each registered process's source into its
// heat model, the table directories kept in step, the policy's plan over
// every process, and the plan sent as orders through each process's ring.
// Its work over pages is bounded: at most scan_pages_per_tick page words
// read (page_scan.h) and as many heat extents cooled, all processes
// together; tables larger than that are read, planned and cooled a window
// a tick.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <tuple>

#include "fuse_child.h"
#include "ipc/channel.h"
#include "log/log.h"
#include "server.h"

namespace mtier::daemon {
namespace {

// Ring pages per thread for the heat source: 2^5 data pages (128 KiB) hold
// a tick's samples at the default max_samples.
constexpr unsigned kRingPagesLog2 = 5;
constexpr double kRefreshThreadsS = 1.0;

ipc::Order order_of(const policy::Move& m, uint64_t table_first_page) {
  ipc::Order o{};
  o.table_id = static_cast<uint32_t>(m.table_id);
  o.first_page = table_first_page + m.first_page;
  o.count = m.count;
  switch (m.op) {
    case policy::Move::kEvict:
      o.op = static_cast<uint16_t>(ipc::OrderOp::kEvict);
      o.tier = 0;
      break;
    case policy::Move::kDemote:
      o.op = static_cast<uint16_t>(ipc::OrderOp::kEvict);
      o.tier = 1;
      break;
    case policy::Move::kPrefetch:
      o.op = static_cast<uint16_t>(ipc::OrderOp::kPrefetch);
      o.tier = 0;
      break;
    case policy::Move::kPromote:
      o.op = static_cast<uint16_t>(ipc::OrderOp::kMove);
      o.tier = 0;
      break;
  }
  return o;
}

// Pages of each kind of move that plan_and_order() lets through for one
// process this tick (see there).
struct Room {
  uint64_t evict = 0;     // out of DRAM while over budget
  uint64_t fetch = 0;     // into DRAM from a store, below the low watermark
  uint64_t promote = 0;   // into DRAM from the slow tier, below the high watermark
  uint64_t exchange = 0;  // demotions past `evict`, each letting one promotion past `promote`
  uint64_t exchanged = 0; // of those, demotions sent and not yet matched by a promotion

  // Takes up to `want` pages of room for a move of kind `op`; returns them.
  uint32_t take(policy::Move::Op op, uint32_t want) {
    uint64_t n = 0;
    auto from = [&](uint64_t& r) {
      uint64_t k = std::min<uint64_t>(r, want - n);
      r -= k;
      n += k;
      return k;
    };
    switch (op) {
      case policy::Move::kEvict:
        from(evict);
        break;
      case policy::Move::kDemote:
        from(evict);
        exchanged += from(exchange);
        break;
      case policy::Move::kPrefetch:
        from(fetch);
        break;
      case policy::Move::kPromote:
        from(promote);
        exchanged -= from(exchanged);
        break;
    }
    return static_cast<uint32_t>(n);
  }
};

// Where the view of table `table_id` starts in the table (0 for a whole
// table; policy.h: a window's moves name pages of the window).
uint64_t view_first_page(const policy::ProcessView& pv, int table_id) {
  for (const policy::TableView& tv : pv.tables)
    if (tv.id == table_id) return tv.first_page;
  return 0;
}

size_t index_of(const std::vector<Client*>& order, uint32_t client) {
  for (size_t i = 0; i < order.size(); i++)
    if (order[i]->id == client) return i;
  return order.size();
}

}  // namespace

template <class F>
bool Server::guarded(Client& c, const char* what, F&& f) noexcept {
  const char* reason = "";
  try {
    f();
    return true;
  } catch (const std::bad_alloc&) {
    reason = "out of memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    // Copied while e lives; no allocation here.
    snprintf(c.failed_why, sizeof c.failed_why, "%s: %s", what, e.what());
    c.failed = true;
    return false;
  } catch (...) {
    reason = "an unknown exception";
  }
  snprintf(c.failed_why, sizeof c.failed_why, "%s: %s", what, reason);
  c.failed = true;
  return false;
}

void Server::drop_failed() {
  for (auto it = clients_.begin(); it != clients_.end();) {
    Client& c = *(it++)->second;  // refuse() erases c
    if (!c.failed) continue;
    MTIER_LOG_ERROR("%s: %s; connection closed (the others are served on)", c.label().c_str(),
                    c.failed_why);
    refuse(c, -ENOMEM, c.failed_why);
  }
}

const HeatSourceInfo* Server::pick_source() const {
  // Best first: exact data addresses of sampled accesses, then faults.
  for (HeatSourceKind k :
       {HeatSourceKind::kPebs, HeatSourceKind::kIbs, HeatSourceKind::kPageFaults}) {
    const HeatSourceInfo& s = detected_[static_cast<size_t>(k)];
    bool wanted = cfg_.sources == kSourcesAuto || (cfg_.sources & (1u << static_cast<int>(k)));
    if (wanted && s.available) return &s;
  }
  return nullptr;
}

void Server::open_heat_source(Client& c) {
  if (!source_) return;
  auto src = std::make_unique<HeatSource>();
  HeatSourceOptions opt;
  opt.period = source_->fixed_period ? 0 : cfg_.sample_period;
  opt.ring_pages_log2 = kRingPagesLog2;
  if (int rc = src->open(*source_, c.pid, opt); rc < 0) {
    MTIER_LOG_WARN(
        "%s: heat source %s: %s; no heat samples from it (the policy sees only "
        "where its pages are)",
        c.label().c_str(), heat_source_name(source_->kind), strerror(-rc));
    return;
  }
  c.source = std::move(src);
}

// Re-reads the directory when its generation moved; the heat model follows
// (tables gone are dropped, new ones added, a table whose size changed is
// new). A directory that does not validate drops the client.
void Server::sync_directory(Client& c) {
  uint64_t gen = c.segment->header()->directory_generation.load(std::memory_order_acquire);
  if (gen == c.directory_generation) return;
  std::vector<ipc::TableEntry> tables;
  int rc = c.segment->read_directory(&tables, &gen);
  if (rc == -EAGAIN) return;  // being written: next tick
  if (rc < 0) return refuse(c, rc, "its table directory is invalid");
  for (const auto& old : c.tables) {
    bool kept = false;
    for (const auto& t : tables) kept |= t.id == old.id && t.pages == old.pages;
    if (kept) continue;
    (void)c.heat->remove_table(static_cast<int>(old.id));
    c.tracks.erase(old.id);
    (void)set_pin(&c.pins, old.id, 0, old.pages, nullptr);
  }
  for (const auto& t : tables)
    if (!c.heat->find(static_cast<int>(t.id)))
      (void)c.heat->add_table(static_cast<int>(t.id), t.pages);
  c.tables = std::move(tables);
  c.directory_generation = gen;
  map_addresses(c);
}

// The tables' address ranges in c.addresses, by the page size c's segment
// names. A directory whose ranges the map refuses (overlapping: a hostile
// runtime's) leaves none: its samples count as unattributed.
void Server::map_addresses(Client& c) {
  const uint64_t page = c.page_bytes();
  const uint64_t base = c.segment->layout().region_base;
  if (c.addresses.page_size() != page) c.addresses = AddressMap(page);
  std::vector<AddressRange> ranges;
  for (const auto& t : c.tables)
    if (t.pages > 0) ranges.push_back({base + t.first_page * page, t.pages, t.id});
  if (c.addresses.replace(c.pid, std::move(ranges)) < 0) {
    c.addresses.remove(c.pid);
    MTIER_LOG_WARN("%s: its tables' address ranges overlap; its heat samples are not attributed",
                   c.label().c_str());
  }
}

// Samples into heat: the address names a table and page by the
// directory's ranges (c.addresses). At most max_samples per second over
// all processes; the rest waits in the rings (or is lost, and counted).
void Server::collect_heat() {
  double tick_s = cfg_.tick_ms / 1000.0;
  size_t budget = static_cast<size_t>(cfg_.max_samples * tick_s) + 1;
  bool refresh = since_refresh_s_ >= kRefreshThreadsS;
  if (refresh) since_refresh_s_ = 0;
  for (auto& [fd, cp] : clients_) {
    Client& c = *cp;
    if (!c.is_runtime() || !c.source || c.failed) continue;
    long n = 0;
    guarded(c, "collecting its heat", [&] { n = drain_heat(c, refresh, budget); });
    if (n > 0) budget -= std::min(budget, static_cast<size_t>(n));
  }
}

long Server::drain_heat(Client& c, bool refresh, size_t budget) {
  if (refresh) (void)c.source->refresh();
  long n = c.source->drain(
      [&](const PerfSample& s) {
        c.samples++;
        std::optional<AddressHit> hit;
        if (s.has_addr) hit = c.addresses.lookup(c.pid, s.addr);
        if (!hit) {
          c.unattributed++;
          return;
        }
        c.heat->record(static_cast<int>(hit->owner), hit->page);
      },
      budget);
  return n;
}

void Server::tick() {
  double tick_s = cfg_.tick_ms / 1000.0;
  since_cool_s_ += tick_s;
  since_refresh_s_ += tick_s;
  since_rate_s_ += tick_s;
  span_s_ += tick_s;
  tick_++;
  render_metrics();
  if (ticks_to_skip_ > 0) {
    // After a long tick: only the heartbeats (a runtime counts the daemon
    // gone after 2 s without one) and the accept pause.
    ticks_to_skip_--;
    for (auto& [fd, c] : clients_)
      if (c->is_runtime()) c->segment->stamp_daemon_heartbeat();
    resume_accept();
    return;
  }
  uint64_t start_ns = ipc::monotonic_ns();
  for (auto it = clients_.begin(); it != clients_.end();) {
    Client& c = *(it++)->second;  // sync may drop c
    if (c.is_runtime()) guarded(c, "reading its table directory", [&] { sync_directory(c); });
  }
  collect_heat();
  bool cool = since_cool_s_ >= policy_->cool_period_s();
  std::vector<Client*> live;
  for (auto& [fd, c] : clients_) {
    if (!c->is_runtime() || c->failed) continue;
    c->heat->tick(tick_, span_s_);
    if (cool) c->heat->request_cool();
    c->segment->stamp_daemon_heartbeat();
    live.push_back(c.get());
  }
  if (cool) since_cool_s_ = 0;
  // Cooling visits at most scan_pages_per_tick extents in all, starting at
  // a process that turns with the ticks (so no large table keeps the
  // others from cooling); heat models that fit are cooled whole, at once.
  uint64_t cool_left = cfg_.scan_pages_per_tick;
  for (size_t k = 0; k < live.size() && cool_left > 0; k++)
    cool_left -= std::min(cool_left, live[(tick_ + k) % live.size()]->heat->cool_step(cool_left));
  plan_and_order(span_s_);
  count_node_moves();
  span_s_ = 0;
  drop_failed();
  resume_accept();
  if (since_rate_s_ >= 1.0) {
    update_rates(since_rate_s_);
    since_rate_s_ = 0;
    int status;
    if (fuse_pid_ > 0 && mtierfs_exited(fuse_pid_, &status)) {
      MTIER_LOG_WARN("mtierfs on %s exited with status %d; the daemon serves on without it",
                     cli_.fuse_mount.c_str(), status);
      fuse_pid_ = 0;
    }
  }
  uint64_t took_ns = ipc::monotonic_ns() - start_ns;
  tick_durations_.observe(static_cast<double>(took_ns) / 1e9);
  MTIER_LOG_DEBUG("tick %u took %.1f ms, read %llu page words", tick_,
                  static_cast<double>(took_ns) / 1e6,
                  static_cast<unsigned long long>(scan_.last_pages()));
  pace_ticks(took_ns);
}

// The tick's page work is bounded by scan_pages_per_tick (page_scan.h), but
// a tick can still be long (a slow or loaded machine, a large budget, many
// processes): a tick that took `took_ns` is followed by enough idle ticks
// that the work stays within 1/kTickDuty of the time, a second guard.
void Server::pace_ticks(uint64_t took_ns) {
  constexpr uint64_t kTickDuty = 4;
  uint64_t tick_ns = uint64_t{cfg_.tick_ms} * 1000000;
  ticks_to_skip_ = took_ns * (kTickDuty - 1) / tick_ns;
  if (ticks_to_skip_ == 0 || paced_said_) return;
  paced_said_ = true;
  uint64_t pages = 0;
  for (const auto& [fd, c] : clients_)
    for (const auto& t : c->tables) pages += t.pages;
  MTIER_LOG_NOTICE(
      "a tick took %llu ms over %llu table pages: the policy runs every %llu ticks while ticks "
      "take this long (mtierd spends at most 1/%llu of the time on them)",
      static_cast<unsigned long long>(took_ns / 1000000), static_cast<unsigned long long>(pages),
      static_cast<unsigned long long>(ticks_to_skip_ + 1),
      static_cast<unsigned long long>(kTickDuty));
}

void Server::apply_pins(Client& c, uint64_t limit, std::vector<ipc::Order>* out) {
  uint64_t left = limit ? limit : ~0ull;
  for (const Pin& pin : c.pins) {
    const ipc::TableEntry* t = nullptr;
    for (const auto& e : c.tables)
      if (e.id == pin.table_id) t = &e;
    auto track = c.tracks.find(pin.table_id);
    if (!t || track == c.tracks.end() || track->second.place.size() != t->pages) continue;
    const std::vector<policy::Place>& place = track->second.place;
    const TableTrack& tr = track->second;
    uint64_t end = std::min({pin.first_page + pin.pages, uint64_t{t->pages}, tr.view_hi});
    uint8_t hint = pin.tier == PinTier::kDram ? policy::kHintKeep : policy::kHintNone;
    // Pages not where the pin wants them (untouched pages are left alone:
    // there is nothing to move until the program touches them).
    auto astray = [&](policy::Place p) {
      switch (pin.tier) {
        case PinTier::kDram: return p == policy::Place::kStore || p == policy::Place::kSlow;
        case PinTier::kSlow: return p == policy::Place::kDram;
        case PinTier::kStore: return p == policy::Place::kDram || p == policy::Place::kSlow;
      }
      return false;
    };
    ipc::Order o{};
    o.table_id = pin.table_id;
    o.op = static_cast<uint16_t>(pin.tier == PinTier::kDram ? ipc::OrderOp::kPrefetch
                                                            : ipc::OrderOp::kEvict);
    o.tier = pin.tier == PinTier::kSlow ? 1 : 0;
    for (uint64_t p = std::max(pin.first_page, tr.view_lo); p < end; p++) {
      c.segment->set_hint(t->first_page + p, hint);
      bool move = left > 0 && astray(place[p]);
      if (move && o.count > 0 && o.first_page + o.count == t->first_page + p &&
          o.count < UINT32_MAX) {
        o.count++;
      } else if (move) {
        if (o.count) out->push_back(o);
        o.first_page = t->first_page + p;
        o.count = 1;
      }
      if (move) left--;
    }
    if (o.count) out->push_back(o);
  }
}

void Server::count_node_moves() {
  for (auto& [fd, cp] : clients_)
    for (auto& [id, track] : cp->tracks)
      for (unsigned m = 0; m < kPageMoveKinds; m++) {
        node_moves_[m] += track.moves[m] - track.moves_counted[m];
        track.moves_counted[m] = track.moves[m];
      }
}

void Server::update_rates(double elapsed_s) {
  for (auto& [fd, cp] : clients_) {
    Client& c = *cp;
    if (!c.is_runtime()) continue;
    uint64_t faults = c.segment->header()->missing_faults.load(std::memory_order_relaxed);
    c.faults_per_s = faults >= c.faults_at_rate ? (faults - c.faults_at_rate) / elapsed_s : 0;
    c.faults_at_rate = faults;
    for (auto& [id, track] : c.tracks)
      for (unsigned m = 0; m < kPageMoveKinds; m++) {
        track.per_s[m] = (track.moves[m] - track.moves_at_rate[m]) / elapsed_s;
        track.moves_at_rate[m] = track.moves[m];
      }
  }
}

// The ranks of one job are the registered processes of one user that name
// the same job: another user's processes never share a budget with them,
// whatever name they give. Numbers 1.. in the order met, for this tick.
void Server::number_jobs(const std::vector<Client*>& order, policy::NodeView* node) const {
  std::map<std::pair<uid_t, std::string>, uint32_t> numbers;
  for (size_t i = 0; i < order.size(); i++) {
    const Client& c = *order[i];
    if (c.job.empty()) continue;
    auto [it, added] = numbers.try_emplace({c.uid, c.job}, static_cast<uint32_t>(numbers.size() + 1));
    node->procs[i].job = it->second;
  }
}

void Server::fill_view(Client& c, const ScanWindow* windows, policy::ProcessView* pv) {
  const ipc::SegmentHeader* h = c.segment->header();
  pv->client = c.id;
  pv->pid = c.pid;
  pv->weight = c.weight;
  pv->misses_per_s = c.faults_per_s;
  pv->dram_resident_pages = h->dram_resident_pages.load(std::memory_order_relaxed);
  pv->slow_resident_pages = h->slow_resident_pages.load(std::memory_order_relaxed);
  pv->own_budget_pages = h->dram_budget_pages.load(std::memory_order_relaxed);
  pv->own_slow_budget_pages = h->slow_budget_pages.load(std::memory_order_relaxed);
  uint64_t high = h->dram_high_pages.load(std::memory_order_relaxed);
  if (high > 0 && high < pv->own_budget_pages)
    pv->dram_fill = static_cast<double>(high) / static_cast<double>(pv->own_budget_pages);
  uint64_t e = c.heat->extent_pages();
  uint64_t all = 0, shown = 0, touched = 0;
  for (size_t k = 0; k < c.tables.size(); k++) {
    const ipc::TableEntry& t = c.tables[k];
    TableTrack& track = c.tracks.at(t.id);
    const ScanWindow& w = windows[k];
    uint64_t lo = 0, hi = t.pages;
    if (w.lo != 0 || w.hi != t.pages) {
      lo = w.empty() ? 0 : w.lo / e * e;
      hi = w.empty() ? 0 : std::min(t.pages, (w.hi + e - 1) / e * e);
    }
    track.view_lo = lo;
    track.view_hi = hi;
    all += t.pages;
    shown += hi - lo;
    touched += t.pages - track.count[static_cast<size_t>(policy::Place::kUntouched)];
    policy::TableView tv;
    if (c.heat->fill_view(static_cast<int>(t.id), &tv) < 0) continue;
    tv.name = t.name;
    tv.place = track.place.data() + lo;
    tv.hints = c.segment->hints() + t.first_page + lo;
    if (lo != 0 || hi != t.pages) {  // a window (policy.h)
      tv.first_page = lo;
      tv.table_pages = t.pages;
      tv.pages = hi - lo;
      tv.heat += lo / e;
      tv.last_seen += lo / e;
    }
    pv->tables.push_back(std::move(tv));
  }
  pv->touched_pages = touched;
  if (shown < all) pv->view_share = static_cast<double>(shown) / static_cast<double>(all);
}

void Server::scan_tables(Client& c, std::vector<ScanTable>* scan) {
  size_t before = scan->size();
  try {
    for (const auto& t : c.tables) {
      TableTrack& track = c.tracks[t.id];  // std::map: the pointer stays valid
      ensure_track(&track, t.pages);
      scan->push_back({c.segment->words() + t.first_page, t.pages, &track, c.id});
    }
  } catch (...) {
    scan->resize(before);
    throw;
  }
}

void Server::plan_and_order(double tick_s) {
  policy::NodeView node;
  node.now_tick = tick_;
  node.tick_seconds = tick_s;
  node.dram_pages = cfg_.dram_bytes / kPageSize;
  node.slow_pages = cfg_.slow_bytes / kPageSize;
  node.migrate_pages_per_tick =
      cfg_.migrate_rate
          ? std::max<uint64_t>(1, static_cast<uint64_t>(cfg_.migrate_rate * tick_s / kPageSize))
          : 0;
  // The page words of every process's tables are read within the scan
  // budget (page_scan.h), then each process's view is made of what was read.
  std::vector<Client*> scanned, order;
  std::vector<size_t> first_table;  // scanned[i]'s first entry in scan_tables_
  uint64_t stale_ns = uint64_t{cfg_.stale_ms} * 1000000;
  scan_tables_.clear();
  for (auto& [fd, cp] : clients_) {
    Client& c = *cp;
    if (!c.is_runtime() || c.failed || !c.segment->runtime_alive(stale_ns)) continue;
    size_t first = scan_tables_.size();
    if (!guarded(c, "reading its pages", [&] { scan_tables(c, &scan_tables_); })) continue;
    scanned.push_back(&c);
    first_table.push_back(first);
  }
  scan_.set_budget(cfg_.scan_pages_per_tick);
  scan_.scan(scan_tables_, &scan_windows_);
  for (size_t i = 0; i < scanned.size(); i++) {
    Client& c = *scanned[i];
    policy::ProcessView pv;
    if (!guarded(c, "reading its pages",
                 [&] { fill_view(c, scan_windows_.data() + first_table[i], &pv); }))
      continue;
    node.procs.push_back(std::move(pv));
    order.push_back(&c);
  }
  if (node.procs.empty()) return;
  number_jobs(order, &node);
  policy::Plan plan;
  policy_->plan(node, &plan);
  std::vector<bool> woken(order.size(), false);
  auto push = [&](size_t i, const ipc::Order& o) {
    Client& c = *order[i];
    if (c.ring->push(o)) {
      c.orders_sent++;
      c.pages_moved += o.count;
      woken[i] = true;
    } else {
      c.orders_dropped++;
    }
  };
  for (size_t i = 0; i < order.size(); i++) {
    Client& c = *order[i];
    // A node budget is carried out by the process's own evictor (tier 0
    // DRAM, tier 1 the slow memory tier).
    // So is a job's (its ranks' own budgets, shared by need).
    bool assigned = node.dram_pages || node.procs[i].job;
    uint64_t b = assigned ? plan.dram_budget_pages[i] : 0;
    uint64_t sb = node.slow_pages ? plan.slow_budget_pages[i] : 0;
    for (auto [tier, pages, sent] :
         {std::tuple{0, b, &c.budget_sent}, {1, sb, &c.slow_budget_sent}}) {
      if (pages == *sent) continue;
      ipc::Order o{};
      o.op = static_cast<uint16_t>(ipc::OrderOp::kSetBudget);
      o.tier = static_cast<uint16_t>(tier);
      o.first_page = pages;
      push(i, o);
      *sent = pages;
    }
  }
  // What of the plan's moves is sent: evictions only while the process is
  // over its budget (the node budget shrank), fetch orders only into room
  // below its low watermark. The rest of the plan acts through the hints,
  // on the process's own evictor: swapping pages in and out of a store
  // against a full budget made the replay's misses 30% worse (a keep set
  // from fault samples does not see the hot pages that never fault), and a
  // fetch order above the low mark only makes the evictor run.
  // Between DRAM and the slow memory tier (a copy, no I/O) the plan is
  // carried out against a full budget too: promotions go into room below
  // the high watermark, and demotions that make room for them go out in
  // exchange, as many as the promotions that wait for room. Without that a
  // hot page that was demoted would stay in the slow tier for as long as
  // DRAM stays full.
  std::vector<Room> room(order.size());
  for (size_t i = 0; i < order.size(); i++) {
    const policy::ProcessView& pv = node.procs[i];
    const ipc::SegmentHeader* h = order[i]->segment->header();
    uint64_t budget =
        node.dram_pages || pv.job ? plan.dram_budget_pages[i] : pv.own_budget_pages;
    uint64_t own = std::max<uint64_t>(pv.own_budget_pages, 1);
    uint64_t low = budget * h->dram_low_pages.load(std::memory_order_relaxed) / own;
    uint64_t high_own = h->dram_high_pages.load(std::memory_order_relaxed);
    uint64_t high = high_own ? budget * high_own / own : budget;
    uint64_t resident = pv.dram_resident_pages;
    room[i].evict = resident > budget ? resident - budget : 0;
    room[i].fetch = resident < low ? low - resident : 0;
    room[i].promote = resident < high ? high - resident : 0;
  }
  std::vector<uint64_t> promote(order.size()), demote(order.size());
  for (const policy::Move& m : plan.moves) {
    size_t i = index_of(order, m.client);
    if (i == order.size()) continue;
    if (m.op == policy::Move::kPromote) promote[i] += m.count;
    if (m.op == policy::Move::kDemote) demote[i] += m.count;
  }
  for (size_t i = 0; i < order.size(); i++) {
    uint64_t waiting = promote[i] - std::min(promote[i], room[i].promote);
    room[i].exchange = std::min(waiting, demote[i]);
  }
  // Pins come after the plan: their hints overwrite the policy's, and their
  // orders go out whatever the room (the user asked for them).
  std::vector<ipc::Order> pinned;
  for (size_t i = 0; i < order.size(); i++) {
    pinned.clear();
    apply_pins(*order[i], node.migrate_pages_per_tick, &pinned);
    for (const ipc::Order& o : pinned) push(i, o);
  }
  for (policy::Move m : plan.moves) {
    size_t i = index_of(order, m.client);
    if (i == order.size()) continue;
    m.first_page += view_first_page(node.procs[i], m.table_id);  // a window's: the table's
    bool out = m.op == policy::Move::kEvict || m.op == policy::Move::kDemote;
    if (against_pins(order[i]->pins, static_cast<uint32_t>(m.table_id), m.first_page, m.count,
                     !out))
      continue;
    uint32_t n = room[i].take(m.op, m.count);
    if (n == 0) continue;
    policy::Move cut = m;
    cut.count = n;
    for (const auto& t : order[i]->tables)
      if (static_cast<int>(t.id) == m.table_id) push(i, order_of(cut, t.first_page));
  }
  for (size_t i = 0; i < order.size(); i++) {
    if (!woken[i]) continue;
    ipc::Orders wake{order[i]->segment->header()->ring_head.load(std::memory_order_relaxed)};
    int rc = ipc::send_message(order[i]->fd, ipc::Message{wake}, nullptr, 0);
    if (rc < 0 && rc != -EAGAIN)
      MTIER_LOG_DEBUG("%s: ORDERS: %s", order[i]->label().c_str(), strerror(-rc));
  }
}

}  // namespace mtier::daemon
