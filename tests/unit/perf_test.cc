// SPDX-License-Identifier: Apache-2.0
// The perf sample ring reader and the record parser, on synthetic rings built
// in memory: records that wrap around the end of the data area, corrupt
// sizes, LOST/THROTTLE records, PEBS-style samples (WEIGHT, DATA_SRC) and
// AMD IBS op samples (RAW with DcLinAddrValid set and clear). One check maps
// a real ring on this machine.
#include "sys/perf.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "perf/perf_record.h"

namespace mtier {
namespace {

constexpr size_t kControl = 4096;

// A record under construction: header, then fields appended in order.
class Rec {
 public:
  explicit Rec(uint32_t type, uint16_t misc = 0) {
    perf_event_header h{type, misc, 0};
    put(&h, sizeof(h));
  }
  Rec& u64(uint64_t v) { return put(&v, 8); }
  Rec& u32(uint32_t v) { return put(&v, 4); }
  // resize + memcpy rather than insert: g++ 12 -O2 warns (a false
  // stringop-overflow) on inserting into the empty vector.
  Rec& put(const void* p, size_t n) {
    size_t at = bytes_.size();
    bytes_.resize(at + n);
    std::memcpy(bytes_.data() + at, p, n);
    return *this;
  }
  // Sets header.size (override for corrupt records) and returns the bytes.
  std::vector<uint8_t> done(int size_override = -1) {
    uint16_t size = size_override >= 0 ? static_cast<uint16_t>(size_override)
                                       : static_cast<uint16_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(perf_event_header, size), &size, 2);
    return bytes_;
  }

 private:
  std::vector<uint8_t> bytes_;
};

// A control page and a data area in memory, written like the kernel does.
class SyntheticRing {
 public:
  SyntheticRing(size_t data_size, uint64_t start)
      : mem_((kControl + data_size) / 8), size_(data_size) {
    control()->data_head = start;
    control()->data_tail = start;
  }
  perf_event_mmap_page* control() { return reinterpret_cast<perf_event_mmap_page*>(mem_.data()); }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(mem_.data()) + kControl; }
  void* block() { return mem_.data(); }
  size_t size() const { return size_; }
  // Writes bytes at data_head (wrapping) and advances it.
  void put(const std::vector<uint8_t>& rec) {
    uint64_t head = control()->data_head;
    for (size_t i = 0; i < rec.size(); i++) data()[(head + i) % size_] = rec[i];
    control()->data_head = head + rec.size();
  }
  int attach(sys::PerfRing* ring) { return ring->attach(block(), kControl, size_); }

 private:
  std::vector<uint64_t> mem_;
  size_t size_;
};

std::vector<uint8_t> lost(uint64_t n) { return Rec(PERF_RECORD_LOST).u64(7).u64(n).done(); }
std::vector<uint8_t> throttle(uint32_t type) { return Rec(type).u64(123).u64(7).u64(8).done(); }
std::vector<uint8_t> pf_sample(uint32_t pid, uint32_t tid, uint64_t time, uint64_t addr) {
  // page-faults: TID | TIME | ADDR
  return Rec(PERF_RECORD_SAMPLE).u32(pid).u32(tid).u64(time).u64(addr).done();
}
constexpr uint64_t kPfType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;

struct Seen {
  std::vector<std::vector<uint8_t>> recs;
  std::vector<const void*> where;
};

long read_all(sys::PerfRing& ring, Seen* seen, size_t max = SIZE_MAX) {
  return ring.for_each(
      [&](const perf_event_header* h) {
        const auto* b = reinterpret_cast<const uint8_t*>(h);
        seen->recs.emplace_back(b, b + h->size);
        seen->where.push_back(h);
        return true;
      },
      max);
}

// ---- PerfRing ----

TEST(PerfRing, AttachRefusesBadGeometry) {
  std::vector<uint64_t> mem((kControl + 4096) / 8);
  sys::PerfRing ring;
  EXPECT_EQ(ring.attach(nullptr, kControl, 4096), -EINVAL);
  EXPECT_EQ(ring.attach(mem.data(), kControl, 3000), -EINVAL);  // not a power of two
  EXPECT_EQ(ring.attach(mem.data(), 64, 4096), -EINVAL);        // control page too small
  EXPECT_EQ(ring.attach(reinterpret_cast<uint8_t*>(mem.data()) + 4, kControl, 2048), -EINVAL);
  EXPECT_EQ(ring.attach(mem.data(), kControl, 4096), 0);
  EXPECT_TRUE(ring.valid());
  EXPECT_EQ(ring.data_size(), 4096u);
}

