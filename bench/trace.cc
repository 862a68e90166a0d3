// SPDX-License-Identifier: Apache-2.0
// Trace files. Format version 1, every integer little-endian, every double
// its IEEE-754 bits as a u64:
//
//   char[8] "MTIERTRC"; u32 version
//   spec:  u32 length + bytes of name; u32 length + bytes of pooling_dist;
//          u32 batch; u32 batches; f64 reuse; u64 seed;
//          u32 table count, then per table: u64 rows; u32 dim; f64 zipf;
//          f64 pooling
//   u64 batch count (= spec.batches)
//   per batch: u64 lookups N; u32 offsets[tables * batch + 1]; u32 rows[N]
//   char[8] "MTIEREND"; u64 total lookups; then the end of the file
//
// The end marker makes truncation at a batch boundary detectable too.
// read_trace checks sizes against the bytes left before allocating, so a
// corrupt count cannot make it allocate more than the file holds.
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "trace.h"

namespace mtier::bench {
namespace {

constexpr char kMagic[8] = {'M', 'T', 'I', 'E', 'R', 'T', 'R', 'C'};
constexpr char kEnd[8] = {'M', 'T', 'I', 'E', 'R', 'E', 'N', 'D'};
constexpr uint32_t kVersion = 1;
constexpr size_t kChunk = 1 << 16;  // u32s converted per fread/fwrite

size_t bags(const WorkloadSpec& s) { return s.tables.size() * size_t(s.batch); }

// A batch consistent with the spec: offsets sized, from 0, never
// decreasing, ending at rows.size(); every row id inside its table.
int check_batch(const WorkloadSpec& spec, const TraceBatch& b, size_t index, std::string* why) {
  auto bad = [&](const std::string& what) {
    *why = "batch " + std::to_string(index) + ": " + what;
    return -EINVAL;
  };
  const size_t n = bags(spec);
  if (b.offsets.size() != n + 1) return bad("offsets do not number tables * batch + 1");
  if (b.offsets[0] != 0) return bad("offsets do not start at 0");
  for (size_t i = 0; i < n; i++)
    if (b.offsets[i + 1] < b.offsets[i]) return bad("offset " + std::to_string(i + 1) + " decreases");
  if (b.offsets[n] != b.rows.size()) return bad("last offset is not the row count");
  for (size_t t = 0; t < spec.tables.size(); t++) {
    uint64_t limit = spec.tables[t].rows;
    for (uint32_t i = b.offsets[t * spec.batch]; i < b.offsets[(t + 1) * spec.batch]; i++)
      if (b.rows[i] >= limit)
        return bad("row id " + std::to_string(b.rows[i]) + " outside table " + std::to_string(t));
  }
  return 0;
}

class Writer {
 public:
  explicit Writer(FILE* f) : f_(f) {}
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void f64(double v) { put(std::bit_cast<uint64_t>(v), 8); }
  void bytes(const void* p, size_t n) {
    auto* c = static_cast<const unsigned char*>(p);
    buf_.insert(buf_.end(), c, c + n);
    if (buf_.size() >= 4 * kChunk) flush();
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void u32s(const std::vector<uint32_t>& v) {
    for (uint32_t x : v) u32(x);
  }
  // 0, or -errno of the first failed write.
  int flush() {
    errno = 0;
    if (!err_ && !buf_.empty() && fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      err_ = errno ? -errno : -EIO;
    buf_.clear();
    return err_;
  }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; i++) buf_.push_back(static_cast<unsigned char>(v >> (8 * i)));
    if (buf_.size() >= 4 * kChunk) flush();
  }
  FILE* f_;
  std::vector<unsigned char> buf_;
  int err_ = 0;
};

class Reader {
 public:
  Reader(FILE* f, uint64_t size) : f_(f), size_(size) {}
  uint64_t left() const { return size_ - pos_; }
  // Each returns 0 or the error (sticky: later reads keep returning it).
  int bytes(void* p, size_t n, const char* what) {
    if (err_) return err_;
    size_t got = fread(p, 1, n, f_);
    pos_ += got;
    if (got == n) return 0;
    if (ferror(f_)) return fail(errno ? -errno : -EIO, std::string("read error in ") + what);
    return fail(-EINVAL, "truncated at byte " + std::to_string(pos_) + " (" + what + ")");
  }
  int u32(uint32_t* v, const char* what) {
    uint64_t x;
    int rc = le(&x, 4, what);
    *v = static_cast<uint32_t>(x);
    return rc;
  }
  int u64(uint64_t* v, const char* what) { return le(v, 8, what); }
  int f64(double* v, const char* what) {
    uint64_t x;
    int rc = le(&x, 8, what);
    *v = std::bit_cast<double>(x);
    return rc;
  }
  int str(std::string* s, const char* what) {
    uint32_t n;
    if (u32(&n, what)) return err_;
    if (n > 256 || n > left()) return fail(-EINVAL, std::string("implausible length of ") + what);
    s->resize(n);
    return bytes(s->data(), n, what);
  }
  int u32s(std::vector<uint32_t>* v, size_t n, const char* what) {
    if (n > left() / 4) return fail(-EINVAL, std::string("more ") + what + " than the file holds");
    v->resize(n);
    buf_.resize(4 * kChunk);
    unsigned char* buf = buf_.data();
    for (size_t i = 0; i < n && !err_;) {
      size_t k = std::min(kChunk, n - i);
      if (bytes(buf, 4 * k, what)) break;
      for (size_t j = 0; j < k; j++, i++)
        (*v)[i] = uint32_t(buf[4 * j]) | uint32_t(buf[4 * j + 1]) << 8 |
                  uint32_t(buf[4 * j + 2]) << 16 | uint32_t(buf[4 * j + 3]) << 24;
    }
    return err_;
  }
  int fail(int rc, const std::string& why) {
    if (!err_) err_ = rc, why_ = why;
    return err_;
  }
  int error() const { return err_; }
  const std::string& why() const { return why_; }

