// SPDX-License-Identifier: Apache-2.0
// Unit tests of the recording file of `mtier record` (src/record/recording.h):
// the INFO and SNAPSHOT payloads, the framing byte by byte against
// docs/recording.md, reading cut-off and damaged files, appending sessions,
// and decoders that refuse malformed payloads without crashing.
#include "record/recording.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "temp_dir.h"

#include "record/snapshot.h"
#include "util/crc32c.h"

namespace mtier::record {
namespace {

// ---------------------------------------------------------------- helpers

// A scratch directory (temp_dir.h), named for this test.
class TempDir : public testutil::TempDir {
 public:
  TempDir() : testutil::TempDir("mtier-recording-test") {}
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Little-endian bytes built by hand, independently of recording.cc, so the
// layout tests check the documented format rather than the code against itself.
struct Bytes {
  std::string s;
  Bytes& u8(uint8_t v) {
    s.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& u16(uint16_t v) { return le(v, 2); }
  Bytes& u32(uint32_t v) { return le(v, 4); }
  Bytes& u64(uint64_t v) { return le(v, 8); }
  Bytes& f32(float v) { return u32(std::bit_cast<uint32_t>(v)); }
  Bytes& f64(double v) { return u64(std::bit_cast<uint64_t>(v)); }
  Bytes& raw(const std::string& b) {
    s += b;
    return *this;
  }
  Bytes& str(const std::string& b) { return u32(static_cast<uint32_t>(b.size())).raw(b); }
  Bytes& le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
};

uint32_t crc(const std::string& b) { return crc32c(b.data(), b.size()); }

// A record framed as docs/recording.md says.
std::string framed(uint32_t type, const std::string& payload) {
  Bytes b;
  b.u32(type).u32(static_cast<uint32_t>(payload.size())).raw(payload);
  return b.u32(crc(b.s)).s;
}

const std::string kMagic("MTREC\0\2\n", 8);  // format 2

SessionInfo sample_info(int n) {
  SessionInfo i;
  i.start_unix_ms = 1700000000123ull + n;
  i.interval_ms = 250;
  i.buckets = 64;
  i.pid = -7 + n;
  i.command = "python3 train.py --name \"dlrm \xC3\xA9t\xC3\xA9\" 'x'\n\ttab";
  i.host = "n\xC5\x93ud-" + std::to_string(n);
  i.policy = "lfu keep=0.9 period_ms=100";
  i.heat_source = "perf:mem-loads";
  return i;
}

TableSnap sample_table(uint32_t id, size_t slices) {
  TableSnap t;
  t.id = id;
  t.name = "emb\xE2\x80\x94\"quoted\" \xF0\x9F\x94\xA5 #" + std::to_string(id);
  t.bytes = (1ull << 40) + id;
  t.pages = 1000 + id;
  t.dram_pages = 11;
  t.slow_pages = 22;
  t.store_pages = 33;
  t.untouched_pages = 44;
  t.active_bytes = 55 + id;
  t.heat = 1234.5 + id;
  t.samples_per_s = 0.125;
  for (unsigned m = 0; m < kMoveKinds; ++m) t.moves[m] = 1000ull * (m + 1) + id;
  const char places[] = {kPlaceDram, kPlaceSlow, kPlaceStore, kPlaceMixed, kPlaceUntouched};
  for (size_t i = 0; i < slices; ++i) {
    t.heat_map.push_back(static_cast<float>(i) * 0.5f + 0.25f);
    t.place.push_back(places[i % 5]);
  }
  return t;
}

Snapshot sample_snapshot(uint64_t unix_ms) {
  Snapshot s;
  s.unix_ms = unix_ms;
  for (int p = 0; p < 3; ++p) {
    ProcessSnap ps;
    ps.pid = 100 + p;
    ps.name = p == 1 ? "" : "tr\xC3\xA4iner \"" + std::to_string(p) + "\"";
    ps.dram_budget_bytes = 1ull << 33;
    ps.dram_resident_bytes = (1ull << 32) + p;
    ps.slow_budget_bytes = 1ull << 35;
    ps.slow_resident_bytes = 12345 + p;
    ps.missing_faults = 99 + p;
    ps.evictions = 77 + p;
    ps.fetches = 66 + p;
    for (uint32_t t = 0; t < static_cast<uint32_t>(p); ++t) {
      ps.tables.push_back(sample_table(t + 1, 1 + 7 * t));
    }
    s.procs.push_back(ps);
  }
  return s;
}

void expect_same(const SessionInfo& a, const SessionInfo& b) {
  EXPECT_EQ(a.start_unix_ms, b.start_unix_ms);
  EXPECT_EQ(a.interval_ms, b.interval_ms);
  EXPECT_EQ(a.buckets, b.buckets);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.heat_source, b.heat_source);
}

void expect_same(const TableSnap& a, const TableSnap& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.pages, b.pages);
  EXPECT_EQ(a.dram_pages, b.dram_pages);
  EXPECT_EQ(a.slow_pages, b.slow_pages);
  EXPECT_EQ(a.store_pages, b.store_pages);
  EXPECT_EQ(a.untouched_pages, b.untouched_pages);
  EXPECT_EQ(a.active_bytes, b.active_bytes);
  EXPECT_EQ(a.heat, b.heat);
  EXPECT_EQ(a.samples_per_s, b.samples_per_s);
  EXPECT_EQ(a.moves, b.moves);
  EXPECT_EQ(a.heat_map, b.heat_map);
  EXPECT_EQ(a.place, b.place);
}

void expect_same(const Snapshot& a, const Snapshot& b) {
  EXPECT_EQ(a.unix_ms, b.unix_ms);
  ASSERT_EQ(a.procs.size(), b.procs.size());
  for (size_t p = 0; p < a.procs.size(); ++p) {
    const ProcessSnap& x = a.procs[p];
    const ProcessSnap& y = b.procs[p];
    EXPECT_EQ(x.pid, y.pid);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dram_budget_bytes, y.dram_budget_bytes);
    EXPECT_EQ(x.dram_resident_bytes, y.dram_resident_bytes);
    EXPECT_EQ(x.slow_budget_bytes, y.slow_budget_bytes);
    EXPECT_EQ(x.slow_resident_bytes, y.slow_resident_bytes);
    EXPECT_EQ(x.missing_faults, y.missing_faults);
    EXPECT_EQ(x.evictions, y.evictions);
    EXPECT_EQ(x.fetches, y.fetches);
    ASSERT_EQ(x.tables.size(), y.tables.size());
    for (size_t t = 0; t < x.tables.size(); ++t) expect_same(x.tables[t], y.tables[t]);
  }
}

// Writes a session of `n` snapshots to `path`; *ends gets the file size
// after each record (the record boundaries).
void write_file(const std::string& path, int n, std::vector<uint64_t>* ends = nullptr) {
  RecordingWriter w;
  std::string why;
  ASSERT_EQ(w.open(path, false, sample_info(0), &why), 0) << why;
  if (ends) ends->push_back(file_size(path));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(w.write(sample_snapshot(1000 + i), &why), 0) << why;
    if (ends) ends->push_back(file_size(path));
  }
  EXPECT_EQ(w.records(), static_cast<uint64_t>(n) + 1);
}

