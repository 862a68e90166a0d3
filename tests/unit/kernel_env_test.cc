// SPDX-License-Identifier: Apache-2.0
// The kernel baselines' set-up: memory-cgroup detection on fake trees, and on
// the real machine (as root) a cgroup whose limit OOM-kills a child that
// touches more than it, one that holds a child under it, and a swap file that
// appears in /proc/swaps and goes again. Where the machine lacks a feature
// the test skips and says why; everything it makes is removed on every path
// (RAII: a failed ASSERT still runs the destructors).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "cgroup.h"
#include "swap_file.h"
#include "sys/swap_area.h"

namespace mtier::bench {
namespace {

constexpr uint64_t kMiB = 1 << 20;

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const std::string& p, const std::string& text) { std::ofstream(p) << text; }

std::string base_name(const std::string& p) { return p.substr(p.rfind('/') + 1); }

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// A mkdtemp directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mtier-kenv-XXXXXX";
    if (mkdtemp(tmpl)) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------
// Detection on fake trees.

TEST(DetectMemoryCgroup, V1Layout) {
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  ASSERT_EQ(mkdir((t.path() + "/memory").c_str(), 0755), 0);
  put(t.path() + "/memory/memory.limit_in_bytes", "9223372036854771712\n");
  CgroupSupport s = detect_memory_cgroup(t.path());
  EXPECT_EQ(s.version, CgroupVersion::kV1);
  EXPECT_EQ(s.mount, t.path() + "/memory");
  EXPECT_TRUE(s.reason_if_none.empty());
}

TEST(DetectMemoryCgroup, V2WithMemoryAlreadyDelegated) {
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  put(t.path() + "/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  put(t.path() + "/cgroup.subtree_control", "cpu memory\n");
  CgroupSupport s = detect_memory_cgroup(t.path());
  EXPECT_EQ(s.version, CgroupVersion::kV2);
  EXPECT_EQ(s.mount, t.path());
  EXPECT_EQ(slurp(t.path() + "/cgroup.subtree_control"), "cpu memory\n");  // left alone
}

TEST(DetectMemoryCgroup, V2EnablesMemoryForChildrenWhenMissing) {
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  put(t.path() + "/cgroup.controllers", "cpu io memory pids\n");
  put(t.path() + "/cgroup.subtree_control", "cpu\n");
  CgroupSupport s = detect_memory_cgroup(t.path());
  EXPECT_EQ(s.version, CgroupVersion::kV2);
  // A regular file stands in for the control file: the write replaced it.
  EXPECT_EQ(slurp(t.path() + "/cgroup.subtree_control"), "+memory");
}

TEST(DetectMemoryCgroup, V2WhereMemoryCannotBeEnabledIsNone) {
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  put(t.path() + "/cgroup.controllers", "memory pids\n");  // no subtree_control to write
  CgroupSupport s = detect_memory_cgroup(t.path());
  EXPECT_EQ(s.version, CgroupVersion::kNone);
  EXPECT_NE(s.reason_if_none.find("cgroup.subtree_control"), std::string::npos)
      << s.reason_if_none;
}

TEST(DetectMemoryCgroup, V2WithoutMemoryIsNoneAndSaysWhy) {
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  put(t.path() + "/cgroup.controllers", "cpu io pids\n");
  CgroupSupport s = detect_memory_cgroup(t.path());
  EXPECT_EQ(s.version, CgroupVersion::kNone);
  EXPECT_TRUE(s.mount.empty());
  EXPECT_NE(s.reason_if_none.find("cpu io pids"), std::string::npos) << s.reason_if_none;
}

TEST(DetectMemoryCgroup, EmptyTreeIsNoneAndSaysWhy) {
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  CgroupSupport s = detect_memory_cgroup(t.path());
  EXPECT_EQ(s.version, CgroupVersion::kNone);
  EXPECT_NE(s.reason_if_none.find(t.path()), std::string::npos) << s.reason_if_none;
}

// ---------------------------------------------------------------------------
// MemoryCgroup refusals that need no real controller.

TEST(MemoryCgroup, RefusesWithoutControllerAndBadArguments) {
  MemoryCgroup cg;
  std::string err;
  CgroupSupport none{CgroupVersion::kNone, "", "no memory controller here"};
  EXPECT_EQ(MemoryCgroup::create(none, "x", 64 * kMiB, false, 0, &cg, &err), -ENODEV);
  EXPECT_EQ(err, "no memory controller here");
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  CgroupSupport fake{CgroupVersion::kV1, t.path(), ""};
  err.clear();
  EXPECT_EQ(MemoryCgroup::create(fake, "a/b", 64 * kMiB, false, 0, &cg, &err), -EINVAL);
  EXPECT_FALSE(err.empty());
  err.clear();
  EXPECT_EQ(MemoryCgroup::create(fake, "x", 0, false, 0, &cg, &err), -EINVAL);
  EXPECT_FALSE(err.empty());
  EXPECT_TRUE(cg.path().empty());
  EXPECT_EQ(cg.destroy(&err), 0);  // never created: nothing to do
  EXPECT_LT(cg.peak_bytes(), 0);
}

TEST(MemoryCgroup, FailedCreateRemovesTheDirectory) {
  // A plain directory under a fake v1 mount has no control files, so the
  // first write fails after mkdir succeeded.
  TempDir t;
  ASSERT_FALSE(t.path().empty()) << strerror(errno);
  CgroupSupport fake{CgroupVersion::kV1, t.path(), ""};
  MemoryCgroup cg;
  std::string err;
  EXPECT_EQ(MemoryCgroup::create(fake, "fake", 64 * kMiB, false, 0, &cg, &err), -ENOENT);
  EXPECT_NE(err.find("memory.limit_in_bytes"), std::string::npos) << err;
  EXPECT_FALSE(exists(t.path() + "/mtier-bench-" + std::to_string(getpid()) + "-fake"));
  EXPECT_TRUE(cg.path().empty());
}

// ---------------------------------------------------------------------------
// The real controller (root).

// A forked child that blocks until released, then touches `bytes` of fresh
// anonymous memory and exits 0. Killed and reaped by the destructor if the
// test did not reap it.
class Toucher {
 public:
  explicit Toucher(size_t bytes) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(p[1]);
      char c;
      if (read(p[0], &c, 1) != 1) _exit(3);
      if (bytes == 0) _exit(0);
      auto* m = static_cast<volatile char*>(
          mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (m == MAP_FAILED) _exit(2);
      for (size_t i = 0; i < bytes; i += 4096) m[i] = 1;
      _exit(0);  // no atexit handlers, no leak check in the child
    }
    close(p[0]);
    if (pid_ > 0) go_ = p[1]; else close(p[1]);
  }
  ~Toucher() {
    if (go_ >= 0) close(go_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  // Lets it run and reaps it; the wait status.
  int release_and_wait() {
    char c = 1;
    if (write(go_, &c, 1) != 1) return -1;
    close(go_);
    go_ = -1;
    int status = -1;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1;
};

class RealCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make memory cgroups";
    support_ = detect_memory_cgroup();
    if (support_.version == CgroupVersion::kNone) GTEST_SKIP() << support_.reason_if_none;
    remove_stale_cgroups(support_);
  }
  CgroupSupport support_;
};

TEST_F(RealCgroup, LimitWithoutSwapOomKillsAChildThatTouchesMore) {
  MemoryCgroup cg;
  std::string err;
  ASSERT_EQ(MemoryCgroup::create(support_, "oom", 64 * kMiB, false, 0, &cg, &err), 0) << err;
  std::string path = cg.path();
  EXPECT_TRUE(exists(path));
  Toucher child(256 * kMiB);
  ASSERT_GT(child.pid(), 0);
  ASSERT_EQ(cg.add_pid(child.pid(), &err), 0) << err;
  int status = child.release_and_wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << describe(status);
  int64_t kills = cg.oom_kills();
  if (kills >= 0)
    EXPECT_GE(kills, 1);
  else
    std::cout << "[ note ] oom_kill count unreadable here: " << strerror(static_cast<int>(-kills))
              << "\n";
  EXPECT_EQ(cg.destroy(&err), 0) << err;
  EXPECT_FALSE(exists(path));
  EXPECT_TRUE(cg.path().empty());
  EXPECT_EQ(cg.destroy(&err), 0);  // idempotent
}

TEST_F(RealCgroup, LimitAboveTheUseLetsTheChildFinishAndCountsItsPeak) {
  MemoryCgroup made;
  std::string err;
  ASSERT_EQ(MemoryCgroup::create(support_, "fits", 256 * kMiB, false, 0, &made, &err), 0)
      << err;
  MemoryCgroup cg = std::move(made);  // movable; the moved-from one holds nothing
  EXPECT_TRUE(made.path().empty());
  std::string path = cg.path();
  Toucher child(128 * kMiB);
  ASSERT_GT(child.pid(), 0);
  ASSERT_EQ(cg.add_pid(child.pid(), &err), 0) << err;
  EXPECT_NE(slurp("/proc/" + std::to_string(child.pid()) + "/cgroup").find(base_name(path)),
            std::string::npos);
  int status = child.release_and_wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
  int64_t peak = cg.peak_bytes();
  if (peak == -ENOENT && cg.version() == CgroupVersion::kV2)
    std::cout << "[ note ] memory.peak missing (kernel before 5.19)\n";
  else
    EXPECT_GE(peak, static_cast<int64_t>(128 * kMiB));
  int64_t current = cg.current_bytes();
  EXPECT_GE(current, 0);
  EXPECT_LT(current, static_cast<int64_t>(128 * kMiB));  // the child's memory went with it
  EXPECT_EQ(cg.oom_kills(), 0);
  EXPECT_EQ(cg.destroy(&err), 0) << err;
  EXPECT_FALSE(exists(path));
}

TEST_F(RealCgroup, DestroyMovesProcessesStillInsideToTheParent) {
  MemoryCgroup cg;
  std::string err;
  ASSERT_EQ(MemoryCgroup::create(support_, "busy", 64 * kMiB, true, 60, &cg, &err), 0) << err;
  std::string path = cg.path();
  Toucher child(0);  // blocks until released
  ASSERT_GT(child.pid(), 0);
  ASSERT_EQ(cg.add_pid(child.pid(), &err), 0) << err;
  std::string procs = "/proc/" + std::to_string(child.pid()) + "/cgroup";
  EXPECT_NE(slurp(procs).find(base_name(path)), std::string::npos);
  EXPECT_EQ(cg.destroy(&err), 0) << err;
  EXPECT_FALSE(exists(path));
  EXPECT_EQ(slurp(procs).find(base_name(path)), std::string::npos);
  int status = child.release_and_wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
}

TEST_F(RealCgroup, StaleCgroupsOfDeadProcessesAreRemoved) {
  pid_t dead;
  {
    Toucher t(0);
    ASSERT_GT(t.pid(), 0);
    dead = t.pid();
    t.release_and_wait();
  }
  std::string stale = support_.mount + "/mtier-bench-" + std::to_string(dead) + "-stale";
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0) << stale << ": " << strerror(errno);
  MemoryCgroup live;
  std::string err;
  ASSERT_EQ(MemoryCgroup::create(support_, "live", 64 * kMiB, false, 0, &live, &err), 0) << err;
  remove_stale_cgroups(support_);
  bool stale_left = exists(stale);
  if (stale_left) rmdir(stale.c_str());  // pid reused meanwhile, or a bug: clean up either way
  EXPECT_FALSE(stale_left);
  EXPECT_TRUE(exists(live.path()));
}

// ---------------------------------------------------------------------------
// Swap files.

// Whether /proc/swaps lists `path` as an active area.
bool in_proc_swaps(const std::string& path) {
  std::istringstream in(slurp("/proc/swaps"));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string name;
    if (f >> name && name == path) return true;
  }
  return false;
}

