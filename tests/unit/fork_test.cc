// SPDX-License-Identifier: Apache-2.0
// Forked children reading their parent's tables: the announcement protocol
// and bookkeeping (ForkedChildren), and the engine end to end with real
// forks - a child reads a table from the store with every byte checked,
// its writes stay its own, a table freed after the fork is kept for it,
// and a child killed mid-read leaves no descriptor behind.
#include <gtest/gtest.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "engine_support.h"
#include "sys/unix_socket.h"
#include "sys/vm.h"
#include "uffd/child_attach.h"
#include "uffd/fork_hello.h"
#include "uffd/forked_children.h"

namespace mtier {
namespace {

using testutil::check_page;
using testutil::fill_page;
using testutil::kPage;
using testutil::pattern;

int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) n++;
    closedir(d);
  }
  return n - 3;
}

// A child that waits to be killed.
pid_t sleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  return pid;
}

void reap_process(pid_t pid) {
  kill(pid, SIGKILL);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
}

// Sends an announcement on `socket` as a child would: `uffd` (any
// descriptor will do here) and a reply socket; returns the reply byte, or
// -1 when none came.
int announce(int socket, const ForkHello& hello, int uffd, ForkedChildren& ch, int* accepted) {
  int pair[2];
  EXPECT_EQ(sys::unix_pair(pair), 0);
  int fds[2] = {uffd, pair[1]};
  EXPECT_EQ(sys::unix_send(socket, &hello, sizeof hello, fds, uffd >= 0 ? 2 : 0),
            static_cast<ssize_t>(sizeof hello));
  close(pair[1]);
  *accepted = ch.accept();
  uint8_t answer = 0xff;
  struct pollfd p = {pair[0], POLLIN, 0};
  int got = -1;
  if (poll(&p, 1, 1000) == 1 && sys::unix_recv(pair[0], &answer, 1, nullptr, 0, nullptr, nullptr) == 1)
    got = answer;
  close(pair[0]);
  return got;
}

TEST(ForkedChildrenTest, TakesAnAnnouncementRepliesAndReapsTheChild) {
  ForkedChildren ch;
  ASSERT_EQ(ch.open(), 0);
  EXPECT_EQ(ch.accept(), -EAGAIN);
  pid_t pid = sleeper();
  ch.fork_begins(10);
  EXPECT_TRUE(ch.may_be_inherited(9)) << "a fork in flight: its child may read table 9";
  ForkHello hello;
  hello.pid = pid;
  hello.inherited_below = 10;
  int accepted = 0;
  int uffd = eventfd(0, EFD_CLOEXEC);
  EXPECT_EQ(announce(ch.child_socket(), hello, uffd, ch, &accepted), kForkTaken);
  close(uffd);
  EXPECT_EQ(accepted, 1);
  ASSERT_EQ(ch.count(), 1u);
  EXPECT_EQ(ch.child(0).pid, pid);
  EXPECT_TRUE(ch.may_be_inherited(9));
  EXPECT_FALSE(ch.may_be_inherited(10)) << "made after the fork: no child has it";
  // Its pidfd says when it has exited.
  reap_process(pid);
  struct pollfd p = {ch.child(0).pidfd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 5000), 1);
  ch.reap(0);
  EXPECT_EQ(ch.count(), 0u);
  EXPECT_FALSE(ch.may_be_inherited(9)) << "no child left to read it";
}

TEST(ForkedChildrenTest, AForkCountsUntilItsChildAnnouncesItselfOrSaysItCannot) {
  ForkedChildren ch;
  ASSERT_EQ(ch.open(), 0);
  ch.fork_begins(7);
  EXPECT_TRUE(ch.may_be_inherited(6));
  EXPECT_FALSE(ch.may_be_inherited(7));
  // A child that could not make its userfaultfd says so with no descriptors.
  ForkHello hello;
  hello.pid = getpid();
  hello.inherited_below = 7;
  ASSERT_EQ(sys::unix_send(ch.child_socket(), &hello, sizeof hello, nullptr, 0),
            static_cast<ssize_t>(sizeof hello));
  EXPECT_EQ(ch.accept(), 0);
  EXPECT_EQ(ch.count(), 0u);
  EXPECT_FALSE(ch.may_be_inherited(6)) << "the fork is over and no child reads";
}