// ---------------------------------------------------------------- names

TEST(MoveName, EveryKindInEnumOrder) {
  const char* want[] = {"new>dram",  "new>slow",  "store>dram", "store>slow",
                        "slow>dram", "dram>slow", "dram>store", "slow>store"};
  static_assert(std::size(want) == kMoveKinds);
  for (unsigned m = 0; m < kMoveKinds; ++m) EXPECT_STREQ(move_name(m), want[m]) << m;
  EXPECT_EQ(move_name(kMoveKinds), nullptr);
  EXPECT_EQ(move_name(~0u), nullptr);
}

// ---------------------------------------------------------------- INFO

TEST(Info, RoundTripsEveryField) {
  for (int n : {0, 1, 9}) {
    const SessionInfo in = sample_info(n);
    SessionInfo out;
    ASSERT_EQ(decode_info(encode_info(in), &out), 0);
    expect_same(in, out);
  }
  SessionInfo empty, out;
  out.command = "left over";
  ASSERT_EQ(decode_info(encode_info(empty), &out), 0);
  expect_same(empty, out);
}

TEST(Info, LayoutIsTaggedFields) {
  SessionInfo i;
  i.start_unix_ms = 0x0102030405060708ull;
  i.interval_ms = 250;
  i.buckets = 64;
  i.pid = -2;
  i.command = "a";
  i.host = "hé";
  Bytes b;
  b.u32(8);
  b.u16(1).u32(8).u64(i.start_unix_ms);
  b.u16(2).u32(4).u32(250);
  b.u16(3).u32(4).u32(64);
  b.u16(4).u32(4).u32(0xFFFFFFFE);
  b.u16(5).str("a").u16(6).str("hé").u16(7).str("").u16(8).str("");
  EXPECT_EQ(encode_info(i), b.s);
}

TEST(Info, SkipsUnknownTagsAndKeepsDefaultsForMissingOnes) {
  Bytes b;
  b.u32(3).u16(2).u32(4).u32(500).u16(6).str("host").u16(900).str("a field of a later mtier");
  SessionInfo out;
  ASSERT_EQ(decode_info(b.s, &out), 0);
  EXPECT_EQ(out.interval_ms, 500u);
  EXPECT_EQ(out.host, "host");
  EXPECT_EQ(out.start_unix_ms, 0u);
  EXPECT_EQ(out.command, "");
}

