// SPDX-License-Identifier: Apache-2.0
#include "replayer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "lookahead.h"
#include "mtier.h"
#include "oracle.h"
#include "quantile.h"
#include "sys/page_size.h"
#include "util/json.h"

namespace mtier::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kPage = kPageSize;

// The tables' memory, in the oracle's layout (tables one after another,
// each on a page boundary) for every backing but mtier, whose tables are
// separate but equally page-aligned: page-level behaviour is the same.
struct Tables {
  std::vector<float*> base;
  std::vector<int> mtier_ids;
  void* block = nullptr;
  uint64_t block_bytes = 0;
  int fd = -1;
  std::string file;
  Backing backing = Backing::kMalloc;

  ~Tables() {
    for (int id : mtier_ids) mtier_table_free(id);
    if (backing == Backing::kMalloc) free(block);
    else if (block) munmap(block, block_bytes);
    if (fd >= 0) close(fd);
    if (!file.empty()) unlink(file.c_str());
  }
};

int fail(std::string* err, int rc, const std::string& why) {
  *err = why;
  return rc;
}

int allocate(const Trace& t, const ReplayOptions& o, Tables* tb, std::string* err) {
  TableLayout layout = layout_tables(t.spec, kPage);
  tb->backing = o.backing;
  tb->block_bytes = layout.total_pages * kPage;
  if (o.backing == Backing::kMtier) {
    int rc = mtier_init(o.mtier_options.empty() ? nullptr : o.mtier_options.c_str());
    if (rc < 0 && rc != -EALREADY)
      return fail(err, rc, "mtier_init(\"" + o.mtier_options + "\"): " + strerror(-rc));
    for (size_t i = 0; i < t.spec.tables.size(); i++) {
      void* addr = nullptr;
      std::string name = "emb" + std::to_string(i);
      int id = mtier_table_create(name.c_str(), t.spec.tables[i].bytes(), &addr);
      if (id < 0) return fail(err, id, "mtier_table_create(" + name + "): " + strerror(-id));
      tb->mtier_ids.push_back(id);
      tb->base.push_back(static_cast<float*>(addr));
    }
    return 0;
  }
  if (o.backing == Backing::kMalloc) {
    tb->block = aligned_alloc(kPage, tb->block_bytes);
    if (!tb->block) return fail(err, -ENOMEM, "aligned_alloc of the tables failed");
  } else {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    if (o.backing == Backing::kFile) {
      if (o.file_path.empty()) return fail(err, -EINVAL, "the file backing needs a file path");
      tb->fd = open(o.file_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (tb->fd < 0) return fail(err, -errno, o.file_path + ": " + strerror(errno));
      tb->file = o.file_path;
      if (ftruncate(tb->fd, static_cast<off_t>(tb->block_bytes)) < 0)
        return fail(err, -errno, o.file_path + ": ftruncate: " + strerror(errno));
      flags = MAP_SHARED;
    }
    void* p = mmap(nullptr, tb->block_bytes, PROT_READ | PROT_WRITE, flags, tb->fd, 0);
    if (p == MAP_FAILED) return fail(err, -errno, std::string("mmap of the tables: ") + strerror(errno));
    tb->block = p;
    if (o.madv_random && madvise(p, tb->block_bytes, MADV_RANDOM) < 0)
      return fail(err, -errno, std::string("madvise(MADV_RANDOM): ") + strerror(errno));
  }
  for (size_t i = 0; i < t.spec.tables.size(); i++)
    tb->base.push_back(reinterpret_cast<float*>(static_cast<char*>(tb->block) + layout.base[i]));
  return 0;
}

// Deterministic initial values, the same for every backing (xorshift64*,
// one stream per table), in [-0.05, 0.05).
void init_tables(const Trace& t, const Tables& tb) {
  for (size_t i = 0; i < t.spec.tables.size(); i++) {
    uint64_t x = t.spec.seed * 0x9E3779B97F4A7C15ull + i + 1;
    uint64_t n = t.spec.tables[i].rows * t.spec.tables[i].dim;
    float* p = tb.base[i];
    for (uint64_t k = 0; k < n; k++) {
      x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
      uint64_t r = x * 0x2545F4914F6CDD1Dull;
      p[k] = static_cast<float>(static_cast<double>(r >> 40) / double(1ull << 24) * 0.1 - 0.05);
    }
  }
}

uint64_t checksum(const Trace& t, const Tables& tb) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < t.spec.tables.size(); i++) {
    auto* p = reinterpret_cast<const unsigned char*>(tb.base[i]);
    for (uint64_t k = 0, n = t.spec.tables[i].bytes(); k < n; k++) h = (h ^ p[k]) * 0x100000001b3ull;
  }
  return h;
}

