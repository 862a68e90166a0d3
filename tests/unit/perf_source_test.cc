// SPDX-License-Identifier: Apache-2.0
// Heat source detection against fixture sysfs trees (Intel PEBS, AMD IBS, a
// machine with neither) and on this machine; the sysfs event-string parser;
// a LIVE page-faults source on a forked child whose threads fault a known
// 4 MiB range; and a ring recorded from such a run
// (testdata/perf-pagefaults.ring, made by the DISABLED_ recorder below).
#include "perf/perf_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "perf/perf_record.h"
#include "sys/perf.h"

#ifndef MTIER_SRCDIR
#error "MTIER_SRCDIR must name the source tree (for tests/unit/testdata)"
#endif

namespace mtier {
namespace {

std::string fixture(const char* name) {
  return std::string(MTIER_SRCDIR) + "/tests/unit/testdata/" + name;
}

HeatSourceInfo detect_fixture(const char* tree, HeatSourceKind kind) {
  return detect_source(kind, fixture(tree), /*try_open=*/false);
}

// A mkdtemp directory of sysfs-like files, removed with everything in it.
class TempTree {
 public:
  TempTree() {
    char tmpl[] = "/tmp/mtier-perf-sysfs-XXXXXX";
    if (mkdtemp(tmpl)) path_ = tmpl;
  }
  ~TempTree() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Writes `text` + "\n" to path()/rel, making the directories.
  void file(const std::string& rel, const std::string& text) {
    std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << p;
    std::string line = text + "\n";
    ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    close(fd);
  }

 private:
  std::string path_;
};

const std::string kDev = "bus/event_source/devices/";

// ---- detection on fixtures ----

TEST(HeatSourceDetect, IntelHasPebs) {
  HeatSourceInfo p = detect_fixture("perf-sysfs-intel", HeatSourceKind::kPebs);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_EQ(p.attr.type, 4u);
  EXPECT_EQ(p.attr.config, 0x1cdu);  // event 0xcd, umask 0x1 << 8
  EXPECT_EQ(p.attr.config1, 3u);     // ldlat
  EXPECT_EQ(p.attr.precise_ip, 2u);
  EXPECT_EQ(p.attr.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR |
                                         PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC});
  EXPECT_TRUE(p.attr.exclude_kernel);
  EXPECT_TRUE(p.has_stores);
  EXPECT_EQ(p.stores_attr.config, 0x82d0u);
  EXPECT_EQ(p.stores_attr.config1, 0u);
  EXPECT_FALSE(p.needs_aux);
  EXPECT_FALSE(p.fixed_period);
  EXPECT_FALSE(p.ibs_raw);
  EXPECT_LE(p.min_period, p.default_period);
  EXPECT_LE(p.default_period, p.max_period);

  HeatSourceInfo i = detect_fixture("perf-sysfs-intel", HeatSourceKind::kIbs);
  EXPECT_FALSE(i.available);
  EXPECT_EQ(i.reason, "no " + fixture("perf-sysfs-intel") + "/" + kDev + "ibs_op");
  EXPECT_TRUE(detect_fixture("perf-sysfs-intel", HeatSourceKind::kPageFaults).available);
}

TEST(HeatSourceDetect, AmdHasIbsNotPebs) {
  HeatSourceInfo p = detect_fixture("perf-sysfs-amd", HeatSourceKind::kPebs);
  EXPECT_FALSE(p.available);
  EXPECT_EQ(p.reason, "no " + fixture("perf-sysfs-amd") + "/" + kDev + "cpu/events/mem-loads");

  HeatSourceInfo i = detect_fixture("perf-sysfs-amd", HeatSourceKind::kIbs);
  ASSERT_TRUE(i.available) << i.reason;
  EXPECT_EQ(i.attr.type, 11u);
  EXPECT_EQ(i.attr.config, 0u);
  EXPECT_EQ(i.attr.sample_type,
            uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW});
  EXPECT_TRUE(i.ibs_raw);
  EXPECT_EQ(i.period_align, 16u);
  EXPECT_EQ(i.default_period % 16, 0u);
  // No swfilt in this tree: the kernel would refuse exclude_kernel.
  EXPECT_FALSE(i.attr.exclude_kernel);
  EXPECT_TRUE(detect_fixture("perf-sysfs-amd", HeatSourceKind::kPageFaults).available);
}