TEST(Info, RefusesMalformedFields) {
  SessionInfo out;
  out.host = "untouched";
  // A fixed-size field of the wrong size.
  EXPECT_EQ(decode_info(Bytes().u32(1).u16(2).u32(8).u64(1).s, &out), -EBADMSG);
  // A repeated tag, and tags out of order.
  EXPECT_EQ(decode_info(Bytes().u32(2).u16(6).str("a").u16(6).str("b").s, &out), -EBADMSG);
  EXPECT_EQ(decode_info(Bytes().u32(2).u16(6).str("a").u16(5).str("b").s, &out), -EBADMSG);
  // Tag 0 is never used.
  EXPECT_EQ(decode_info(Bytes().u32(1).u16(0).str("").s, &out), -EBADMSG);
  // A string over the 64 KiB bound.
  EXPECT_EQ(decode_info(Bytes().u32(1).u16(5).str(std::string(65537, 'x')).s, &out), -EBADMSG);
  // Counts that could never fit.
  EXPECT_EQ(decode_info(Bytes().u32(0xFFFFFFFF).s, &out), -EBADMSG);
  EXPECT_EQ(decode_info(Bytes().u32(1).u16(5).u32(0xFFFFFFFF).s, &out), -EBADMSG);
  EXPECT_EQ(decode_info("", &out), -EBADMSG);
  EXPECT_EQ(out.host, "untouched");  // left alone on failure
}

TEST(Info, RefusesEveryTruncationAndTrailingBytes) {
  const std::string p = encode_info(sample_info(3));
  SessionInfo out;
  for (size_t n = 0; n < p.size(); ++n) EXPECT_EQ(decode_info(p.substr(0, n), &out), -EBADMSG) << n;
  EXPECT_EQ(decode_info(p + '\0', &out), -EBADMSG);
  EXPECT_EQ(decode_info(p + "xyz", &out), -EBADMSG);
}

TEST(Info, ClipsOverlongStringsAtACharacterBoundary) {
  SessionInfo i;
  i.command = std::string(65535, 'a') + "\xC3\xA9";  // é straddles the 65536-byte bound
  i.policy = std::string(70000, 'p');
  SessionInfo out;
  ASSERT_EQ(decode_info(encode_info(i), &out), 0);
  EXPECT_EQ(out.command, std::string(65535, 'a'));
  EXPECT_EQ(out.policy, std::string(65536, 'p'));
}

// ---------------------------------------------------------------- SNAPSHOT

TEST(Snapshot, RoundTripsEveryField) {
  const Snapshot in = sample_snapshot(1700000000999ull);
  ASSERT_EQ(in.procs.size(), 3u);
  ASSERT_EQ(in.procs[2].tables.size(), 2u);
  Snapshot out;
  ASSERT_EQ(decode_snapshot(encode_snapshot(in), &out), 0);
  expect_same(in, out);
}

TEST(Snapshot, RoundTripsEdgeValues) {
  Snapshot in;
  in.unix_ms = std::numeric_limits<uint64_t>::max();
  ProcessSnap p;
  p.pid = std::numeric_limits<int32_t>::min();
  p.fetches = std::numeric_limits<uint64_t>::max();
  TableSnap t = sample_table(std::numeric_limits<uint32_t>::max(), 1);
  t.heat = -0.0;
  t.samples_per_s = std::numeric_limits<double>::denorm_min();
  t.heat_map = {std::numeric_limits<float>::max()};
  t.place = std::string(1, kPlaceUntouched);
  p.tables.push_back(t);
  in.procs.push_back(p);
  Snapshot out;
  ASSERT_EQ(decode_snapshot(encode_snapshot(in), &out), 0);
  expect_same(in, out);
  EXPECT_TRUE(std::signbit(out.procs[0].tables[0].heat));

  Snapshot none, none_out;
  ASSERT_EQ(decode_snapshot(encode_snapshot(none), &none_out), 0);
  EXPECT_TRUE(none_out.procs.empty());
}

// The documented layout, built by hand for a snapshot of one process with
// one table of two slices.
Bytes minimal_snapshot_bytes(uint32_t move_count) {
  Bytes b;
  b.u64(42).u32(1);                              // unix_ms, processes
  b.u32(7).str("p");                             // pid, name
  for (uint64_t v = 1; v <= 7; ++v) b.u64(v);    // budgets, residents, counters
  b.u32(1);                                      // tables
  b.u32(3).str("t");                             // id, name
  for (uint64_t v = 11; v <= 17; ++v) b.u64(v);  // bytes .. active_bytes
  b.f64(2.5).f64(0.5);                           // heat, samples_per_s
  b.u32(move_count);
  for (uint64_t m = 0; m < move_count; ++m) b.u64(100 + m);
  b.u32(2).f32(1.0f).f32(3.0f);  // heat_map
  b.u32(2).raw("Dm");            // place
  return b;
}

