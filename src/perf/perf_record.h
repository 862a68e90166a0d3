// SPDX-License-Identifier: Apache-2.0
// Parser of the records a heat source's perf ring holds: PERF_RECORD_SAMPLE
// laid out by the event's sample_type, and the bookkeeping records
// (PERF_RECORD_LOST / LOST_SAMPLES, THROTTLE / UNTHROTTLE), which are
// counted. Input is one record as PerfRing hands it over; every field read is
// bounds-checked against header.size, so a record from a corrupt or
// mismatched ring is refused (-EBADMSG), never read past.
#pragma once
#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

namespace mtier {

// What the heat sampler needs from one sample. Fields the sample_type does
// not carry are 0.
struct PerfSample {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t addr = 0;  // data (virtual) address of the access
  uint64_t time = 0;  // perf clock, ns
  uint32_t cpu = 0;
  uint64_t weight = 0;  // access latency in cycles (PEBS ldlat, IBS DcMissLat)
  uint64_t period = 0;  // events this sample stands for
  // addr is meaningful: a non-zero PERF_SAMPLE_ADDR, or (AMD IBS op) the
  // IbsDcLinAd of a sample whose IbsOpData3.DcLinAddrValid is set.
  bool has_addr = false;
};

// The sample_type bits this parser understands, in the kernel's record order
// (perf_output_sample): IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD,
// RAW, WEIGHT or WEIGHT_STRUCT, DATA_SRC, PHYS_ADDR.
inline constexpr uint64_t kPerfSupportedSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW |
    PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR;

// AMD IBS op RAW payload, as arch/x86/events/amd/ibs.c (perf_ibs_handle_irq)
// writes it: the kernel's struct perf_ibs_data from its `caps` member on
// (arch/x86/include/asm/amd-ibs.h), i.e.
//   u32 ibs_caps;               CPUID Fn8000_001B EAX
//   u64 regs[n];                the op MSRs from IBS_OP_CTL (0xc0011033) on:
//     [0] IbsOpCtl  [1] IbsOpRip  [2] IbsOpData  [3] IbsOpData2
//     [4] IbsOpData3  [5] IbsDcLinAd  [6] IbsDcPhysAd
//     then IbsBrTarget and IbsOpData4 when the caps have them.
// The RAW field's u32 size is 4 + 8n. IbsOpData3 bit 17 is DcLinAddrValid
// (IbsDcLinAd holds the data linear address), bit 7 DcMiss, bits 32-47
// DcMissLat (AMD PPR for family 19h, 55898; the kernel's union
// ibs_op_data3). perf_event.h says RAW contents are not an ABI; perf's own
// decoder (tools/perf/util/amd-sample-raw.c) reads this same layout.
inline constexpr size_t kIbsRawCapsBytes = 4;
inline constexpr size_t kIbsRegOpData3 = 4;
inline constexpr size_t kIbsRegDcLinAd = 5;
inline constexpr uint64_t kIbsOpData3DcMiss = 1ull << 7;
inline constexpr uint64_t kIbsOpData3DcLinAddrValid = 1ull << 17;
inline constexpr int kIbsOpData3DcMissLatShift = 32;

class PerfRecordParser {
 public:
  enum Kind : int { kSample = 0, kLost = 1, kThrottle = 2, kUnthrottle = 3, kOther = 4 };

  // Sets the layout of the samples to parse. `ibs_raw`: the RAW payload is an
  // IBS op record (above); its data address is used when the sample has no
  // PERF_SAMPLE_ADDR or a zero one (kernels before 6.1 do not fill ADDR for
  // IBS). -EINVAL if sample_type has a bit outside
  // kPerfSupportedSampleType, both WEIGHT and WEIGHT_STRUCT, or `ibs_raw`
  // without RAW.
  [[nodiscard]] int configure(uint64_t sample_type, bool ibs_raw);
  uint64_t sample_type() const { return sample_type_; }

  // Parses one record (rec->size bytes at rec). Returns its Kind; for
  // kSample fills *out. -EBADMSG (and counts malformed()) if the record is
  // shorter or longer than its fields, or a RAW size runs past it.
  [[nodiscard]] int parse(const perf_event_header* rec, PerfSample* out);

  uint64_t samples() const { return samples_; }
  // Sum of the `lost` fields of LOST / LOST_SAMPLES records: samples the
  // kernel dropped because the ring was full.
  uint64_t lost() const { return lost_; }
  uint64_t throttles() const { return throttles_; }
  uint64_t unthrottles() const { return unthrottles_; }
  uint64_t others() const { return others_; }
  uint64_t malformed() const { return malformed_; }

 private:
  int parse_sample(const uint8_t* p, size_t size, PerfSample* out) const;

  uint64_t sample_type_ = 0;
  bool ibs_raw_ = false;
  uint64_t samples_ = 0, lost_ = 0, throttles_ = 0, unthrottles_ = 0, others_ = 0, malformed_ = 0;
};

}  // namespace mtier