// /var/tmp with symlinks resolved, as /proc/swaps would name it.
std::string var_tmp() {
  char buf[PATH_MAX];
  return realpath("/var/tmp", buf) ? buf : "/var/tmp";
}

TEST(ProcSwaps, SumsTheSizeColumn) {
  const char* header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
  EXPECT_EQ(parse_proc_swaps(header), 0u);
  EXPECT_EQ(parse_proc_swaps(""), 0u);
  std::string two = std::string(header) +
                    "/dev/vda2                               partition\t1048572\t\t0\t\t-2\n"
                    "/var/tmp/my\\040swap                     file\t\t65532\t\t128\t\t-3\n";
  EXPECT_EQ(parse_proc_swaps(two), (1048572ull + 65532ull) * 1024);
}

TEST(SwapFileArgs, TooSmallOrNoPathIsRefused) {
  SwapFile sf;
  std::string err;
  EXPECT_EQ(SwapFile::create("/var/tmp/mtier-kenv-tiny", 8192, &sf, &err), -EINVAL);
  EXPECT_NE(err.find("/var/tmp/mtier-kenv-tiny"), std::string::npos) << err;
  EXPECT_EQ(SwapFile::create("", 64 * kMiB, &sf, &err), -EINVAL);
  EXPECT_FALSE(exists("/var/tmp/mtier-kenv-tiny"));
  EXPECT_TRUE(sf.path().empty());
  EXPECT_EQ(sf.destroy(&err), 0);
}

