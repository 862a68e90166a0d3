// SPDX-License-Identifier: Apache-2.0
// The recording file of `mtier record` (recording.h), byte by byte as in
// docs/recording.md. Two rules shape the code:
//  - Decoding trusts nothing: every count is checked against the bytes left
//    before anything is allocated, every payload must be consumed exactly,
//    and the decoded snapshot must keep the contracts of snapshot.h.
//  - The reader and an appending writer walk a file with the same code
//    (scan_records), so `--append` cuts away exactly the tail that a reader
//    cannot read, never a record that a reader would have returned.
#include "record/recording.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "util/crc32c.h"

namespace mtier::record {
namespace {

// ------------------------------------------------------------ format limits

constexpr char kMagic[] = {'M', 'T', 'R', 'E', 'C', '\0', '\2', '\n'};  // format 2
constexpr size_t kMagicBytes = sizeof(kMagic);
constexpr size_t kVersionAt = 6;  // the byte of kMagic that holds the format version

constexpr uint32_t kTypeInfo = 1;
constexpr uint32_t kTypeSnapshot = 2;

constexpr size_t kHeaderBytes = 8;  // u32 type, u32 payload_bytes
constexpr size_t kCrcBytes = 4;
constexpr size_t kFrameBytes = kHeaderBytes + kCrcBytes;

// Upper bounds that keep a damaged length from turning into a huge
// allocation; far above what a real snapshot needs.
constexpr uint32_t kMaxPayloadBytes = 64u << 20;
constexpr uint32_t kMaxNameBytes = 4096;         // process and table names
constexpr uint32_t kMaxInfoStringBytes = 65536;  // command, host, policy, heat_source
constexpr uint32_t kMaxProcs = 65536;            // per snapshot
constexpr uint32_t kMaxTables = 65536;           // per process
constexpr uint32_t kMaxSlices = 1u << 20;        // per table
constexpr uint32_t kMaxMoveKinds = 64;           // per table, written by any format-1 writer

// INFO field tags (docs/recording.md, "INFO").
enum InfoTag : uint16_t {
  kTagStartUnixMs = 1,
  kTagIntervalMs = 2,
  kTagBuckets = 3,
  kTagPid = 4,
  kTagCommand = 5,
  kTagHost = 6,
  kTagPolicy = 7,
  kTagHeatSource = 8,
};
constexpr size_t kInfoFieldHeaderBytes = 6;  // u16 tag, u32 value_bytes

// The fewest bytes one encoded item can take: lets a count be refused when
// that many items could not fit in the bytes left.
constexpr size_t kMinTableBytes = 4 + 4 + 7 * 8 + 2 * 8 + 4 + 4 + 4;
constexpr size_t kMinProcBytes = 4 + 4 + 7 * 8 + 4;

// ------------------------------------------------------------ little-endian bytes

// Appends little-endian values to a string.
class Out {
 public:
  void u16(uint16_t v) { uint_le(v, 2); }
  void u32(uint32_t v) { uint_le(v, 4); }
  void u64(uint64_t v) { uint_le(v, 8); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void f32(float v) { u32(std::bit_cast<uint32_t>(v)); }
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
  void bytes(std::string_view b) { s_.append(b); }
  // u32 length, then the bytes.
  void str(std::string_view b) {
    u32(static_cast<uint32_t>(b.size()));
    bytes(b);
  }
  std::string& data() { return s_; }

 private:
  void uint_le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string s_;
};

// Reads little-endian values off a byte range. Each getter returns false,
// leaving its output alone, when the bytes left do not hold the value.
class In {
 public:
  explicit In(std::string_view b) : b_(b) {}
  bool u16(uint16_t* v) { return uint_le(v); }
  bool u32(uint32_t* v) { return uint_le(v); }
  bool u64(uint64_t* v) { return uint_le(v); }
  bool i32(int32_t* v) {
    uint32_t u;
    if (!u32(&u)) return false;
    *v = static_cast<int32_t>(u);
    return true;
  }
  bool f32(float* v) {
    uint32_t u;
    if (!u32(&u)) return false;
    *v = std::bit_cast<float>(u);
    return true;
  }
  bool f64(double* v) {
    uint64_t u;
    if (!u64(&u)) return false;
    *v = std::bit_cast<double>(u);
    return true;
  }
  bool bytes(size_t n, std::string_view* v) {
    if (n > b_.size()) return false;
    *v = b_.substr(0, n);
    b_.remove_prefix(n);
    return true;
  }
  bool bytes(size_t n, std::string* v) {
    std::string_view sv;
    if (!bytes(n, &sv)) return false;
    v->assign(sv);
    return true;
  }
  // u32 length (at most `max`), then the bytes.
  bool str(uint32_t max, std::string* v) {
    uint32_t n;
    return u32(&n) && n <= max && bytes(n, v);
  }
  // A u32 count of items that take at least `min_item_bytes` each; refused
  // when that many could not fit in the bytes left, so a damaged count is
  // caught before it sizes an allocation.
  bool count(size_t min_item_bytes, uint32_t* n) {
    uint32_t c;
    if (!u32(&c) || c > b_.size() / min_item_bytes) return false;
    *n = c;
    return true;
  }
  bool done() const { return b_.empty(); }