Snapshot minimal_snapshot() {
  Snapshot s;
  s.unix_ms = 42;
  ProcessSnap p;
  p.pid = 7;
  p.name = "p";
  p.dram_budget_bytes = 1;
  p.dram_resident_bytes = 2;
  p.slow_budget_bytes = 3;
  p.slow_resident_bytes = 4;
  p.missing_faults = 5;
  p.evictions = 6;
  p.fetches = 7;
  TableSnap t;
  t.id = 3;
  t.name = "t";
  t.bytes = 11;
  t.pages = 12;
  t.dram_pages = 13;
  t.slow_pages = 14;
  t.store_pages = 15;
  t.untouched_pages = 16;
  t.active_bytes = 17;
  t.heat = 2.5;
  t.samples_per_s = 0.5;
  for (unsigned m = 0; m < kMoveKinds; ++m) t.moves[m] = 100 + m;
  t.heat_map = {1.0f, 3.0f};
  t.place = "Dm";
  p.tables.push_back(t);
  s.procs.push_back(p);
  return s;
}

TEST(Snapshot, LayoutMatchesTheDocs) {
  EXPECT_EQ(encode_snapshot(minimal_snapshot()), minimal_snapshot_bytes(kMoveKinds).s);
}

TEST(Snapshot, MoveCountsOfOtherWritersAreTolerated) {
  // A later writer with more move kinds: the extra counts are skipped.
  Snapshot out;
  ASSERT_EQ(decode_snapshot(minimal_snapshot_bytes(kMoveKinds + 3).s, &out), 0);
  expect_same(minimal_snapshot(), out);
  // Fewer kinds: the rest stay 0.
  ASSERT_EQ(decode_snapshot(minimal_snapshot_bytes(2).s, &out), 0);
  const auto& moves = out.procs[0].tables[0].moves;
  EXPECT_EQ(moves[0], 100u);
  EXPECT_EQ(moves[1], 101u);
  for (unsigned m = 2; m < kMoveKinds; ++m) EXPECT_EQ(moves[m], 0u) << m;
  // More than 64 kinds is damage.
  EXPECT_EQ(decode_snapshot(minimal_snapshot_bytes(65).s, &out), -EBADMSG);
}

TEST(Snapshot, RefusesEveryTruncationAndTrailingBytes) {
  const std::string p = encode_snapshot(sample_snapshot(5));
  Snapshot out;
  out.unix_ms = 77;
  for (size_t n = 0; n < p.size(); ++n) {
    ASSERT_EQ(decode_snapshot(p.substr(0, n), &out), -EBADMSG) << n;
  }
  EXPECT_EQ(decode_snapshot(p + '\0', &out), -EBADMSG);
  EXPECT_EQ(decode_snapshot(p + std::string(100, 'x'), &out), -EBADMSG);
  EXPECT_EQ(out.unix_ms, 77u);  // left alone on failure
}

// The minimal snapshot with its slices replaced.
std::string with_slices(const Bytes& heat_map, const Bytes& place) {
  std::string s = minimal_snapshot_bytes(kMoveKinds).s;
  s.resize(s.size() - (4 + 8) - (4 + 2));
  return s + heat_map.s + place.s;
}

TEST(Snapshot, RefusesBrokenContracts) {
  Snapshot out;
  ASSERT_EQ(decode_snapshot(with_slices(Bytes().u32(1).f32(1), Bytes().u32(1).raw("s")), &out), 0);
  // heat_map and place of different lengths.
  EXPECT_EQ(decode_snapshot(with_slices(Bytes().u32(1).f32(1), Bytes().u32(2).raw("ss")), &out),
            -EBADMSG);
  EXPECT_EQ(
      decode_snapshot(with_slices(Bytes().u32(2).f32(1).f32(1), Bytes().u32(1).raw("s")), &out),
      -EBADMSG);
  // No slices at all (n >= 1).
  EXPECT_EQ(decode_snapshot(with_slices(Bytes().u32(0), Bytes().u32(0)), &out), -EBADMSG);
  // A place char outside kPlace*.
  EXPECT_EQ(decode_snapshot(with_slices(Bytes().u32(1).f32(1), Bytes().u32(1).raw("x")), &out),
            -EBADMSG);
  // Heat that is not a number.
  EXPECT_EQ(decode_snapshot(with_slices(Bytes().u32(1).f32(NAN), Bytes().u32(1).raw("s")), &out),
            -EBADMSG);
  EXPECT_EQ(
      decode_snapshot(with_slices(Bytes().u32(1).f32(INFINITY), Bytes().u32(1).raw("s")), &out),
      -EBADMSG);
}