TEST(HeatSourceDetect, NoPmuOnlyPageFaults) {
  std::string root = fixture("perf-sysfs-none");
  std::vector<HeatSourceInfo> all = detect_sources(root, false);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_FALSE(all[0].available);
  EXPECT_EQ(all[0].reason, "no " + root + "/" + kDev + "cpu");
  EXPECT_FALSE(all[1].available);
  EXPECT_EQ(all[1].reason, "no " + root + "/" + kDev + "ibs_op");
  ASSERT_TRUE(all[2].available) << all[2].reason;
  const perf_event_attr& a = all[2].attr;
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(a.config, uint64_t{PERF_COUNT_SW_PAGE_FAULTS});
  EXPECT_EQ(a.sample_type, uint64_t{PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_TIME});
  EXPECT_TRUE(all[2].fixed_period);
  EXPECT_EQ(all[2].default_period, 1u);
}

TEST(HeatSourceDetect, NoSysfsAtAll) {
  std::vector<HeatSourceInfo> all = detect_sources("/nonexistent-sysfs", false);
  for (const HeatSourceInfo& i : all) {
    EXPECT_FALSE(i.available) << heat_source_name(i.kind);
    EXPECT_EQ(i.reason.rfind("no /nonexistent-sysfs/", 0), 0u) << i.reason;
  }
}

TEST(HeatSourceDetect, SapphireRapidsNeedsTheAuxLeader) {
  TempTree t;
  t.file(kDev + "cpu/type", "4");
  t.file(kDev + "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3");
  t.file(kDev + "cpu/events/mem-loads-aux", "event=0x03,umask=0x82");
  t.file(kDev + "cpu/format/event", "config:0-7");
  t.file(kDev + "cpu/format/umask", "config:8-15");
  t.file(kDev + "cpu/format/ldlat", "config1:0-15");
  HeatSourceInfo p = detect_source(HeatSourceKind::kPebs, t.path(), false);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_TRUE(p.needs_aux);
  EXPECT_EQ(p.aux_attr.type, 4u);
  EXPECT_EQ(p.aux_attr.config, 0x8203u);
  EXPECT_EQ(p.aux_attr.sample_period, 0u);  // counts, never samples
  EXPECT_FALSE(p.has_stores);
}

TEST(HeatSourceDetect, HybridUsesCpuCore) {
  TempTree t;
  t.file(kDev + "cpu_core/type", "8");
  t.file(kDev + "cpu_core/events/mem-loads", "event=0xd0,umask=0x5,ldlat=3");
  t.file(kDev + "cpu_core/format/event", "config:0-7");
  t.file(kDev + "cpu_core/format/umask", "config:8-15");
  t.file(kDev + "cpu_core/format/ldlat", "config1:0-15");
  t.file(kDev + "cpu_atom/type", "10");
  HeatSourceInfo p = detect_source(HeatSourceKind::kPebs, t.path(), false);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_EQ(p.attr.type, 8u);
  EXPECT_EQ(p.attr.config, 0x5d0u);
}

TEST(HeatSourceDetect, IbsSoftwareFilterAllowsExcludeKernel) {
  TempTree t;
  t.file(kDev + "ibs_op/type", "11");
  t.file(kDev + "ibs_op/format/swfilt", "config2:0");
  HeatSourceInfo i = detect_source(HeatSourceKind::kIbs, t.path(), false);
  ASSERT_TRUE(i.available) << i.reason;
  EXPECT_EQ(i.attr.config2, 1u);
  EXPECT_TRUE(i.attr.exclude_kernel);
}

TEST(HeatSourceDetect, BrokenTreesSayWhy) {
  TempTree t;
  t.file(kDev + "cpu/type", "4");
  t.file(kDev + "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3");
  t.file(kDev + "cpu/format/event", "config:0-7");
  t.file(kDev + "cpu/format/umask", "config:8-15");     // no ldlat format
  t.file(kDev + "ibs_op/format/cnt_ctl", "config:19");  // no type
  HeatSourceInfo p = detect_source(HeatSourceKind::kPebs, t.path(), false);
  EXPECT_FALSE(p.available);
  EXPECT_NE(p.reason.find("no format for term \"ldlat\""), std::string::npos) << p.reason;
  HeatSourceInfo i = detect_source(HeatSourceKind::kIbs, t.path(), false);
  EXPECT_FALSE(i.available);
  EXPECT_NE(i.reason.find("no PMU type"), std::string::npos) << i.reason;
}

