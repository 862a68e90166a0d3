// SPDX-License-Identifier: Apache-2.0
// mtierd's heat model, budget sharing, move post-processing and the four
// tiering policies (lfu, lru, hot-promote, static), on synthetic nodes whose
// keep sets and moves are worked out by hand in the comments; and the
// POLICIES section of man/mtier.7 against the registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "policy/fair_share.h"
#include "policy/heat_model.h"
#include "policy/policy.h"
#include "policy/rate_limit.h"

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for man/mtier.7)"
#endif

namespace mtier::policy {
namespace {

constexpr Place D = Place::kDram, S = Place::kSlow, F = Place::kStore, U = Place::kUntouched;

// A table of a synthetic process; owns the arrays a TableView points into.
struct FakeTable {
  int id;
  uint64_t pages;
  uint32_t extent_pages;
  std::vector<Place> place;
  std::vector<float> heat;
  std::vector<uint32_t> last_seen;
  std::vector<uint8_t> hints;
  double rate = 0;

  FakeTable(int id_, uint64_t pages_, uint32_t e = 1, Place p = D)
      : id(id_), pages(pages_), extent_pages(e), place(pages_, p),
        heat((pages_ + e - 1) / e, 0.0f), last_seen((pages_ + e - 1) / e, 0),
        hints(pages_, 77) {}  // garbage: plan() must clear it

  TableView view() {
    TableView v;
    v.id = id;
    v.name = "t" + std::to_string(id);
    v.pages = pages;
    v.extent_pages = extent_pages;
    v.place = place.data();
    v.heat = heat.data();
    v.last_seen = last_seen.data();
    v.samples_per_s = rate;
    v.hints = hints.data();
    return v;
  }
  std::vector<uint64_t> kept() const {
    std::vector<uint64_t> k;
    for (uint64_t i = 0; i < pages; ++i)
      if (hints[i]) k.push_back(i);
    return k;
  }
};

struct FakeProc {
  uint32_t client;
  uint64_t own_budget;
  unsigned weight = 100;
  std::vector<FakeTable> tables;

  // Resident counts from the place arrays, as the engine would report them.
  ProcessView view() {
    ProcessView v;
    v.client = client;
    v.pid = 1000 + static_cast<int>(client);
    v.weight = weight;
    v.own_budget_pages = own_budget;
    for (FakeTable& t : tables) {
      for (Place p : t.place) {
        v.dram_resident_pages += p == D;
        v.slow_resident_pages += p == S;
      }
      v.tables.push_back(t.view());
    }
    return v;
  }
};

NodeView node_of(std::vector<FakeProc>& procs, uint32_t now, uint64_t dram, uint64_t slow = 0,
                 uint64_t rate = 0) {
  NodeView n;
  n.now_tick = now;
  n.tick_seconds = 1.0;
  n.dram_pages = dram;
  n.slow_pages = slow;
  n.migrate_pages_per_tick = rate;
  for (FakeProc& p : procs) n.procs.push_back(p.view());
  return n;
}

// "client:table op first+count" per move, separated by "; ".
std::string text(const std::vector<Move>& moves) {
  std::string s;
  for (const Move& m : moves)
    s += (s.empty() ? "" : "; ") + std::to_string(m.client) + ":" + std::to_string(m.table_id) +
         " " + op_name(m.op) + " " + std::to_string(m.first_page) + "+" +
         std::to_string(m.count);
  return s;
}

std::unique_ptr<Policy> make(const std::string& name, const std::string& params = "") {
  std::unique_ptr<Policy> p;
  std::string why;
  EXPECT_EQ(make_policy(name, params, &p, &why), 0) << why;
  return p;
}

using Pages = std::vector<uint64_t>;

// ---- heat model ----

TEST(HeatModel, RecordAddsToTheExtentAndStampsTheTick) {
  HeatModel m(4);
  ASSERT_EQ(m.add_table(7, 10), 0);  // extents: [0,4) [4,8) [8,10)
  const HeatModel::Table* t = m.find(7);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->heat.size(), 3u);
  m.record(7, 0);
  m.record(7, 3);
  m.record(7, 4, 2.5f);
  m.tick(5, 0);
  m.record(7, 9);
  EXPECT_EQ(t->heat, (std::vector<float>{2, 2.5f, 1}));
  EXPECT_EQ(t->last_seen, (std::vector<uint32_t>{1, 1, 5}));
  EXPECT_DOUBLE_EQ(t->total_heat, 5.5);
  EXPECT_EQ(m.now(), 5u);
}

TEST(HeatModel, CoolHalvesEveryHeat) {
  HeatModel m(1);
  ASSERT_EQ(m.add_table(1, 3), 0);
  ASSERT_EQ(m.add_table(2, 2), 0);
  for (int i = 0; i < 8; ++i) m.record(1, 0);
  m.record(1, 2, 3);
  m.record(2, 1, 5);
  m.cool();
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>{4, 0, 1.5f}));
  EXPECT_EQ(m.find(2)->heat, (std::vector<float>{0, 2.5f}));
  EXPECT_DOUBLE_EQ(m.find(1)->total_heat, 5.5);
  m.cool();
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>{2, 0, 0.75f}));
  EXPECT_EQ(m.find(1)->last_seen, (std::vector<uint32_t>{1, 0, 1}));  // cooling keeps recency
}

// Cooling in bounded steps (what the daemon does for tables larger than a
// tick's budget): each step visits at most its budget of extents, and every
// halving asked for reaches every extent, those asked for during a pass in
// the pass after it.
TEST(HeatModel, CoolStepsVisitAtMostTheirBudgetAndMissNoHalving) {
  HeatModel m(1);
  ASSERT_EQ(m.add_table(1, 6), 0);
  ASSERT_EQ(m.add_table(2, 4), 0);
  for (uint64_t p = 0; p < 6; ++p) m.record(1, p, 16);
  for (uint64_t p = 0; p < 4; ++p) m.record(2, p, 16);
  EXPECT_FALSE(m.cooling());
  m.request_cool();
  EXPECT_TRUE(m.cooling());
  EXPECT_EQ(m.cool_step(4), 4u);
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>{8, 8, 8, 8, 16, 16}));
  m.request_cool();  // during the pass: for the next one
  EXPECT_EQ(m.cool_step(4), 4u);
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>{8, 8, 8, 8, 8, 8}));
  EXPECT_EQ(m.find(2)->heat, (std::vector<float>{8, 8, 16, 16}));
  // The end of the first pass, then the second pass's first two extents.
  EXPECT_EQ(m.cool_step(4), 4u);
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>{4, 4, 8, 8, 8, 8}));
  EXPECT_EQ(m.find(2)->heat, (std::vector<float>{8, 8, 8, 8}));
  EXPECT_EQ(m.cool_step(100), 8u);
  EXPECT_FALSE(m.cooling());
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>(6, 4)));
  EXPECT_EQ(m.find(2)->heat, (std::vector<float>(4, 4)));
  EXPECT_DOUBLE_EQ(m.find(1)->total_heat, 24);
  EXPECT_DOUBLE_EQ(m.find(2)->total_heat, 16);
  EXPECT_EQ(m.cool_step(100), 0u);  // nothing asked for
  // Two halvings asked for before a pass: one pass applies both.
  m.request_cool();
  m.request_cool();
  EXPECT_EQ(m.cool_step(100), 10u);
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>(6, 1)));
  EXPECT_FALSE(m.cooling());
}