 private:
  template <typename T>
  bool uint_le(T* v) {
    if (b_.size() < sizeof(T)) return false;
    T r = 0;
    for (size_t i = 0; i < sizeof(T); ++i) r |= T{static_cast<unsigned char>(b_[i])} << (8 * i);
    b_.remove_prefix(sizeof(T));
    *v = r;
    return true;
  }
  std::string_view b_;
};

// The longest prefix of `s` of at most `max` bytes that does not end inside
// a UTF-8 sequence: over-long strings are clipped, not refused, when encoded.
std::string_view clip_utf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// CRC-32/ISO-HDLC (zlib's crc32(), gzip's, PNG's): format 1's record
// checksum, kept to read recordings of mtier 0.1; nothing writes it now.
// crc32_iso_hdlc("123456789") == 0xCBF43926.
uint32_t crc32_iso_hdlc(std::string_view b) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char ch : b) c = table[(c ^ ch) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// A record's checksum in format `version`: CRC-32C from format 2 on (the
// project's own, util/crc32c.h), CRC-32/ISO-HDLC in format 1.
uint32_t crc_of(std::string_view b, unsigned version = kRecordingVersion) {
  return version >= 2 ? crc32c(b.data(), b.size()) : crc32_iso_hdlc(b);
}

uint32_t load_u32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(b[at + i])} << (8 * i);
  return v;
}

// type, payload_bytes, payload, the CRC-32C of the three (format 2).
std::string frame(uint32_t type, std::string_view payload) {
  Out o;
  o.u32(type);
  o.u32(static_cast<uint32_t>(payload.size()));
  o.bytes(payload);
  o.u32(crc_of(o.data()));
  return std::move(o.data());
}

// ------------------------------------------------------------ INFO

void put_info_string(Out* o, InfoTag tag, const std::string& s) {
  const std::string_view v = clip_utf8(s, kMaxInfoStringBytes);
  o->u16(tag);
  o->str(v);
}

// The string field a tag names, or nullptr.
std::string* info_string(uint16_t tag, SessionInfo* info) {
  switch (tag) {
    case kTagCommand:
      return &info->command;
    case kTagHost:
      return &info->host;
    case kTagPolicy:
      return &info->policy;
    case kTagHeatSource:
      return &info->heat_source;
    default:
      return nullptr;
  }
}

// A fixed-size field must be exactly its size, a string field at most
// kMaxInfoStringBytes. An unknown tag is a later format's field: skipped.
bool take_info_field(uint16_t tag, std::string_view value, SessionInfo* info) {
  In v(value);
  switch (tag) {
    case kTagStartUnixMs:
      return v.u64(&info->start_unix_ms) && v.done();
    case kTagIntervalMs:
      return v.u32(&info->interval_ms) && v.done();
    case kTagBuckets:
      return v.u32(&info->buckets) && v.done();
    case kTagPid:
      return v.i32(&info->pid) && v.done();
    default:
      break;
  }
  std::string* s = info_string(tag, info);
  if (s == nullptr) return true;
  if (value.size() > kMaxInfoStringBytes) return false;
  s->assign(value);
  return true;
}

int decode_info_view(std::string_view payload, SessionInfo* out) {
  if (payload.size() > kMaxPayloadBytes) return -EBADMSG;
  In in(payload);
  uint32_t fields;
  if (!in.count(kInfoFieldHeaderBytes, &fields)) return -EBADMSG;
  SessionInfo info;
  uint32_t last_tag = 0;
  for (uint32_t i = 0; i < fields; ++i) {
    uint16_t tag;
    uint32_t n;
    std::string_view value;
    if (!in.u16(&tag) || !in.u32(&n) || !in.bytes(n, &value)) return -EBADMSG;
    // Strictly increasing tags: one canonical form, no duplicate fields.
    if (tag <= last_tag) return -EBADMSG;
    last_tag = tag;
    if (!take_info_field(tag, value, &info)) return -EBADMSG;
  }
  if (!in.done()) return -EBADMSG;
  *out = std::move(info);
  return 0;
}

// ------------------------------------------------------------ SNAPSHOT

bool is_place(char c) {
  return c == kPlaceDram || c == kPlaceSlow || c == kPlaceStore || c == kPlaceMixed ||
         c == kPlaceUntouched;
}

// The contracts of snapshot.h that the encoding alone does not enforce.
bool valid_table(const TableSnap& t, std::string* reason) {
  const size_t n = t.heat_map.size();
  if (n == 0 || n > kMaxSlices) {
    *reason = "has " + std::to_string(n) + " heat-map slices (1 to " + std::to_string(kMaxSlices) +
              " allowed)";
    return false;
  }
  if (t.place.size() != n) {
    *reason = "has " + std::to_string(n) + " heat-map slices but " +
              std::to_string(t.place.size()) + " place chars";
    return false;
  }
  for (char c : t.place) {
    if (!is_place(c)) {
      *reason = "has a place char that is not one of 'D' 'm' 's' '~' ' '";
      return false;
    }
  }
  bool finite = std::isfinite(t.heat) && std::isfinite(t.samples_per_s);
  for (float h : t.heat_map) finite = finite && std::isfinite(h);
  if (!finite) *reason = "has a heat that is not a finite number";
  return finite;
}

bool valid_snapshot(const Snapshot& s, std::string* reason) {
  if (s.procs.size() > kMaxProcs) {
    *reason = "more than " + std::to_string(kMaxProcs) + " processes";
    return false;
  }
  for (const ProcessSnap& p : s.procs) {
    const std::string who = "process " + std::to_string(p.pid);
    if (p.tables.size() > kMaxTables) {
      *reason = who + " has more than " + std::to_string(kMaxTables) + " tables";
      return false;
    }
    for (const TableSnap& t : p.tables) {
      if (!valid_table(t, reason)) {
        *reason = "table " + std::to_string(t.id) + " of " + who + " " + *reason;
        return false;
      }
    }
  }
  return true;
}

void put_table(Out* o, const TableSnap& t) {
  o->u32(t.id);
  o->str(clip_utf8(t.name, kMaxNameBytes));
  for (uint64_t v : {t.bytes, t.pages, t.dram_pages, t.slow_pages, t.store_pages, t.untouched_pages,
                     t.active_bytes}) {
    o->u64(v);
  }
  o->f64(t.heat);
  o->f64(t.samples_per_s);
  o->u32(kMoveKinds);
  for (uint64_t m : t.moves) o->u64(m);
  o->u32(static_cast<uint32_t>(t.heat_map.size()));
  for (float h : t.heat_map) o->f32(h);
  o->str(t.place);
}

void put_proc(Out* o, const ProcessSnap& p) {
  o->i32(p.pid);
  o->str(clip_utf8(p.name, kMaxNameBytes));
  for (uint64_t v : {p.dram_budget_bytes, p.dram_resident_bytes, p.slow_budget_bytes,
                     p.slow_resident_bytes, p.missing_faults, p.evictions, p.fetches}) {
    o->u64(v);
  }
  o->u32(static_cast<uint32_t>(p.tables.size()));
  for (const TableSnap& t : p.tables) put_table(o, t);
}

// Counts of a later writer that knows more move kinds: the known ones are
// kept, the rest skipped; kinds it did not write stay 0.
bool get_moves(In* in, std::array<uint64_t, kMoveKinds>* moves) {
  uint32_t n;
  if (!in->count(8, &n) || n > kMaxMoveKinds) return false;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t v;
    if (!in->u64(&v)) return false;
    if (i < kMoveKinds) (*moves)[i] = v;
  }
  return true;
}