class RealSwap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make swap files";
    path_ = var_tmp() + "/mtier-kenv-swap-" + std::to_string(getpid());
  }
  void TearDown() override {
    if (!path_.empty() && exists(path_)) {
      ADD_FAILURE() << path_ << " left behind";
      (void)sys::swap_off(path_.c_str());
      unlink(path_.c_str());
    }
  }
  std::string path_;
};

TEST_F(RealSwap, CreateShowsInProcSwapsAndDestroyRemovesIt) {
  uint64_t before = active_swap_bytes();
  SwapFile sf;
  std::string err;
  int r = SwapFile::create(path_, 64 * kMiB, &sf, &err);
  if (r == -EPERM || r == -EINVAL || r == -ENOSPC || r == -ENOENT) {
    EXPECT_FALSE(exists(path_)) << "a failed create must remove its file";
    GTEST_SKIP() << "no swap file on this machine: " << err;
  }
  ASSERT_EQ(r, 0) << err;
  EXPECT_EQ(sf.path(), path_);
  // The kernel counts every page but mkswap's header; bytes() is what it
  // counts, so the suite can tell this file from other swap.
  EXPECT_EQ(sf.bytes(), 64 * kMiB - 4096);
  EXPECT_TRUE(in_proc_swaps(path_)) << slurp("/proc/swaps");
  EXPECT_EQ(active_swap_bytes(), before + sf.bytes());
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 64 * kMiB);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, 64 * kMiB);  // not sparse
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  SwapFile moved = std::move(sf);
  EXPECT_TRUE(sf.path().empty());
  EXPECT_EQ(moved.destroy(&err), 0) << err;
  EXPECT_FALSE(in_proc_swaps(path_));
  EXPECT_FALSE(exists(path_));
  EXPECT_EQ(active_swap_bytes(), before);
  EXPECT_EQ(moved.destroy(&err), 0);  // idempotent
}

