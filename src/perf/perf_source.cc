// SPDX-License-Identifier: Apache-2.0
#include "perf/perf_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace mtier {
namespace {

constexpr const char* kNames[kHeatSourceKinds] = {"pebs", "ibs", "page-faults"};

// Defaults. PEBS: a prime period against aliasing with loop strides. IBS:
// ops between samples, a multiple of 16 within IbsOpMaxCnt's 16 bits << 4.
constexpr uint64_t kPebsDefaultPeriod = 10007;
constexpr uint64_t kPebsMinPeriod = 1000;
constexpr uint64_t kPebsMaxPeriod = 1ull << 30;
constexpr uint64_t kIbsDefaultPeriod = 0x10000;
constexpr uint64_t kIbsMinPeriod = 0x1000;
constexpr uint64_t kIbsMaxPeriod = 0xffff0;

std::string errno_text(int err) {
  char buf[128];
  return strerror_r(err, buf, sizeof(buf));  // the GNU variant returns the text
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The first line of a small sysfs file, trimmed. 0 or -errno.
int read_line(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  int err = errno;
  ::close(fd);
  if (n < 0) return -err;
  buf[n] = '\0';
  size_t len = strcspn(buf, "\n");
  while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\r')) len--;
  out->assign(buf, len);
  return 0;
}

// Parses an unsigned number (decimal or 0x-hex) that is all of `s`.
bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = strtoull(s.c_str(), &end, 0);
  if (errno != 0 || *end != '\0' || s[0] == '-') return false;
  *v = x;
  return true;
}

// Deposits `value` into the bit ranges of a format spec ("config1:0-15",
// "config:0-7,32-35"). 0 or -EINVAL.
int deposit(const std::string& spec, uint64_t value, perf_event_attr* attr) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos) return -EINVAL;
  std::string field = spec.substr(0, colon);
  __u64* dst;
  if (field == "config") {
    dst = &attr->config;
  } else if (field == "config1") {
    dst = &attr->config1;
  } else if (field == "config2") {
    dst = &attr->config2;
  } else {
    return -EINVAL;
  }
  uint64_t word = *dst;
  size_t pos = colon + 1;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string range = spec.substr(pos, comma - pos);
    size_t dash = range.find('-');
    uint64_t lo, hi;
    if (dash == std::string::npos) {
      if (!parse_u64(range, &lo)) return -EINVAL;
      hi = lo;
    } else if (!parse_u64(range.substr(0, dash), &lo) || !parse_u64(range.substr(dash + 1), &hi)) {
      return -EINVAL;
    }
    if (lo > hi || hi > 63) return -EINVAL;
    unsigned width = static_cast<unsigned>(hi - lo + 1);
    uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);
    word = (word & ~(mask << lo)) | ((value & mask) << lo);
    value = width == 64 ? 0 : value >> width;
    pos = comma + 1;
  }
  if (value != 0) return -EINVAL;  // more bits than the format has
  *dst = word;
  return 0;
}

std::string devices_dir(const std::string& root) { return root + "/bus/event_source/devices"; }

// The PMU type number from <pmu_dir>/type. 0 or -errno.
int read_type(const std::string& pmu_dir, uint32_t* type) {
  std::string line;
  int rc = read_line(pmu_dir + "/type", &line);
  if (rc < 0) return rc;
  uint64_t v;
  if (!parse_u64(line, &v) || v > UINT32_MAX) return -EINVAL;
  *type = static_cast<uint32_t>(v);
  return 0;
}

// Builds attr from <pmu_dir>/events/<event>. 0, or -errno with *reason.
int sysfs_event_attr(const std::string& pmu_dir, const char* event, perf_event_attr* attr,
                     std::string* reason) {
  std::string path = pmu_dir + "/events/" + event;
  std::string text;
  if (read_line(path, &text) < 0) {
    *reason = "no " + path;
    return -ENOENT;
  }
  uint32_t type;
  if (int rc = read_type(pmu_dir, &type); rc < 0) {
    *reason = "no PMU type in " + pmu_dir + "/type";
    return rc;
  }
  *attr = perf_event_attr{};
  attr->size = sizeof(*attr);
  attr->type = type;
  std::string err;
  if (int rc = apply_sysfs_event(pmu_dir, text, attr, &err); rc < 0) {
    *reason = path + ": " + err;
    return rc;
  }
  return 0;
}

