// SPDX-License-Identifier: Apache-2.0
// The tiering policy interface of mtierd, the node daemon: what a policy is
// shown each decision (views of every process's tables: where each page is,
// the heat of its extents), what it answers (per-process DRAM and slow-tier
// budgets, per-page hints for each process's evictor, migration orders), and
// the registry that creates a policy by name. Policies are pure computation:
// no I/O, no clock, no threads; the daemon builds the views and carries the
// plan out. One policy per file: lfu_policy.cc, lru_policy.cc,
// hot_promote.cc, static_policy.cc; their shared steps are in plan_common.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mtier::policy {

// Where a page is now; the daemon derives it from the process's page words.
enum class Place : uint8_t { kDram, kSlow, kStore, kUntouched };

// Hints a policy writes for the evictor, one byte per page: 0 = no opinion,
// higher = keep in DRAM more. The policies here write kHintKeep for the keep
// set and 0 elsewhere; a nonzero hint is what "in the keep set" means to the
// shared move planning.
constexpr uint8_t kHintNone = 0;
constexpr uint8_t kHintKeep = 255;

// One table of one process. The arrays belong to the caller and stay valid
// for the duration of plan(). A table whose arrays are null (with pages > 0)
// or whose extent_pages is 0 is skipped: no hints, no moves.
//
// A view may show a window of a large table (the daemon reads a bounded
// number of pages per tick): pages [first_page, first_page + pages) of a
// table of table_pages pages, first_page a multiple of extent_pages. The
// arrays then start at the window (place[0] is the table's page
// first_page, heat[0] its extent first_page / extent_pages) and moves name
// pages of the view (the caller adds first_page). A policy plans the window
// as a table of its own, except for what belongs to the whole table: its
// size (whole_pages()) and state a policy keeps per table. table_pages 0:
// the view is the whole table (first_page 0).
struct TableView {
  int id = 0;
  std::string name;
  uint64_t pages = 0;
  uint64_t first_page = 0;
  uint64_t table_pages = 0;
  uint32_t extent_pages = 1;           // heat granularity E: extent e = pages [e*E, e*E+E)
  const Place* place = nullptr;        // per page
  const float* heat = nullptr;         // per extent, ceil(pages / E) of them
  const uint32_t* last_seen = nullptr; // per extent: tick of the last sample, 0 = never
  double samples_per_s = 0;            // EWMA of the table's sample rate
  uint8_t* hints = nullptr;            // per page; written by plan()
};
// The size of the table a view shows (all of it, or a window of it).
inline uint64_t whole_pages(const TableView& t) { return t.table_pages ? t.table_pages : t.pages; }

struct ProcessView {
  uint32_t client = 0;  // the daemon's id of the connection; keys a policy's state
  int pid = 0;
  unsigned weight = 100;  // 1..1000 (clamped); share of the node budget
  // The job it is a rank of: 0 none; processes with the same nonzero job
  // share one DRAM budget (fair_share.h, assign_budgets).
  uint32_t job = 0;
  double misses_per_s = 0;  // its missing faults per second, lately (a job's ranks' need)
  uint64_t dram_resident_pages = 0, slow_resident_pages = 0;  // the engine's counts
  uint64_t own_budget_pages = 0;  // the process's own DRAM budget (its dram_bytes, resolved)
  // Its own slow-tier budget (slow_bytes; 0 = it has no slow tier): the
  // slow budget when the node has none (NodeView::slow_pages == 0).
  uint64_t own_slow_budget_pages = 0;
  // The share of a DRAM budget its evictor lets it fill (its high
  // watermark over its budget, in (0, 1]): moves plan DRAM to at most that
  // much of the budget, since pages brought in past it would only be
  // evicted again.
  double dram_fill = 1.0;
  // Pages of its tables that were ever touched (not kUntouched), for the
  // node budgets' shares; kCountTouched: count them in the views' place
  // arrays (which then must show whole tables).
  static constexpr uint64_t kCountTouched = UINT64_MAX;
  uint64_t touched_pages = kCountTouched;
  // The share of its tables' pages the views show, in (0, 1]: below 1 when
  // some are windows. The keep set chosen from the views is cut to that
  // share of the budget (the hints outside the windows stand from earlier
  // plans).
  double view_share = 1.0;
  std::vector<TableView> tables;
};

struct NodeView {
  uint32_t now_tick = 1;      // ticks start at 1 (a last_seen of 0 means never)
  double tick_seconds = 1.0;  // length of one tick
  uint64_t dram_pages = 0;    // node-wide DRAM budget for all processes; 0 = each keeps its own
  uint64_t slow_pages = 0;    // node-wide slow-tier budget; 0 = each keeps its own
  uint64_t migrate_pages_per_tick = 0;  // rate limit on the moves of one plan; 0 = unlimited
  std::vector<ProcessView> procs;
};

struct Move {
  enum Op : uint8_t {
    kEvict,     // leave memory (DRAM or the slow tier) for a store
    kPrefetch,  // bring into DRAM from a store: sent as a fetch order
    kPromote,   // slow tier -> DRAM
    kDemote,    // DRAM -> slow tier
  };
  uint32_t client = 0;
  int table_id = 0;
  uint64_t first_page = 0;
  uint32_t count = 0;
  Op op = kEvict;
  bool operator==(const Move&) const = default;
};
const char* op_name(Move::Op op);  // "evict", "prefetch", "promote", "demote"

struct Plan {
  std::vector<uint64_t> dram_budget_pages;  // per process, aligned with NodeView::procs
  std::vector<uint64_t> slow_budget_pages;  // likewise; all 0 without a slow tier
  std::vector<Move> moves;                  // highest priority first
};

// A policy's tunable: a number in [min, max], a whole number if `integer`.
struct Tunable {
  const char* key;
  double default_value;
  double min, max;
  bool integer;
  const char* help;
};
std::string format_number(double v);          // shortest text that reads back as v
std::string default_text(const Tunable& t);  // "0.9"
std::string range_text(const Tunable& t);    // "0.1 to 1"

// A registry entry; feeds the man page and `mtier policy list`.
struct PolicyInfo {
  const char* name;
  const char* description;  // one line
  std::vector<Tunable> tunables;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual const char* name() const = 0;
  // Applies "key=value key=value" (spaces or commas between pairs; a key
  // given twice: the last wins; keys not given keep their current values).
  // All-or-nothing: returns 0, or -EINVAL with nothing changed and *why (if
  // given) naming the key, the value and the accepted range.
  [[nodiscard]] virtual int configure(const std::string& params, std::string* why) = 0;
  // Every tunable with its current value, "key=value" separated by spaces;
  // configure(params_text()) changes nothing.
  virtual std::string params_text() const = 0;
  // How often the daemon should cool (halve) the heat model, in seconds.
  virtual double cool_period_s() const = 0;
  // Decides budgets, hints (written through the views) and moves for one
  // tick. *out is overwritten. A policy may keep state across calls (keyed
  // by client and table id; state of clients no longer shown is dropped).
  virtual void plan(const NodeView& node, Plan* out) = 0;
};

const std::vector<PolicyInfo>& policy_table();
// The entry named `name`, or nullptr.
const PolicyInfo* find_policy(const std::string& name);

// Creates the policy `name` configured with `params`. Returns 0, or -EINVAL
// with *why (if given) saying what is wrong: an unknown name (the known ones
// are listed) or what configure() said.
[[nodiscard]] int make_policy(const std::string& name, const std::string& params,
                              std::unique_ptr<Policy>* out, std::string* why);

}  // namespace mtier::policy