TEST(PerfRing, EmptyRingReadsNothing) {
  SyntheticRing s(4096, 0);
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  Seen seen;
  EXPECT_EQ(read_all(ring, &seen), 0);
  EXPECT_EQ(s.control()->data_tail, 0u);
}

TEST(PerfRing, ReadsInOrderAndAdvancesTheTail) {
  SyntheticRing s(4096, 0);
  for (uint64_t i = 0; i < 10; i++) s.put(pf_sample(1, 2, i, 0x1000 * i));
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  EXPECT_EQ(ring.pending(), 320u);
  Seen seen;
  EXPECT_EQ(read_all(ring, &seen), 10);
  for (uint64_t i = 0; i < 10; i++) EXPECT_EQ(seen.recs[i], pf_sample(1, 2, i, 0x1000 * i));
  EXPECT_EQ(s.control()->data_tail, s.control()->data_head);
  EXPECT_EQ(ring.pending(), 0u);
}

TEST(PerfRing, RecordWrappingTheEndIsHandedOverContiguous) {
  // Start 16 bytes before the end: the 32-byte sample is split 16 + 16.
  const size_t size = 4096;
  SyntheticRing s(size, 5 * size - 16);  // head/tail are free-running
  s.put(pf_sample(10, 11, 12, 0xdead000));
  s.put(pf_sample(10, 11, 13, 0xbeef000));  // lands right after, unsplit
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  Seen seen;
  ASSERT_EQ(read_all(ring, &seen), 2);
  EXPECT_EQ(seen.recs[0], pf_sample(10, 11, 12, 0xdead000));
  EXPECT_EQ(seen.recs[1], pf_sample(10, 11, 13, 0xbeef000));
  // The split one came from scratch, the other straight from the ring.
  const auto* lo = s.data();
  EXPECT_FALSE(seen.where[0] >= lo && seen.where[0] < lo + size);
  EXPECT_EQ(seen.where[1], lo + 16);
  EXPECT_EQ(s.control()->data_tail, 5 * size + 48);
}

TEST(PerfRing, LargeRecordWrappingTheEnd) {
  // A 1 KiB record (a big RAW payload) split 8 + 1016 bytes.
  const size_t size = 2048;
  SyntheticRing s(size, size - 8);
  Rec r(PERF_RECORD_SAMPLE);
  for (uint64_t i = 0; i < 127; i++) r.u64(0x0101010101010101ull * (i & 0xff));
  s.put(r.done());
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  Seen seen;
  ASSERT_EQ(read_all(ring, &seen), 1);
  EXPECT_EQ(seen.recs[0], r.done());
}

TEST(PerfRing, MaxRecordsAndEarlyStopLeaveTheRestQueued) {
  SyntheticRing s(4096, 0);
  for (uint64_t i = 0; i < 5; i++) s.put(pf_sample(1, 1, i, 0));
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  Seen seen;
  EXPECT_EQ(read_all(ring, &seen, 2), 2);
  EXPECT_EQ(s.control()->data_tail, 64u);
  int calls = 0;
  EXPECT_EQ(ring.for_each([&](const perf_event_header*) { return ++calls < 1; }), 1);
  EXPECT_EQ(s.control()->data_tail, 96u);
  EXPECT_EQ(read_all(ring, &seen), 2);
  EXPECT_EQ(s.control()->data_tail, 160u);
}

struct CorruptCase {
  const char* name;
  int size;  // header.size written
};

