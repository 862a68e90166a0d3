// SPDX-License-Identifier: Apache-2.0
// mtierfs MOUNTPOINT [-o options] [--socket PATH] [-f] [-d] [-s]: mtierd's
// state and controls as a FUSE file system (mtierfs(8)). This file is glue:
// the command line (libfuse's own option parsing, as fuse_main does, plus
// --socket), and the FUSE operations, which look paths up with fs_tree.h in
// the document DaemonCache holds and send what writes ask for.
//
// Sizes and caching: every file is opened direct_io, so reads reach
// mtierfs whatever size the kernel last saw, and a file's contents are
// computed once at open (one document per open, as /proc's seq_files do;
// a reader never sees a mix of two fetches). getattr still reports the real
// length of the contents now, so `ls -l`, `stat` and `wc -c` are right too;
// attributes and entries are not cached by the kernel (timeouts 0, -o may
// override) because processes come and go.

// libfuse 3.12 replaced the loop configuration (its 3.2 form is converted,
// with a bogus "invalid max threads" line: libfuse issue 1003); the header
// libfuse_config.h came later (libfuse issue 724, 3.14), so where it is the
// newer API is too.
#if __has_include(<libfuse_config.h>)
#define FUSE_USE_VERSION 312
#else
#define FUSE_USE_VERSION 35
#endif
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "client/daemon_client.h"
#include "config.h"  // PACKAGE_VERSION
#include "config/parse_text.h"
#include "daemon_cache.h"
#include "fs_log.h"
#include "fs_tree.h"
#include "prometheus.h"