bool get_slices(In* in, TableSnap* t) {
  uint32_t n;
  if (!in->count(4, &n)) return false;
  t->heat_map.resize(n);
  for (float& h : t->heat_map) {
    if (!in->f32(&h)) return false;
  }
  uint32_t chars;
  return in->count(1, &chars) && in->bytes(chars, &t->place);
}

bool get_table(In* in, TableSnap* t) {
  if (!in->u32(&t->id) || !in->str(kMaxNameBytes, &t->name)) return false;
  for (uint64_t* v : {&t->bytes, &t->pages, &t->dram_pages, &t->slow_pages, &t->store_pages,
                      &t->untouched_pages, &t->active_bytes}) {
    if (!in->u64(v)) return false;
  }
  return in->f64(&t->heat) && in->f64(&t->samples_per_s) && get_moves(in, &t->moves) &&
         get_slices(in, t);
}

bool get_proc(In* in, ProcessSnap* p) {
  if (!in->i32(&p->pid) || !in->str(kMaxNameBytes, &p->name)) return false;
  for (uint64_t* v : {&p->dram_budget_bytes, &p->dram_resident_bytes, &p->slow_budget_bytes,
                      &p->slow_resident_bytes, &p->missing_faults, &p->evictions, &p->fetches}) {
    if (!in->u64(v)) return false;
  }
  uint32_t n;
  if (!in->count(kMinTableBytes, &n)) return false;
  p->tables.resize(n);
  for (TableSnap& t : p->tables) {
    if (!get_table(in, &t)) return false;
  }
  return true;
}