TEST(PerfRing, CorruptSizesStopAndSkipToHead) {
  const CorruptCase cases[] = {
      {"size 0", 0},
      {"size 4 (< header)", 4},
      {"size 12 (not 8-aligned)", 12},
      {"size larger than the data area", 8192},
      {"size past data_head", 64},
  };
  for (const CorruptCase& c : cases) {
    SCOPED_TRACE(c.name);
    SyntheticRing s(4096, 4096 - 8);  // the bad header also sits across the end
    s.put(pf_sample(1, 1, 1, 0x1000));
    s.put(Rec(PERF_RECORD_SAMPLE).u64(0).u64(0).done(c.size));  // 24 bytes really
    sys::PerfRing ring;
    ASSERT_EQ(s.attach(&ring), 0);
    Seen seen;
    EXPECT_EQ(read_all(ring, &seen), -EBADMSG);
    // The good record before it was delivered; nothing after.
    ASSERT_EQ(seen.recs.size(), 1u);
    EXPECT_EQ(seen.recs[0], pf_sample(1, 1, 1, 0x1000));
    EXPECT_EQ(s.control()->data_tail, s.control()->data_head);
    EXPECT_EQ(ring.corrupt_skips(), 1u);
    EXPECT_EQ(ring.skipped_bytes(), 24u);
    // The ring is usable again.
    s.put(pf_sample(2, 2, 2, 0x2000));
    seen = Seen{};
    EXPECT_EQ(read_all(ring, &seen), 1);
    EXPECT_EQ(seen.recs[0], pf_sample(2, 2, 2, 0x2000));
  }
}

TEST(PerfRing, HeadTooFarAheadIsCorrupt) {
  SyntheticRing s(4096, 0);
  s.put(pf_sample(1, 1, 1, 1));
  s.control()->data_head = 3 * 4096;  // more than the whole area unread
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  Seen seen;
  EXPECT_EQ(read_all(ring, &seen), -EBADMSG);
  EXPECT_TRUE(seen.recs.empty());
  EXPECT_EQ(s.control()->data_tail, 3u * 4096);
}

TEST(PerfRing, RingFullOfZeroesTerminates) {
  // A head a full area ahead over zeroed memory: one corrupt stop, no loop.
  SyntheticRing s(4096, 0);
  s.control()->data_head = 4096;
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  Seen seen;
  EXPECT_EQ(read_all(ring, &seen), -EBADMSG);
  EXPECT_EQ(s.control()->data_tail, 4096u);
}

