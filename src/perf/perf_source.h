// SPDX-License-Identifier: Apache-2.0
// Heat sources: the perf events that give data addresses of accesses made by
// another process, which of them this machine has, and opening one on a pid.
//   "pebs"        Intel PEBS load latency (cpu/mem-loads/, and mem-stores),
//                 precise_ip 2, sample_type IP|TID|ADDR|WEIGHT|DATA_SRC.
//   "ibs"         AMD IBS op sampling (the ibs_op PMU), IP|TID|ADDR|RAW; the
//                 address is also taken from the RAW IBS registers.
//   "page-faults" the software event, period 1, TID|ADDR|TIME: exact fault
//                 addresses, no hardware needed (the heat sampler zaps PTEs
//                 so that accesses fault).
// Detection reads sysfs under a root directory that tests point at fixture
// trees; a real detection also opens each source once on the caller.
#pragma once
#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "perf/perf_record.h"
#include "sys/perf.h"

namespace mtier {

enum class HeatSourceKind : int { kPebs = 0, kIbs = 1, kPageFaults = 2 };
inline constexpr int kHeatSourceKinds = 3;

// "pebs", "ibs", "page-faults".
const char* heat_source_name(HeatSourceKind kind);
// The kind named `name`: 0, or -EINVAL.
[[nodiscard]] int heat_source_parse(const char* name, HeatSourceKind* kind);

struct HeatSourceInfo {
  HeatSourceKind kind = HeatSourceKind::kPageFaults;
  bool available = false;
  // Why not, when !available: "no /sys/bus/event_source/devices/ibs_op",
  // "perf_event_open: No such file or directory", ...
  std::string reason;
  // The sampling event; sample_period is set by HeatSource::open.
  perf_event_attr attr{};
  // PEBS: mem-stores too, sampled into the same ring, when sysfs has it.
  bool has_stores = false;
  perf_event_attr stores_attr{};
  // PEBS on Sapphire Rapids and hybrid P-cores (sysfs has mem-loads-aux):
  // the kernel refuses a mem-loads event with DATA_SRC (ENODATA) unless a
  // mem-loads-aux event leads its group; that leader counts, never samples.
  bool needs_aux = false;
  perf_event_attr aux_attr{};
  // Sample period bounds and default for the rate controller. IBS periods
  // are multiples of 16 (the low 4 bits of IbsOpMaxCnt do not exist).
  uint64_t default_period = 1;
  uint64_t min_period = 1;
  uint64_t max_period = 1;
  uint64_t period_align = 1;
  // The period is fixed (page-faults: every fault is a sample); the rate is
  // bounded by capping the samples processed instead (SampleCap).
  bool fixed_period = false;
  // RAW holds an IBS op record (perf/perf_record.h).
  bool ibs_raw = false;
};

// Detects one source from the PMUs under `sysfs_root` (normally "/sys":
// bus/event_source/devices/{cpu,cpu_core,ibs_op,software}). With `try_open`
// a source that sysfs offers is also opened on the calling process (pid 0,
// cpu -1) and closed at once, and a failure becomes the reason.
HeatSourceInfo detect_source(HeatSourceKind kind, const std::string& sysfs_root = "/sys",
                             bool try_open = true);
// All kinds, in HeatSourceKind order.
std::vector<HeatSourceInfo> detect_sources(const std::string& sysfs_root = "/sys",
                                           bool try_open = true);

// Applies a sysfs event string ("event=0xcd,umask=0x1,ldlat=3"; a bare term
// means 1) to attr->config/config1/config2 as the PMU's format files say
// (`pmu_dir`/format/<term>: "config:0-7", "config1:0-15",
// "config:0-7,32-35", the value's low bits going to the first range).
// 0, or -EINVAL/-ENOENT with *err saying which term.
[[nodiscard]] int apply_sysfs_event(const std::string& pmu_dir, const std::string& event,
                                    perf_event_attr* attr, std::string* err);

struct HeatSourceOptions {
  // 0: the source's default_period. Clamped and aligned to the source.
  uint64_t period = 0;
  // Data pages of each thread's ring (2^n, plus the control page).
  unsigned ring_pages_log2 = 4;
  // poll() on a ring's fd wakes once this many bytes wait (0: a quarter of
  // the ring).
  uint32_t wakeup_bytes = 0;
};

// One source opened on one process. The kernel refuses to mmap() a per-task
// event that has `inherit` set (perf_mmap: EINVAL for cpu == -1 with
// inherit; checked on this machine, Linux 6.18), so inherit cannot follow the
// threads into one ring. Instead every thread of the process gets its own
// event (cpu -1, inherit 0) and ring, from /proc/PID/task; refresh() picks up
// threads created since, so samples a new thread takes before the next
// refresh() are missed. A ring per thread costs (2^n + 1) pages of locked
// memory (perf_event_mlock_kb, beyond it CAP_IPC_LOCK).
class HeatSource {
 public:
  HeatSource() = default;
  ~HeatSource() { close(); }
  HeatSource(const HeatSource&) = delete;
  HeatSource& operator=(const HeatSource&) = delete;