TEST(HeatSourceDetect, NamesRoundTrip) {
  for (int k = 0; k < kHeatSourceKinds; k++) {
    HeatSourceKind kind;
    ASSERT_EQ(heat_source_parse(heat_source_name(HeatSourceKind(k)), &kind), 0);
    EXPECT_EQ(kind, HeatSourceKind(k));
  }
  HeatSourceKind kind;
  EXPECT_EQ(heat_source_parse("pebs", &kind), 0);
  EXPECT_EQ(kind, HeatSourceKind::kPebs);
  EXPECT_EQ(heat_source_parse("page-faults", &kind), 0);
  EXPECT_EQ(heat_source_parse("ibs_op", &kind), -EINVAL);
}

// ---- the event-string parser ----

TEST(SysfsEvent, SplitRangesBareTermsAndErrors) {
  TempTree t;
  t.file("pmu/format/event", "config:0-7,32-35");  // AMD core PMU style
  t.file("pmu/format/umask", "config:8-15");
  t.file("pmu/format/edge", "config:18");
  t.file("pmu/format/ldlat", "config1:0-15");
  t.file("pmu/format/bad", "config9:0-3");
  const std::string pmu = t.path() + "/pmu";
  perf_event_attr a{};
  std::string err;
  ASSERT_EQ(apply_sysfs_event(pmu, "event=0x1d6,umask=0x3,edge", &a, &err), 0) << err;
  EXPECT_EQ(a.config, 0x1000000d6ull | (0x3ull << 8) | (1ull << 18));
  ASSERT_EQ(apply_sysfs_event(pmu, "ldlat=30", &a, &err), 0) << err;
  EXPECT_EQ(a.config1, 30u);
  perf_event_attr before = a;
  EXPECT_EQ(apply_sysfs_event(pmu, "umask=0x1ff", &a, &err), -EINVAL);  // 9 bits into 8
  EXPECT_NE(err.find("umask"), std::string::npos);
  EXPECT_EQ(apply_sysfs_event(pmu, "ldlat=?", &a, &err), -EINVAL);
  EXPECT_EQ(apply_sysfs_event(pmu, "event=0x1,nosuch=1", &a, &err), -ENOENT);
  EXPECT_EQ(apply_sysfs_event(pmu, "bad=1", &a, &err), -EINVAL);
  EXPECT_EQ(memcmp(&a, &before, sizeof(a)), 0);  // failures change nothing
}

// ---- this machine ----

TEST(HeatSourceDetect, ThisMachine) {
  // Prints what this machine offers; each unavailable source says why.
  for (const HeatSourceInfo& i : detect_sources()) {
    printf("  %-12s %s%s\n", heat_source_name(i.kind),
           i.available ? "available" : "unavailable: ", i.reason.c_str());
    if (!i.available) {
      EXPECT_FALSE(i.reason.empty());
    }
  }
}

// ---- live: page-faults on a child's threads ----

constexpr size_t kPage = 4096;
constexpr size_t kRangePages = 1024;  // 4 MiB
constexpr size_t kRangeBytes = kRangePages * kPage;
constexpr int kPasses = 3;

enum : uint32_t { kMsgReady = 1, kMsgThreadC = 2, kMsgDone = 3 };
struct Msg {
  uint32_t kind;
  int32_t tid[2];
  uint64_t base;
};

struct ChildState {
  char* base = nullptr;
  pthread_barrier_t hello, start, end;
  std::atomic<int> pass{0};
  std::atomic<pid_t> tid[3] = {};
  sem_t c_ready, c_go, idle;
};

ChildState* g_child = nullptr;

void touch(int pass_parity) {
  // Writes one byte in every page whose index has the given parity; every
  // write faults (the range was MADV_DONTNEED'ed before the pass).
  for (size_t i = 0; i < kRangePages; i++) {
    if (static_cast<int>(i % 2) == pass_parity) g_child->base[i * kPage] = static_cast<char>(i);
  }
}