namespace mtier::fs {
namespace {

constexpr std::chrono::milliseconds kStatusMaxAge{200};

const char kUsage[] =
    "usage: mtierfs MOUNTPOINT [-o OPTION[,OPTION...]] [--socket PATH] [-f] [-d] [-s]\n"
    "\n"
    "Serves mtierd's state and controls as files on MOUNTPOINT: tiers/, procs/,\n"
    "policy and stats (Prometheus text). See mtierfs(8).\n"
    "\n"
    "  --socket PATH  mtierd's socket (default $MTIER_DAEMON_SOCKET, else\n"
    "                 /run/mtier/mtierd.sock)\n"
    "  -h, --help     this text, then libfuse's options\n"
    "  -V, --version  mtierfs' and libfuse's versions\n"
    "\n"
    "Exit status: 0 unmounted; 1 the mount or the file system failed; 2 usage.\n"
    "\n";

// Options always set, ahead of the user's so that a -o given later wins
// (except default_permissions, which nothing turns off): the kernel checks
// modes and owners, and caches neither entries nor attributes.
const char kDefaultOptions[] =
    "-odefault_permissions,fsname=mtierfs,subtype=mtierfs,"
    "entry_timeout=0,negative_timeout=0,attr_timeout=0";

struct Options {
  char* socket = nullptr;
};

const struct fuse_opt kOptionSpecs[] = {
    {"--socket=%s", offsetof(Options, socket), 0},
    {"--socket %s", offsetof(Options, socket), 0},
    FUSE_OPT_END,
};

DaemonCache* cache() { return static_cast<DaemonCache*>(fuse_get_context()->private_data); }

// A file's contents as of its open.
struct OpenFile {
  std::string content;
};

// The status document (null when no daemon answers: *daemon_rc says why)
// and the node of `path`, which must exist in it. Returns 0 or -ENOENT.
int lookup(const char* path, Node* n, std::shared_ptr<const Snapshot>* snap, int* daemon_rc,
           std::string* why) {
  if (int rc = parse_path(path, n); rc < 0) return rc;
  *daemon_rc = cache()->status(snap, why);
  return resolve(*snap ? &(*snap)->doc : nullptr, *n);
}

// The contents of a file node that resolved. With no daemon, `stats` still
// reads (mtier_daemon_up 0); every other file fails with the daemon's error.
int contents(const Node& n, const Snapshot* snap, int daemon_rc, std::string* out,
             std::string* why) {
  if (n.file == FileKind::kStats) return *out = prometheus_text(snap ? &snap->doc : nullptr), 0;
  if (!snap) return daemon_rc;
  std::shared_ptr<const Snapshot> heat;
  if (n.file == FileKind::kTableHeatmap)
    if (int rc = cache()->heat(n.pid, &heat, why); rc < 0) return rc;
  return file_content(snap->doc, heat ? &heat->doc : nullptr, n, out, why);
}

int op_getattr(const char* path, struct stat* st, struct fuse_file_info*) {
  Node n;
  std::shared_ptr<const Snapshot> snap;
  int daemon_rc = 0;
  std::string why;
  if (int rc = lookup(path, &n, &snap, &daemon_rc, &why); rc < 0) return rc;
  Attr a = attributes(snap ? &snap->doc : nullptr, n);
  *st = {};
  st->st_mode = (a.dir ? S_IFDIR : S_IFREG) | a.mode;
  st->st_nlink = a.dir ? 2 : 1;
  st->st_uid = a.uid;
  std::string text;
  if (!a.dir && contents(n, snap.get(), daemon_rc, &text, &why) == 0) st->st_size = text.size();
  auto when = snap ? snap->when : std::chrono::system_clock::now();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
  st->st_mtim = st->st_ctim = st->st_atim = {ns / 1000000000, ns % 1000000000};
  return 0;
}

int op_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, struct fuse_file_info*,
               enum fuse_readdir_flags) {
  Node n;
  std::shared_ptr<const Snapshot> snap;
  int daemon_rc = 0;
  std::string why;
  if (int rc = lookup(path, &n, &snap, &daemon_rc, &why); rc < 0) return rc;
  if (!n.is_dir()) return -ENOTDIR;
  fill(buf, ".", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  fill(buf, "..", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  for (const std::string& name : list_dir(snap ? &snap->doc : nullptr, n))
    if (fill(buf, name.c_str(), nullptr, 0, static_cast<fuse_fill_dir_flags>(0))) break;
  return 0;
}

int reject(const char* path, uid_t uid, int rc, const std::string& why) {
  log_line(log::Level::kWarning, "rejected write to %s by uid %u: %s", path + 1,
           static_cast<unsigned>(uid), why.c_str());
  return rc;
}

int op_open(const char* path, struct fuse_file_info* fi) {
  Node n;
  std::shared_ptr<const Snapshot> snap;
  int daemon_rc = 0;
  std::string why;
  if (int rc = lookup(path, &n, &snap, &daemon_rc, &why); rc < 0) return rc;
  int mode = fi->flags & O_ACCMODE;
  // Root passes the kernel's mode check (CAP_DAC_OVERRIDE): say no here.
  if (mode != O_RDONLY && !writable(n))
    return reject(path, fuse_get_context()->uid, -EACCES, "the file is read-only");
  auto file = std::make_unique<OpenFile>();
  if (mode != O_WRONLY)
    if (int rc = contents(n, snap.get(), daemon_rc, &file->content, &why); rc < 0) return rc;
  fi->direct_io = 1;
  fi->fh = reinterpret_cast<uint64_t>(file.release());
  return 0;
}

int op_read(const char*, char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
  const std::string& c = reinterpret_cast<OpenFile*>(fi->fh)->content;
  if (off < 0 || static_cast<size_t>(off) >= c.size()) return 0;
  size_t n = std::min(size, c.size() - static_cast<size_t>(off));
  memcpy(buf, c.data() + off, n);
  return static_cast<int>(n);
}

int op_release(const char*, struct fuse_file_info* fi) {
  delete reinterpret_cast<OpenFile*>(fi->fh);
  return 0;
}

// A write is applied here, not at release, so that the writer (`echo`)
// gets the error. The whole value comes in one write at offset 0.
int op_write(const char* path, const char* buf, size_t size, off_t off, struct fuse_file_info*) {
  uid_t uid = fuse_get_context()->uid;
  Node n;
  if (int rc = parse_path(path, &n); rc < 0) return rc;
  if (off != 0) return reject(path, uid, -EINVAL, "not the whole value in one write at offset 0");
  std::shared_ptr<const Snapshot> snap;
  std::string why;
  if (int rc = cache()->status(&snap, &why); rc < 0) return reject(path, uid, rc, why);
  if (resolve(&snap->doc, n) < 0)
    return reject(path, uid, -ENOENT, "the process or its table is gone");
  if (int rc = check_writer(snap->doc, n, uid, &why); rc < 0) return reject(path, uid, rc, why);
  ipc::Message request;
  if (int rc = parse_write(snap->doc, n, std::string_view(buf, size), &request, &why); rc < 0)
    return reject(path, uid, rc, why);
  ipc::Reply reply;
  if (int rc = cache()->control(request, &reply, &why); rc < 0) return reject(path, uid, rc, why);
  if (reply.status < 0)
    return reject(path, uid, map_reply_status(reply.status), "mtierd refused: " + reply.message);
  // Accepted writes are logged too: they change the node for everyone.
  std::string said(config_text::trim(std::string_view(buf, size)));
  log_line(log::Level::kNotice, "write to %s by uid %u: %s%s%s", path + 1,
           static_cast<unsigned>(uid), said.c_str(),
           reply.message.empty() ? "" : "; mtierd: ", reply.message.c_str());
  return static_cast<int>(size);
}

// O_TRUNC comes as a truncate to 0 before the write: accepted and ignored,
// the write replaces the value anyway.
int op_truncate(const char* path, off_t size, struct fuse_file_info*) {
  Node n;
  if (int rc = parse_path(path, &n); rc < 0) return rc;
  if (!writable(n)) return -EACCES;
  return size == 0 ? 0 : -EINVAL;
}

// libfuse is C and calls the operations from its own threads: no exception
// may leave one (std::terminate would unmount nothing and end mtierfs). One
// that escapes is the operation's error: -ENOMEM for std::bad_alloc, else
// -EIO (logged).
template <auto Op>
struct Guarded;
template <class... A, int (*Op)(A...)>
struct Guarded<Op> {
  static int call(A... a) noexcept {
    try {
      return Op(a...);
    } catch (const std::bad_alloc&) {
      return -ENOMEM;
    } catch (const std::exception& e) {
      log_line(log::Level::kError, "a file system operation failed: %s", e.what());
    } catch (...) {
      log_line(log::Level::kError, "a file system operation failed: unknown exception");
    }
    return -EIO;
  }
};

void* op_init(struct fuse_conn_info*, struct fuse_config* cfg) {
  cfg->use_ino = 0;
  cfg->nullpath_ok = 0;
  return fuse_get_context()->private_data;  // the DaemonCache given to fuse_new
}

struct fuse_operations operations() {
  struct fuse_operations ops = {};
  ops.getattr = Guarded<op_getattr>::call;
  ops.readdir = Guarded<op_readdir>::call;
  ops.open = Guarded<op_open>::call;
  ops.read = Guarded<op_read>::call;
  ops.write = Guarded<op_write>::call;
  ops.release = Guarded<op_release>::call;
  ops.truncate = Guarded<op_truncate>::call;
  ops.init = op_init;  // allocates nothing
  return ops;
}

// The event loop as fuse_main runs it: -s single-threaded, else threads
// as -o clone_fd, max_idle_threads (and max_threads) say.
int loop(struct fuse* fuse, const struct fuse_cmdline_opts& cmd) {
  if (cmd.singlethread) return fuse_loop(fuse);
#if FUSE_USE_VERSION >= 312
  struct fuse_loop_config* config = fuse_loop_cfg_create();
  if (!config) return -ENOMEM;
  fuse_loop_cfg_set_clone_fd(config, cmd.clone_fd);
  // UINT_MAX is fuse_parse_cmdline's "not given"; passed on, libfuse logs
  // a bogus "invalid max threads" line (libfuse issue 1003).
  if (cmd.max_idle_threads != UINT_MAX)
    fuse_loop_cfg_set_idle_threads(config, cmd.max_idle_threads);
  fuse_loop_cfg_set_max_threads(config, cmd.max_threads);
  int rc = fuse_loop_mt(fuse, config);
  fuse_loop_cfg_destroy(config);
  return rc;
#else
  struct fuse_loop_config config = {};
  config.clone_fd = cmd.clone_fd;
  config.max_idle_threads = cmd.max_idle_threads;
  return fuse_loop_mt(fuse, &config);
#endif
}

int run(int argc, char** argv) {
  struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
  Options opts;
  struct fuse_cmdline_opts cmd = {};
  if (fuse_opt_parse(&args, &opts, kOptionSpecs, nullptr) < 0 ||
      fuse_opt_insert_arg(&args, 1, kDefaultOptions) < 0 || fuse_parse_cmdline(&args, &cmd) < 0) {
    fprintf(stderr, "Try 'mtierfs --help'.\n");
    return 2;
  }
  std::unique_ptr<char, decltype(&free)> mountpoint(cmd.mountpoint, &free);
  std::unique_ptr<fuse_args, decltype(&fuse_opt_free_args)> args_owner(&args, &fuse_opt_free_args);
  std::unique_ptr<char, decltype(&free)> socket_opt(opts.socket, &free);
  if (cmd.show_help) {
    fputs(kUsage, stdout);
    fuse_cmdline_help();
    fuse_lib_help(&args);
    return 0;
  }
  if (cmd.show_version) {
    printf("mtierfs %s\nLicense: %s (the Apache License, Version 2.0)\n", PACKAGE_VERSION,
           PACKAGE_LICENSE);
    fflush(stdout);  // before libfuse's lines, some of which a child (fusermount3) prints
    fuse_lowlevel_version();
    return 0;
  }
  if (!cmd.mountpoint) {
    fprintf(stderr, "mtierfs: no mountpoint given\nTry 'mtierfs --help'.\n");
    return 2;
  }
  log_init();
  log::set_level(cmd.debug ? log::Level::kDebug : log::Level::kNotice);
  std::string socket = tools::daemon_socket_path(opts.socket);
  DaemonCache daemon(
      [socket](const ipc::Message& m, ipc::Reply* r, std::string* why) {
        return tools::daemon_request(socket, m, r, why);
      },
      kStatusMaxAge);
  struct fuse_operations ops = operations();
  struct fuse* fuse = fuse_new(&args, &ops, sizeof ops, &daemon);
  if (!fuse) {  // libfuse said why: an unknown or malformed option
    fprintf(stderr, "Try 'mtierfs --help'.\n");
    return 2;
  }
  int rc = 1;
  if (fuse_mount(fuse, cmd.mountpoint) == 0) {
    struct fuse_session* se = fuse_get_session(fuse);
    if (fuse_daemonize(cmd.foreground) == 0 && fuse_set_signal_handlers(se) == 0) {
      if (!cmd.foreground) log_to_syslog();
      log_line(log::Level::kNotice, "serving mtierd at %s on %s", socket.c_str(), cmd.mountpoint);
      std::shared_ptr<const Snapshot> first;
      std::string why;
      (void)daemon.status(&first, &why);  // logs a daemon absent at start
      // The loop returns 0 at an unmount, the signal's number after
      // SIGTERM, SIGINT or SIGHUP (a clean stop too: it unmounts below), and
      // -errno when it failed.
      rc = loop(fuse, cmd) < 0 ? 1 : 0;
      fuse_remove_signal_handlers(se);
      log_line(log::Level::kNotice, "unmounted %s", cmd.mountpoint);
    }
    fuse_unmount(fuse);
  }
  fuse_destroy(fuse);
  return rc;
}

}  // namespace
}  // namespace mtier::fs

// An exception out of start-up or teardown (the operations contain their
// own) is one line and exit status 1.
int main(int argc, char** argv) {
  try {
    return mtier::fs::run(argc, argv);
  } catch (const std::bad_alloc&) {
    mtier::fs::log_line(mtier::log::Level::kError, "out of memory (std::bad_alloc); stopping");
  } catch (const std::exception& e) {
    mtier::fs::log_line(mtier::log::Level::kError, "%s; stopping", e.what());
  } catch (...) {
    mtier::fs::log_line(mtier::log::Level::kError, "an unknown exception; stopping");
  }
  return 1;
}
