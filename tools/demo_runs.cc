// SPDX-License-Identifier: Apache-2.0
#include "demo_runs.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "demo_child.h"
#include "util/progress.h"

namespace mtier::tools::demo {
namespace {

// The child's answer through its pipe: 'E' and a reason, or 'R' and the
// result. Both ends are this program, so plain values travel as bytes.
class Out {
 public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    buf_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<uint64_t>(v.size()));
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod(static_cast<uint64_t>(s.size()));
    buf_ += s;
  }
  const std::string& bytes() const { return buf_; }

 private:
  std::string buf_;
};

class In {
 public:
  explicit In(const std::string& b) : b_(b) {}
  template <class T>
  bool pod(T* v) {
    if (b_.size() - at_ < sizeof(T)) return false;
    memcpy(v, b_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  template <class T>
  bool vec(std::vector<T>* v) {
    uint64_t n = 0;
    if (!pod(&n) || n > (b_.size() - at_) / sizeof(T)) return false;
    v->resize(n);
    memcpy(v->data(), b_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return true;
  }
  bool str(std::string* s) {
    uint64_t n = 0;
    if (!pod(&n) || n > b_.size() - at_) return false;
    s->assign(b_, at_, n);
    at_ += n;
    return true;
  }
  bool done() const { return at_ == b_.size(); }

 private:
  const std::string& b_;
  size_t at_ = 0;
};

void write_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t n = write(fd, s.data() + at, s.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone or killed us: nothing to tell
    at += static_cast<size_t>(n);
  }
}

// Ends the child with a reason the parent reports.
[[noreturn]] void child_fail(int fd, const std::string& why) {
  Out o;
  o.pod('E');
  o.str(why);
  write_all(fd, o.bytes());
  _exit(1);
}

void encode(const ConfigResult& r, Out* o) {
  o->pod('R');
  o->vec(r.train.losses);
  o->vec(r.train.step_end);
  o->pod(r.train.weights_hash);
  o->pod(r.train.seconds);
  o->pod(r.train.lookahead);
  o->pod(r.peak_rss);
  o->pod(r.has_stats);
  o->pod(r.stats);
  o->str(r.describe);
  o->pod(static_cast<uint64_t>(r.heat.size()));
  for (auto& t : r.heat) {
    o->pod(t.stats);
    o->vec(t.extents);
  }
}

bool decode(const std::string& bytes, ConfigResult* r) {
  In in(bytes);
  char tag = 0;
  if (!in.pod(&tag)) return false;
  if (tag == 'E') {
    std::string why;
    if (!in.str(&why)) return false;
    r->failure = why;
    return true;
  }
  uint64_t tables = 0;
  if (tag != 'R' || !in.vec(&r->train.losses) || !in.vec(&r->train.step_end) ||
      !in.pod(&r->train.weights_hash) || !in.pod(&r->train.seconds) ||
      !in.pod(&r->train.lookahead) || !in.pod(&r->peak_rss) || !in.pod(&r->has_stats) ||
      !in.pod(&r->stats) || !in.str(&r->describe) || !in.pod(&tables))
    return false;
  for (uint64_t i = 0; i < tables; i++) {
    TableHeat t;
    if (!in.pod(&t.stats) || !in.vec(&t.extents)) return false;
    r->heat.push_back(std::move(t));
  }
  return in.done();
}

// What every child does around its allocator: train, report progress
// through the shared page, and send the result.
int train_and_send(int fd, ChildProgress* prog, const Setup& s, const std::string& label,
                   const TableAllocator& alloc, const LookaheadOptions& la,
                   const std::function<void(ConfigResult*)>& at_last_step) {
  ConfigResult r;
  const Workload& w = s.workload;
  // On a terminal: "  mtier: step 12/200 (6%), ..., about 40s left" on
  // stderr (which the child shares with the demo), erased at the end.
  progress::Progress pr(progress::stderr_io(), s.quiet);
  pr.start("  " + label + ": step", w.steps, "");
  r.train = train(
      w, alloc,
      [&](unsigned step) {
        prog->steps_done = step + 1;
        if (step == 0) prog->train_start = monotonic_seconds();
        pr.update(step + 1);
        if (step + 1 == w.steps && at_last_step) at_last_step(&r);
      },
      la);
  pr.clear();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  r.peak_rss = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  if (r.has_stats) mtier_stats(&r.stats);
  Out o;
  encode(r, &o);
  write_all(fd, o.bytes());
  return 0;
}

TableAllocator malloc_tables(int fd) {
  return [fd](unsigned t, uint64_t bytes) {
    void* p = malloc(bytes);
    if (!p) child_fail(fd, "table " + std::to_string(t) + ": malloc of " + std::to_string(bytes) + " bytes failed");
    return static_cast<float*>(p);
  };
}

// Runs `body` in a child and turns its outcome into the configuration's result.
ConfigResult run(const std::string& name, const Setup& s, bench::MemoryCgroup* cg,
                 const std::function<int(int, ChildProgress*)>& body) {
  ConfigResult r;
  ChildOutcome c = run_in_child(body, cg, s.timeout_s);
  // A child that ended on its own says why in its answer; one that was
  // killed may have left half an answer, which is not read.
  bool said_why = !c.output.empty() && c.output[0] == 'E';
  if ((c.ok || said_why) && !decode(c.output, &r)) r.failure = "the run's result could not be read";
  if (!c.ok && !said_why) r.failure = c.failure;
  if (!c.ok) r.train = TrainResult{};
  if (c.timed_out) {
    r.steps_done = c.progress.steps_done;
    double since_first = monotonic_seconds() - c.progress.train_start;
    // Not one step done: the bound is the whole run in more than the
    // timeout.
    r.sps_upper_bound = c.progress.train_start > 0 && since_first > 0
                            ? s.workload.steps / since_first
                            : s.workload.steps / double(s.timeout_s);
  }
  r.name = name;
  return r;
}

}  // namespace

ConfigResult run_dram(const Setup& s) {
  return run("dram", s, nullptr, [&](int fd, ChildProgress* prog) {
    return train_and_send(fd, prog, s, "dram", malloc_tables(fd), {}, {});
  });
}

ConfigResult run_swap(const Setup& s, bench::MemoryCgroup* cg) {
  return run("swap", s, cg, [&](int fd, ChildProgress* prog) {
    return train_and_send(fd, prog, s, "swap", malloc_tables(fd), {}, {});
  });
}

ConfigResult run_mtier(const Setup& s, bool lookahead, bool take_heat) {
  std::string name = lookahead ? "mtier+lookahead" : "mtier";
  return run(name, s, nullptr, [&](int fd, ChildProgress* prog) {
    const Workload& w = s.workload;
    // The store's file is unlinked as soon as it is made: a killed run
    // leaves nothing behind.
    std::string opts = "dram_bytes=" + std::to_string(s.budget) + ",store_path=" + s.scratch +
                       ",store_bytes=" + std::to_string(2 * w.table_bytes() + (64 << 20));
    int rc = mtier_init(opts.c_str());
    if (rc < 0) child_fail(fd, std::string("cannot start mtier: ") + strerror(-rc));
    std::vector<int> ids;
    auto alloc = [&](unsigned t, uint64_t bytes) {
      void* addr = nullptr;
      std::string table = "emb" + std::to_string(t);
      int id = mtier_table_create(table.c_str(), bytes, &addr);
      if (id < 0) child_fail(fd, "table " + table + ": " + strerror(-id));
      ids.push_back(id);
      return static_cast<float*>(addr);
    };
    char desc[512] = "";
    mtier_describe(desc, sizeof desc);
    auto at_last = [&](ConfigResult* r) {
      r->has_stats = true;
      r->describe = desc;
      if (take_heat) r->heat = snapshot_heat(ids, s.columns);
    };
    return train_and_send(fd, prog, s, name, alloc, lookahead ? s.lookahead : LookaheadOptions{},
                          at_last);
  });
}

}  // namespace mtier::tools::demo