int decode_snapshot_view(std::string_view payload, Snapshot* out) {
  if (payload.size() > kMaxPayloadBytes) return -EBADMSG;
  In in(payload);
  Snapshot s;
  uint32_t n;
  if (!in.u64(&s.unix_ms) || !in.count(kMinProcBytes, &n)) return -EBADMSG;
  s.procs.resize(n);
  for (ProcessSnap& p : s.procs) {
    if (!get_proc(&in, &p)) return -EBADMSG;
  }
  std::string reason;
  if (!in.done() || !valid_snapshot(s, &reason)) return -EBADMSG;
  *out = std::move(s);
  return 0;
}

// ------------------------------------------------------------ walking a file

void set_why(std::string* why, std::string line) {
  if (why) *why = std::move(line);
}

std::string errno_line(const std::string& path, int err) { return path + ": " + strerror(err); }

// Checks the 8-byte magic; the version byte must be 1..kRecordingVersion.
// 0 with *version set, or -EINVAL with *problem.
int check_magic(std::string_view b, unsigned* version, std::string* problem) {
  if (b.size() < kMagicBytes || memcmp(b.data(), kMagic, kVersionAt) != 0 ||
      b[kMagicBytes - 1] != kMagic[kMagicBytes - 1] || b[kVersionAt] == 0) {
    *problem = "not an mtier recording";
    return -EINVAL;
  }
  const unsigned v = static_cast<unsigned char>(b[kVersionAt]);
  if (v > kRecordingVersion) {
    *problem = "was written by a newer mtier (format " + std::to_string(v) +
               "; this one reads formats 1 to " + std::to_string(kRecordingVersion) + ")";
    return -EINVAL;
  }
  *version = v;
  return 0;
}

// One record's framing at byte `at` of `b` (at < b.size()): "" with its type
// and payload when it is complete and its checksum holds, else what is wrong.
std::string next_record(std::string_view b, size_t at, uint64_t number, unsigned version,
                        uint32_t* type, std::string_view* payload) {
  const std::string where = "record " + std::to_string(number) + " at byte " + std::to_string(at);
  const size_t left = b.size() - at;
  if (left < kHeaderBytes) return "cut off inside " + where + " (a crash while recording?)";
  const uint32_t n = load_u32(b, at + 4);
  if (n > kMaxPayloadBytes) {
    return where + " claims " + std::to_string(n) + " payload bytes, more than the " +
           std::to_string(kMaxPayloadBytes) + " a record may hold (damaged?)";
  }
  if (left < kFrameBytes + n) return "cut off inside " + where + " (a crash while recording?)";
  if (load_u32(b, at + kHeaderBytes + n) != crc_of(b.substr(at, kHeaderBytes + n), version)) {
    return where + " fails its checksum (damaged?)";
  }
  *type = load_u32(b, at);
  *payload = b.substr(at + kHeaderBytes, n);
  return "";
}

// Adds one checksummed record to *rec: "" when taken (or skipped, for an
// unknown type), else what is wrong with its payload.
std::string take_record(uint32_t type, std::string_view payload, Recording* rec) {
  if (type == kTypeInfo) {
    SessionInfo info;
    if (decode_info_view(payload, &info) != 0) return "its INFO payload does not parse";
    rec->sessions.push_back(std::move(info));
  } else if (type == kTypeSnapshot) {
    if (rec->sessions.empty()) return "it is a SNAPSHOT before any INFO record";
    Snapshot s;
    if (decode_snapshot_view(payload, &s) != 0) return "its SNAPSHOT payload does not parse";
    rec->snapshots.push_back(std::move(s));
  }
  return "";
}