TEST(PerfRing, MapsARealRing) {
  perf_event_attr a{};
  a.size = sizeof(a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_PAGE_FAULTS;
  a.sample_period = 1;
  a.sample_type = kPfType;
  a.exclude_kernel = 1;
  a.disabled = 1;
  int fd = sys::perf_open(a, 0, -1, -1, 0);
  if (fd == -EACCES || fd == -ENOENT || fd == -EPERM)
    GTEST_SKIP() << "perf_event_open(page-faults) on self: " << strerror(-fd)
                 << " (perf_event_paranoid, or a kernel without perf events)";
  ASSERT_GE(fd, 0) << strerror(-fd);
  sys::PerfRing ring;
  ASSERT_EQ(ring.map(fd, 3), 0);
  EXPECT_EQ(ring.data_size(), 8u * static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(ring.pending(), 0u);
  EXPECT_EQ(sys::perf_set_period(fd, 1), 0);
  EXPECT_EQ(sys::perf_enable(fd), 0);
  // Fault 64 fresh pages while enabled: their samples show up.
  const size_t len = 64 * 4096;
  void* mem = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* p = static_cast<volatile char*>(mem);
  for (size_t i = 0; i < len; i += 4096) p[i] = 1;
  EXPECT_EQ(sys::perf_disable(fd), 0);
  PerfRecordParser parser;
  ASSERT_EQ(parser.configure(kPfType, false), 0);
  const auto base = reinterpret_cast<uint64_t>(mem);
  size_t in_range = 0;
  long n = ring.for_each([&](const perf_event_header* h) {
    PerfSample s;
    EXPECT_GE(parser.parse(h, &s), 0);
    if (s.has_addr && s.addr >= base && s.addr < base + len) in_range++;
    EXPECT_EQ(s.pid, static_cast<uint32_t>(getpid()));
    return true;
  });
  EXPECT_GE(n, 64);
  EXPECT_EQ(in_range, 64u);
  munmap(mem, len);
  sys::PerfRing moved = std::move(ring);
  EXPECT_FALSE(ring.valid());
  EXPECT_TRUE(moved.valid());
  moved.reset();
  close(fd);
}

// ---- PerfRecordParser ----

TEST(PerfRecord, ConfigureRefusesWhatItCannotParse) {
  PerfRecordParser p;
  EXPECT_EQ(p.configure(PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, false), -EINVAL);
  EXPECT_EQ(p.configure(PERF_SAMPLE_READ, false), -EINVAL);
  EXPECT_EQ(p.configure(PERF_SAMPLE_IDENTIFIER, false), -EINVAL);
  EXPECT_EQ(p.configure(PERF_SAMPLE_REGS_USER, false), -EINVAL);
  EXPECT_EQ(p.configure(PERF_SAMPLE_DATA_PAGE_SIZE, false), -EINVAL);
  EXPECT_EQ(p.configure(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, false), -EINVAL);
  EXPECT_EQ(p.configure(PERF_SAMPLE_ADDR, true), -EINVAL);  // IBS needs RAW
  EXPECT_EQ(p.configure(kPerfSupportedSampleType & ~PERF_SAMPLE_WEIGHT, true), 0);
}

TEST(PerfRecord, EveryFieldInKernelOrder) {
  const uint64_t st = kPerfSupportedSampleType & ~PERF_SAMPLE_WEIGHT_STRUCT;
  PerfRecordParser p;
  ASSERT_EQ(p.configure(st, false), 0);
  const uint8_t raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto rec = Rec(PERF_RECORD_SAMPLE)
                 .u64(0x401000)  // IP
                 .u32(100)
                 .u32(101)             // TID
                 .u64(5555)            // TIME
                 .u64(0x7f0000001234)  // ADDR
                 .u64(9)               // ID
                 .u64(10)              // STREAM_ID
                 .u32(3)
                 .u32(0)     // CPU
                 .u64(2000)  // PERIOD
                 .u32(12)
                 .put(raw, 12)      // RAW (4 + 12: keeps 8-alignment)
                 .u64(321)          // WEIGHT
                 .u64(0x42)         // DATA_SRC
                 .u64(0x123456000)  // PHYS_ADDR
                 .done();
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s),
            PerfRecordParser::kSample);
  EXPECT_EQ(s.pid, 100u);
  EXPECT_EQ(s.tid, 101u);
  EXPECT_EQ(s.time, 5555u);
  EXPECT_EQ(s.addr, 0x7f0000001234u);
  EXPECT_TRUE(s.has_addr);
  EXPECT_EQ(s.cpu, 3u);
  EXPECT_EQ(s.period, 2000u);
  EXPECT_EQ(s.weight, 321u);
  EXPECT_EQ(p.samples(), 1u);
}

constexpr uint64_t kPebsType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;

std::vector<uint8_t> pebs_sample(uint64_t addr, uint64_t weight, uint64_t data_src) {
  return Rec(PERF_RECORD_SAMPLE)
      .u64(0x401234)
      .u32(7)
      .u32(8)
      .u64(addr)
      .u64(weight)
      .u64(data_src)
      .done();
}

TEST(PerfRecord, PebsLoadLatencySample) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kPebsType, false), 0);
  // data_src: a load (mem_op 2) that hit local DRAM (mem_lvl LOC_RAM|HIT).
  const uint64_t dsrc = (uint64_t{PERF_MEM_OP_LOAD} << PERF_MEM_OP_SHIFT) |
                        (uint64_t{PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT} << PERF_MEM_LVL_SHIFT);
  auto rec = pebs_sample(0x7ffd00002040, 245, dsrc);
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s),
            PerfRecordParser::kSample);
  EXPECT_EQ(s.pid, 7u);
  EXPECT_EQ(s.tid, 8u);
  EXPECT_EQ(s.addr, 0x7ffd00002040u);
  EXPECT_EQ(s.weight, 245u);
  EXPECT_TRUE(s.has_addr);
  // No data address (a non-memory instruction): has_addr false.
  rec = pebs_sample(0, 10, 0);
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s),
            PerfRecordParser::kSample);
  EXPECT_FALSE(s.has_addr);
}