 private:
  int le(uint64_t* v, int n, const char* what) {
    unsigned char b[8];
    *v = 0;
    if (bytes(b, n, what)) return err_;
    for (int i = 0; i < n; i++) *v |= uint64_t(b[i]) << (8 * i);
    return 0;
  }
  FILE* f_;
  uint64_t size_, pos_ = 0;
  int err_ = 0;
  std::string why_;
  std::vector<unsigned char> buf_;
};

void write_spec(Writer& w, const WorkloadSpec& s) {
  w.str(s.name);
  w.str(s.pooling_dist);
  w.u32(s.batch);
  w.u32(s.batches);
  w.f64(s.reuse);
  w.u64(s.seed);
  w.u32(static_cast<uint32_t>(s.tables.size()));
  for (auto& t : s.tables) {
    w.u64(t.rows);
    w.u32(t.dim);
    w.f64(t.zipf);
    w.f64(t.pooling);
  }
}

int read_spec(Reader& r, WorkloadSpec* s) {
  uint32_t tables;
  r.str(&s->name, "name");
  r.str(&s->pooling_dist, "pooling_dist");
  r.u32(&s->batch, "batch");
  r.u32(&s->batches, "batches");
  r.f64(&s->reuse, "reuse");
  r.u64(&s->seed, "seed");
  if (r.u32(&tables, "table count")) return r.error();
  if (tables > r.left() / 28) return r.fail(-EINVAL, "more tables than the file holds");
  s->tables.resize(tables);
  for (auto& t : s->tables) {
    r.u64(&t.rows, "table rows");
    r.u32(&t.dim, "table dim");
    r.f64(&t.zipf, "table zipf");
    r.f64(&t.pooling, "table pooling");
  }
  if (r.error()) return r.error();
  std::string why;
  if (check_spec(*s, &why) < 0) return r.fail(-EINVAL, "bad spec: " + why);
  return 0;
}

int read_body(Reader& r, Trace* t) {
  char magic[8];
  uint32_t version;
  if (r.left() < sizeof magic + 4)
    return r.fail(-EINVAL, "not a trace file (" + std::to_string(r.left()) + " bytes)");
  if (r.bytes(magic, 8, "magic")) return r.error();
  if (memcmp(magic, kMagic, 8) != 0) return r.fail(-EINVAL, "not a trace file (bad magic)");
  if (r.u32(&version, "version")) return r.error();
  if (version != kVersion)
    return r.fail(-EINVAL, "format version " + std::to_string(version) + ", expected " +
                               std::to_string(kVersion));
  if (read_spec(r, &t->spec)) return r.error();
  const size_t offsets = bags(t->spec) + 1;
  uint64_t count, total = 0, end_total;
  if (r.u64(&count, "batch count")) return r.error();
  if (count != t->spec.batches) return r.fail(-EINVAL, "batch count differs from the spec's");
  if (count > r.left() / (8 + 4 * offsets)) return r.fail(-EINVAL, "more batches than the file holds");
  t->batches.resize(count);
  for (size_t i = 0; i < count; i++) {
    auto& b = t->batches[i];
    uint64_t n;
    if (r.u64(&n, "batch lookups") || r.u32s(&b.offsets, offsets, "offsets") ||
        r.u32s(&b.rows, n, "rows"))
      return r.error();
    std::string why;
    if (check_batch(t->spec, b, i, &why)) return r.fail(-EINVAL, why);
    total += n;
  }
  char end[8];
  if (r.bytes(end, 8, "end marker") || r.u64(&end_total, "end marker")) return r.error();
  if (memcmp(end, kEnd, 8) != 0) return r.fail(-EINVAL, "bad end marker");
  if (end_total != total) return r.fail(-EINVAL, "end marker's lookup count differs");
  if (r.left() != 0) return r.fail(-EINVAL, "bytes after the end marker");
  return 0;
}

}  // namespace

uint64_t Trace::lookups() const {
  uint64_t n = 0;
  for (auto& b : batches) n += b.rows.size();
  return n;
}

int write_trace(const Trace& t, const std::string& path, std::string* err) {
  std::string why, ignored;
  if (!err) err = &ignored;
  int rc = check_spec(t.spec, &why);
  if (rc == 0 && t.batches.size() != t.spec.batches) rc = -EINVAL, why = "batch count differs from the spec's";
  for (size_t i = 0; rc == 0 && i < t.batches.size(); i++) rc = check_batch(t.spec, t.batches[i], i, &why);
  if (rc < 0) {
    *err = path + ": not written, inconsistent trace: " + why;
    return rc;
  }
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) {
    rc = -errno;
    *err = path + ": " + strerror(errno);
    return rc;
  }
  Writer w(f);
  w.bytes(kMagic, 8);
  w.u32(kVersion);
  write_spec(w, t.spec);
  w.u64(t.batches.size());
  for (auto& b : t.batches) {
    w.u64(b.rows.size());
    w.u32s(b.offsets);
    w.u32s(b.rows);
  }
  w.bytes(kEnd, 8);
  w.u64(t.lookups());
  rc = w.flush();
  errno = 0;
  if (fclose(f) != 0 && rc == 0) rc = errno ? -errno : -EIO;
  if (rc < 0) {
    *err = path + ": write failed: " + strerror(-rc);
    remove(path.c_str());
  }
  return rc;
}

int read_trace(const std::string& path, Trace* t, std::string* err) {
  std::string ignored;
  if (!err) err = &ignored;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) {
    int rc = -errno;
    *err = path + ": " + strerror(errno);
    return rc;
  }
  struct stat st;
  int rc = 0;
  if (fstat(fileno(f), &st) != 0) {
    rc = -errno;
    *err = path + ": " + strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    rc = -EINVAL;
    *err = path + ": not a regular file";
  } else {
    Reader r(f, static_cast<uint64_t>(st.st_size));
    *t = Trace();
    rc = read_body(r, t);
    if (rc < 0) *err = path + ": " + r.why();
  }
  fclose(f);
  if (rc < 0) *t = Trace();
  return rc;
}

}  // namespace mtier::bench