// Walks the records of a whole file into *rec. 0 (a bad tail only sets
// rec->truncated), or -EINVAL with *problem when the magic is wrong.
int scan_records(std::string_view b, Recording* rec, std::string* problem) {
  if (int rc = check_magic(b, &rec->version, problem); rc != 0) return rc;
  size_t at = kMagicBytes;
  rec->valid_bytes = at;
  for (uint64_t number = 1; at < b.size(); ++number) {
    uint32_t type = 0;
    std::string_view payload;
    std::string bad = next_record(b, at, number, rec->version, &type, &payload);
    if (bad.empty()) {
      bad = take_record(type, payload, rec);
      if (!bad.empty()) {
        bad = "record " + std::to_string(number) + " at byte " + std::to_string(at) + ": " + bad +
              " (damaged?)";
      }
    }
    if (!bad.empty()) {
      rec->truncated = true;
      rec->tail_problem = std::move(bad);
      break;
    }
    at += kFrameBytes + payload.size();
    rec->valid_bytes = at;
  }
  return 0;
}

// ------------------------------------------------------------ file I/O

int read_fd(int fd, std::string* out) {
  struct stat st;
  if (fstat(fd, &st) != 0) return -errno;
  out->clear();
  if (S_ISREG(st.st_mode)) out->reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return 0;
    out->append(buf, static_cast<size_t>(n));
  }
}

// The whole of `path`; with `same_as` >= 0 it must be the file open there
// (an append reads the file it is about to write, not a replacement).
int read_file(const std::string& path, int same_as, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = 0;
  if (same_as >= 0) {
    struct stat a, b;
    if (fstat(fd, &a) != 0 || fstat(same_as, &b) != 0) {
      rc = -errno;
    } else if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
      rc = -ESTALE;
    }
  }
  if (rc == 0) rc = read_fd(fd, out);
  ::close(fd);
  return rc;
}

// Appends all of `data` to `fd` (O_APPEND), over short writes and EINTR.
// When it fails after part went out, that part is cut off again (best
// effort) so the next record still starts on a record boundary.
int append_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : EIO;  // a 0-byte write would repeat forever
    if (n <= 0) {
      struct stat st;
      if (done > 0 && fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= done) {
        (void)!ftruncate(fd, st.st_size - static_cast<off_t>(done));
      }
      return -err;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// One writer per file: a second `mtier record` on the same file would mix
// the snapshots of two sessions. Filesystems without flock go unguarded.
int lock_writer(int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
  return errno == EWOULDBLOCK ? -EBUSY : 0;
}

// Creates `path` and writes the magic and the INFO record in one write().
int create_recording(const std::string& path, const std::string& info_record, int* fd_out,
                     std::string* why) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    const int err = errno;
    set_why(why, errno_line(path, err));
    return -err;
  }
  std::string bytes(kMagic, kMagicBytes);
  bytes += info_record;
  int rc = lock_writer(fd);
  if (rc == 0) rc = append_all(fd, bytes);
  if (rc != 0) {
    // The file is ours (O_EXCL): leave nothing half-made behind.
    ::close(fd);
    ::unlink(path.c_str());
    set_why(why, errno_line(path, -rc));
    return rc;
  }
  *fd_out = fd;
  return 0;
}

// Opens an existing recording for appending and cuts away the tail a reader
// could not read, so the next record starts on a record boundary.
int open_for_append(const std::string& path, int* fd_out, std::string* why) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    set_why(why, errno_line(path, err));
    return -err;
  }
  std::string bytes, problem;
  Recording rec;
  int rc = lock_writer(fd);
  if (rc == 0) rc = read_file(path, fd, &bytes);
  if (rc != 0) {
    set_why(why, rc == -EBUSY ? path + ": another writer has it open" : errno_line(path, -rc));
  } else if ((rc = scan_records(bytes, &rec, &problem)) != 0) {
    set_why(why, path + ": " + problem);
  } else if (rec.version != kRecordingVersion) {
    // Its records are checksummed the old way, which this mtier reads but
    // no longer writes: a session of each kind in one file would not read.
    rc = -EINVAL;
    set_why(why, path + ": format " + std::to_string(rec.version) + " (mtier 0.1), which " +
                     "--append cannot extend with format " + std::to_string(kRecordingVersion) +
                     " records; record into a new file");
  } else if (rec.valid_bytes < bytes.size() &&
             ftruncate(fd, static_cast<off_t>(rec.valid_bytes)) != 0) {
    rc = -errno;
    set_why(why, errno_line(path, -rc));
  }
  if (rc != 0) {
    ::close(fd);
    return rc;
  }
  *fd_out = fd;
  return 0;
}

}  // namespace