TEST(HeatModel, IgnoresAndCountsWhatItCannotTrust) {
  HeatModel m(2);
  ASSERT_EQ(m.add_table(1, 5), 0);
  EXPECT_EQ(m.add_table(1, 9), -EEXIST);
  EXPECT_EQ(m.add_table(2, 0), -EINVAL);
  EXPECT_EQ(m.remove_table(3), -ENOENT);
  m.record(3, 0);            // unknown table
  m.record(-1, 0);           // unknown table
  m.record(1, 5);            // page out of range (pages 0..4)
  m.record(1, UINT64_MAX);   // likewise
  m.record(1, 0, NAN);       // bad weights
  m.record(1, 0, -1);
  m.record(1, 0, INFINITY);
  m.record(1, 4, 1e38f);     // clamped, not inf
  EXPECT_EQ(m.ignored().unknown_table, 2u);
  EXPECT_EQ(m.ignored().page_out_of_range, 2u);
  EXPECT_EQ(m.ignored().bad_weight, 3u);
  EXPECT_EQ(m.find(1)->heat, (std::vector<float>{0, 0, HeatModel::kMaxHeat}));
  EXPECT_EQ(m.remove_table(1), 0);
  m.record(1, 0);
  EXPECT_EQ(m.ignored().unknown_table, 3u);
  EXPECT_EQ(m.table_count(), 0u);
}

TEST(HeatModel, IntervalSamplesAndEwmaRate) {
  HeatModel m(1, 0.5);
  ASSERT_EQ(m.add_table(1, 4), 0);
  ASSERT_EQ(m.add_table(2, 4), 0);
  for (int i = 0; i < 10; ++i) m.record(1, 1);
  m.tick(2, 2.0);  // 10 samples in 2 s: the first rate is taken whole
  EXPECT_DOUBLE_EQ(m.find(1)->samples_per_s, 5);
  EXPECT_DOUBLE_EQ(m.find(1)->last_interval_samples, 10);
  EXPECT_DOUBLE_EQ(m.find(1)->interval_samples, 0);
  EXPECT_DOUBLE_EQ(m.find(2)->samples_per_s, 0);
  for (int i = 0; i < 10; ++i) m.record(1, 2, 2);
  m.tick(3, 1.0);  // 20 in 1 s: 0.5 * 20 + 0.5 * 5
  EXPECT_DOUBLE_EQ(m.find(1)->samples_per_s, 12.5);
  EXPECT_DOUBLE_EQ(m.find(1)->last_interval_samples, 20);
  m.record(1, 0);
  m.tick(4, 0);  // no length: the interval closes, the rate stands
  EXPECT_DOUBLE_EQ(m.find(1)->samples_per_s, 12.5);
  EXPECT_DOUBLE_EQ(m.find(1)->last_interval_samples, 1);
  m.tick(5, 1.0);  // an idle second
  EXPECT_DOUBLE_EQ(m.find(1)->samples_per_s, 6.25);

  TableView v;
  ASSERT_EQ(m.fill_view(1, &v), 0);
  EXPECT_EQ(v.pages, 4u);
  EXPECT_EQ(v.extent_pages, 1u);
  EXPECT_EQ(v.heat, m.find(1)->heat.data());
  EXPECT_DOUBLE_EQ(v.samples_per_s, 6.25);
  EXPECT_EQ(m.fill_view(9, &v), -ENOENT);
}

// ---- fair share ----

std::vector<uint64_t> share(uint64_t budget, std::vector<ShareRequest> req, bool spread = false) {
  std::vector<uint64_t> out{123};
  fair_share(budget, req, spread, &out);
  return out;
}

TEST(FairShare, EqualWeights) {
  EXPECT_EQ(share(100, {{1, 1000}, {1, 1000}}), (std::vector<uint64_t>{50, 50}));
  // The rounding remainder goes one page each, lower index first.
  EXPECT_EQ(share(101, {{7, 1000}, {7, 1000}, {7, 1000}}), (std::vector<uint64_t>{34, 34, 33}));
}

TEST(FairShare, WeightsOneToThree) {
  EXPECT_EQ(share(100, {{100, 500}, {300, 500}}), (std::vector<uint64_t>{25, 75}));
  // Weights are clamped to 1..1000.
  EXPECT_EQ(share(100, {{0, 500}, {3, 500}}), (std::vector<uint64_t>{25, 75}));
  EXPECT_EQ(share(1001, {{5000, 5000}, {1, 5000}}), (std::vector<uint64_t>{1000, 1}));
}

TEST(FairShare, SmallProcessLeavesItsSurplusToTheOthers) {
  EXPECT_EQ(share(100, {{1, 10}, {1, 1000}, {1, 1000}}), (std::vector<uint64_t>{10, 45, 45}));
  // Its share by weight (75) is more than it needs; the other gets the rest.
  EXPECT_EQ(share(100, {{3, 30}, {1, 1000}}), (std::vector<uint64_t>{30, 70}));
  // Everyone satisfied: no surplus is handed out unless asked for.
  EXPECT_EQ(share(100, {{1, 10}, {1, 20}}), (std::vector<uint64_t>{10, 20}));
  EXPECT_EQ(share(100, {{1, 10}, {1, 20}}, true), (std::vector<uint64_t>{45, 55}));
  EXPECT_EQ(share(100, {{1, 10}, {3, 20}}, true), (std::vector<uint64_t>{28, 72}));
}