TEST(ForkedChildrenTest, RefusesWhatItCannotServe) {
  ForkedChildren ch;
  ASSERT_EQ(ch.open(), 0);
  int uffd = eventfd(0, EFD_CLOEXEC);
  int accepted = -1;
  ForkHello bad;
  bad.magic = 0x12345678;
  bad.pid = getpid();
  EXPECT_EQ(announce(ch.child_socket(), bad, uffd, ch, &accepted), kForkRefused);
  EXPECT_EQ(accepted, 0);
  // A child gone before its announcement is read (its pid reaped).
  pid_t gone = sleeper();
  reap_process(gone);
  ForkHello late;
  late.pid = gone;
  EXPECT_EQ(announce(ch.child_socket(), late, uffd, ch, &accepted), kForkRefused);
  EXPECT_EQ(ch.count(), 0u);
  close(uffd);
}

TEST(ForkedChildrenTest, ARetiredTableGoesOnceNoChildCanReadIt) {
  ForkedChildren ch;
  ASSERT_EQ(ch.open(), 0);
  ch.fork_begins(5);
  ASSERT_TRUE(ch.retire(3));
  ASSERT_TRUE(ch.retire(6));  // made after the fork: nobody keeps it
  std::vector<int32_t> dropped;
  ch.take_unreachable([&](int32_t id) { dropped.push_back(id); });
  EXPECT_EQ(dropped, std::vector<int32_t>{6});
  EXPECT_EQ(ch.retired(), 1u);
  ForkHello hello;  // the fork's child could not attach
  hello.pid = getpid();
  ASSERT_GT(sys::unix_send(ch.child_socket(), &hello, sizeof hello, nullptr, 0), 0);
  EXPECT_EQ(ch.accept(), 0);
  ch.take_unreachable([&](int32_t id) { dropped.push_back(id); });
  EXPECT_EQ(dropped, (std::vector<int32_t>{6, 3}));
  EXPECT_EQ(ch.retired(), 0u);
}

// The engine with real forks: the child attaches as the preload's fork
// handler does (uffd/child_attach.h) and reports by its exit status.
class EngineForkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/var/tmp/mtier-fork-test-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    Options o;
    o.region_bytes = 1ull << 30;
    o.dram_bytes = 4ull << 20;
    o.store_path = dir_ + "/store";
    o.store_bytes = 256ull << 20;
    o.scan_rate = 0;
    o.daemon_socket = "none";
    int err = 0;
    engine_ = Engine::create(o, &err);
    ASSERT_TRUE(engine_) << strerror(-err);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }
  char* written_table(uint64_t pages, uint64_t gen, int* id) {
    void* a = nullptr;
    *id = engine_->create_table("t", pages * kPage, &a);
    EXPECT_GT(*id, 0);
    auto* t = static_cast<char*>(a);
    for (uint64_t p = 0; p < pages; p++) fill_page(t + p * kPage, pattern(*id, p, gen));
    return t;
  }
  // Forks; the child attaches, waits for a byte on *go (when go is given)
  // and returns body()'s exit status. Returns the child's pid.
  template <class F>
  pid_t fork_child(int* go, F body) {
    Engine::ForkPlan plan = engine_->prepare_fork();
    EXPECT_TRUE(plan.ok);
    int pipefd[2] = {-1, -1};
    if (go) {
      EXPECT_EQ(pipe(pipefd), 0);
    }
    pid_t pid = fork();
    if (pid == 0) {
      alarm(60);
      const char* step = "";
      if (attach_to_parent(plan.inheritance, true, &step) != 0) _exit(90);
      if (go) {
        char c;
        close(pipefd[1]);
        if (read(pipefd[0], &c, 1) != 1) _exit(91);
      }
      _exit(body());
    }
    if (go) {
      close(pipefd[0]);
      *go = pipefd[1];
    }
    return pid;
  }
  static int wait_for(pid_t pid) {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return st;
  }
  long kernel_resident() { return engine_->region().resident_pages(0, 64ull << 20); }

  std::string dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineForkTest, AChildReadsATableFromTheStoreAndItsWritesStayItsOwn) {
  int id;
  const uint64_t pages = 4 * (4ull << 20) / kPage;  // 4x the budget: most pages in the store
  char* t = written_table(pages, 1, &id);
  pid_t pid = fork_child(nullptr, [&] {
    for (uint64_t p = 0; p < pages; p++)
      if (!check_page(t + p * kPage, pattern(id, p, 1))) return 1;
    for (uint64_t p = 0; p < pages; p += 3) fill_page(t + p * kPage, pattern(id, p, 2));
    for (uint64_t p = 0; p < pages; p++)
      if (!check_page(t + p * kPage, pattern(id, p, p % 3 ? 1 : 2))) return 2;
    return 0;
  });
  int st = wait_for(pid);
  ASSERT_TRUE(WIFEXITED(st)) << "status " << st;
  EXPECT_EQ(WEXITSTATUS(st), 0) << "1: the child read a wrong page; 2: its own write did not "
                                   "read back; 90: it could not attach";
  EXPECT_LE(kernel_resident(), static_cast<long>((4ull << 20) / kPage))
      << "the child's pages count against the one budget";
  for (uint64_t p = 0; p < pages; p++)
    ASSERT_TRUE(check_page(t + p * kPage, pattern(id, p, 1))) << "parent page " << p;
  EngineStats s = engine_->stats();
  EXPECT_EQ(s.child_faults > 0, true) << "the child's faults were served by this engine";
}