TEST(PerfRecord, WeightStructTakesTheAccessLatency) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT_STRUCT, false), 0);
  // var1_dw = 300 (load latency), var2_w = 7, var3_w = 9.
  uint64_t w = 300 | (uint64_t{7} << 32) | (uint64_t{9} << 48);
  auto rec = Rec(PERF_RECORD_SAMPLE).u32(1).u32(2).u64(0x5000).u64(w).done();
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s), 0);
  EXPECT_EQ(s.weight, 300u);
}

constexpr uint64_t kIbsType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW;

// An IBS op RAW payload: u32 caps, then IbsOpCtl .. IbsDcPhysAd (7 regs).
std::vector<uint8_t> ibs_sample(uint64_t addr_field, uint64_t data3, uint64_t linad,
                                size_t regs = 7) {
  Rec r(PERF_RECORD_SAMPLE);
  r.u64(0x401000).u32(50).u32(51).u64(addr_field);
  r.u32(static_cast<uint32_t>(4 + 8 * regs)).u32(0x3ff);  // size, caps
  const uint64_t vals[9] = {
      (1ull << 17) | (1ull << 18), 0x401000, 0, 0, data3, linad, 0x9abc000, 0, 0};
  for (size_t i = 0; i < regs; i++) r.u64(vals[i]);
  return r.done();
}

TEST(PerfRecord, IbsAddressFromRawWhenAddrIsZero) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kIbsType, true), 0);
  const uint64_t data3 = kIbsOpData3DcLinAddrValid | kIbsOpData3DcMiss | 1 /* load */ |
                         (uint64_t{180} << kIbsOpData3DcMissLatShift);
  auto rec = ibs_sample(0, data3, 0x7f1234567890);
  ASSERT_EQ(rec.size() % 8, 0u);
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s), 0);
  EXPECT_TRUE(s.has_addr);
  EXPECT_EQ(s.addr, 0x7f1234567890u);
  EXPECT_EQ(s.weight, 180u);  // DcMissLat
  EXPECT_EQ(s.tid, 51u);
}

TEST(PerfRecord, IbsAddrFieldWinsWhenTheKernelFilledIt) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kIbsType, true), 0);
  auto rec = ibs_sample(0x7f0000001000, kIbsOpData3DcLinAddrValid, 0x7f0000001000);
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s), 0);
  EXPECT_EQ(s.addr, 0x7f0000001000u);
  EXPECT_TRUE(s.has_addr);
}

TEST(PerfRecord, IbsWithoutDcLinAddrValidHasNoAddress) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kIbsType, true), 0);
  // A branch op: DcLinAddrValid clear, IbsDcLinAd holds stale junk.
  auto rec = ibs_sample(0, 0, 0x7f00deadbeef);
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s), 0);
  EXPECT_FALSE(s.has_addr);
  EXPECT_EQ(s.weight, 0u);
}

TEST(PerfRecord, IbsLongerRawWithBrTargetAndOpData4) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kIbsType, true), 0);
  auto rec = ibs_sample(0, kIbsOpData3DcLinAddrValid, 0x600000, 9);
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s), 0);
  EXPECT_EQ(s.addr, 0x600000u);
}

TEST(PerfRecord, IbsRawTooShortForTheRegistersIsNoAddressNotAnError) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kIbsType, true), 0);
  // Only IbsOpCtl..IbsOpData (what the kernel saves without RAW consumers).
  auto rec = ibs_sample(0, kIbsOpData3DcLinAddrValid, 0x600000, 3);
  PerfSample s;
  ASSERT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(rec.data()), &s), 0);
  EXPECT_FALSE(s.has_addr);
}

