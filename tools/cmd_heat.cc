// SPDX-License-Identifier: Apache-2.0
// mtier heat [PID] [--table NAME|ID] [--interval MS] [--count N] [--buckets N]
// [--socket PATH] [--no-color] [--json]: the heat mtierd samples per table,
// drawn as a live, refreshing heat map on a terminal (heat_view.h lays out
// the frame, terminal.h owns the screen), or as plain-text frames when stdout
// is not a terminal (a pipe, a file, a test), or as JSON snapshots
// (record/snapshot_json.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>

#include "cli.h"
#include "client/daemon_client.h"
#include "commands.h"
#include "config/option_table.h"
#include "heat_view.h"
#include "record/daemon_snapshot.h"
#include "record/snapshot_json.h"
#include "terminal.h"

namespace mtier::tools {
namespace {

const char kUsage[] =
    "usage: mtier heat [PID | --job NAME] [--table NAME|ID] [--interval MS]\n"
    "                  [--count N] [--buckets N] [--socket PATH] [--no-color]\n"
    "                  [--json]\n"
    "\n"
    "Shows the heat mtierd samples in the tables of a process (PID, else the first\n"
    "registered process you may see, or of the job's ranks) as a live heat map: per table one bar along\n"
    "its address space, cold to hot as \" .:-=+*#%@\" (and blue to red), under it\n"
    "where each part lives (D DRAM, m slow tier, s store, ~ mixed, blank untouched)\n"
    "and beside it the table's MiB in each place. Heat is sampled accesses per\n"
    "MiB, halved every cooling period, scaled to the hottest cell shown.\n"
    "\n"
    "Keys: q quit, + - zoom, < > pan, n p next/previous table, t all tables or one\n"
    "table's address ranges (one range a row), Tab next process.\n"
    "When stdout is not a terminal, prints one frame as plain text (80 columns,\n"
    "or $COLUMNS) and exits.\n"
    "\n"
    "  --job NAME       the ranks of this job (as `mtier status` names it); Tab\n"
    "                   goes from one to the next\n"
    "  --table NAME|ID  start with the address ranges of this table\n"
    "  --interval MS    between snapshots (default 1000, at least 10); an extent\n"
    "                   sampled this recently counts as active\n"
    "  --count N        N snapshots, then exit (not a terminal: N frames, a blank\n"
    "                   line between them)\n"
    "  --buckets N      heat-map slices per table to ask for (1..4096, default 512;\n"
    "                   the daemon gives fewer when they would not fit its reply)\n"
    "  --socket PATH    the daemon's socket (default $MTIER_DAEMON_SOCKET, else\n"
    "                   /run/mtier/mtierd.sock)\n"
    "  --no-color       no colours (nor when $NO_COLOR is set)\n"
    "  --json           print the snapshot as one JSON object (--count N: N of them,\n"
    "                   a line each), terminal or not: \"unix_seconds\", \"processes\"\n"
    "                   (pid, name, job, rank, DRAM and slow-tier budget and\n"
    "                   resident bytes, missing_faults, evictions, fetches, and\n"
    "                   \"tables\": id, name, bytes, pages, dram_pages, slow_pages,\n"
    "                   store_pages, untouched_pages, active_bytes, heat,\n"
    "                   samples_per_second, moves, heat_map (a number per slice), place\n"
    "                   (a character per slice, as above)); with --table, only\n"
    "                   that table and its process\n"
    "  -h, --help       this text\n"
    "\n"
    "Exit status: 0; 1 when no daemon answers, PID is not registered or has no\n"
    "such table; 2 usage.\n";

constexpr unsigned kDefaultBuckets = 512;
constexpr unsigned long kMinIntervalMs = 10, kMaxIntervalMs = 24ul * 3600 * 1000;
constexpr unsigned kPlainCols = 80;
constexpr unsigned kMaxCols = 4096;
// After a lone ESC, how long to wait for the rest of an arrow key's sequence
// before taking it as the Esc key (which quits).
constexpr int kEscWaitMs = 30;

struct Options {
  int32_t pid = 0;  // 0: every process the user may see
  std::string job;  // "": any; else only this job's ranks
  const char* table = nullptr;
  unsigned interval_ms = 1000;
  unsigned long count = 0;  // 0: until quit (terminal), 1 (not a terminal)
  unsigned buckets = kDefaultBuckets;
  const char* socket = nullptr;
  bool color = true;
  bool json = false;
};

volatile sig_atomic_t g_quit = 0;
volatile sig_atomic_t g_resized = 0;

void on_quit_signal(int) { g_quit = 1; }
void on_winch(int) { g_resized = 1; }

uint64_t now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

// One snapshot: 0, or 1 with *msg the line to print ("mtier heat: ...").
int fetch(const std::string& path, const Options& o, record::Snapshot* snap, std::string* msg) {
  std::string why;
  int rc = record::fetch_snapshot(path, o.pid, o.buckets, o.interval_ms, snap, &why, o.job);
  if (rc == 0) return 0;
  // Nothing listens at the path: say so plainly; anything else (the pid is
  // not registered, belongs to another user, a protocol error) in the
  // daemon's own words.
  if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTSOCK)
    *msg = "mtier heat: no mtierd at " + path + " (is it running?)";
  else
    *msg = "mtier heat: " + (why.empty() ? std::string(strerror(-rc)) : why);
  return 1;
}

// Points the view at --table: the first process that has it (the given PID
// is the only one fetched). 0, or 1 with *msg.
int select_table(const record::Snapshot& snap, const char* table, HeatView* view,
                 std::string* msg) {
  for (const record::ProcessSnap& p : snap.procs) {
    if (find_table(p, table, &view->table_id)) {
      view->pid = p.pid;
      view->mode = HeatMode::kRanges;
      return 0;
    }
  }
  const record::ProcessSnap* p = shown_process(snap, *view);
  if (!p) {
    *msg = std::string("mtier heat: no table '") + table + "': mtierd has no registered process";
    return 1;
  }
  std::string names;
  for (const record::TableSnap& t : p->tables) names += (names.empty() ? "" : ", ") + t.name;
  *msg = std::string("mtier heat: no table '") + table + "' in pid " + std::to_string(p->pid) +
         " (tables: " + (names.empty() ? "none" : names) + ")";
  return 1;
}

void sleep_ms(unsigned ms) {
  struct timespec ts = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

// --count frames (default 1): `show` prints each snapshot, the first the
// one given, the next fetched after --interval. 0, or 1 on a failed fetch
// or write.
template <class Show>
int each_frame(const std::string& path, const Options& o, record::Snapshot snap, Show show) {
  unsigned long frames = o.count ? o.count : 1;
  for (unsigned long i = 0; i < frames; i++) {
    if (i > 0) {
      sleep_ms(o.interval_ms);
      std::string msg;
      if (fetch(path, o, &snap, &msg)) return fprintf(stderr, "%s\n", msg.c_str()), 1;
    }
    if (!show(snap, i)) return 1;
  }
  return 0;
}

// Not a terminal: --count frames of plain text, a blank line between them,
// as wide as $COLUMNS says (else 80) and as tall as they need.
int run_plain(const std::string& path, const Options& o, record::Snapshot snap, HeatView view) {
  uint64_t cols = kPlainCols;
  const char* env = getenv("COLUMNS");  // not a number, or out of range: 80
  if (!env || config::parse_decimal(env, &cols) != 0 || cols < 1 || cols > kMaxCols)
    cols = kPlainCols;
  return each_frame(path, o, std::move(snap), [&](const record::Snapshot& s, unsigned long i) {
    if (i > 0 && fputs("\n", stdout) < 0) return false;
    std::string frame =
        render_frame(s, view, static_cast<unsigned>(cols), natural_rows(s, view), false);
    return fputs(frame.c_str(), stdout) >= 0 && fputs("\n", stdout) >= 0 && fflush(stdout) == 0;
  });
}

// --table's process and table alone (what the view selected).
void keep_selected(record::Snapshot* snap, const HeatView& view) {
  std::erase_if(snap->procs, [&](const record::ProcessSnap& p) { return p.pid != view.pid; });
  for (record::ProcessSnap& p : snap->procs)
    std::erase_if(p.tables, [&](const record::TableSnap& t) { return t.id != view.table_id; });
}

// --json: --count snapshots, one JSON object a line, whatever stdout is.
int run_json(const std::string& path, const Options& o, record::Snapshot snap,
             const HeatView& view) {
  return each_frame(path, o, std::move(snap), [&](record::Snapshot s, unsigned long) {
    if (o.table) keep_selected(&s, view);
    std::string text = record::snapshot_json(s);
    return puts(text.c_str()) >= 0 && fflush(stdout) == 0;
  });
}

// Installs the handlers `mtier heat` needs on a terminal and blocks those
// signals outside ppoll (so that one arriving between a check of the flags
// and the wait is not missed); the destructor puts back the mask and the
// handlers as they were.
class SignalGuard {
 public:
  SignalGuard() {
    sigemptyset(&set_);
    for (int s : kQuit) sigaddset(&set_, s);
    sigaddset(&set_, SIGWINCH);
    sigprocmask(SIG_BLOCK, &set_, &old_mask_);
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_quit_signal;  // no SA_RESTART: ppoll returns EINTR
    for (size_t i = 0; i < kQuitCount; i++) sigaction(kQuit[i], &sa, &old_quit_[i]);
    sa.sa_handler = on_winch;
    sigaction(SIGWINCH, &sa, &old_winch_);
  }
  ~SignalGuard() {
    // Mask first, handlers after: a signal still pending reaches our handler.
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    for (size_t i = 0; i < kQuitCount; i++) sigaction(kQuit[i], &old_quit_[i], nullptr);
    sigaction(SIGWINCH, &old_winch_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  // The mask to wait with: the caller's, in which these signals arrive.
  const sigset_t* wait_mask() const { return &old_mask_; }

 private:
  static constexpr int kQuit[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  static constexpr size_t kQuitCount = sizeof kQuit / sizeof kQuit[0];
  sigset_t set_, old_mask_;
  struct sigaction old_quit_[kQuitCount], old_winch_;
};

// The keys waiting on in_fd; false when the terminal is gone.
bool read_keys(int in_fd, std::string* bytes) {
  char buf[256];
  ssize_t n = read(in_fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;  // poll said readable: end of file, hung up
  bytes->assign(buf, static_cast<size_t>(n));
  // An ESC at the end may be the start of an arrow key's sequence cut by the
  // read: give the rest a moment to come.
  size_t esc = bytes->rfind('\033');
  if (esc != std::string::npos && esc + 3 > bytes->size()) {
    struct pollfd p = {in_fd, POLLIN, 0};
    if (poll(&p, 1, kEscWaitMs) > 0 && (n = read(in_fd, buf, sizeof buf)) > 0)
      bytes->append(buf, static_cast<size_t>(n));
  }
  return true;
}

void measure(int fd, unsigned* cols, unsigned* rows) {
  if (terminal_size(fd, cols, rows) < 0) *cols = kPlainCols, *rows = 24;
  if (*cols > kMaxCols) *cols = kMaxCols;
}

// A terminal: the alternate screen, redrawn at every snapshot, key and
// resize, until q (or Ctrl-C, Esc), a signal, --count snapshots, or an
// error; the terminal is restored on each of these ways out before the
// error, if any, is printed.
int run_live(const std::string& path, const Options& o, record::Snapshot snap, HeatView view) {
  bool color = o.color;
  int tty_fd = -1;
  int in_fd = isatty(STDIN_FILENO) ? STDIN_FILENO : -1;
  if (in_fd < 0) {
    // stdin redirected: the keys still come from the controlling terminal.
    tty_fd = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    in_fd = tty_fd;
  }
  std::string msg;
  int rc = 0;
  {
    g_quit = 0;
    g_resized = 0;
    SignalGuard signals;
    TerminalSession term;
    std::string why;
    if (term.begin(in_fd, STDOUT_FILENO, &why) < 0) {
      msg = "mtier heat: " + why;
      rc = 1;
    }
    unsigned cols = 0, rows = 0;
    measure(STDOUT_FILENO, &cols, &rows);
    unsigned long frames = 1;  // the caller fetched the first
    uint64_t next = now_ms() + o.interval_ms;
    bool redraw = true;
    while (rc == 0 && !g_quit) {
      if (g_resized) {
        g_resized = 0;
        measure(STDOUT_FILENO, &cols, &rows);
        redraw = true;
      }
      if (redraw) {
        int w = term.draw(render_frame(snap, view, cols, rows, color), rows);
        if (w < 0) {
          msg = std::string("mtier heat: writing to the terminal: ") + strerror(-w);
          rc = 1;
          break;
        }
        redraw = false;
      }
      uint64_t now = now_ms();
      if (now >= next) {
        if (o.count && frames >= o.count) break;  // the last frame has had its interval
        if ((rc = fetch(path, o, &snap, &msg)) != 0) break;
        frames++;
        next = next + o.interval_ms > now ? next + o.interval_ms : now + o.interval_ms;
        redraw = true;
        continue;
      }
      uint64_t wait = next - now;
      struct timespec ts = {static_cast<time_t>(wait / 1000),
                            static_cast<long>(wait % 1000) * 1000000};
      struct pollfd p = {in_fd, POLLIN, 0};
      int n = ppoll(&p, in_fd >= 0 ? 1 : 0, &ts, signals.wait_mask());
      if (n < 0 && errno != EINTR) {
        msg = std::string("mtier heat: waiting for keys: ") + strerror(errno);
        rc = 1;
      }
      if (n <= 0) continue;
      if (!(p.revents & POLLIN)) break;  // POLLHUP, POLLERR: the terminal is gone
      std::string bytes;
      if (!read_keys(in_fd, &bytes)) break;
      for (int key : decode_keys(bytes)) {
        if (!apply_key(key, snap, &view)) g_quit = 1;
        redraw = true;
      }
    }
    term.end();
  }
  if (tty_fd >= 0) close(tty_fd);
  if (!msg.empty()) fprintf(stderr, "%s\n", msg.c_str());
  return rc;
}

}  // namespace

int cmd_heat(int argc, char** argv) {
  const cli::Command cmd("heat");
  Options o;
  std::string table, socket;
  uint64_t count = 0;
  bool plain = false;  // --no-color
  std::vector<std::string> operands;
  cli::Parser p(cmd, [](FILE* out) { fputs(kUsage, out); });
  p.text("--table", &table)
      .count("--interval", &o.interval_ms, kMinIntervalMs, kMaxIntervalMs)
      .count("--count", &count, 1, 1ull << 32)
      .count("--buckets", &o.buckets, 1, ipc::kMaxHeatBuckets)
      .text("--socket", &socket)
      .flag("--no-color", &plain)
      .flag("--json", &o.json)
      .value("--job", cli::job_name(&o.job));
  if (int rc = p.parse(argc, argv, &operands); rc >= 0) return rc;
  if (operands.size() > 1) return cmd.usage_error("one PID at most ('" + operands[1] + "' is extra)");
  if (!operands.empty()) {
    long pid = 0;
    std::string why;
    if (cli::parse_pid("PID", operands[0], &pid, &why) < 0) return cmd.usage_error(why);
    if (!o.job.empty()) return cmd.usage_error("give a PID or --job, not both");
    o.pid = static_cast<int32_t>(pid);
  }
  o.count = count;
  o.color = !plain;
  if (!table.empty()) o.table = table.c_str();
  if (!socket.empty()) o.socket = socket.c_str();
  const char* no_color = getenv("NO_COLOR");
  if (no_color && *no_color) o.color = false;

  std::string path = daemon_socket_path(o.socket), msg;
  record::Snapshot snap;
  HeatView view;
  view.pid = o.pid;
  if (fetch(path, o, &snap, &msg) || (o.table && select_table(snap, o.table, &view, &msg))) {
    fprintf(stderr, "%s\n", msg.c_str());
    return 1;
  }
  if (o.json) return run_json(path, o, std::move(snap), view);
  // A "dumb" terminal cannot do the alternate screen or cursor moves.
  const char* term = getenv("TERM");
  bool live = isatty(STDOUT_FILENO) && !(term && !strcmp(term, "dumb"));
  if (!live) return run_plain(path, o, std::move(snap), view);
  return run_live(path, o, std::move(snap), view);
}

}  // namespace mtier::tools