void* toucher(void* arg) {
  const int idx = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  g_child->tid[idx] = gettid();
  pthread_barrier_wait(&g_child->hello);
  for (int pass = 0; pass < kPasses; pass++) {
    pthread_barrier_wait(&g_child->start);
    touch((idx + pass) % 2);  // over two passes each thread touches every page
    pthread_barrier_wait(&g_child->end);
  }
  sem_wait(&g_child->idle);  // stay alive (never posted): _exit ends us
  return nullptr;
}

void* late_toucher(void*) {
  g_child->tid[2] = gettid();
  sem_post(&g_child->c_ready);
  sem_wait(&g_child->c_go);
  touch(0);
  touch(1);
  return nullptr;
}

bool send_msg(int fd, const Msg& m) { return write(fd, &m, sizeof(m)) == sizeof(m); }

// The child: two threads fault the range in kPasses passes after the
// parent's go; then (with_late) a third thread, started after the parent
// opened the source, faults it once more. Never returns.
[[noreturn]] void child_main(int to_parent, int from_parent, bool with_late) {
  static ChildState st;
  g_child = &st;
  void* m = mmap(nullptr, kRangeBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) _exit(10);
  st.base = static_cast<char*>(m);
  pthread_barrier_init(&st.hello, nullptr, 3);
  pthread_barrier_init(&st.start, nullptr, 3);
  pthread_barrier_init(&st.end, nullptr, 3);
  sem_init(&st.c_ready, 0, 0);
  sem_init(&st.c_go, 0, 0);
  sem_init(&st.idle, 0, 0);
  pthread_t a, b, c;
  if (pthread_create(&a, nullptr, toucher, reinterpret_cast<void*>(intptr_t{0})) != 0 ||
      pthread_create(&b, nullptr, toucher, reinterpret_cast<void*>(intptr_t{1})) != 0)
    _exit(11);
  pthread_barrier_wait(&st.hello);
  if (!send_msg(to_parent, Msg{kMsgReady, {st.tid[0], st.tid[1]}, reinterpret_cast<uint64_t>(m)}))
    _exit(12);
  char go;
  if (read(from_parent, &go, 1) != 1) _exit(13);
  for (int pass = 0; pass < kPasses; pass++) {
    madvise(m, kRangeBytes, MADV_DONTNEED);
    st.pass = pass;
    pthread_barrier_wait(&st.start);
    pthread_barrier_wait(&st.end);
  }
  if (with_late) {
    madvise(m, kRangeBytes, MADV_DONTNEED);
    if (pthread_create(&c, nullptr, late_toucher, nullptr) != 0) _exit(14);
    sem_wait(&st.c_ready);
    if (!send_msg(to_parent, Msg{kMsgThreadC, {st.tid[2], 0}, 0})) _exit(15);
    if (read(from_parent, &go, 1) != 1) _exit(16);
    sem_post(&st.c_go);
    pthread_join(c, nullptr);
  }
  if (!send_msg(to_parent, Msg{kMsgDone, {0, 0}, 0})) _exit(17);
  (void)!read(from_parent, &go, 1);  // the parent's bye, or EOF
  _exit(0);
}