TEST(PerfRecord, ShortLongAndOverrunningRecordsAreRefused) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kPebsType, false), 0);
  auto good = pebs_sample(0x1000, 1, 0);
  PerfSample s;
  // Truncated: header says 8 bytes fewer.
  auto shortrec = good;
  shortrec.resize(good.size() - 8);
  uint16_t sz = static_cast<uint16_t>(shortrec.size());
  std::memcpy(shortrec.data() + 6, &sz, 2);
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(shortrec.data()), &s), -EBADMSG);
  // Trailing bytes: the ring's layout is not the configured one.
  auto longrec = Rec(PERF_RECORD_SAMPLE).u64(1).u32(7).u32(8).u64(2).u64(3).u64(4).u64(5).done();
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(longrec.data()), &s), -EBADMSG);
  // A header shorter than itself.
  auto tiny = Rec(PERF_RECORD_SAMPLE).done(4);
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(tiny.data()), &s), -EBADMSG);
  // RAW size running past the record.
  PerfRecordParser q;
  ASSERT_EQ(q.configure(kIbsType, true), 0);
  auto raw = Rec(PERF_RECORD_SAMPLE).u64(1).u32(7).u32(8).u64(0).u32(4000).u32(0).done();
  EXPECT_EQ(q.parse(reinterpret_cast<const perf_event_header*>(raw.data()), &s), -EBADMSG);
  EXPECT_EQ(p.malformed(), 3u);
  EXPECT_EQ(q.malformed(), 1u);
  EXPECT_EQ(p.samples(), 0u);
}

TEST(PerfRecord, BookkeepingRecordsAreCounted) {
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kPfType, false), 0);
  PerfSample s;
  auto l = lost(17);
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(l.data()), &s),
            PerfRecordParser::kLost);
  auto ls = Rec(PERF_RECORD_LOST_SAMPLES).u64(5).done();
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(ls.data()), &s),
            PerfRecordParser::kLost);
  auto t = throttle(PERF_RECORD_THROTTLE);
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(t.data()), &s),
            PerfRecordParser::kThrottle);
  auto u = throttle(PERF_RECORD_UNTHROTTLE);
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(u.data()), &s),
            PerfRecordParser::kUnthrottle);
  auto comm = Rec(PERF_RECORD_COMM).u32(1).u32(1).u64(0x6f6f66).done();
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(comm.data()), &s),
            PerfRecordParser::kOther);
  auto short_lost = Rec(PERF_RECORD_LOST).u64(7).done();
  EXPECT_EQ(p.parse(reinterpret_cast<const perf_event_header*>(short_lost.data()), &s), -EBADMSG);
  EXPECT_EQ(p.lost(), 22u);
  EXPECT_EQ(p.throttles(), 1u);
  EXPECT_EQ(p.unthrottles(), 1u);
  EXPECT_EQ(p.others(), 1u);
  EXPECT_EQ(p.malformed(), 1u);
}

TEST(PerfRecord, RingOfMixedRecordsWrapping) {
  // PEBS samples, a LOST and a THROTTLE pair, wrapping twice round a small
  // area, read in three batches the way the sampler drains.
  const size_t size = 256;
  SyntheticRing s(size, 200);
  sys::PerfRing ring;
  ASSERT_EQ(s.attach(&ring), 0);
  PerfRecordParser p;
  ASSERT_EQ(p.configure(kPebsType, false), 0);
  std::vector<uint64_t> addrs;
  uint64_t next = 0x10000;
  auto drain = [&] {
    return ring.for_each([&](const perf_event_header* h) {
      PerfSample smp;
      int kind = p.parse(h, &smp);
      EXPECT_GE(kind, 0);
      if (kind == PerfRecordParser::kSample) addrs.push_back(smp.addr);
      return true;
    });
  };
  uint64_t want = 0;
  for (int batch = 0; batch < 3; batch++) {
    for (int i = 0; i < 3; i++) s.put(pebs_sample(next += 0x40, 100, 0));  // 48 bytes each
    if (batch == 1) {
      s.put(lost(4));
      s.put(throttle(PERF_RECORD_THROTTLE));
      s.put(throttle(PERF_RECORD_UNTHROTTLE));
    }
    want += 3;
    EXPECT_GT(drain(), 0);
    EXPECT_EQ(addrs.size(), want);
  }
  for (size_t i = 0; i < addrs.size(); i++) EXPECT_EQ(addrs[i], 0x10000 + 0x40 * (i + 1));
  EXPECT_EQ(p.lost(), 4u);
  EXPECT_EQ(p.throttles(), 1u);
  EXPECT_EQ(p.unthrottles(), 1u);
  EXPECT_GT(s.control()->data_head, 2 * size);  // it did go round
}

}  // namespace
}  // namespace mtier