TEST_F(RealSwap, AnExistingFileIsNotOverwritten) {
  put(path_, "keep");
  SwapFile sf;
  std::string err;
  EXPECT_EQ(SwapFile::create(path_, 64 * kMiB, &sf, &err), -EEXIST);
  EXPECT_NE(err.find(path_), std::string::npos) << err;
  EXPECT_EQ(slurp(path_), "keep");
  unlink(path_.c_str());
}

TEST_F(RealSwap, TooLittleSpaceIsRefusedBeforeWriting) {
  SwapFile sf;
  std::string err;
  EXPECT_EQ(SwapFile::create(path_, 1ull << 55, &sf, &err), -ENOSPC);  // 32 PiB
  EXPECT_NE(err.find(path_), std::string::npos) << err;
  EXPECT_FALSE(exists(path_));
}

TEST_F(RealSwap, ASwapOnFailureRemovesTheFile) {
  // tmpfs cannot hold a swap file on the kernels we know (EINVAL); if this
  // one can, the file must still come and go cleanly.
  std::string shm = "/dev/shm/mtier-kenv-swap-" + std::to_string(getpid());
  SwapFile sf;
  std::string err;
  int r = SwapFile::create(shm, 1 * kMiB, &sf, &err);
  if (r == 0) {
    std::cout << "[ note ] this kernel swaps to tmpfs\n";
    EXPECT_EQ(sf.destroy(&err), 0) << err;
  } else {
    EXPECT_NE(err.find(shm), std::string::npos) << err;
    EXPECT_NE(err.find(strerror(-r)), std::string::npos) << err;
  }
  EXPECT_FALSE(exists(shm));
  if (exists(shm)) unlink(shm.c_str());
}

