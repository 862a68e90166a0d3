// SPDX-License-Identifier: Apache-2.0
#include "perf/perf_record.h"

#include <cerrno>
#include <cstring>

namespace mtier {
namespace {

// A bounds-checked cursor over one record's body.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t size) : p_(p), left_(size) {}
  bool u64(uint64_t* v) { return take(v, sizeof(*v)); }
  bool u32(uint32_t* v) { return take(v, sizeof(*v)); }
  bool skip(size_t n) {
    if (n > left_) return false;
    p_ += n;
    left_ -= n;
    return true;
  }
  const uint8_t* at() const { return p_; }
  size_t left() const { return left_; }

 private:
  bool take(void* v, size_t n) {
    if (n > left_) return false;
    std::memcpy(v, p_, n);  // RAW leaves what follows it only 4-aligned
    p_ += n;
    left_ -= n;
    return true;
  }
  const uint8_t* p_;
  size_t left_;
};

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

int PerfRecordParser::configure(uint64_t sample_type, bool ibs_raw) {
  if (sample_type & ~kPerfSupportedSampleType) return -EINVAL;
  if ((sample_type & PERF_SAMPLE_WEIGHT) && (sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
    return -EINVAL;  // the kernel refuses the pair too
  if (ibs_raw && !(sample_type & PERF_SAMPLE_RAW)) return -EINVAL;
  sample_type_ = sample_type;
  ibs_raw_ = ibs_raw;
  return 0;
}

int PerfRecordParser::parse_sample(const uint8_t* p, size_t size, PerfSample* out) const {
  const uint64_t st = sample_type_;
  Cursor c(p, size);
  PerfSample s;
  uint64_t v;
  uint32_t w;
  if ((st & PERF_SAMPLE_IP) && !c.u64(&v)) return -EBADMSG;
  if (st & PERF_SAMPLE_TID) {
    if (!c.u32(&s.pid) || !c.u32(&s.tid)) return -EBADMSG;
  }
  if ((st & PERF_SAMPLE_TIME) && !c.u64(&s.time)) return -EBADMSG;
  if (st & PERF_SAMPLE_ADDR) {
    if (!c.u64(&s.addr)) return -EBADMSG;
    s.has_addr = s.addr != 0;  // PEBS/IBS write 0 when there is no data address
  }
  if ((st & PERF_SAMPLE_ID) && !c.u64(&v)) return -EBADMSG;
  if ((st & PERF_SAMPLE_STREAM_ID) && !c.u64(&v)) return -EBADMSG;
  if (st & PERF_SAMPLE_CPU) {
    if (!c.u32(&s.cpu) || !c.u32(&w)) return -EBADMSG;
  }
  if ((st & PERF_SAMPLE_PERIOD) && !c.u64(&s.period)) return -EBADMSG;
  if (st & PERF_SAMPLE_RAW) {
    uint32_t raw_size;
    if (!c.u32(&raw_size)) return -EBADMSG;
    const uint8_t* raw = c.at();
    if (!c.skip(raw_size)) return -EBADMSG;
    constexpr size_t kNeed = kIbsRawCapsBytes + 8 * (kIbsRegDcLinAd + 1);
    if (ibs_raw_ && raw_size >= kNeed) {
      uint64_t data3 = load_u64(raw + kIbsRawCapsBytes + 8 * kIbsRegOpData3);
      if (!s.has_addr && (data3 & kIbsOpData3DcLinAddrValid)) {
        s.addr = load_u64(raw + kIbsRawCapsBytes + 8 * kIbsRegDcLinAd);
        s.has_addr = true;
      }
      // The kernel fills WEIGHT with DcMissLat only for load misses; take
      // it from the RAW copy when WEIGHT is not sampled.
      if (!(st & PERF_SAMPLE_WEIGHT_TYPE) && (data3 & kIbsOpData3DcMiss))
        s.weight = (data3 >> kIbsOpData3DcMissLatShift) & 0xffff;
    }
  }
  if (st & PERF_SAMPLE_WEIGHT) {
    if (!c.u64(&s.weight)) return -EBADMSG;
  } else if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
    // union perf_sample_weight: var1_dw (low 32 bits, little endian) is the
    // access latency; var2_w/var3_w are instruction/retire latencies.
    if (!c.u64(&v)) return -EBADMSG;
    s.weight = v & 0xffffffffu;
  }
  if ((st & PERF_SAMPLE_DATA_SRC) && !c.u64(&v)) return -EBADMSG;
  if ((st & PERF_SAMPLE_PHYS_ADDR) && !c.u64(&v)) return -EBADMSG;
  // Bytes left over mean the ring's sample_type is not the one configured.
  if (c.left() != 0) return -EBADMSG;
  *out = s;
  return 0;
}

int PerfRecordParser::parse(const perf_event_header* rec, PerfSample* out) {
  if (rec->size < sizeof(*rec)) {
    malformed_++;
    return -EBADMSG;
  }
  const auto* body = reinterpret_cast<const uint8_t*>(rec) + sizeof(*rec);
  const size_t size = rec->size - sizeof(*rec);
  switch (rec->type) {
    case PERF_RECORD_SAMPLE: {
      PerfSample s;
      if (parse_sample(body, size, &s) < 0) {
        malformed_++;
        return -EBADMSG;
      }
      samples_++;
      if (out) *out = s;
      return kSample;
    }
    case PERF_RECORD_LOST: {
      // { u64 id; u64 lost; } then sample_id if sample_id_all.
      if (size < 16) break;
      lost_ += load_u64(body + 8);
      return kLost;
    }
    case PERF_RECORD_LOST_SAMPLES: {
      // { u64 lost; } then sample_id.
      if (size < 8) break;
      lost_ += load_u64(body);
      return kLost;
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      // { u64 time; u64 id; u64 stream_id; } then sample_id.
      if (size < 24) break;
      if (rec->type == PERF_RECORD_THROTTLE) {
        throttles_++;
        return kThrottle;
      }
      unthrottles_++;
      return kUnthrottle;
    }
    default:
      others_++;
      return kOther;
  }
  malformed_++;
  return -EBADMSG;
}

}  // namespace mtier