TEST(Snapshot, RefusesAbsurdCountsWithoutAllocating) {
  Snapshot out;
  // Each of these would ask for gigabytes if a count were trusted.
  EXPECT_EQ(decode_snapshot(Bytes().u64(1).u32(0xFFFFFFFF).s, &out), -EBADMSG);
  std::string s = minimal_snapshot_bytes(kMoveKinds).s;
  // unix_ms, process count, pid, name "p", 7 counters: then the table count.
  const size_t tables_at = 8 + 4 + 4 + (4 + 1) + 7 * 8;
  std::string bad = s;
  bad.replace(tables_at, 4, std::string("\xFF\xFF\xFF\xFF", 4));
  EXPECT_EQ(decode_snapshot(bad, &out), -EBADMSG);
  EXPECT_EQ(decode_snapshot(with_slices(Bytes().u32(0x40000000), Bytes()), &out), -EBADMSG);
  EXPECT_EQ(decode_snapshot(with_slices(Bytes().u32(1).f32(1), Bytes().u32(0xFFFFFFF0)), &out),
            -EBADMSG);
  // A name longer than 4096 bytes.
  Bytes long_name;
  long_name.u64(1).u32(1).u32(7).str(std::string(4097, 'n'));
  for (int i = 0; i < 7; ++i) long_name.u64(0);
  long_name.u32(0);
  EXPECT_EQ(decode_snapshot(long_name.s, &out), -EBADMSG);
}

TEST(Snapshot, ClipsOverlongNames) {
  Snapshot in = minimal_snapshot();
  in.procs[0].name = std::string(4095, 'a') + "\xE2\x80\x94";  // a 3-byte char over the bound
  in.procs[0].tables[0].name = std::string(5000, 'b');
  Snapshot out;
  ASSERT_EQ(decode_snapshot(encode_snapshot(in), &out), 0);
  EXPECT_EQ(out.procs[0].name, std::string(4095, 'a'));
  EXPECT_EQ(out.procs[0].tables[0].name, std::string(4096, 'b'));
}

// Mutated valid payloads and plain noise: decode either refuses them or
// returns something that encodes and decodes again. Never a crash (ASan/UBSan
// builds make an out-of-range read fail the test).
TEST(Decode, SurvivesRandomInput) {
  std::mt19937_64 rng(20240611);
  const std::string seeds[] = {encode_snapshot(sample_snapshot(1)),
                               encode_snapshot(minimal_snapshot()), encode_info(sample_info(1))};
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string p = seeds[i % 3];
    const int kind = static_cast<int>(rng() % 5);
    if (kind == 0) {  // flip a few bytes
      for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
        p[rng() % p.size()] ^= static_cast<char>(1 + rng() % 255);
      }
    } else if (kind == 1) {  // plant a random u32 (a count or a length) anywhere
      const size_t at = rng() % (p.size() - 3);
      const uint32_t v = static_cast<uint32_t>(rng() >> (rng() % 32));
      for (int k = 0; k < 4; ++k) p[at + k] = static_cast<char>(v >> (8 * k));
    } else if (kind == 2) {  // cut or extend
      p.resize(rng() % (p.size() + 16), static_cast<char>(rng()));
    } else if (kind == 3) {  // drop or duplicate a range
      const size_t at = rng() % p.size(), n = rng() % 16;
      if (rng() % 2) {
        p.erase(at, n);
      } else {
        p.insert(at, p.substr(at, n));
      }
    } else {  // noise
      p.resize(rng() % 256);
      for (char& c : p) c = static_cast<char>(rng());
    }
    Snapshot s;
    if (decode_snapshot(p, &s) == 0) {
      ++accepted;
      Snapshot again;
      ASSERT_EQ(decode_snapshot(encode_snapshot(s), &again), 0) << i;
    }
    SessionInfo info;
    if (decode_info(p, &info) == 0) {
      ++accepted;
      SessionInfo again;
      ASSERT_EQ(decode_info(encode_info(info), &again), 0) << i;
    }
  }
  EXPECT_GT(accepted, 0);  // some mutations (of values, not structure) stay valid
}

// ---------------------------------------------------------------- files

TEST(Recording, WritesAndReadsASession) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  write_file(path, 3);
  Recording r;
  std::string why;
  ASSERT_EQ(read_recording(path, &r, &why), 0) << why;
  ASSERT_EQ(r.sessions.size(), 1u);
  expect_same(r.sessions[0], sample_info(0));
  ASSERT_EQ(r.snapshots.size(), 3u);
  for (int i = 0; i < 3; ++i) expect_same(r.snapshots[i], sample_snapshot(1000 + i));
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.tail_problem, "");
  EXPECT_EQ(r.valid_bytes, file_size(path));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777 & ~0644, 0u);
}

TEST(Recording, FramingMatchesTheDocs) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  write_file(path, 1);
  const std::string want = kMagic + framed(1, encode_info(sample_info(0))) +
                           framed(2, encode_snapshot(sample_snapshot(1000)));
  EXPECT_EQ(slurp(path), want);
}