TEST(FairShare, EdgeCases) {
  EXPECT_EQ(share(100, {}), (std::vector<uint64_t>{}));
  EXPECT_EQ(share(0, {{1, 5}, {1, 5}}), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(share(0, {{1, 5}, {1, 5}}, true), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(share(10, {{1, 0}, {1, 0}}), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(share(UINT64_MAX, {{1000, UINT64_MAX}, {1, UINT64_MAX}}),
            (std::vector<uint64_t>{18428315757951600015ull, 18428315757951600ull}));
}

TEST(FairShare, RandomNeverExceedsAndIsMaxMinFair) {
  std::mt19937_64 rng(42);
  for (int iter = 0; iter < 20000; ++iter) {
    size_t n = rng() % 8;
    std::vector<ShareRequest> req(n);
    uint64_t scale = iter % 3 == 0 ? UINT64_MAX / 16 : 1000;
    uint64_t demand_sum = 0;
    for (auto& r : req) {
      r.weight = static_cast<unsigned>(rng() % 1200);
      r.demand = rng() % scale;
      demand_sum += r.demand;
    }
    uint64_t budget = rng() % (scale * 2);
    bool spread = rng() % 2;
    std::vector<uint64_t> out;
    fair_share(budget, req, spread, &out);
    ASSERT_EQ(out.size(), n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += out[i];
      if (!spread || demand_sum >= budget) {
        ASSERT_LE(out[i], req[i].demand);
      }
      if (demand_sum <= budget) {
        ASSERT_GE(out[i], req[i].demand);
      }
    }
    ASSERT_LE(sum, budget);
    if (demand_sum >= budget || (spread && n > 0)) {
      ASSERT_EQ(sum, budget);
    }
    // Nobody short of its demand has less per weight than another has
    // (up to one page of rounding each).
    for (size_t i = 0; i < n; ++i) {
      if (out[i] >= req[i].demand) continue;
      auto wi = static_cast<unsigned __int128>(std::clamp(req[i].weight, 1u, 1000u));
      for (size_t j = 0; j < n; ++j) {
        auto wj = static_cast<unsigned __int128>(std::clamp(req[j].weight, 1u, 1000u));
        ASSERT_LE(out[j] * wi, out[i] * wj + wi + wj) << iter << " " << i << " " << j;
      }
    }
  }
}

TEST(FairShare, NodeBudgets) {
  std::vector<FakeProc> procs{{1, 0, 100, {}}, {2, 0, 100, {}}, {3, 40, 300, {}}};
  procs[0].tables.emplace_back(1, 100, 1, D);  // touched 100, no own cap
  procs[1].tables.emplace_back(1, 20, 1, U);
  for (int i = 0; i < 10; ++i) procs[1].tables[0].place[i] = F;  // touched 10
  procs[2].tables.emplace_back(1, 100, 1, S);  // touched 100, own budget 40
  NodeView n = node_of(procs, 1, 90, 120);
  Plan plan;
  assign_budgets(n, &plan);
  // DRAM demands 100, 10, 40 (weights 1:1:3): 10 for the small one; 80 left
  // by 1:3 gives 20 and 60, more than the third's 40: it gets 40, the first 40.
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{40, 10, 40}));
  // Slow demands 60, 0, 60 fit in 120: each gets its demand.
  EXPECT_EQ(plan.slow_budget_pages, (std::vector<uint64_t>{60, 0, 60}));
  n.slow_pages = 0;  // no slow tier
  assign_budgets(n, &plan);
  EXPECT_EQ(plan.slow_budget_pages, (std::vector<uint64_t>{0, 0, 0}));
  n.dram_pages = 0;  // no node budget: each keeps its own
  assign_budgets(n, &plan);
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{0, 0, 40}));
  n.procs.clear();
  assign_budgets(n, &plan);
  EXPECT_TRUE(plan.dram_budget_pages.empty());
}

// A job's ranks hold one DRAM budget, their own budgets summed, shared by
// need: what one rank does not touch goes to the other; where both need
// more, the one that misses more gets more. Processes without a job, and
// other jobs, are untouched by it.
TEST(FairShare, AJobHoldsOneBudgetSharedByItsRanksNeeds) {
  // Ranks 1 and 2 of job 7 (own 40 each), rank 3 of job 9 (own 40), and a
  // process 4 without a job (own 40).
  std::vector<FakeProc> procs{{1, 40, 100, {}}, {2, 40, 100, {}}, {3, 40, 100, {}}, {4, 40, 100, {}}};
  procs[0].tables.emplace_back(1, 10, 1, D);   // touched 10
  procs[1].tables.emplace_back(1, 200, 1, D);  // touched 200
  procs[2].tables.emplace_back(1, 200, 1, D);
  procs[3].tables.emplace_back(1, 200, 1, D);
  NodeView n = node_of(procs, 1, 0);
  n.procs[0].job = n.procs[1].job = 7;
  n.procs[2].job = 9;
  Plan plan;
  assign_budgets(n, &plan);
  // Job 7's 80: rank 1 needs 10, rank 2 takes the other 70; job 9 (one
  // rank) and process 4 keep their 40.
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{10, 70, 40, 40}));

  // Both ranks need more than half: equal misses split it equally; a rank
  // with three times the misses gets 1 + 2 * 3/4 = 2.5 against 1 + 2 * 1/4
  // = 1.5 of the weight: 50 and 30.
  n.procs[0].touched_pages = 200;
  n.procs[0].misses_per_s = n.procs[1].misses_per_s = 1000;
  assign_budgets(n, &plan);
  EXPECT_EQ(plan.dram_budget_pages[0], 40u);
  EXPECT_EQ(plan.dram_budget_pages[1], 40u);
  n.procs[0].misses_per_s = 3000;
  assign_budgets(n, &plan);
  EXPECT_EQ(plan.dram_budget_pages[0], 50u);
  EXPECT_EQ(plan.dram_budget_pages[1], 30u);
  EXPECT_EQ(plan.dram_budget_pages[2], 40u);

  // Under a node budget the job is one holder with its ranks' weights and
  // demands (capped by their own budgets summed): 3 holders' demands 80
  // (weight 200), 40, 40 in 120 pages: 60, 30, 30; the job's 60 by misses
  // 3:1 (weights 250:150) gives 37.5 and 22.5: 38 and 22 (the rounding
  // page to the first).
  n.dram_pages = 120;
  assign_budgets(n, &plan);
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{38, 22, 30, 30}));
}

// ---- ranges and the rate limit ----

TEST(Moves, AdjacentPagesWithTheSameOpMerge) {
  std::vector<Move> m{{1, 1, 0, 2, Move::kEvict},  {1, 1, 2, 3, Move::kEvict},
                      {1, 1, 6, 1, Move::kEvict},  {1, 2, 7, 1, Move::kEvict},
                      {1, 2, 8, 1, Move::kDemote}, {2, 2, 9, 1, Move::kDemote},
                      {2, 2, 10, 4, Move::kDemote}, {2, 2, 9, 1, Move::kDemote}};
  merge_moves(&m);
  EXPECT_EQ(text(m),
            "1:1 evict 0+5; 1:1 evict 6+1; 1:2 evict 7+1; 1:2 demote 8+1; 2:2 demote 9+5; "
            "2:2 demote 9+1");
}

TEST(Moves, RateLimitKeepsThePriorityPrefix) {
  std::vector<Move> base{{1, 1, 0, 4, Move::kEvict},
                         {2, 1, 10, 4, Move::kPrefetch},
                         {1, 2, 20, 4, Move::kPromote}};
  std::vector<Move> m = base;
  EXPECT_EQ(limit_moves(&m, 6), 6u);
  EXPECT_EQ(text(m), "1:1 evict 0+4; 2:1 prefetch 10+2");
  m = base;
  EXPECT_EQ(limit_moves(&m, 8), 4u);
  EXPECT_EQ(text(m), "1:1 evict 0+4; 2:1 prefetch 10+4");
  m = base;
  EXPECT_EQ(limit_moves(&m, 0), 0u);  // unlimited
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(limit_moves(&m, 100), 0u);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(limit_moves(&m, 1), 11u);
  EXPECT_EQ(text(m), "1:1 evict 0+1");
}

// ---- policies ----