TEST_F(EngineForkTest, ATableFreedAfterTheForkIsKeptForTheChildAndThenGoes) {
  int id;
  const uint64_t pages = 2 * (4ull << 20) / kPage;
  char* t = written_table(pages, 3, &id);
  int go = -1;
  pid_t pid = fork_child(&go, [&] {
    for (uint64_t p = 0; p < pages; p++)
      if (!check_page(t + p * kPage, pattern(id, p, 3))) return 1;
    return 0;
  });
  ASSERT_EQ(engine_->free_table(id), 0);
  EXPECT_EQ(engine_->retired_tables(), 1u) << "the child may still read it";
  EXPECT_EQ(engine_->find_table(t), -ENOENT) << "gone for the program";
  int other;
  char* u = written_table(pages, 4, &other);
  EXPECT_NE(u, t) << "the freed table's range went to another table while a child may read it";
  ASSERT_EQ(write(go, "x", 1), 1);
  close(go);
  int st = wait_for(pid);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
  for (int i = 0; i < 500 && engine_->retired_tables() > 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(engine_->retired_tables(), 0u) << "the child has exited: the table goes";
  for (uint64_t p = 0; p < pages; p++)
    ASSERT_TRUE(check_page(u + p * kPage, pattern(other, p, 4))) << "page " << p;
}

TEST_F(EngineForkTest, AChildKilledMidReadLeavesNoDescriptorBehind) {
  int id;
  const uint64_t pages = 4 * (4ull << 20) / kPage;
  char* t = written_table(pages, 5, &id);
  int before = open_fds();
  pid_t pid = fork_child(nullptr, [&] {
    uint64_t sum = 0;
    for (;;) {
      for (uint64_t p = 0; p < pages; p++) sum += static_cast<unsigned char>(t[p * kPage]);
      asm volatile("" : : "r"(sum));
    }
    return 0;
  });
  for (int i = 0; i < 500 && engine_->forked_children() == 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(engine_->forked_children(), 1u);
  for (uint64_t p = 0; p < pages; p += 2) fill_page(t + p * kPage, pattern(id, p, 6));
  kill(pid, SIGKILL);
  wait_for(pid);
  for (int i = 0; i < 500 && (engine_->forked_children() || open_fds() != before); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(engine_->forked_children(), 0u);
  EXPECT_EQ(open_fds(), before);
  for (uint64_t p = 0; p < pages; p++)
    ASSERT_TRUE(check_page(t + p * kPage, pattern(id, p, p % 2 ? 5 : 6))) << "page " << p;
}

}  // namespace
}  // namespace mtier