// ------------------------------------------------------------ public API

std::string encode_info(const SessionInfo& info) {
  Out o;
  o.u32(8);  // fields, in tag order
  o.u16(kTagStartUnixMs);
  o.u32(8);
  o.u64(info.start_unix_ms);
  o.u16(kTagIntervalMs);
  o.u32(4);
  o.u32(info.interval_ms);
  o.u16(kTagBuckets);
  o.u32(4);
  o.u32(info.buckets);
  o.u16(kTagPid);
  o.u32(4);
  o.i32(info.pid);
  put_info_string(&o, kTagCommand, info.command);
  put_info_string(&o, kTagHost, info.host);
  put_info_string(&o, kTagPolicy, info.policy);
  put_info_string(&o, kTagHeatSource, info.heat_source);
  return std::move(o.data());
}

int decode_info(const std::string& payload, SessionInfo* out) {
  return decode_info_view(payload, out);
}

std::string encode_snapshot(const Snapshot& s) {
  Out o;
  o.u64(s.unix_ms);
  o.u32(static_cast<uint32_t>(s.procs.size()));
  for (const ProcessSnap& p : s.procs) put_proc(&o, p);
  return std::move(o.data());
}

int decode_snapshot(const std::string& payload, Snapshot* out) {
  return decode_snapshot_view(payload, out);
}

int read_recording(const std::string& path, Recording* out, std::string* why) {
  *out = Recording{};
  std::string bytes, problem;
  if (int rc = read_file(path, -1, &bytes); rc != 0) {
    set_why(why, errno_line(path, -rc));
    return rc;
  }
  Recording rec;
  if (int rc = scan_records(bytes, &rec, &problem); rc != 0) {
    set_why(why, path + ": " + problem);
    return rc;
  }
  if (rec.sessions.empty()) {
    set_why(why, path + ": holds no INFO record" +
                     (rec.truncated ? " (" + rec.tail_problem + ")" : std::string()));
    return -EINVAL;
  }
  *out = std::move(rec);
  return 0;
}

RecordingWriter::~RecordingWriter() { close(); }

int RecordingWriter::open(const std::string& path, bool append, const SessionInfo& info,
                          std::string* why) {
  if (fd_ >= 0) {
    set_why(why, path + ": this writer already has " + path_ + " open");
    return -EBUSY;
  }
  const std::string info_payload = encode_info(info);
  if (!append) {
    int fd = -1;
    if (int rc = create_recording(path, frame(kTypeInfo, info_payload), &fd, why); rc != 0) {
      return rc;
    }
    fd_ = fd;
    path_ = path;
    records_ = 1;
    return 0;
  }
  int fd = -1;
  if (int rc = open_for_append(path, &fd, why); rc != 0) return rc;
  fd_ = fd;
  path_ = path;
  records_ = 0;
  if (int rc = write_record(kTypeInfo, info_payload, why); rc != 0) {
    close();
    return rc;
  }
  return 0;
}

int RecordingWriter::write(const Snapshot& s, std::string* why) {
  if (fd_ < 0) {
    set_why(why, "no recording is open");
    return -EBADF;
  }
  std::string reason;
  if (!valid_snapshot(s, &reason)) {
    set_why(why, path_ + ": snapshot not written: " + reason);
    return -EINVAL;
  }
  return write_record(kTypeSnapshot, encode_snapshot(s), why);
}

void RecordingWriter::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int RecordingWriter::write_record(uint32_t type, const std::string& payload, std::string* why) {
  if (payload.size() > kMaxPayloadBytes) {
    set_why(why, path_ + ": a record of " + std::to_string(payload.size()) +
                     " bytes is over the limit of " + std::to_string(kMaxPayloadBytes));
    return -EMSGSIZE;
  }
  if (int rc = append_all(fd_, frame(type, payload)); rc != 0) {
    set_why(why, errno_line(path_, -rc));
    return rc;
  }
  ++records_;
  return 0;
}

}  // namespace mtier::record