void detect_pebs(const std::string& root, HeatSourceInfo* info) {
  // Hybrid parts (Alder Lake on) name the P-core PMU cpu_core.
  std::string pmu = devices_dir(root) + "/cpu";
  if (!exists(pmu) && exists(devices_dir(root) + "/cpu_core"))
    pmu = devices_dir(root) + "/cpu_core";
  if (!exists(pmu)) {
    info->reason = "no " + pmu;
    return;
  }
  if (sysfs_event_attr(pmu, "mem-loads", &info->attr, &info->reason) < 0) return;
  perf_event_attr& a = info->attr;
  a.precise_ip = 2;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT |
                  PERF_SAMPLE_DATA_SRC;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  std::string ignored;
  if (exists(pmu + "/events/mem-stores") &&
      sysfs_event_attr(pmu, "mem-stores", &info->stores_attr, &ignored) == 0) {
    perf_event_attr& s = info->stores_attr;
    s.precise_ip = 2;
    s.sample_type = a.sample_type;
    s.exclude_kernel = 1;
    s.exclude_hv = 1;
    info->has_stores = true;
  }
  if (exists(pmu + "/events/mem-loads-aux")) {
    if (sysfs_event_attr(pmu, "mem-loads-aux", &info->aux_attr, &info->reason) < 0) return;
    info->aux_attr.exclude_kernel = 1;
    info->aux_attr.exclude_hv = 1;
    info->needs_aux = true;
  }
  info->default_period = kPebsDefaultPeriod;
  info->min_period = kPebsMinPeriod;
  info->max_period = kPebsMaxPeriod;
  info->available = true;
}

void detect_ibs(const std::string& root, HeatSourceInfo* info) {
  std::string pmu = devices_dir(root) + "/ibs_op";
  if (!exists(pmu)) {
    info->reason = "no " + pmu;
    return;
  }
  perf_event_attr& a = info->attr;
  a.size = sizeof(a);
  uint32_t type;
  if (read_type(pmu, &type) < 0) {
    info->reason = "no PMU type in " + pmu + "/type";
    return;
  }
  a.type = type;
  a.config = 0;  // count cycles between samples (cnt_ctl=0)
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW;
  // IBS samples every privilege level; the kernel accepts exclude_kernel
  // only with its software filter (format "swfilt", config2:0, Linux 6.14),
  // and refuses it (EINVAL) otherwise. Kernel-mode samples then carry kernel
  // addresses, which attribution leaves unattributed.
  if (exists(pmu + "/format/swfilt")) {
    std::string err;
    if (apply_sysfs_event(pmu, "swfilt=1", &a, &err) == 0) {
      a.exclude_kernel = 1;
      a.exclude_hv = 1;
    }
  }
  info->default_period = kIbsDefaultPeriod;
  info->min_period = kIbsMinPeriod;
  info->max_period = kIbsMaxPeriod;
  info->period_align = 16;
  info->ibs_raw = true;
  info->available = true;
}

void detect_page_faults(const std::string& root, HeatSourceInfo* info) {
  std::string pmu = devices_dir(root) + "/software";
  if (!exists(pmu)) {
    info->reason = "no " + pmu;
    return;
  }
  perf_event_attr& a = info->attr;
  a.size = sizeof(a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_PAGE_FAULTS;
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_TIME;
  // User-mode faults only: that is what the sampler's zapped PTEs produce,
  // and it needs no more than ptrace access at perf_event_paranoid 2.
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  info->default_period = info->min_period = info->max_period = 1;
  info->fixed_period = true;
  info->available = true;
}

// Opens the source's event group on the calling process and closes it.
// 0 or -errno.
int try_open_self(const HeatSourceInfo& info) {
  int aux = -1;
  if (info.needs_aux) {
    aux = sys::perf_open(info.aux_attr, 0, -1, -1, 0);
    if (aux < 0) return aux;
  }
  perf_event_attr a = info.attr;
  a.sample_period = info.default_period;
  a.disabled = 1;
  int fd = sys::perf_open(a, 0, -1, aux, 0);
  if (aux >= 0) ::close(aux);
  if (fd < 0) return fd;
  ::close(fd);
  return 0;
}

// The thread ids of `pid` from /proc/PID/task, sorted. 0 or -errno (ESRCH
// when the process is gone).
int list_threads(pid_t pid, std::vector<pid_t>* tids) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task", static_cast<int>(pid));
  DIR* dir = opendir(path);
  if (!dir) return errno == ENOENT ? -ESRCH : -errno;
  tids->clear();
  while (struct dirent* e = readdir(dir)) {
    char* end;
    long t = strtol(e->d_name, &end, 10);
    if (*end == '\0' && t > 0) tids->push_back(static_cast<pid_t>(t));
  }
  closedir(dir);
  std::sort(tids->begin(), tids->end());
  return 0;
}

}  // namespace

const char* heat_source_name(HeatSourceKind kind) {
  int i = static_cast<int>(kind);
  return i >= 0 && i < kHeatSourceKinds ? kNames[i] : "?";
}

