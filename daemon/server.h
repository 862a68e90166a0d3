// SPDX-License-Identifier: Apache-2.0
// mtierd's event loop: one thread, one epoll set holding the listening
// socket, every client connection, a signalfd (TERM/INT: stop; HUP: reload)
// and the policy tick's timerfd. Each tick collects heat from the registered
// processes' sources, runs the policy and sends its orders (planner.cc).
//
// A client is trusted for nothing: its identity is SO_PEERCRED's, a message
// that does not decode, comes out of order or from the wrong role is logged
// with the peer's pid and answered with ERROR, and that connection is closed;
// the others are served on. No exception ends the loop: one that escapes
// the handling of an event (out of memory, say) is logged; a client's
// connection is then closed, a tick or signal is simply over. Permissions: a runtime registers only itself;
// changing the policy takes root or the daemon's own user; a status request
// shows a non-root user only the processes of that user.
#pragma once
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "client.h"
#include "daemon_config.h"
#include "metrics_http.h"
#include "page_scan.h"
#include "perf/perf_source.h"
#include "policy/policy.h"
#include "tier/topology.h"
#include "util/json.h"

namespace mtier::daemon {

// How long the ticks' work took: a histogram with fixed bounds in seconds
// (the metrics' mtier_daemon_tick_duration_seconds).
struct TickDurations {
  static constexpr double kBounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                       0.05,   0.1,   0.25,   0.5,   1,     2.5};
  static constexpr size_t kBuckets = sizeof kBounds / sizeof kBounds[0];
  uint64_t counts[kBuckets + 1] = {};  // per bucket, not cumulative; the last: above them all
  uint64_t count = 0;
  double sum_s = 0;
  void observe(double s) {
    size_t b = 0;
    while (b < kBuckets && s > kBounds[b]) b++;
    counts[b]++;
    count++;
    sum_s += s;
  }
};

class Server {
 public:
  // `cli`: how the configuration was made, to remake it on SIGHUP.
  Server(const DaemonConfig& cfg, CliResult cli);
  ~Server();

  // Detects the heat sources, makes the policy, listens. 0, or -errno with
  // *why saying what failed (the caller logs it and exits 1).
  [[nodiscard]] int start(std::string* why);
  // Serves until SIGTERM/SIGINT (or request_stop). Returns 0, or 1 when the
  // loop itself failed.
  int run();
  void request_stop() { stopping_ = true; }

  // What WELCOME and status say about sampling: "page-faults" or "none".
  std::string sources_in_use() const;