TEST(Recording, EveryTruncationReadsTheCompleteRecordsBeforeIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string full = dir.file("full.mtrec"), cut = dir.file("cut.mtrec");
  std::vector<uint64_t> ends;  // INFO, then 3 snapshots
  write_file(full, 3, &ends);
  ASSERT_EQ(ends.size(), 4u);
  const std::string bytes = slurp(full);
  ASSERT_EQ(bytes.size(), ends.back());
  for (size_t n = 0; n <= bytes.size(); ++n) {
    spit(cut, bytes.substr(0, n));
    Recording r;
    std::string why;
    const int rc = read_recording(cut, &r, &why);
    if (n < ends[0]) {
      ASSERT_EQ(rc, -EINVAL) << n;
      EXPECT_EQ(why.rfind(cut + ": ", 0), 0u) << why;
      EXPECT_NE(why.find(n < 8 ? "not an mtier recording" : "no INFO record"), std::string::npos)
          << n << ": " << why;
      continue;
    }
    ASSERT_EQ(rc, 0) << n << ": " << why;
    size_t complete = 0;
    while (complete + 1 < ends.size() && ends[complete + 1] <= n) ++complete;
    const bool boundary = n == ends[complete];
    ASSERT_EQ(r.sessions.size(), 1u) << n;
    ASSERT_EQ(r.snapshots.size(), complete) << n;
    for (size_t i = 0; i < complete; ++i) expect_same(r.snapshots[i], sample_snapshot(1000 + i));
    EXPECT_EQ(r.truncated, !boundary) << n;
    EXPECT_EQ(r.valid_bytes, ends[complete]) << n;
    if (!boundary) {
      const std::string want = "cut off inside record " + std::to_string(complete + 2) +
                               " at byte " + std::to_string(ends[complete]) +
                               " (a crash while recording?)";
      EXPECT_EQ(r.tail_problem, want) << n;
    } else {
      EXPECT_EQ(r.tail_problem, "") << n;
    }
  }
}

TEST(Recording, ADamagedLastRecordEndsTheReadablePart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string full = dir.file("full.mtrec"), bad = dir.file("bad.mtrec");
  std::vector<uint64_t> ends;
  write_file(full, 3, &ends);
  const std::string bytes = slurp(full);
  for (size_t at = ends[2]; at < ends[3]; ++at) {
    std::string b = bytes;
    b[at] ^= 0x10;
    spit(bad, b);
    Recording r;
    std::string why;
    ASSERT_EQ(read_recording(bad, &r, &why), 0) << at << ": " << why;
    EXPECT_TRUE(r.truncated) << at;
    ASSERT_EQ(r.snapshots.size(), 2u) << at;
    expect_same(r.snapshots[1], sample_snapshot(1001));
    EXPECT_EQ(r.valid_bytes, ends[2]);
    EXPECT_NE(r.tail_problem.find("record 4 at byte " + std::to_string(ends[2])), std::string::npos)
        << r.tail_problem;
  }
}

TEST(Recording, SkipsUnknownRecordTypes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  const std::string b = kMagic + framed(1, encode_info(sample_info(0))) + framed(77, "later") +
                        framed(2, encode_snapshot(sample_snapshot(1))) + framed(3, "");
  spit(path, b);
  Recording r;
  std::string why;
  ASSERT_EQ(read_recording(path, &r, &why), 0) << why;
  EXPECT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.snapshots.size(), 1u);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.valid_bytes, b.size());
}

TEST(Recording, AValidRecordThatDoesNotParseEndsTheReadablePart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  const std::string head = kMagic + framed(1, encode_info(sample_info(0)));
  spit(path, head + framed(2, "not a snapshot") + framed(2, encode_snapshot(sample_snapshot(1))));
  Recording r;
  std::string why;
  ASSERT_EQ(read_recording(path, &r, &why), 0) << why;
  EXPECT_TRUE(r.truncated);
  EXPECT_TRUE(r.snapshots.empty());
  EXPECT_EQ(r.valid_bytes, head.size());
  EXPECT_EQ(r.tail_problem, "record 2 at byte " + std::to_string(head.size()) +
                                ": its SNAPSHOT payload does not parse (damaged?)");
}

TEST(Recording, RefusesFilesThatAreNotRecordings) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("x");
  Recording r;
  std::string why;
  for (const std::string& b : {std::string(), std::string("hello, this is text\n"),
                               std::string("MTREC\0\0\n", 8), std::string("MTREC\0\1\r", 8)}) {
    spit(path, b);
    EXPECT_EQ(read_recording(path, &r, &why), -EINVAL);
    EXPECT_EQ(why, path + ": not an mtier recording");
  }
  // The magic alone, and a SNAPSHOT with no INFO before it.
  spit(path, kMagic);
  EXPECT_EQ(read_recording(path, &r, &why), -EINVAL);
  EXPECT_EQ(why, path + ": holds no INFO record");
  spit(path, kMagic + framed(2, encode_snapshot(sample_snapshot(1))));
  EXPECT_EQ(read_recording(path, &r, &why), -EINVAL);
  EXPECT_NE(why.find("SNAPSHOT before any INFO"), std::string::npos) << why;
  EXPECT_TRUE(r.sessions.empty());
  EXPECT_TRUE(r.snapshots.empty());
}