int heat_source_parse(const char* name, HeatSourceKind* kind) {
  for (int i = 0; i < kHeatSourceKinds; i++) {
    if (strcmp(name, kNames[i]) == 0) {
      *kind = static_cast<HeatSourceKind>(i);
      return 0;
    }
  }
  return -EINVAL;
}

int apply_sysfs_event(const std::string& pmu_dir, const std::string& event, perf_event_attr* attr,
                      std::string* err) {
  perf_event_attr a = *attr;
  size_t pos = 0;
  while (pos < event.size()) {
    size_t comma = event.find(',', pos);
    if (comma == std::string::npos) comma = event.size();
    std::string term = event.substr(pos, comma - pos);
    pos = comma + 1;
    if (term.empty()) continue;
    size_t eq = term.find('=');
    std::string name = term.substr(0, eq);
    uint64_t value = 1;
    if (eq != std::string::npos && !parse_u64(term.substr(eq + 1), &value)) {
      *err = "bad value in \"" + term + "\"";
      return -EINVAL;
    }
    std::string spec;
    if (read_line(pmu_dir + "/format/" + name, &spec) < 0) {
      *err = "no format for term \"" + name + "\"";
      return -ENOENT;
    }
    if (deposit(spec, value, &a) < 0) {
      *err = "term \"" + term + "\" does not fit format \"" + spec + "\"";
      return -EINVAL;
    }
  }
  *attr = a;
  return 0;
}

HeatSourceInfo detect_source(HeatSourceKind kind, const std::string& sysfs_root, bool try_open) {
  HeatSourceInfo info;
  info.kind = kind;
  switch (kind) {
    case HeatSourceKind::kPebs:
      detect_pebs(sysfs_root, &info);
      break;
    case HeatSourceKind::kIbs:
      detect_ibs(sysfs_root, &info);
      break;
    case HeatSourceKind::kPageFaults:
      detect_page_faults(sysfs_root, &info);
      break;
  }
  if (info.available && try_open) {
    if (int rc = try_open_self(info); rc < 0) {
      info.available = false;
      info.reason = "perf_event_open: " + errno_text(-rc);
    }
  }
  return info;
}

std::vector<HeatSourceInfo> detect_sources(const std::string& sysfs_root, bool try_open) {
  std::vector<HeatSourceInfo> out;
  for (int i = 0; i < kHeatSourceKinds; i++)
    out.push_back(detect_source(static_cast<HeatSourceKind>(i), sysfs_root, try_open));
  return out;
}

uint64_t HeatSource::fit_period(uint64_t period) const {
  if (info_.fixed_period) return info_.default_period;
  if (period == 0) period = info_.default_period;
  period = std::clamp(period, info_.min_period, info_.max_period);
  if (info_.period_align > 1) {
    period -= period % info_.period_align;
    if (period < info_.min_period) period += info_.period_align;
  }
  return period;
}

int HeatSource::open_thread(pid_t tid, Stream* out) const {
  Stream s;
  s.tid = tid;
  int rc = 0;
  perf_event_attr a = info_.attr;
  a.size = sizeof(a);
  a.sample_period = period_;
  a.disabled = 0;
  a.inherit = 0;  // see the class comment: no mmap for per-task inherit
  // Wake poll() on a byte watermark, not per event: at period 1 a wakeup
  // per sample would cost more than the sample.
  const size_t data_bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE)) << opt_.ring_pages_log2;
  a.watermark = 1;
  a.wakeup_watermark = static_cast<uint32_t>(
      opt_.wakeup_bytes && opt_.wakeup_bytes < data_bytes ? opt_.wakeup_bytes : data_bytes / 4);
  if (info_.needs_aux) {
    s.aux_fd = sys::perf_open(info_.aux_attr, tid, -1, -1, 0);
    if (s.aux_fd < 0) return s.aux_fd;
  }
  s.fd = sys::perf_open(a, tid, -1, s.aux_fd, 0);
  if (s.fd < 0) {
    rc = s.fd;
    close_stream(&s);
    return rc;
  }
  if ((rc = s.ring.map(s.fd, opt_.ring_pages_log2)) < 0) {
    close_stream(&s);
    return rc;
  }
  if (info_.has_stores) {
    perf_event_attr st = info_.stores_attr;
    st.size = sizeof(st);
    st.sample_period = period_;
    st.disabled = 0;
    s.stores_fd = sys::perf_open(st, tid, -1, s.aux_fd >= 0 ? s.aux_fd : s.fd, 0);
    if (s.stores_fd < 0 || (rc = sys::perf_set_output(s.stores_fd, s.fd)) < 0) {
      rc = s.stores_fd < 0 ? s.stores_fd : rc;
      close_stream(&s);
      return rc;
    }
  }
  *out = std::move(s);
  return 0;
}