// Process A (client 1, own budget 8) and B (client 2, own budget 4), no
// node budget, no slow tier:
//   A.t1 (E=1): heat   0  5  1  9  0  3  3  0
//               seen   0  2  3  4  0  5  6  0
//               place  D  D  D  F  D  F  F  U
//   A.t2 (E=2): heat per extent 4 0 0 3, seen 7 0 0 6, place D D D D D D F F
//   B.t3 (E=1): heat 0 2 0 0, seen 0 9 0 0, place F F D U
std::vector<FakeProc> two_processes() {
  std::vector<FakeProc> procs{{1, 8, 100, {}}, {2, 4, 100, {}}};
  procs[0].tables.emplace_back(1, 8, 1, D);
  procs[0].tables.emplace_back(2, 8, 2, D);
  procs[1].tables.emplace_back(3, 4, 1, F);
  FakeTable& t1 = procs[0].tables[0];
  t1.heat = {0, 5, 1, 9, 0, 3, 3, 0};
  t1.last_seen = {0, 2, 3, 4, 0, 5, 6, 0};
  t1.place = {D, D, D, F, D, F, F, U};
  FakeTable& t2 = procs[0].tables[1];
  t2.heat = {4, 0, 0, 3};
  t2.last_seen = {7, 0, 0, 6};
  t2.place = {D, D, D, D, D, D, F, F};
  FakeTable& t3 = procs[1].tables[0];
  t3.heat = {0, 2, 0, 0};
  t3.last_seen = {0, 9, 0, 0};
  t3.place = {F, F, D, U};
  return procs;
}

TEST(Lfu, KeepsTheHottestAndEvictsTheColdest) {
  auto procs = two_processes();
  auto lfu = make("lfu", "keep_fraction=0.5");
  NodeView n = node_of(procs, 2, 0);  // now 2, 2 processes: A first
  Plan plan;
  lfu->plan(n, &plan);
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{8, 4}));
  EXPECT_EQ(plan.slow_budget_pages, (std::vector<uint64_t>{0, 0}));
  // A keeps 4 pages: t1 p3 (heat 9), t1 p1 (5), t2 extent 0 (4, two pages).
  EXPECT_EQ(procs[0].tables[0].kept(), (Pages{1, 3}));
  EXPECT_EQ(procs[0].tables[1].kept(), (Pages{0, 1}));
  EXPECT_EQ(procs[0].tables[0].hints, (std::vector<uint8_t>{0, 255, 0, 255, 0, 0, 0, 0}));
  // B keeps 2 at most, but only t3 p1 was ever sampled.
  EXPECT_EQ(procs[1].tables[0].kept(), (Pages{1}));
  // A: 6 DRAM pages + t1 p3 coming in, budget 8... resident 10 (t1: 4, t2: 6).
  // 10 + 1 - 8 = 3 pages leave, coldest first: t1 p0, t1 p4 (heat 0, over
  // the budget), then t2 p2 (heat 0, room for t1 p3); t1 p2 (heat 1) stays.
  EXPECT_EQ(text(plan.moves),
            "1:1 evict 0+1; 1:1 evict 4+1; 1:2 evict 2+1; 1:1 prefetch 3+1; 2:3 prefetch 1+1");
  // Rotated by the tick: B's moves come first within a class.
  n.now_tick = 3;
  lfu->plan(n, &plan);
  EXPECT_EQ(text(plan.moves),
            "1:1 evict 0+1; 1:1 evict 4+1; 1:2 evict 2+1; 2:3 prefetch 1+1; 1:1 prefetch 3+1");
  // The rate limit cuts in priority order.
  n.now_tick = 2;
  n.migrate_pages_per_tick = 4;
  lfu->plan(n, &plan);
  EXPECT_EQ(text(plan.moves), "1:1 evict 0+1; 1:1 evict 4+1; 1:2 evict 2+1; 1:1 prefetch 3+1");
  // Ties in heat go to the more recent: with keep_fraction 7/8 A keeps 7:
  // 9, 5, 4 (x2), then heat 3: t1 p6 (seen 6) and t2 extent 3 (seen 6, 2
  // pages) before t1 p5 (seen 5); t1 p6 before t2's by table order.
  ASSERT_EQ(lfu->configure("keep_fraction=0.875", nullptr), 0);
  n.migrate_pages_per_tick = 0;
  lfu->plan(n, &plan);
  EXPECT_EQ(procs[0].tables[0].kept(), (Pages{1, 3, 6}));
  EXPECT_EQ(procs[0].tables[1].kept(), (Pages{0, 1, 6, 7}));
}

TEST(Lru, KeepsTheMostRecentlySampled) {
  auto procs = two_processes();
  auto lru = make("lru", "keep_fraction=0.5");
  NodeView n = node_of(procs, 2, 0);
  Plan plan;
  lru->plan(n, &plan);
  // A keeps 4: t2 extent 0 (seen 7), t1 p6 (seen 6, heat 3), t2 extent 3
  // (seen 6, heat 3; after t1 by table order) cut to its first page.
  EXPECT_EQ(procs[0].tables[0].kept(), (Pages{6}));
  EXPECT_EQ(procs[0].tables[1].kept(), (Pages{0, 1, 6}));
  EXPECT_EQ(procs[1].tables[0].kept(), (Pages{1}));
  // Two come in (t1 p6, t2 p6): 10 + 2 - 8 = 4 leave, least recent first:
  // t1 p0, t1 p4 (over budget), t2 p2-3 (room); t1 p1 (seen 2) stays.
  EXPECT_EQ(text(plan.moves),
            "1:1 evict 0+1; 1:1 evict 4+1; 1:2 evict 2+2; 1:1 prefetch 6+1; 1:2 prefetch 6+1; "
            "2:3 prefetch 1+1");
}

TEST(HotPromote, PromotesHotPagesAndDemotesColdOnes) {
  // One process, own budget 4, slow tier of 10 pages:
  //   heat  10  9  1  0  8  5  0  2   (hot_threshold 8: pages 0, 1, 4)
  //   place  S  D  D  D  F  D  S  D
  std::vector<FakeProc> procs{{5, 4, 100, {}}};
  procs[0].tables.emplace_back(9, 8, 1, D);
  FakeTable& t = procs[0].tables[0];
  t.heat = {10, 9, 1, 0, 8, 5, 0, 2};
  t.last_seen = {1, 1, 1, 1, 1, 1, 1, 1};
  t.place = {S, D, D, D, F, D, S, D};
  auto hot = make("hot-promote");
  Plan plan;
  hot->plan(node_of(procs, 1, 0, 10), &plan);
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{4}));
  EXPECT_EQ(plan.slow_budget_pages, (std::vector<uint64_t>{10}));  // demand 4 + spread surplus
  EXPECT_EQ(t.kept(), (Pages{0, 1, 4}));
  // Resident 5, 2 coming in, budget 4: 3 leave, coldest first (p3, p2, p7),
  // all to the slow tier (room 8); p3 is over the budget, the others make
  // room. Then hottest first: p0 promoted, p4 prefetched.
  EXPECT_EQ(text(plan.moves),
            "5:9 demote 3+1; 5:9 demote 2+1; 5:9 demote 7+1; 5:9 promote 0+1; 5:9 prefetch 4+1");
  // A slow tier of 3 pages has room for 1: the coldest two go to a store.
  hot->plan(node_of(procs, 1, 0, 3), &plan);
  EXPECT_EQ(text(plan.moves),
            "5:9 evict 3+1; 5:9 evict 2+1; 5:9 demote 7+1; 5:9 promote 0+1; 5:9 prefetch 4+1");
  // A budget of 2 keeps the two hottest only; p4 stays out.
  procs[0].own_budget = 2;
  hot->plan(node_of(procs, 1, 0, 3), &plan);
  EXPECT_EQ(t.kept(), (Pages{0, 1}));
  // p4 (hot, in a store) is not kept and stays out; 5 + 1 - 2 = 4 leave:
  // 3 over the budget, 1 to make room for p0; the slow tier takes 1.
  EXPECT_EQ(text(plan.moves),
            "5:9 evict 3+1; 5:9 evict 2+1; 5:9 evict 7+1; 5:9 demote 5+1; 5:9 promote 0+1");
}