// Kills and reaps the child if a test ends early.
struct Child {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
  ~Child() {
    if (to_child >= 0) close(to_child);
    if (from_child >= 0) close(from_child);
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // Closes the pipe (the child's bye) and waits for a clean exit.
  int finish() {
    close(to_child);
    to_child = -1;
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

bool read_msg(int fd, Msg* m) { return read(fd, m, sizeof(*m)) == sizeof(*m); }

struct LiveResult {
  uint64_t base = 0;
  pid_t child = 0;
  pid_t tid[3] = {};
  std::vector<PerfSample> samples;
  size_t threads_at_open = 0;
  int refreshed = -1;
};

// Fills *info with the page-faults source of this machine; skips the
// calling test (GTEST_SKIP, saying why) when perf_event_open refuses it with
// EACCES/EPERM (perf_event_paranoid) or ENOENT (no software perf events),
// fails it on any other error.
void page_faults_or_skip(HeatSourceInfo* info) {
  *info = detect_source(HeatSourceKind::kPageFaults, "/sys", false);
  ASSERT_TRUE(info->available) << "no page-faults source in /sys: " << info->reason;
  perf_event_attr a = info->attr;
  a.sample_period = 1;
  a.disabled = 1;
  int fd = sys::perf_open(a, 0, -1, -1, 0);
  if (fd == -EACCES || fd == -EPERM || fd == -ENOENT) {
    GTEST_SKIP() << "perf_event_open(PERF_COUNT_SW_PAGE_FAULTS) fails here with " << strerror(-fd)
                 << (fd == -ENOENT ? " (kernel without software perf events)"
                                   : " (perf_event_paranoid / missing CAP_PERFMON)");
  }
  ASSERT_GE(fd, 0) << "perf_event_open(page-faults): " << strerror(-fd);
  close(fd);
}

// Forks the child, opens `info` on it, lets it run, and collects the
// samples. `budget`: records drained per poll round (small to keep rings
// full when recording). `at_done` runs when the child reports done, before
// the final drain.
void run_live(const HeatSourceInfo& info, const HeatSourceOptions& opt, bool with_late,
              size_t budget, HeatSource* src, LiveResult* out,
              const std::function<void()>& at_done = {}) {
  int up[2], down[2];
  ASSERT_EQ(pipe2(up, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(down, O_CLOEXEC), 0);
  fflush(stdout);
  Child child;
  child.pid = fork();
  ASSERT_GE(child.pid, 0);
  if (child.pid == 0) {
    close(up[0]);
    close(down[1]);
    child_main(up[1], down[0], with_late);
  }
  close(up[1]);
  close(down[0]);
  child.from_child = up[0];
  child.to_child = down[1];
  out->child = child.pid;

  Msg m;
  ASSERT_TRUE(read_msg(child.from_child, &m));
  ASSERT_EQ(m.kind, kMsgReady);
  out->base = m.base;
  out->tid[0] = m.tid[0];
  out->tid[1] = m.tid[1];

  int rc = src->open(info, child.pid, opt);
  if (rc == -EACCES || rc == -EPERM)
    GTEST_SKIP() << "cannot open perf events on a child: " << strerror(-rc);
  ASSERT_EQ(rc, 0) << strerror(-rc);
  out->threads_at_open = src->threads();
  ASSERT_EQ(write(child.to_child, "g", 1), 1);

  auto collect = [&](const PerfSample& s) { out->samples.push_back(s); };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool done = false;
  while (!done) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "child did not finish";
    std::vector<pollfd> fds;
    fds.push_back({child.from_child, POLLIN, 0});
    for (size_t i = 0; i < src->threads(); i++) fds.push_back({src->fd(i), POLLIN, 0});
    ASSERT_GE(poll(fds.data(), fds.size(), budget == SIZE_MAX ? 100 : 1), 0);
    ASSERT_GE(src->drain(collect, budget), 0);
    if (fds[0].revents & POLLIN) {
      ASSERT_TRUE(read_msg(child.from_child, &m));
      if (m.kind == kMsgThreadC) {
        out->tid[2] = m.tid[0];
        out->refreshed = src->refresh();
        ASSERT_EQ(write(child.to_child, "g", 1), 1);
      } else {
        ASSERT_EQ(m.kind, kMsgDone);
        done = true;
      }
    }
  }
  if (at_done) at_done();
  ASSERT_GE(src->drain(collect), 0);
  int status = child.finish();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST(HeatSourceLive, PageFaultsFromEveryThreadOfAChild) {
  HeatSourceInfo info;
  ASSERT_NO_FATAL_FAILURE(page_faults_or_skip(&info));
  if (IsSkipped()) return;
  HeatSource src;
  LiveResult r;
  HeatSourceOptions opt;
  opt.ring_pages_log2 = 6;  // 256 KiB per thread
  ASSERT_NO_FATAL_FAILURE(run_live(info, opt, /*with_late=*/true, SIZE_MAX, &src, &r));
  if (IsSkipped()) return;

  // The child had its main thread and the two touchers when opened; the late
  // thread was picked up by refresh().
  EXPECT_EQ(r.threads_at_open, 3u);
  EXPECT_EQ(r.refreshed, 1);
  std::set<size_t> pages[3];
  size_t outside = 0;
  for (const PerfSample& s : r.samples) {
    EXPECT_EQ(s.pid, static_cast<uint32_t>(r.child));
    ASSERT_TRUE(s.has_addr);
    EXPECT_NE(s.time, 0u);
    if (s.addr < r.base || s.addr >= r.base + kRangeBytes) {
      outside++;  // the child's own stack, libc, ...
      continue;
    }
    for (int t = 0; t < 3; t++) {
      if (s.tid == static_cast<uint32_t>(r.tid[t])) pages[t].insert((s.addr - r.base) / kPage);
    }
  }
  std::set<size_t> ab(pages[0]);
  ab.insert(pages[1].begin(), pages[1].end());
  printf(
      "  %zu samples (%zu outside the range), pages seen: A %zu, B %zu, A|B %zu, late %zu; "
      "lost %llu\n",
      r.samples.size(), outside, pages[0].size(), pages[1].size(), ab.size(), pages[2].size(),
      static_cast<unsigned long long>(src.parser().lost()));
  // Every page faults here (1024 of 1024 on 6.18); inside the QEMU machine
  // (Debian's 6.1 under TCG) only about half of them did (514 of 1024, every
  // thread alike), so the bound is half: what must hold is that each
  // thread's faults, the late one's too, arrive with addresses in the range.
  EXPECT_GE(ab.size(), kRangePages / 2);
  EXPECT_GE(pages[0].size(), kRangePages / 2) << "thread A's samples";
  EXPECT_GE(pages[1].size(), kRangePages / 2) << "thread B's samples";
  EXPECT_GE(pages[2].size(), kRangePages / 2) << "the thread started after open";
  EXPECT_EQ(src.parser().malformed(), 0u);
  EXPECT_EQ(src.corrupt_rings(), 0u);
  EXPECT_EQ(src.period(), 1u);
  EXPECT_EQ(src.set_period(100), -EINVAL);  // page-faults: fixed period
}

TEST(HeatSourceLive, ExitedThreadsAreDroppedAfterTheirLastRecords) {
  HeatSourceInfo info;
  ASSERT_NO_FATAL_FAILURE(page_faults_or_skip(&info));
  if (IsSkipped()) return;
  HeatSource src;
  LiveResult r;
  HeatSourceOptions opt;
  size_t before = 0, after = 0;
  // At done the late thread has exited: refresh marks it, drain closes it.
  ASSERT_NO_FATAL_FAILURE(run_live(info, opt, true, SIZE_MAX, &src, &r, [&] {
    before = src.threads();
    EXPECT_EQ(src.refresh(), 0);
    long n = src.drain([](const PerfSample&) {});
    EXPECT_GE(n, 0);
    after = src.threads();
  }));
  if (IsSkipped()) return;
  EXPECT_EQ(before, 4u);
  EXPECT_EQ(after, 3u);
}

// ---- the recorded ring ----

// testdata/perf-pagefaults.ring: one page-faults ring captured live by
// DISABLED_RecordPageFaultRing, as it stood when the child finished (the
// reader had drained slowly, so the unread span wraps round the end).
// Little-endian:
//   char     magic[8]     "MTRING1\0"
//   uint64_t sample_type  of the event (TID|TIME|ADDR)
//   uint64_t data_size    bytes of the data area that follows the header
//   uint64_t head         data_head at capture
//   uint64_t tail         data_tail at capture
//   uint64_t range_base   the 4 MiB range the child's threads faulted
//   uint64_t range_bytes
//   uint64_t tid          the thread whose ring this is
//   data area, data_size bytes (offset = counter % data_size)
struct RingFileHeader {
  char magic[8];
  uint64_t sample_type, data_size, head, tail, range_base, range_bytes, tid;
};
static_assert(sizeof(RingFileHeader) == 64);
constexpr char kRingMagic[8] = {'M', 'T', 'R', 'I', 'N', 'G', '1', '\0'};

std::string ring_file() { return fixture("perf-pagefaults.ring"); }

TEST(RecordedRing, ParsesAndAddressesFallInTheRange) {
  int fd = open(ring_file().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << ring_file() << ": " << strerror(errno);
  RingFileHeader h;
  ASSERT_EQ(read(fd, &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
  ASSERT_EQ(memcmp(h.magic, kRingMagic, 8), 0);
  ASSERT_TRUE(h.data_size >= 4096 && h.data_size <= (1u << 20) &&
              (h.data_size & (h.data_size - 1)) == 0);
  ASSERT_LE(h.head - h.tail, h.data_size);
  // Rebuild the ring: a zeroed control page with the recorded head/tail.
  std::vector<uint64_t> block((4096 + h.data_size) / 8);
  auto* bytes = reinterpret_cast<uint8_t*>(block.data());
  ASSERT_EQ(read(fd, bytes + 4096, h.data_size), static_cast<ssize_t>(h.data_size));
  close(fd);
  auto* ctl = reinterpret_cast<perf_event_mmap_page*>(bytes);
  ctl->data_head = h.head;
  ctl->data_tail = h.tail;
  sys::PerfRing ring;
  ASSERT_EQ(ring.attach(block.data(), 4096, h.data_size), 0);
  // The capture is a wrapping one: the unread span crosses the end.
  EXPECT_GT(h.tail % h.data_size + (h.head - h.tail), h.data_size);

  PerfRecordParser p;
  ASSERT_EQ(p.configure(h.sample_type, false), 0);
  size_t samples = 0, in_range = 0;
  std::set<uint64_t> pages;
  uint64_t last_time = 0;
  long n = ring.for_each([&](const perf_event_header* rec) {
    PerfSample s;
    int kind = p.parse(rec, &s);
    EXPECT_GE(kind, 0);
    if (kind != PerfRecordParser::kSample) return true;
    samples++;
    EXPECT_EQ(s.tid, h.tid);
    EXPECT_GE(s.time, last_time);  // one thread's samples are in time order
    last_time = s.time;
    if (s.has_addr && s.addr >= h.range_base && s.addr < h.range_base + h.range_bytes) {
      in_range++;
      pages.insert((s.addr - h.range_base) / 4096);
    }
    return true;
  });
  ASSERT_GT(n, 0);
  EXPECT_EQ(ring.corrupt_skips(), 0u);
  EXPECT_EQ(p.malformed(), 0u);
  EXPECT_GT(samples, 100u);
  EXPECT_EQ(in_range, samples);
  EXPECT_GT(pages.size(), 100u);
  EXPECT_EQ(ctl->data_tail, h.head);
  printf("  recorded ring: %zu records, %zu samples on %zu pages, lost %llu\n",
         static_cast<size_t>(n), samples, pages.size(), static_cast<unsigned long long>(p.lost()));
}

// Makes testdata/perf-pagefaults.ring (or $MTIER_PERF_RING_OUT). Run once:
//   perf_source_test --gtest_also_run_disabled_tests
//                    --gtest_filter='*RecordPageFaultRing'
TEST(RecordedRing, DISABLED_RecordPageFaultRing) {
  HeatSourceInfo info;
  ASSERT_NO_FATAL_FAILURE(page_faults_or_skip(&info));
  if (IsSkipped()) return;
  HeatSource src;
  LiveResult r;
  HeatSourceOptions opt;
  opt.ring_pages_log2 = 2;  // 16 KiB: fills, loses, wraps
  std::vector<uint8_t> data;
  RingFileHeader h{};
  ASSERT_NO_FATAL_FAILURE(run_live(info, opt, false, 16, &src, &r, [&] {
    for (size_t i = 0; i < src.threads(); i++) {
      if (src.tid(i) != r.tid[0]) continue;
      const sys::PerfRing& ring = src.ring(i);
      memcpy(h.magic, kRingMagic, 8);
      h.sample_type = info.attr.sample_type;
      h.data_size = ring.data_size();
      h.head = __atomic_load_n(&ring.control()->data_head, __ATOMIC_ACQUIRE);
      h.tail = ring.control()->data_tail;
      h.range_base = r.base;
      h.range_bytes = kRangeBytes;
      h.tid = static_cast<uint64_t>(r.tid[0]);
      data.assign(ring.data(), ring.data() + ring.data_size());
    }
  }));
  if (IsSkipped()) return;
  ASSERT_FALSE(data.empty());
  ASSERT_GT(h.tail % h.data_size + (h.head - h.tail), h.data_size)
      << "the capture did not wrap; run again";
  const char* env = getenv("MTIER_PERF_RING_OUT");
  std::string path = env ? env : ring_file();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(write(fd, &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(fd);
  printf("  wrote %s: head %llu tail %llu\n", path.c_str(), static_cast<unsigned long long>(h.head),
         static_cast<unsigned long long>(h.tail));
}

}  // namespace
}  // namespace mtier