TEST(Recording, RefusesANewerFormat) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("new.mtrec");
  std::string magic = kMagic;
  magic[6] = 3;
  spit(path, magic + framed(1, encode_info(sample_info(0))));
  Recording r;
  std::string why;
  EXPECT_EQ(read_recording(path, &r, &why), -EINVAL);
  EXPECT_EQ(why, path + ": was written by a newer mtier (format 3; this one reads formats 1 to 2)");
  RecordingWriter w;
  EXPECT_EQ(w.open(path, true, sample_info(1), &why), -EINVAL);
  EXPECT_NE(why.find("newer mtier (format 3"), std::string::npos) << why;
}

// Format 1 (mtier 0.1: records checksummed with zlib's crc32) is still read;
// testdata/recording-v1.mtrec was framed with Python's zlib.crc32: one INFO
// and two SNAPSHOTs of one process with one table. A changed byte still
// fails its checksum, and --append refuses the file (its sessions would mix
// two checksums).
TEST(Recording, ReadsFormat1AndRefusesToAppendToIt) {
  const std::string v1 = MTIER_SRCDIR "/tests/unit/testdata/recording-v1.mtrec";
  Recording r;
  std::string why;
  ASSERT_EQ(read_recording(v1, &r, &why), 0) << why;
  EXPECT_EQ(r.version, 1u);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0].start_unix_ms, 1764633600000u);
  EXPECT_EQ(r.sessions[0].interval_ms, 1000u);
  EXPECT_EQ(r.sessions[0].command, "python3 train.py");
  EXPECT_EQ(r.sessions[0].host, "node1");
  ASSERT_EQ(r.snapshots.size(), 2u);
  EXPECT_EQ(r.snapshots[1].unix_ms, 1764633602000u);
  ASSERT_EQ(r.snapshots[1].procs.size(), 1u);
  ASSERT_EQ(r.snapshots[1].procs[0].tables.size(), 1u);
  EXPECT_EQ(r.snapshots[1].procs[0].tables[0].name, "emb0");
  EXPECT_EQ(r.snapshots[1].procs[0].tables[0].place, "DD~ ");
  EXPECT_FALSE(r.truncated) << r.tail_problem;

  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string copy = dir.file("old.mtrec");
  const std::string bytes = slurp(v1);
  spit(copy, bytes);
  RecordingWriter w;
  EXPECT_EQ(w.open(copy, true, sample_info(0), &why), -EINVAL);
  EXPECT_EQ(why, copy + ": format 1 (mtier 0.1), which --append cannot extend with format 2 "
                        "records; record into a new file");
  EXPECT_EQ(slurp(copy), bytes);

  std::string damaged = bytes;
  damaged[damaged.size() - 6] ^= 1;  // a place char of the last snapshot
  spit(copy, damaged);
  ASSERT_EQ(read_recording(copy, &r, &why), 0) << why;
  EXPECT_EQ(r.snapshots.size(), 1u);
  EXPECT_TRUE(r.truncated);
  EXPECT_NE(r.tail_problem.find("fails its checksum"), std::string::npos) << r.tail_problem;
}

// A format 2 file is format 1's with CRC-32C in place of CRC-32: the same
// records framed the old way do not pass as format 2.
TEST(Recording, Format2ChecksumsWithCrc32c) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  write_file(path, 1);
  std::string bytes = slurp(path);
  ASSERT_EQ(bytes.substr(0, 8), std::string("MTREC\0\2\n", 8));
  bytes[6] = 1;  // claims format 1: its CRC-32C no longer holds as CRC-32
  spit(path, bytes);
  Recording r;
  std::string why;
  ASSERT_EQ(read_recording(path, &r, &why), -EINVAL);
  EXPECT_NE(why.find("fails its checksum"), std::string::npos) << why;
}

TEST(Recording, ReportsUnreadableFiles) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Recording r;
  std::string why;
  const std::string missing = dir.file("missing.mtrec");
  EXPECT_EQ(read_recording(missing, &r, &why), -ENOENT);
  EXPECT_EQ(why, missing + ": No such file or directory");
  const std::string sub = dir.file("sub");
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  EXPECT_EQ(read_recording(sub, &r, &why), -EISDIR);
  EXPECT_EQ(why, sub + ": Is a directory");
}

// ---------------------------------------------------------------- writer