TEST(HotPromote, ExchangesWithTheProcessOwnSlowTierBelowItsHighWatermark) {
  // No node-wide slow budget: the process's own slow tier (10 pages) is its
  // slow budget. Own DRAM budget 10, but its evictor fills only 80%:
  //   heat   10  9  1  0  0  0  0  0  0  0  0  0   (hot: pages 0, 1)
  //   place   S  S  D  D  D  D  D  D  D  D  S  S
  std::vector<FakeProc> procs{{1, 10, 100, {}}};
  procs[0].tables.emplace_back(1, 12, 1, D);
  FakeTable& t = procs[0].tables[0];
  t.heat = {10, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  std::fill(t.last_seen.begin(), t.last_seen.end(), 1u);
  t.place = {S, S, D, D, D, D, D, D, D, D, S, S};
  auto hot = make("hot-promote");
  Plan plan;
  NodeView n = node_of(procs, 1, 0);
  n.procs[0].own_slow_budget_pages = 10;
  hot->plan(n, &plan);
  EXPECT_EQ(plan.slow_budget_pages, (std::vector<uint64_t>{10}));
  EXPECT_EQ(t.kept(), (Pages{0, 1}));
  // 8 resident + 2 coming in fit the whole budget of 10: nothing leaves.
  EXPECT_EQ(text(plan.moves), "1:1 promote 0+2");
  // Filled to 80% (8 pages), DRAM is full: the two coldest (p3, p4) go to
  // the slow tier (room 6) to make room for the two hot ones.
  n.procs[0].dram_fill = 0.8;
  hot->plan(n, &plan);
  EXPECT_EQ(text(plan.moves), "1:1 demote 3+2; 1:1 promote 0+2");
  // A fill outside (0, 1] means the whole budget.
  for (double bad : {0.0, -1.0, 2.0, std::nan("")}) {
    n.procs[0].dram_fill = bad;
    hot->plan(n, &plan);
    EXPECT_EQ(text(plan.moves), "1:1 promote 0+2") << bad;
  }
  // Without a slow tier of its own, the coldest go to a store instead.
  n.procs[0].dram_fill = 0.8;
  n.procs[0].own_slow_budget_pages = 0;
  hot->plan(n, &plan);
  EXPECT_EQ(plan.slow_budget_pages, (std::vector<uint64_t>{0}));
  // (and the slow pages outside the keep set leave the slow tier first).
  EXPECT_EQ(text(plan.moves), "1:1 evict 10+2; 1:1 evict 3+2; 1:1 promote 0+2");
}

TEST(Lfu, MovesGoByClassAcrossProcesses) {
  // Two processes, budget 2 each, 3 cold DRAM pages and one hot page in a
  // store: each must lose 2 (1 over the budget, 1 to make room). All
  // over-budget evictions come first, then those that make room, then
  // the pages that come in; within a class, processes in rotated order.
  std::vector<FakeProc> procs{{1, 2, 100, {}}, {2, 2, 100, {}}};
  for (FakeProc& p : procs) {
    p.tables.emplace_back(1, 4, 1, D);
    p.tables[0].place[3] = F;
    p.tables[0].heat[3] = 5;
    p.tables[0].last_seen[3] = 1;
  }
  auto lfu = make("lfu", "keep_fraction=1");
  Plan plan;
  lfu->plan(node_of(procs, 4, 0), &plan);
  EXPECT_EQ(text(plan.moves),
            "1:1 evict 0+1; 2:1 evict 0+1; 1:1 evict 1+1; 2:1 evict 1+1; 1:1 prefetch 3+1; "
            "2:1 prefetch 3+1");
  lfu->plan(node_of(procs, 5, 0), &plan);
  EXPECT_EQ(text(plan.moves),
            "2:1 evict 0+1; 1:1 evict 0+1; 2:1 evict 1+1; 1:1 evict 1+1; 2:1 prefetch 3+1; "
            "1:1 prefetch 3+1");
  // With a node budget of 3 (weights 1:2) the second gets 2, the first 1.
  procs[1].weight = 200;
  lfu->plan(node_of(procs, 4, 3), &plan);
  EXPECT_EQ(plan.dram_budget_pages, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(text(plan.moves),
            "1:1 evict 0+2; 2:1 evict 0+1; 1:1 evict 2+1; 2:1 evict 1+1; 1:1 prefetch 3+1; "
            "2:1 prefetch 3+1");
}

TEST(Lfu, TiesGoToTheLowerTableAndPage) {
  // 1000 pages of equal heat and recency, room for 300: pages 0..299, every
  // time (plans are deterministic).
  std::vector<FakeProc> procs{{1, 600, 100, {}}};
  procs[0].tables.emplace_back(1, 1000, 1, F);
  FakeTable& t = procs[0].tables[0];
  std::fill(t.heat.begin(), t.heat.end(), 1.0f);
  std::fill(t.last_seen.begin(), t.last_seen.end(), 3u);
  auto lfu = make("lfu", "keep_fraction=0.5");
  Plan plan;
  lfu->plan(node_of(procs, 1, 0), &plan);
  Pages first(300);
  for (uint64_t i = 0; i < 300; ++i) first[i] = i;
  EXPECT_EQ(t.kept(), first);
  EXPECT_EQ(text(plan.moves), "1:1 prefetch 0+300");
}

TEST(Lfu, ResidentCountsAboveThePlacesLetNothingIn) {
  // The engine reports 10 DRAM pages but the table shows 2 (cold) ones: both
  // leave, and the hot pages in a store may not come in, which would take
  // the process over its budget of 4 as the engine counts it.
  std::vector<FakeProc> procs{{1, 4, 100, {}}};
  procs[0].tables.emplace_back(1, 4, 1, F);
  FakeTable& t = procs[0].tables[0];
  t.place = {D, D, F, F};
  t.heat = {0, 0, 5, 5};
  NodeView n = node_of(procs, 1, 0);
  n.procs[0].dram_resident_pages = 10;
  auto lfu = make("lfu", "keep_fraction=1");
  Plan plan;
  lfu->plan(n, &plan);
  EXPECT_EQ(t.kept(), (Pages{2, 3}));
  EXPECT_EQ(text(plan.moves), "1:1 evict 0+2");
  n.procs[0].dram_resident_pages = 5;  // 5 - 2 leaves room for one of them
  lfu->plan(n, &plan);
  EXPECT_EQ(text(plan.moves), "1:1 evict 0+2; 1:1 prefetch 2+1");
}

TEST(HotPromote, Hysteresis) {
  std::vector<FakeProc> procs{{1, 100, 100, {}}};
  procs[0].tables.emplace_back(1, 3, 1, D);
  FakeTable& t = procs[0].tables[0];
  auto hot = make("hot-promote", "hot_threshold=8 cold_ratio=0.5");
  Plan plan;
  auto run = [&](std::vector<float> heat) {
    t.heat = heat;
    hot->plan(node_of(procs, 1, 0), &plan);
    return t.kept();
  };
  EXPECT_EQ(run({10, 5, 7.9f}), (Pages{0}));  // p0 passes 8
  EXPECT_EQ(run({5, 5, 7.9f}), (Pages{0}));   // p0 stays hot above 4; p1, p2 were never hot
  EXPECT_EQ(run({4, 8, 0}), (Pages{0, 1}));   // 4 is not below 4; p1 reaches 8
  EXPECT_EQ(run({3.9f, 4, 0}), (Pages{1}));   // p0 falls below 4, p1 holds at 4
  EXPECT_EQ(run({5, 3, 0}), (Pages{}));       // p0 is cold now: 5 is not enough
  // The state is per (client, table): another client's table 1 starts cold.
  EXPECT_EQ(run({9, 0, 0}), (Pages{0}));
  procs[0].client = 2;
  EXPECT_EQ(run({5, 0, 0}), (Pages{}));
  procs[0].client = 1;  // client 1's state was dropped while it was not shown
  EXPECT_EQ(run({5, 0, 0}), (Pages{}));
}

// A window of a table (the daemon shows large tables a window per tick):
// hints and moves stay in the window, moves name pages of the window, and
// hot-promote's hot bits are the whole table's (a window's extent e is the
// table's first_page + e).
TableView window_of(FakeTable& t, uint64_t lo, uint64_t hi) {
  TableView v = t.view();
  v.first_page = lo;
  v.table_pages = t.pages;
  v.pages = hi - lo;
  v.place += lo;
  v.heat += lo / t.extent_pages;
  v.last_seen += lo / t.extent_pages;
  v.hints += lo;
  return v;
}

TEST(HotPromote, WindowsOfATableShareItsHotBits) {
  std::vector<FakeProc> procs{{1, 100, 100, {}}};
  procs[0].tables.emplace_back(1, 8, 1, U);
  FakeTable& t = procs[0].tables[0];
  t.place = {S, U, U, U, S, U, U, U};
  auto hot = make("hot-promote", "hot_threshold=8 cold_ratio=0.5");
  Plan plan;
  auto run = [&](uint64_t lo, uint64_t hi) {
    NodeView n = node_of(procs, 1, 0, 10);  // a slow tier of 10 pages
    n.procs[0].tables[0] = window_of(t, lo, hi);
    n.procs[0].view_share = 0.5;
    n.procs[0].touched_pages = 2;  // counted by the caller: the view is a window
    hot->plan(n, &plan);
    return text(plan.moves);
  };
  t.heat = {9, 0, 0, 0, 5, 0, 0, 0};
  EXPECT_EQ(run(0, 4), "1:1 promote 0+1");  // page 0 passes 8
  EXPECT_EQ(t.hints[0], kHintKeep);
  EXPECT_EQ(t.hints[4], 77);  // outside the window: not written
  EXPECT_EQ(run(4, 8), "");   // page 4 (5) was never hot
  EXPECT_EQ(t.hints[4], kHintNone);
  EXPECT_EQ(t.hints[0], kHintKeep);  // outside the window: stands
  t.heat = {5, 0, 0, 0, 9, 0, 0, 0};
  EXPECT_EQ(run(4, 8), "1:1 promote 0+1");  // page 4, the window's first
  EXPECT_EQ(run(0, 4), "1:1 promote 0+1");  // page 0 stays hot above 4
}

TEST(Static, PrefersDenseTablesAndReevaluatesOnlyOnItsPeriod) {
  // Budget 10. Densities (samples/s per page; bytes_per_access scales all):
  // t1 100/20 = 5, t2 40/4 = 10, t3 8/8 = 1, t4 0 (never gets DRAM).
  std::vector<FakeProc> procs{{1, 10, 100, {}}};
  auto& ts = procs[0].tables;
  ts.emplace_back(1, 20, 2, F);
  ts.emplace_back(2, 4, 1, F);
  ts.emplace_back(3, 8, 1, F);
  ts.emplace_back(4, 2, 1, F);
  ts[0].rate = 100;
  ts[1].rate = 40;
  ts[2].rate = 8;
  ts[0].heat = {0, 1, 0, 7, 0, 0, 5, 0, 0, 2};  // t1's hottest extents: 3, 6, 9, 1
  ts[1].heat = {1, 3, 0, 2};  // t2's hottest: 1, 3, 0, 2
  auto st = make("static", "period_s=10");
  Plan plan;
  // t2 whole (4), then t1's 6 hottest pages (extents 3, 6, 9), then stop.
  st->plan(node_of(procs, 1, 0), &plan);
  EXPECT_EQ(ts[1].kept(), (Pages{0, 1, 2, 3}));
  EXPECT_EQ(ts[0].kept(), (Pages{6, 7, 12, 13, 18, 19}));
  EXPECT_EQ(ts[2].kept(), (Pages{}));
  EXPECT_EQ(ts[3].kept(), (Pages{}));
  // Everything is in a store: the densest table comes in first (by heat),
  // then t1 by heat.
  EXPECT_EQ(text(plan.moves),
            "1:2 prefetch 1+1; 1:2 prefetch 3+1; 1:2 prefetch 0+1; 1:2 prefetch 2+1; "
            "1:1 prefetch 6+2; 1:1 prefetch 12+2; 1:1 prefetch 18+2");
  // t3 becomes the densest (1000/8); 4 s later the assignment stands...
  ts[2].rate = 1000;
  st->plan(node_of(procs, 5, 0), &plan);
  EXPECT_EQ(ts[1].kept(), (Pages{0, 1, 2, 3}));
  EXPECT_EQ(ts[2].kept(), (Pages{}));
  // ...but a smaller budget applies at once: t2 no longer fits whole, so
  // its 3 hottest pages.
  procs[0].own_budget = 3;
  st->plan(node_of(procs, 6, 0), &plan);
  EXPECT_EQ(ts[1].kept(), (Pages{0, 1, 3}));
  EXPECT_EQ(ts[0].kept(), (Pages{}));
  procs[0].own_budget = 10;
  st->plan(node_of(procs, 10, 0), &plan);  // 9 s: still the old assignment
  EXPECT_EQ(ts[2].kept(), (Pages{}));
  // 10 s after the last evaluation: t3 whole (8), then t2's 2 hottest.
  st->plan(node_of(procs, 11, 0), &plan);
  EXPECT_EQ(ts[2].kept(), (Pages{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ts[1].kept(), (Pages{1, 3}));
  EXPECT_EQ(ts[0].kept(), (Pages{}));
  // A process whose tables change is evaluated at once.
  ts[3].rate = 1e6;
  st->plan(node_of(procs, 12, 0), &plan);
  EXPECT_EQ(ts[3].kept(), (Pages{}));
  ts.emplace_back(5, 1, 1, F);  // invalidates the views' pointers: rebuilt below
  st->plan(node_of(procs, 13, 0), &plan);
  EXPECT_EQ(ts[3].kept(), (Pages{0, 1}));
}

// ---- the registry ----

TEST(Registry, TableAndDefaults) {
  std::vector<std::string> names;
  for (const PolicyInfo& info : policy_table()) {
    names.push_back(info.name);
    EXPECT_GT(strlen(info.description), 10u);
    EXPECT_FALSE(info.tunables.empty());
    for (const Tunable& t : info.tunables) {
      EXPECT_GT(strlen(t.help), 10u) << t.key;
      EXPECT_GE(t.default_value, t.min) << t.key;
      EXPECT_LE(t.default_value, t.max) << t.key;
    }
    auto p = make(info.name);
    ASSERT_NE(p, nullptr);
    EXPECT_STREQ(p->name(), info.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"hot-promote", "lfu", "lru", "static"}));
  EXPECT_EQ(make("lfu")->params_text(), "keep_fraction=0.9 cool_period_s=1");
  EXPECT_EQ(make("hot-promote")->params_text(),
            "hot_threshold=8 cold_ratio=0.5 cool_period_s=1");
  EXPECT_EQ(make("static")->params_text(), "bytes_per_access=128 period_s=10 cool_period_s=1");
  EXPECT_EQ(make("lru", "cool_period_s=2.5")->cool_period_s(), 2.5);
  ASSERT_NE(find_policy("static"), nullptr);
  EXPECT_EQ(range_text(find_policy("static")->tunables[0]), "1 to 1048576, whole");
  EXPECT_EQ(find_policy("nope"), nullptr);
}

TEST(Registry, UnknownNameAndBadParams) {
  std::unique_ptr<Policy> p;
  std::string why;
  EXPECT_EQ(make_policy("mru", "", &p, &why), -EINVAL);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(why, "unknown policy \"mru\" (one of: hot-promote, lfu, lru, static)");
  EXPECT_EQ(make_policy("lfu", "keep_fraction=2", &p, &why), -EINVAL);
  EXPECT_EQ(why, "policy lfu: keep_fraction: \"2\" is out of range (0.1 to 1)");
  EXPECT_EQ(make_policy("lfu", "keep_fraction=0.5x", &p, &why), -EINVAL);
  EXPECT_EQ(why, "policy lfu: keep_fraction: \"0.5x\" is not a number (0.1 to 1)");
  EXPECT_EQ(make_policy("static", "bytes_per_access=1.5", &p, &why), -EINVAL);
  EXPECT_EQ(why,
            "policy static: bytes_per_access: \"1.5\" is not a whole number (1 to 1048576, whole)");
  EXPECT_EQ(make_policy("lru", "hot_threshold=3", &p, &why), -EINVAL);
  EXPECT_EQ(why,
            "policy lru: unknown key \"hot_threshold\" (value \"3\"); keys: keep_fraction, "
            "cool_period_s");
  EXPECT_EQ(make_policy("lru", "keep_fraction", &p, &why), -EINVAL);
  EXPECT_NE(why.find("\"keep_fraction\": expected key=value"), std::string::npos) << why;
  EXPECT_EQ(make_policy("lru", "keep_fraction=", &p, &why), -EINVAL);
  EXPECT_EQ(make_policy("lru", "keep_fraction=nan", &p, &why), -EINVAL);
  EXPECT_EQ(make_policy("lru", "=1", &p, &why), -EINVAL);
  EXPECT_EQ(p, nullptr);
  // Separators: spaces, tabs, commas; the last of a repeated key wins.
  ASSERT_EQ(make_policy("hot-promote", " hot_threshold=4,cold_ratio=0.25\thot_threshold=6 ", &p,
                        &why), 0) << why;
  EXPECT_EQ(p->params_text(), "hot_threshold=6 cold_ratio=0.25 cool_period_s=1");
}

// man/mtier.7's POLICIES section against the registry: under ".SS NAME"
// of each policy, every tunable as "\fBkey\fR = default (range)" with its
// help line, as `mtier policy list` prints them.
TEST(Registry, ManPageListsEveryPolicyAndTunable) {
  std::ifstream in(MTIER_SRCDIR "/man/mtier.7");
  ASSERT_TRUE(in) << "cannot read " MTIER_SRCDIR "/man/mtier.7";
  std::stringstream buf;
  buf << in.rdbuf();
  std::string man = buf.str();
  for (size_t p; (p = man.find("\\-")) != std::string::npos;) man.replace(p, 2, "-");
  auto part = [](const std::string& text, const std::string& head,
                 std::initializer_list<const char*> ends) {
    size_t start = text.find(head);
    if (start == std::string::npos) return std::string();
    size_t end = text.size();
    for (const char* next : ends) end = std::min(end, text.find(next, start + head.size()));
    return text.substr(start, end - start + (end < text.size()));  // with its last '\n'
  };
  std::string section = part(man, "\n.SH POLICIES\n", {"\n.SH "});
  ASSERT_FALSE(section.empty()) << "mtier.7 has no POLICIES section";
  for (const PolicyInfo& info : policy_table()) {
    std::string sub =
        part(section, std::string("\n.SS ") + info.name + "\n", {"\n.SS ", "\n.SH "});
    ASSERT_FALSE(sub.empty()) << "mtier.7 POLICIES lacks \".SS " << info.name << "\"";
    for (const Tunable& t : info.tunables) {
      std::string entry = std::string("\n.TP\n\\fB") + t.key + "\\fR = " + default_text(t) +
                          " (" + range_text(t) + ")\n" + t.help + "\n";
      EXPECT_NE(sub.find(entry), std::string::npos)
          << "mtier.7, policy " << info.name << ", lacks the entry" << entry;
    }
  }
}

TEST(Registry, ConfigureIsAllOrNothing) {
  auto p = make("hot-promote", "hot_threshold=16");
  std::string why;
  EXPECT_EQ(p->configure("cold_ratio=0.1 hot_threshold=2 cool_period_s=0", &why), -EINVAL);
  EXPECT_NE(why.find("cool_period_s"), std::string::npos);
  EXPECT_EQ(p->params_text(), "hot_threshold=16 cold_ratio=0.5 cool_period_s=1");
  EXPECT_EQ(p->configure("cold_ratio=0.1", &why), 0);  // the others keep their values
  EXPECT_EQ(p->params_text(), "hot_threshold=16 cold_ratio=0.1 cool_period_s=1");
  EXPECT_EQ(p->configure(p->params_text(), &why), 0);
  EXPECT_EQ(p->params_text(), "hot_threshold=16 cold_ratio=0.1 cool_period_s=1");
  EXPECT_EQ(p->configure("", &why), 0);
}

// ---- every policy on random nodes ----

// Checks a plan against its node: budgets, keep sets within budget, moves
// that are valid for the pages' places and hints, each page once, the rate
// limit, and that no prefix of the moves takes a process over max(resident,
// budget) in DRAM or the slow tier.
void check_plan(const NodeView& n, const Plan& plan, const std::string& where) {
  size_t np = n.procs.size();
  ASSERT_EQ(plan.dram_budget_pages.size(), np) << where;
  ASSERT_EQ(plan.slow_budget_pages.size(), np) << where;
  uint64_t dram_sum = 0, slow_sum = 0;
  for (size_t p = 0; p < np; ++p) {
    dram_sum += plan.dram_budget_pages[p];
    slow_sum += plan.slow_budget_pages[p];
    if (n.dram_pages == 0) {
      ASSERT_EQ(plan.dram_budget_pages[p], n.procs[p].own_budget_pages) << where;
    }
  }
  if (n.dram_pages) {
    ASSERT_LE(dram_sum, n.dram_pages) << where;
  }
  ASSERT_LE(slow_sum, n.slow_pages) << where;

  std::vector<uint64_t> dram(np), slow(np), moved_in(np);
  std::vector<std::vector<std::vector<uint8_t>>> seen(np);
  for (size_t p = 0; p < np; ++p) {
    uint64_t kept = 0;
    for (const TableView& t : n.procs[p].tables) {
      for (uint64_t i = 0; i < t.pages; ++i) {
        ASSERT_TRUE(t.hints[i] == 0 || t.hints[i] == kHintKeep) << where;
        kept += t.hints[i] != 0;
      }
      seen[p].emplace_back(t.pages, 0);
    }
    ASSERT_LE(kept, plan.dram_budget_pages[p]) << where;
    dram[p] = n.procs[p].dram_resident_pages;
    slow[p] = n.procs[p].slow_resident_pages;
  }
  uint64_t total = 0;
  for (const Move& m : plan.moves) {
    ASSERT_GT(m.count, 0u) << where;
    total += m.count;
    size_t p = 0;
    while (p < np && n.procs[p].client != m.client) ++p;
    ASSERT_LT(p, np) << where;
    size_t t = 0;
    const auto& tables = n.procs[p].tables;
    while (t < tables.size() && tables[t].id != m.table_id) ++t;
    ASSERT_LT(t, tables.size()) << where;
    const TableView& tv = tables[t];
    ASSERT_LE(m.first_page + m.count, tv.pages) << where;
    for (uint64_t pg = m.first_page; pg < m.first_page + m.count; ++pg) {
      ASSERT_EQ(seen[p][t][pg]++, 0) << where << " page moved twice";
      Place pl = tv.place[pg];
      bool keep = tv.hints[pg] != 0;
      switch (m.op) {
        case Move::kEvict:
          ASSERT_TRUE(!keep && (pl == D || pl == S)) << where;
          (pl == D ? dram : slow)[p]--;
          break;
        case Move::kDemote:
          ASSERT_TRUE(!keep && pl == D) << where;
          dram[p]--;
          slow[p]++;
          break;
        case Move::kPromote:
          ASSERT_TRUE(keep && pl == S) << where;
          slow[p]--;
          dram[p]++;
          break;
        case Move::kPrefetch:
          ASSERT_TRUE(keep && pl == F) << where;
          dram[p]++;
          break;
      }
      ASSERT_LE(dram[p], std::max(n.procs[p].dram_resident_pages, plan.dram_budget_pages[p]))
          << where;
      ASSERT_LE(slow[p], std::max(n.procs[p].slow_resident_pages, plan.slow_budget_pages[p]))
          << where;
    }
  }
  if (n.migrate_pages_per_tick) {
    ASSERT_LE(total, n.migrate_pages_per_tick) << where;
  } else {
    for (size_t p = 0; p < np; ++p) ASSERT_LE(dram[p], plan.dram_budget_pages[p]) << where;
  }
}

TEST(Policies, RandomNodesKeepEveryBudget) {
  std::mt19937_64 rng(20240611);
  std::vector<std::unique_ptr<Policy>> policies;
  for (const PolicyInfo& info : policy_table()) policies.push_back(make(info.name, ""));
  policies.push_back(make("static", "period_s=0"));
  policies.push_back(make("lfu", "keep_fraction=1"));
  const Place places[] = {D, S, F, U};
  for (int iter = 0; iter < 1000; ++iter) {
    std::vector<FakeProc> procs(rng() % 5);
    std::vector<uint32_t> clients{0, 1, 2, 3, 4, 5};  // distinct; policy state comes and goes
    std::shuffle(clients.begin(), clients.end(), rng);
    for (size_t p = 0; p < procs.size(); ++p) {
      procs[p].client = clients[p];
      procs[p].own_budget = rng() % 300;
      procs[p].weight = static_cast<unsigned>(rng() % 1001);
      size_t nt = rng() % 4;
      for (size_t t = 0; t < nt; ++t) {
        uint64_t pages = rng() % 200;
        FakeTable ft(static_cast<int>(t) + 1, pages, static_cast<uint32_t>(1 + rng() % 8));
        uint64_t mix = rng() % 4;  // some tables mostly resident, some mostly not
        for (auto& pl : ft.place) pl = places[rng() % 4 <= mix ? rng() % 4 : 0];
        for (size_t e = 0; e < ft.heat.size(); ++e) {
          ft.heat[e] = rng() % 3 ? 0.0f : static_cast<float>(rng() % 20) / 2;
          ft.last_seen[e] = ft.heat[e] > 0 || rng() % 4 == 0 ? static_cast<uint32_t>(rng() % 50) : 0;
        }
        ft.rate = static_cast<double>(rng() % 100);
        procs[p].tables.push_back(std::move(ft));
      }
    }
    NodeView n = node_of(procs, static_cast<uint32_t>(1 + iter), rng() % 2 ? rng() % 1000 : 0,
                         rng() % 2 ? rng() % 500 : 0, rng() % 3 ? 0 : rng() % 100);
    for (auto& pol : policies) {
      Plan plan;
      pol->plan(n, &plan);
      check_plan(n, plan, std::string(pol->name()) + " node " + std::to_string(iter));
      if (HasFatalFailure()) return;
    }
  }
}

// Not a benchmark (no assertion on time): plan() must stay near-linear on
// millions of pages, since the daemon runs it every tick.
TEST(Policies, FourMillionPagesTiming) {
  constexpr uint64_t kPagesPerTable = 1 << 20;
  std::vector<FakeProc> procs{{1, 0, 100, {}}, {2, 0, 300, {}}};
  std::mt19937_64 rng(7);
  for (FakeProc& p : procs) {
    p.own_budget = 0;
    for (int t = 1; t <= 2; ++t) {
      FakeTable ft(t, kPagesPerTable, 1);
      for (uint64_t i = 0; i < kPagesPerTable; ++i) {
        ft.place[i] = static_cast<Place>(rng() % 3);
        if (rng() % 2) {
          ft.heat[i] = static_cast<float>(rng() % 64);
          ft.last_seen[i] = static_cast<uint32_t>(1 + rng() % 1000);
        }
      }
      ft.rate = static_cast<double>(t * 1000);
      p.tables.push_back(std::move(ft));
    }
  }
  // Random places: about half of all pages move when nothing limits the rate.
  NodeView n = node_of(procs, 1000, 3 * kPagesPerTable / 2, kPagesPerTable, 0);
  for (uint64_t rate : {uint64_t{0}, uint64_t{1} << 16}) {
    n.migrate_pages_per_tick = rate;
    for (const PolicyInfo& info : policy_table()) {
      auto pol = make(info.name);
      Plan plan;
      auto t0 = std::chrono::steady_clock::now();
      pol->plan(n, &plan);
      auto t1 = std::chrono::steady_clock::now();
      double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      uint64_t pages = 0;
      for (const Move& m : plan.moves) pages += m.count;
      printf("[ timing ] %-12s 4M pages, rate limit %6llu: %7.1f ms, %zu moves (%llu pages)\n",
             info.name, static_cast<unsigned long long>(rate), ms, plan.moves.size(),
             static_cast<unsigned long long>(pages));
      EXPECT_LE(plan.dram_budget_pages[0] + plan.dram_budget_pages[1], n.dram_pages);
      if (rate) {
        EXPECT_EQ(pages, rate);
      }
    }
  }
}

}  // namespace
}  // namespace mtier::policy