void HeatSource::close_stream(Stream* s) {
  s->ring.reset();
  if (s->stores_fd >= 0) ::close(s->stores_fd);
  if (s->fd >= 0) ::close(s->fd);
  if (s->aux_fd >= 0) ::close(s->aux_fd);
  s->stores_fd = s->fd = s->aux_fd = -1;
}

int HeatSource::open(const HeatSourceInfo& info, pid_t pid, const HeatSourceOptions& opt) {
  close();
  if (opt.ring_pages_log2 > 16) return -EINVAL;
  if (int rc = parser_.configure(info.attr.sample_type, info.ibs_raw); rc < 0) return rc;
  info_ = info;
  opt_ = opt;
  pid_ = pid;
  period_ = fit_period(opt.period);
  int rc = refresh();
  if (rc < 0) {
    close();
    return rc;
  }
  if (streams_.empty()) {
    close();
    return -ESRCH;
  }
  return 0;
}

int HeatSource::refresh() {
  if (pid_ <= 0) return -EINVAL;
  int added = 0;
  std::vector<pid_t> tids;
  // Threads can start while we open: scan again until a scan finds nothing
  // new (bounded; what is still missed is picked up by the next refresh).
  for (int round = 0; round < 8; round++) {
    int rc = list_threads(pid_, &tids);
    if (rc < 0) return rc;
    int added_now = 0;
    for (pid_t t : tids) {
      bool known = std::any_of(streams_.begin(), streams_.end(),
                               [t](const Stream& s) { return s.tid == t && !s.gone; });
      if (known) continue;
      Stream s;
      rc = open_thread(t, &s);
      if (rc == -ESRCH) continue;  // exited between the scan and the open
      if (rc < 0) return rc;
      streams_.push_back(std::move(s));
      added_now++;
    }
    added += added_now;
    if (added_now == 0) break;
  }
  for (Stream& s : streams_) {
    if (!std::binary_search(tids.begin(), tids.end(), s.tid)) s.gone = true;
  }
  return added;
}

void HeatSource::close() {
  for (Stream& s : streams_) close_stream(&s);
  streams_.clear();
  pid_ = 0;
}

long HeatSource::drain_impl(SampleFn fn, void* ctx, size_t max_records) {
  long delivered = 0;
  size_t budget = max_records;
  // Start one ring further each call, so that a small budget is shared.
  const size_t n_streams = streams_.size();
  if (n_streams > 0) next_ = (next_ + 1) % n_streams;
  for (size_t k = 0; k < n_streams && budget > 0; k++) {
    Stream& s = streams_[(next_ + k) % n_streams];
    auto visit = [&](const perf_event_header* rec) {
      PerfSample sample;
      if (parser_.parse(rec, &sample) == PerfRecordParser::kSample) {
        fn(ctx, sample);
        delivered++;
      }
      return true;
    };
    long n = s.ring.for_each(visit, budget);
    if (n == -EBADMSG) {
      corrupt_++;
    } else if (n > 0) {
      budget -= static_cast<size_t>(n);
    }
  }
  // Threads that exited: their last records are read above; close them.
  for (size_t i = 0; i < streams_.size();) {
    if (streams_[i].gone && streams_[i].ring.pending() == 0) {
      close_stream(&streams_[i]);
      streams_.erase(streams_.begin() + static_cast<long>(i));
    } else {
      i++;
    }
  }
  return delivered;
}

int HeatSource::set_period(uint64_t period) {
  if (info_.fixed_period) return -EINVAL;
  uint64_t p = fit_period(period);
  int first = 0;
  for (Stream& s : streams_) {
    int rc = sys::perf_set_period(s.fd, p);
    if (rc == 0 && s.stores_fd >= 0) rc = sys::perf_set_period(s.stores_fd, p);
    if (rc < 0 && rc != -ESRCH && first == 0) first = rc;
  }
  period_ = p;
  return first;
}

int HeatSource::enable() {
  int first = 0;
  for (Stream& s : streams_) {
    // The group leader and its members (the aux event leads PEBS groups,
    // mem-stores is a member).
    int leader = s.aux_fd >= 0 ? s.aux_fd : s.fd;
    int rc = sys::perf_enable(leader, true);
    if (rc < 0 && first == 0) first = rc;
  }
  return first;
}

int HeatSource::disable() {
  int first = 0;
  for (Stream& s : streams_) {
    int leader = s.aux_fd >= 0 ? s.aux_fd : s.fd;
    int rc = sys::perf_disable(leader, true);
    if (rc < 0 && first == 0) first = rc;
  }
  return first;
}

}  // namespace mtier
