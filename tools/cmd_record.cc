// SPDX-License-Identifier: Apache-2.0
// mtier record: snapshots of mtierd's view of one process (heat per slice of
// each table, where the slices live, residency, page moves) every interval,
// written to a recording (src/record/recording.h, docs/recording.md) for
// `mtier report`. Either runs a command under mtier (as `mtier run` does)
// and records it until it exits, or records a running process by pid.
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.h"
#include "client/daemon_client.h"
#include "commands.h"
#include "record/daemon_snapshot.h"
#include "record/follow.h"
#include "record/recording.h"
#include "util/json.h"
#include "util/progress.h"

namespace mtier::tools {
namespace {

const char kUsage[] =
    "usage: mtier record [-o FILE] [--duration S] [--interval MS] [--buckets N]\n"
    "                    [--append] [--socket PATH] [-q] -- COMMAND [ARGS...]\n"
    "       mtier record [OPTIONS] --pid PID | --job NAME\n"
    "\n"
    "Records what mtierd sees of processes every interval: each table's heat\n"
    "in slices, where each slice lives (DRAM, slow tier, store), residency per\n"
    "tier, the sampled working set and the page moves. With COMMAND, runs it\n"
    "under mtier (like `mtier run -- COMMAND`) and records it and every process\n"
    "it starts (the ranks a launcher spawns) until it exits; with --pid, records\n"
    "a process already registered with mtierd until it goes away; with --job,\n"
    "the ranks of a job (as `mtier status` names it) until the last one goes.\n"
    "--duration or Ctrl-C stops earlier. Read the file with `mtier report`.\n"
    "The format: docs/recording.md.\n"
    "\n"
    "  -o, --output FILE  the recording (default mtier.rec; an existing file is\n"
    "                     refused unless --append)\n"
    "  --append           add a new session to an existing recording\n"
    "  --duration S       stop after S seconds (default: until the process ends)\n"
    "  --interval MS      between snapshots, 10..3600000 (default 1000)\n"
    "  --buckets N        heat-map slices per table, 1..4096 (default 64; mtierd\n"
    "                     gives fewer when a snapshot would not fit one reply)\n"
    "  --pid PID          record this running process\n"
    "  --job NAME         record the ranks of this job\n"
    "  --socket PATH      mtierd's socket (default $MTIER_DAEMON_SOCKET, else\n"
    "                     /run/mtier/mtierd.sock); also given to COMMAND\n"
    "  -q, --quiet        no live line on stderr (by default, when stderr is a\n"
    "                     terminal: the snapshots so far, and with --duration the\n"
    "                     seconds done of all and the time left); the summary line\n"
    "                     at the end is printed either way\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit status: with COMMAND, its exit status (128 + N if killed by signal N),\n"
    "or 1 if the recording failed; with --pid or --job, 0, or 1 on failure.\n"
    "2: usage.\n";

// How long a COMMAND may take to register with mtierd before recording
// gives up on it (Python imports and torch's start are slow).
constexpr double kRegisterWaitS = 60;

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

struct Args {
  std::string output = "mtier.rec";
  bool append = false;
  double duration_s = 0;  // 0 = no limit
  unsigned interval_ms = 1000;
  unsigned buckets = 64;
  long pid = 0;
  std::string job;
  const char* socket = nullptr;  // socket_text's, or nullptr
  std::string socket_text;
  char** command = nullptr;  // nullptr-terminated, or nullptr
  bool quiet = false;        // no live line on a terminal
};

const cli::Command kCmd("record");

int parse_args(int argc, char** argv, Args* a) {
  std::string socket;
  cli::Parser p(kCmd, [](FILE* out) { fputs(kUsage, out); });
  p.text("-o, --output", &a->output)
      .flag("--append", &a->append)
      .number("--duration", &a->duration_s, 0.001, 1e9, "seconds")
      .count("--interval", &a->interval_ms, 10, 3600000)
      .count("--buckets", &a->buckets, 1, 4096)
      .value("--pid",
             [a](const std::string& flag, const std::string& v) {
               std::string why;
               return cli::parse_pid(flag, v, &a->pid, &why) == 0 ? std::string() : why;
             })
      .value("--job", cli::job_name(&a->job))
      .text("--socket", &a->socket_text)
      .flag("-q, --quiet", &a->quiet);
  // The first operand ends the flags, so COMMAND's own flags stay its own.
  int first = argc;
  if (int rc = p.parse_until_operand(argc, argv, &first); rc >= 0) return rc;
  if (first < argc) a->command = argv + first;
  if (!a->socket_text.empty()) a->socket = a->socket_text.c_str();
  if ((a->command != nullptr) + (a->pid != 0) + !a->job.empty() != 1)
    return kCmd.usage_error("give one of -- COMMAND, --pid PID and --job NAME");
  return -1;  // go on
}

uint64_t now_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Starts COMMAND as `mtier run -- COMMAND` (this binary), so it gets the
// same preload set-up. Returns its pid or -errno.
pid_t start_command(char** command, const std::string& socket) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -errno;
  self[n] = '\0';
  pid_t pid = fork();
  if (pid < 0) return -errno;
  if (pid == 0) {
    setenv("MTIER_DAEMON_SOCKET", socket.c_str(), 1);
    std::vector<char*> args = {const_cast<char*>("mtier"), const_cast<char*>("run"),
                               const_cast<char*>("--")};
    for (char** p = command; *p; p++) args.push_back(*p);
    args.push_back(nullptr);
    execv(self, args.data());
    fprintf(stderr, "mtier record: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
  }
  return pid;
}

std::string host_name() {
  char h[256] = {};
  return gethostname(h, sizeof h - 1) == 0 ? h : "";
}

std::string joined(char** command) {
  std::string s;
  for (char** p = command; p && *p; p++) s += (s.empty() ? "" : " ") + std::string(*p);
  return s;
}

// The daemon's policy and heat source, for the session's INFO (left empty
// when the daemon does not say).
void daemon_facts(const std::string& socket, record::SessionInfo* info) {
  ipc::Reply reply;
  std::string why;
  json::Json v;
  if (daemon_request(socket, ipc::Message{ipc::StatusRequest{static_cast<uint32_t>(info->pid), ""}},
                     &reply, &why) < 0 ||
      reply.status < 0 || json::parse(reply.message, &v, &why) < 0)
    return;
  const json::Json& d = json::at(v, "daemon");
  info->policy = json::str(d, "policy") + " " + json::str(d, "policy_params");
  info->heat_source = json::str(d, "heat_source");
}

class Recorder {
 public:
  Recorder(const Args& a, std::string socket) : a_(a), socket_(std::move(socket)) {}