 private:
  // Handles one epoll event (the fixed keys or a client fd); may throw.
  void dispatch(uint64_t key);
  // After dispatch(key) threw: logs it and, for a client, closes its
  // connection without allocating.
  void on_exception(uint64_t key, const char* what) noexcept;
  void accept_clients();
  void serve(Client& c);
  void drop(Client& c, const std::string& why);
  void refuse(Client& c, int code, const std::string& why);
  void on_hello(Client& c, const ipc::Hello& m);
  void on_register(Client& c, const ipc::Register& m, std::vector<int>& fds);
  void on_policy_set(Client& c, const ipc::PolicySet& m);
  void on_status(Client& c, const ipc::StatusRequest& m);
  void on_signal();
  void reload();
  // admission.cc. Raises the open file limit for max_connections (warns
  // when it cannot reach it).
  void setup_fd_limit();
  // Why a new connection from `uid` is refused ("" to take it):
  // max_connections, or max_connections_per_user (not for root or mtierd's
  // own user).
  std::string over_connection_caps(uid_t uid) const;
  // Answers fd with ERROR (EAGAIN, `why`) and closes it; logged at most
  // once a second, with a count of the refusals in between.
  void refuse_connection(int fd, pid_t pid, const std::string& why);
  // EMFILE/ENFILE from accept: the listening socket leaves the epoll set
  // (no spinning on it) until resume_accept(), called when a connection
  // closes and at each tick.
  void pause_accept(int err);
  void resume_accept();
  // After a connection was accepted: ends an EMFILE episode (logged once).
  void accepted();
  // max_region_bytes_per_user, resolved (0 = 32 x physical memory).
  uint64_t region_cap() const;
  // A registration's region against the per-user cap and the peer's
  // /proc/PID/maps. 0, or -ENOSPC / -EINVAL / -errno with *why.
  [[nodiscard]] int admit_region(const Client& c, const ipc::Segment& s, std::string* why) const;
  // Runs one client's part of the tick; an exception from it marks the
  // client for drop_failed() with the reason, instead of failing the tick
  // for every process. Returns false when it threw.
  template <class F>
  bool guarded(Client& c, const char* what, F&& f) noexcept;
  // Drops the clients guarded() marked, each with a logged reason.
  void drop_failed();
  void tick();
  // Sets the ticks to skip after one whose work took took_ns (tiering.cc).
  void pace_ticks(uint64_t took_ns);
  void plan_and_order(double tick_s);
  // Sizes c's tracks to its tables and appends one ScanTable per table (in
  // c.tables' order) to *scan. May throw (guarded by plan_and_order), with
  // *scan then as it was.
  void scan_tables(Client& c, std::vector<ScanTable>* scan);
  // c's part of the policy's view: its counts, and each table's heat and
  // page places as this tick's scan left them; windows[k] is what the scan
  // read of c.tables[k]. A table read whole is shown whole, else the window
  // read, widened to whole heat extents (policy.h). May throw (guarded by
  // plan_and_order).
  void fill_view(Client& c, const ScanWindow* windows, policy::ProcessView* pv);
  // Sets node->procs[i].job: equal for the ranks of one job (same user, same name).
  void number_jobs(const std::vector<Client*>& order, policy::NodeView* node) const;
  void close_all();
  void open_heat_source(Client& c);
  // Which heat source kind to use, or nullptr: the config's choice among
  // the detected ones.
  const HeatSourceInfo* pick_source() const;
  void sync_directory(Client& c);
  void map_addresses(Client& c);
  void collect_heat();
  // Drains c's heat source into its model, at most `budget` samples; how
  // many were taken. May throw (guarded by collect_heat).
  long drain_heat(Client& c, bool refresh, size_t budget);
  // Per-second rates of page moves and faults over the last `elapsed_s`
  // (the policy's view; the status tools and metrics take their rates from
  // the cumulative counts instead).
  void update_rates(double elapsed_s);
  // Adds the page moves counted since the last call to the node's totals
  // (node_moves_), which thus outlive the processes and tables that made them.
  void count_node_moves();
  // The status document (docs/protocol.md): heat maps of `buckets` slices
  // per table, an extent sampled within `window_ms` counted as active; of
  // one pid (0: all) and of one job's ranks (empty: any).
  // Its text, or with *status < 0 what is wrong (-EPERM: pid is another
  // user's; -ESRCH: no such process or job registered).
  std::string status_json(const Client& asker, pid_t pid, const std::string& job, unsigned buckets,
                          unsigned window_ms, int* status);
  json::Json status_doc(const Client& asker, pid_t pid, const std::string& job, unsigned buckets,
                        unsigned window_ms, int* status);
  // Answers with status_json, halving the slices until the reply fits.
  void reply_status(Client& c, pid_t pid, const std::string& job, unsigned buckets,
                    unsigned window_ms);
  void on_heat(Client& c, const ipc::HeatRequest& m);
  void on_budget_set(Client& c, const ipc::BudgetSet& m);
  void on_pin_set(Client& c, const ipc::PinSet& m);
  void reply(Client& c, int status, const std::string& message);
  // Writes the hints of c's pins (pins.h) and appends the orders that bring
  // pinned pages where their pins say, at most `limit` pages (0: no limit);
  // only on the pages the policy was shown this tick (TableTrack::view_lo,
  // view_hi), the others keep the hints written when they were.
  void apply_pins(Client& c, uint64_t limit, std::vector<ipc::Order>* out);
  // The status document's "tiers": DRAM, the slow memory tier and the
  // stores, node-wide.
  json::Json tiers_json() const;
  // Its daemon's "moves" and "tick_duration".
  json::Json node_moves_json() const;
  json::Json tick_durations_json() const;
  // Its "jobs": each job's ranks (the asker's own jobs unless it is root).
  json::Json jobs_json(uid_t asker, const std::string& only) const;
  // Starts the metrics endpoint on cfg_.metrics_address: 0, or -EINVAL for
  // an address that does not parse (*why); one that cannot be listened on
  // is a warning (another daemon holds the port), the daemon serves on.
  int start_metrics(std::string* why);
  // Renders the status as Prometheus text for the endpoint, when it wants one.
  void render_metrics();

  DaemonConfig cfg_;
  CliResult cli_;
  std::string loaded_policy_, loaded_params_;  // as the configuration last said
  int listen_fd_ = -1, epoll_fd_ = -1, signal_fd_ = -1, timer_fd_ = -1;
  bool stopping_ = false;
  bool accept_paused_ = false;            // listen_fd_ is out of the epoll set (EMFILE)
  bool fds_short_ = false;                // EMFILE said, and no accept since
  uint64_t last_refusal_log_ns_ = 0;      // refuse_connection's rate limit
  uint64_t refusals_unlogged_ = 0;
  // epoll data for the fixed fds; client fds are their own numbers (>= 0).
  static constexpr uint64_t kListenKey = ~0ull, kSignalKey = ~0ull - 1, kTimerKey = ~0ull - 2;
  std::map<int, std::unique_ptr<Client>> clients_;  // by fd
  std::unique_ptr<policy::Policy> policy_;
  std::vector<HeatSourceInfo> detected_;
  const HeatSourceInfo* source_ = nullptr;  // in use, or nullptr
  Topology topology_;                        // the node's memory tiers, read at start
  pid_t fuse_pid_ = 0;                       // mtierd --fuse: the mtierfs child, or 0
  uint32_t next_id_ = 1;
  uint32_t tick_ = 1;
  double since_cool_s_ = 0;
  double since_refresh_s_ = 0;
  double since_rate_s_ = 0;
  double span_s_ = 0;            // seconds since the last tick that planned
  uint64_t ticks_to_skip_ = 0;   // pace_ticks(): idle ticks still to come
  bool paced_said_ = false;      // pace_ticks() logged that it skips ticks
  MetricsHttp metrics_;          // the Prometheus endpoint (metrics_address)
  PageScan scan_{1u << 20};      // the tick's bounded read of the page words (page_scan.h)
  std::vector<ScanTable> scan_tables_;    // plan_and_order()'s, reused across ticks
  std::vector<ScanWindow> scan_windows_;
  std::array<uint64_t, kPageMoveKinds> node_moves_{};  // pages, since the daemon started
  TickDurations tick_durations_;                        // the ticks' work, for the metrics
};

}  // namespace mtier::daemon