// ---------------------------------------------------------------------------
// Not root: both refuse with a reason. As root, a child that dropped to
// "nobody" takes the refusal path.

struct Refusals {
  int swap_rc = 0, cgroup_rc = 0;
  std::string swap_err, cgroup_err;
};

Refusals try_both(const std::string& swap_path) {
  Refusals r;
  SwapFile sf;
  r.swap_rc = SwapFile::create(swap_path, 1 * kMiB, &sf, &r.swap_err);
  MemoryCgroup cg;
  r.cgroup_rc = MemoryCgroup::create("refused", 64 * kMiB, false, 0, &cg, &r.cgroup_err);
  return r;
}

TEST(KernelEnvNotRoot, BothRefuseWithAReason) {
  std::string swap_path = var_tmp() + "/mtier-kenv-nobody-" + std::to_string(getpid());
  Refusals r;
  if (geteuid() != 0) {
    r = try_both(swap_path);
  } else {
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(p[0]);
      if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
          setresuid(65534, 65534, 65534) != 0)
        _exit(2);
      Refusals c = try_both(swap_path);
      std::string msg = std::to_string(c.swap_rc) + "\n" + c.swap_err + "\n" +
                        std::to_string(c.cgroup_rc) + "\n" + c.cgroup_err + "\n";
      ssize_t w = write(p[1], msg.data(), msg.size());
      _exit(w == static_cast<ssize_t>(msg.size()) ? 0 : 3);
    }
    close(p[1]);
    std::string msg;
    char buf[1024];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
    std::istringstream in(msg);
    std::string rc;
    std::getline(in, rc);
    r.swap_rc = std::stoi(rc);
    std::getline(in, r.swap_err);
    std::getline(in, rc);
    r.cgroup_rc = std::stoi(rc);
    std::getline(in, r.cgroup_err);
  }
  EXPECT_EQ(r.swap_rc, -EPERM);
  EXPECT_NE(r.swap_err.find("root"), std::string::npos) << r.swap_err;
  EXPECT_FALSE(exists(swap_path));
  // A user may own a delegated v2 cgroup, but never the controller's root.
  EXPECT_LT(r.cgroup_rc, 0);
  EXPECT_FALSE(r.cgroup_err.empty());
  std::cout << "[ note ] not root: " << r.swap_err << "; " << r.cgroup_err << "\n";
}

}  // namespace
}  // namespace mtier::bench