  // Runs until the process is gone, the duration is up or a signal came.
  // `child`: COMMAND's pid (reaped here), or 0 with --pid. Returns the exit
  // status.
  int run(pid_t child);

 private:
  bool child_running(pid_t child);
  std::string label() const;
  void progress();
  void fail_line(const std::string& why);

  const Args& a_;
  std::string socket_;
  record::RecordingWriter writer_;
  int child_status_ = -1;
  uint64_t snapshots_ = 0, start_ms_ = 0;
  // On a terminal: the snapshots so far and, with --duration, the seconds
  // done of all and the time left (util/progress.h).
  progress::Progress pr_{progress::stderr_io(), a_.quiet};
};

bool Recorder::child_running(pid_t child) {
  if (child <= 0) return true;
  if (child_status_ >= 0) return false;
  int st;
  if (waitpid(child, &st, WNOHANG) == child)
    child_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return child_status_ < 0;
}

std::string Recorder::label() const {
  return "mtier record: " + std::to_string(snapshots_) + " snapshots to " + a_.output;
}

void Recorder::progress() {
  pr_.relabel(label());
  pr_.update((now_ms() - start_ms_) / 1000);
}

// An error: on a line of its own, whatever -q says.
void Recorder::fail_line(const std::string& why) {
  pr_.clear();
  fprintf(stderr, "mtier record: %s\n", why.c_str());
}

int Recorder::run(pid_t child) {
  // COMMAND: it and what it starts; else the pid or the job.
  record::Follow f;
  if (child > 0)
    f.tree = child;
  else if (a_.pid)
    f.pid = static_cast<int32_t>(a_.pid);
  else
    f.job = a_.job;
  std::string why;
  record::Snapshot snap;
  auto fetch = [&] {
    int rc = record::fetch_snapshot(socket_, f.pid, a_.buckets, a_.interval_ms, &snap, &why, f.job);
    if (rc == 0 && record::keep_followed(f, &snap) == 0) {
      why = record::followed_text(f) + ": nothing registered with mtierd";
      rc = -ESRCH;
    }
    return rc;
  };
  // Wait for the process to register (COMMAND), or check it is (--pid).
  start_ms_ = now_ms();
  int rc;
  for (;;) {
    rc = fetch();
    if (rc == 0 || child <= 0 || rc != -ESRCH || g_stop || !child_running(child)) break;
    if (now_ms() - start_ms_ > kRegisterWaitS * 1000) {
      why = record::followed_text(f) + ": nothing registered with mtierd within " +
            std::to_string(static_cast<int>(kRegisterWaitS)) + " s";
      break;
    }
    poll(nullptr, 0, 100);
  }
  if (rc < 0) {
    if (child > 0 && !child_running(child) && rc == -ESRCH)
      why = "the command exited before it registered with mtierd";
    fprintf(stderr, "mtier record: %s\n", why.c_str());
    if (child > 0) {
      while (child_running(child)) poll(nullptr, 0, 100);  // let it finish; its status is kept
    }
    return 1;
  }
  record::SessionInfo info;
  info.start_unix_ms = now_ms();
  info.interval_ms = a_.interval_ms;
  info.buckets = a_.buckets;
  info.pid = child > 0 ? child : f.pid;
  info.command = joined(a_.command);
  info.host = host_name();
  daemon_facts(socket_, &info);
  if (writer_.open(a_.output, a_.append, info, &why) < 0) {
    fprintf(stderr, "mtier record: %s\n", why.c_str());
    if (child > 0) kill(child, SIGTERM);
    while (child > 0 && child_running(child)) poll(nullptr, 0, 100);
    return 1;
  }
  start_ms_ = info.start_unix_ms;
  pr_.start(label(), static_cast<uint64_t>(std::ceil(a_.duration_s)), "s");
  int status = 0;
  uint64_t next = now_ms();
  for (;;) {
    if (rc == 0) {
      if (writer_.write(snap, &why) < 0) {
        fail_line(why);
        status = 1;
        break;
      }
      snapshots_++;
      progress();
    }
    next += a_.interval_ms;
    bool over = a_.duration_s > 0 && now_ms() - start_ms_ >= a_.duration_s * 1000;
    while (!g_stop && !over && child_running(child) && now_ms() < next) {
      poll(nullptr, 0, static_cast<int>(std::min<uint64_t>(next - now_ms(), 100)));
      progress();  // the time goes on between snapshots (redrawn at most 4 times a second)
    }
    if (g_stop || over || !child_running(child)) break;
    rc = fetch();
    // Gone: with --pid or --job the end of the recording; a COMMAND's
    // processes may come and go (a launcher's ranks): until it exits.
    if (rc == -ESRCH && child > 0) continue;
    if (rc == -ESRCH) break;
    if (rc < 0) {
      fail_line(why);
      status = 1;
      break;
    }
  }
  writer_.close();
  // The summary, terminal or not (-q leaves out only the live line).
  pr_.clear();
  fprintf(stderr, "mtier record: %llu snapshots over %.0f s to %s\n",
          static_cast<unsigned long long>(snapshots_), (now_ms() - start_ms_) / 1000.0,
          a_.output.c_str());
  if (child > 0) {
    if (g_stop) kill(child, SIGTERM);  // Ctrl-C went to it too; a TERM to us did not
    while (child_running(child)) poll(nullptr, 0, 100);
    return status ? status : child_status_;
  }
  return status;
}

}  // namespace

int cmd_record(int argc, char** argv) {
  Args a;
  if (int rc = parse_args(argc, argv, &a); rc >= 0) return rc;
  std::string socket = daemon_socket_path(a.socket);
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (!a.append && access(a.output.c_str(), F_OK) == 0) {
    fprintf(stderr, "mtier record: %s exists (give --append to add to it, or another -o)\n",
            a.output.c_str());
    return 1;
  }
  pid_t child = 0;
  if (a.command) {
    // No daemon, no recording: say so before the command starts.
    record::Snapshot probe;
    std::string why;
    int rc = record::fetch_snapshot(socket, 0, 1, 0, &probe, &why);
    if (rc < 0 && rc != -ESRCH) {
      fprintf(stderr, "mtier record: %s\n", why.c_str());
      return 1;
    }
    child = start_command(a.command, socket);
    if (child < 0) {
      fprintf(stderr, "mtier record: cannot start the command: %s\n", strerror(-child));
      return 1;
    }
  }
  Recorder r(a, socket);
  return r.run(child);
}

}  // namespace mtier::tools