struct Counters {
  uint64_t majflt = 0, read_bytes = 0, write_bytes = 0, pswpin = 0, pswpout = 0;
  uint64_t misses = 0, fetched = 0, written = 0, minor = 0, wp = 0;
  uint64_t prefetch_reads = 0, prefetch_hits = 0, window_overflows = 0;
};

uint64_t keyed_value(const char* path, const char* key) {
  std::ifstream in(path);
  std::string k;
  uint64_t v;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

Counters counters(const Tables& tb) {
  Counters c;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  c.majflt = static_cast<uint64_t>(ru.ru_majflt);
  c.read_bytes = keyed_value("/proc/self/io", "read_bytes:");
  c.write_bytes = keyed_value("/proc/self/io", "write_bytes:");
  c.pswpin = keyed_value("/proc/vmstat", "pswpin");
  c.pswpout = keyed_value("/proc/vmstat", "pswpout");
  for (int id : tb.mtier_ids) {
    struct mtier_table_stats st {};
    if (mtier_table_stats(id, &st) < 0) continue;
    c.misses += st.missing_faults;
    c.fetched += st.fetches + st.prefetches;
    c.written += st.writebacks;
    c.minor += st.minor_faults;
    c.wp += st.wp_faults;
  }
  struct mtier_stats ms {};
  if (!tb.mtier_ids.empty() && mtier_stats(&ms) == 0) {
    c.prefetch_reads = ms.prefetch_reads;
    c.prefetch_hits = ms.prefetch_hits;
    c.window_overflows = ms.window_overflows;
  }
  return c;
}

// One batch, run by `threads` workers that meet at barriers: forward (bags
// split in contiguous ranges), then backward (row r of table i belongs to
// worker (r + i) % threads, which applies its updates in trace order).
class BatchRunner {
 public:
  BatchRunner(const Trace& t, const Tables& tb, float lr, unsigned threads)
      : t_(t), tb_(tb), lr_(lr / static_cast<float>(std::max(1u, t.spec.batch))), threads_(threads) {
    size_t bags = t.spec.tables.size() * t.spec.batch;
    out_offset_.resize(bags + 1);
    for (size_t bag = 0; bag < bags; bag++)
      out_offset_[bag + 1] = out_offset_[bag] + t.spec.tables[bag / t.spec.batch].dim;
    out_.resize(out_offset_[bags]);
  }

  void forward(const TraceBatch& b, unsigned w) {
    size_t bags = out_offset_.size() - 1;
    size_t lo = bags * w / threads_, hi = bags * (w + 1) / threads_;
    for (size_t bag = lo; bag < hi; bag++) {
      size_t table = bag / t_.spec.batch;
      unsigned dim = t_.spec.tables[table].dim;
      float* o = &out_[out_offset_[bag]];
      std::fill(o, o + dim, 0.0f);
      for (uint32_t k = b.offsets[bag]; k < b.offsets[bag + 1]; k++) {
        const float* row = tb_.base[table] + uint64_t(b.rows[k]) * dim;
        for (unsigned d = 0; d < dim; d++) o[d] += row[d];
      }
    }
  }

  void backward(const TraceBatch& b, unsigned w) {
    size_t bags = out_offset_.size() - 1;
    for (size_t bag = 0; bag < bags; bag++) {
      size_t table = bag / t_.spec.batch;
      unsigned dim = t_.spec.tables[table].dim;
      const float* g = &out_[out_offset_[bag]];
      for (uint32_t k = b.offsets[bag]; k < b.offsets[bag + 1]; k++) {
        if ((b.rows[k] + table) % threads_ != w) continue;
        float* row = tb_.base[table] + uint64_t(b.rows[k]) * dim;
        for (unsigned d = 0; d < dim; d++) row[d] -= lr_ * g[d];
      }
    }
  }

  double loss() const {
    double l = 0;
    for (float v : out_) l += 0.5 * double(v) * double(v);
    return l / std::max(1u, t_.spec.batch);
  }

 private:
  const Trace& t_;
  const Tables& tb_;
  float lr_;
  unsigned threads_;
  std::vector<size_t> out_offset_;
  std::vector<float> out_;
};

void run_batches(const Trace& t, const Tables& tb, const ReplayOptions& o, ReplayResult* r) {
  unsigned threads = std::max(1u, o.threads);
  BatchRunner runner(t, tb, o.lr, threads);
  Lookahead ahead(t, tb.base, o.backing, o.lookahead, o.lookahead_async);
  std::vector<double> batch_ms;
  batch_ms.reserve(t.batches.size());
  std::barrier sync(threads);
  size_t current = 0;
  Clock::time_point batch_start;
  auto worker = [&](unsigned w) {
    for (size_t i = 0; i < t.batches.size(); i++) {
      if (w == 0) {
        batch_start = Clock::now();
        ahead.before_batch(i);
      }
      sync.arrive_and_wait();
      runner.forward(t.batches[i], w);
      sync.arrive_and_wait();
      runner.backward(t.batches[i], w);
      sync.arrive_and_wait();
      if (w == 0) {
        r->loss += runner.loss();
        r->lookups += t.batches[i].rows.size();
        batch_ms.push_back(seconds_since(batch_start) * 1e3);
        current = i + 1;
        if (o.on_batch) o.on_batch(current, t.batches.size());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < threads; w++) pool.emplace_back(worker, w);
  worker(0);
  for (auto& th : pool) th.join();
  r->batches = current;
  r->hint_calls = ahead.calls();
  r->hint_pages = ahead.pages();
  r->hint_errors = ahead.errors();
  if (batch_ms.empty()) return;
  r->p50_ms = quantile(batch_ms, 0.50);
  r->p90_ms = quantile(batch_ms, 0.90);
  r->p99_ms = quantile(batch_ms, 0.99);
  r->max_ms = *std::max_element(batch_ms.begin(), batch_ms.end());
}

}  // namespace

const char* backing_name(Backing b) {
  switch (b) {
    case Backing::kMalloc: return "malloc";
    case Backing::kMtier: return "mtier";
    case Backing::kFile: return "file";
    case Backing::kAnon: return "anon";
  }
  return "?";
}

bool parse_backing(const std::string& s, Backing* out) {
  for (Backing b : {Backing::kMalloc, Backing::kMtier, Backing::kFile, Backing::kAnon})
    if (s == backing_name(b)) {
      *out = b;
      return true;
    }
  return false;
}

int replay(const Trace& t, const ReplayOptions& o, ReplayResult* r, std::string* err) {
  *r = ReplayResult{};
  auto t0 = Clock::now();
  Tables tb;
  if (int rc = allocate(t, o, &tb, err); rc < 0) return rc;
  init_tables(t, tb);
  r->init_seconds = seconds_since(t0);
  Counters before = counters(tb);
  auto t1 = Clock::now();
  run_batches(t, tb, o, r);
  r->seconds = seconds_since(t1);
  Counters after = counters(tb);
  r->major_faults = after.majflt - before.majflt;
  r->read_bytes = after.read_bytes - before.read_bytes;
  r->write_bytes = after.write_bytes - before.write_bytes;
  r->swap_in_pages = after.pswpin - before.pswpin;
  r->swap_out_pages = after.pswpout - before.pswpout;
  r->mtier_misses = after.misses - before.misses;
  r->mtier_fetched_pages = after.fetched - before.fetched;
  r->mtier_written_pages = after.written - before.written;
  r->mtier_minor_faults = after.minor - before.minor;
  r->mtier_wp_faults = after.wp - before.wp;
  r->mtier_prefetch_reads = after.prefetch_reads - before.prefetch_reads;
  r->mtier_prefetch_hits = after.prefetch_hits - before.prefetch_hits;
  r->mtier_window_overflows = after.window_overflows - before.window_overflows;
  r->checksum = checksum(t, tb);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  r->peak_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  return 0;
}

namespace {

// The result line's fields, in order: one table for formatting and parsing.
// The loss is written exactly (%a) so that it compares bit for bit; the
// other doubles (times, in seconds as every JSON output of mtier) to the
// microsecond.
struct Field {
  const char* name;
  uint64_t ReplayResult::*u;  // an integer field, or
  double ReplayResult::*d;    // a floating-point one,
  double scale = 1;           // written as d * scale (milliseconds as seconds)
};
constexpr Field kFields[] = {
    {"batches", &ReplayResult::batches, nullptr},
    {"lookups", &ReplayResult::lookups, nullptr},
    {"init_seconds", nullptr, &ReplayResult::init_seconds},
    {"seconds", nullptr, &ReplayResult::seconds},
    {"p50_seconds", nullptr, &ReplayResult::p50_ms, 1e-3},
    {"p90_seconds", nullptr, &ReplayResult::p90_ms, 1e-3},
    {"p99_seconds", nullptr, &ReplayResult::p99_ms, 1e-3},
    {"max_seconds", nullptr, &ReplayResult::max_ms, 1e-3},
    {"loss", nullptr, &ReplayResult::loss},
    {"checksum", &ReplayResult::checksum, nullptr},
    {"major_faults", &ReplayResult::major_faults, nullptr},
    {"read_bytes", &ReplayResult::read_bytes, nullptr},
    {"write_bytes", &ReplayResult::write_bytes, nullptr},
    {"swap_in_pages", &ReplayResult::swap_in_pages, nullptr},
    {"swap_out_pages", &ReplayResult::swap_out_pages, nullptr},
    {"mtier_misses", &ReplayResult::mtier_misses, nullptr},
    {"mtier_fetched_pages", &ReplayResult::mtier_fetched_pages, nullptr},
    {"mtier_written_pages", &ReplayResult::mtier_written_pages, nullptr},
    {"mtier_minor_faults", &ReplayResult::mtier_minor_faults, nullptr},
    {"mtier_wp_faults", &ReplayResult::mtier_wp_faults, nullptr},
    {"peak_rss_bytes", &ReplayResult::peak_rss_bytes, nullptr},
    {"hint_calls", &ReplayResult::hint_calls, nullptr},
    {"hint_pages", &ReplayResult::hint_pages, nullptr},
    {"hint_errors", &ReplayResult::hint_errors, nullptr},
    {"mtier_prefetch_reads", &ReplayResult::mtier_prefetch_reads, nullptr},
    {"mtier_prefetch_hits", &ReplayResult::mtier_prefetch_hits, nullptr},
    {"mtier_window_overflows", &ReplayResult::mtier_window_overflows, nullptr},
};

}  // namespace

std::string format_result(const ReplayResult& r) {
  std::string out;
  char buf[96];
  for (const Field& f : kFields) {
    if (f.u) snprintf(buf, sizeof buf, "%s=%" PRIu64, f.name, r.*f.u);
    else if (f.d == &ReplayResult::loss) snprintf(buf, sizeof buf, "%s=%a", f.name, r.*f.d);
    else snprintf(buf, sizeof buf, "%s=%.6f", f.name, r.*f.d * f.scale);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

void write_result_json(json::Json& j, const ReplayResult& r) {
  char buf[40];
  for (const Field& f : kFields) {
    if (f.u == &ReplayResult::checksum) {
      snprintf(buf, sizeof buf, "%016" PRIx64, r.checksum);
      j[f.name] = buf;
    } else if (f.u) {
      j[f.name] = r.*f.u;
    } else if (f.d == &ReplayResult::loss) {
      snprintf(buf, sizeof buf, "%a", r.loss);
      j[f.name] = buf;
    } else {
      j[f.name] = json::number(r.*f.d * f.scale);
    }
  }
  j["lookups_per_second"] = json::number(r.lookups_per_second());
}

bool parse_result(const std::string& line, ReplayResult* r) {
  std::map<std::string, std::string> kv;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) {
    size_t eq = tok.find('=');
    if (eq == std::string::npos) return false;
    kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  ReplayResult parsed;
  for (const Field& f : kFields) {
    auto it = kv.find(f.name);
    if (it == kv.end() || it->second.empty()) return false;
    char* end = nullptr;
    if (f.u) parsed.*f.u = strtoull(it->second.c_str(), &end, 10);
    else parsed.*f.d = strtod(it->second.c_str(), &end) / f.scale;
    if (*end) return false;
  }
  *r = parsed;
  return true;
}

}  // namespace mtier::bench