  // Opens `info` (available or not: the kernel decides) on every thread of
  // `pid`, enabled at once. 0 or -errno (of the first thread that fails for
  // a reason other than having exited; ESRCH if the process is gone).
  [[nodiscard]] int open(const HeatSourceInfo& info, pid_t pid, const HeatSourceOptions& opt);
  // Follows the threads created since open()/the last refresh() and marks
  // the ones that exited (their rings are drained once more, then closed).
  // Returns the number of threads newly followed, or -errno.
  [[nodiscard]] int refresh();
  void close();

  pid_t pid() const { return pid_; }
  // Threads followed; fd(i) is the ring fd to poll() for POLLIN (POLLHUP
  // once its thread exited).
  size_t threads() const { return streams_.size(); }
  int fd(size_t i) const { return streams_[i].fd; }
  pid_t tid(size_t i) const { return streams_[i].tid; }
  // The ring of thread i (to inspect or record it; drain() is the reader).
  const sys::PerfRing& ring(size_t i) const { return streams_[i].ring; }
  uint64_t period() const { return period_; }

  // Reads every ring: `fn(const PerfSample&)` for each sample parsed (at
  // most `max_records` records in all, bookkeeping records included, the
  // first ring read rotating from call to call); LOST
  // and THROTTLE records are counted in parser(). Returns the samples
  // delivered. A corrupt ring is skipped to its head and counted in
  // corrupt_rings(); records that do not parse count in parser().malformed().
  template <class Fn>
  long drain(Fn&& fn, size_t max_records = SIZE_MAX) {
    using F = std::remove_reference_t<Fn>;
    return drain_impl([](void* c, const PerfSample& s) { (*static_cast<F*>(c))(s); },
                      const_cast<void*>(static_cast<const void*>(&fn)), max_records);
  }

  // Sets every thread's sample period (clamped, aligned). -EINVAL for a
  // fixed-period source. 0 or the first -errno.
  [[nodiscard]] int set_period(uint64_t period);
  [[nodiscard]] int enable();
  [[nodiscard]] int disable();

  const PerfRecordParser& parser() const { return parser_; }
  uint64_t corrupt_rings() const { return corrupt_; }
  const HeatSourceInfo& info() const { return info_; }

 private:
  struct Stream {
    pid_t tid = 0;
    int fd = -1;
    int aux_fd = -1;
    int stores_fd = -1;
    bool gone = false;  // the thread exited: drain once more, then close
    sys::PerfRing ring;
  };
  using SampleFn = void (*)(void* ctx, const PerfSample& s);

  long drain_impl(SampleFn fn, void* ctx, size_t max_records);
  int open_thread(pid_t tid, Stream* out) const;
  static void close_stream(Stream* s);
  uint64_t fit_period(uint64_t period) const;

  HeatSourceInfo info_;
  HeatSourceOptions opt_;
  pid_t pid_ = 0;
  uint64_t period_ = 0;
  std::vector<Stream> streams_;
  PerfRecordParser parser_;
  uint64_t corrupt_ = 0;
  size_t next_ = 0;  // the ring drain() starts with
};

}  // namespace mtier