TEST(Writer, AppendAddsASession) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  write_file(path, 2);
  RecordingWriter w;
  std::string why;
  ASSERT_EQ(w.open(path, true, sample_info(1), &why), 0) << why;
  ASSERT_EQ(w.write(sample_snapshot(2000), &why), 0) << why;
  EXPECT_EQ(w.records(), 2u);
  w.close();
  Recording r;
  ASSERT_EQ(read_recording(path, &r, &why), 0) << why;
  ASSERT_EQ(r.sessions.size(), 2u);
  expect_same(r.sessions[0], sample_info(0));
  expect_same(r.sessions[1], sample_info(1));
  ASSERT_EQ(r.snapshots.size(), 3u);
  expect_same(r.snapshots[0], sample_snapshot(1000));
  expect_same(r.snapshots[1], sample_snapshot(1001));
  expect_same(r.snapshots[2], sample_snapshot(2000));
  EXPECT_FALSE(r.truncated);
}

TEST(Writer, AppendCutsAwayADamagedTail) {
  for (const bool cut_off : {true, false}) {
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string path = dir.file("a.mtrec");
    std::vector<uint64_t> ends;
    write_file(path, 2, &ends);
    std::string bytes = slurp(path);
    if (cut_off) {
      bytes.resize(ends[2] - 5);  // inside the second snapshot
    } else {
      bytes[ends[2] - 1] ^= 1;  // its checksum
    }
    spit(path, bytes);
    RecordingWriter w;
    std::string why;
    ASSERT_EQ(w.open(path, true, sample_info(1), &why), 0) << why;
    ASSERT_EQ(w.write(sample_snapshot(2000), &why), 0) << why;
    w.close();
    Recording r;
    ASSERT_EQ(read_recording(path, &r, &why), 0) << why;
    EXPECT_FALSE(r.truncated) << r.tail_problem;
    EXPECT_EQ(r.sessions.size(), 2u);
    ASSERT_EQ(r.snapshots.size(), 2u);
    expect_same(r.snapshots[0], sample_snapshot(1000));
    expect_same(r.snapshots[1], sample_snapshot(2000));
    EXPECT_EQ(r.valid_bytes, file_size(path));
  }
}

TEST(Writer, AppendOntoAnUnfinishedFirstSession) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  spit(path, kMagic + framed(1, encode_info(sample_info(0))).substr(0, 10));
  RecordingWriter w;
  std::string why;
  ASSERT_EQ(w.open(path, true, sample_info(1), &why), 0) << why;
  w.close();
  Recording r;
  ASSERT_EQ(read_recording(path, &r, &why), 0) << why;
  ASSERT_EQ(r.sessions.size(), 1u);
  expect_same(r.sessions[0], sample_info(1));
  EXPECT_FALSE(r.truncated);
}

TEST(Writer, RefusesToCreateOverAnExistingFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  spit(path, "precious");
  RecordingWriter w;
  std::string why;
  EXPECT_EQ(w.open(path, false, sample_info(0), &why), -EEXIST);
  EXPECT_EQ(why, path + ": File exists");
  EXPECT_EQ(slurp(path), "precious");
}

TEST(Writer, AppendRefusesWhatIsNotARecording) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.txt");
  spit(path, "precious text");
  RecordingWriter w;
  std::string why;
  EXPECT_EQ(w.open(path, true, sample_info(0), &why), -EINVAL);
  EXPECT_EQ(why, path + ": not an mtier recording");
  EXPECT_EQ(slurp(path), "precious text");
  const std::string missing = dir.file("missing.mtrec");
  EXPECT_EQ(w.open(missing, true, sample_info(0), &why), -ENOENT);
  EXPECT_EQ(why, missing + ": No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST(Writer, OneWriterPerFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  RecordingWriter first, second;
  std::string why;
  ASSERT_EQ(first.open(path, false, sample_info(0), &why), 0) << why;
  EXPECT_EQ(second.open(path, true, sample_info(1), &why), -EBUSY);
  EXPECT_NE(why.find("another writer"), std::string::npos) << why;
  EXPECT_EQ(first.open(dir.file("b.mtrec"), false, sample_info(0), &why), -EBUSY);
  first.close();
  ASSERT_EQ(second.open(path, true, sample_info(1), &why), 0) << why;
}

TEST(Writer, RefusesASnapshotThatBreaksItsContract) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.mtrec");
  RecordingWriter w;
  std::string why;
  Snapshot s = minimal_snapshot();
  EXPECT_EQ(w.write(s, &why), -EBADF);
  ASSERT_EQ(w.open(path, false, sample_info(0), &why), 0) << why;
  const uint64_t size = file_size(path);
  s.procs[0].tables[0].place = "D";
  EXPECT_EQ(w.write(s, &why), -EINVAL);
  EXPECT_EQ(why, path +
                     ": snapshot not written: table 3 of process 7 has 2 heat-map slices but "
                     "1 place chars");
  EXPECT_EQ(file_size(path), size);
  EXPECT_EQ(w.records(), 1u);
  ASSERT_EQ(w.write(minimal_snapshot(), &why), 0) << why;
  EXPECT_EQ(w.records(), 2u);
}

}  // namespace
}  // namespace mtier::record
