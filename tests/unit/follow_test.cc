// SPDX-License-Identifier: Apache-2.0
// Which processes the tools follow: a pid, a job's ranks, or a command and
// what it started (parents from a fake table, and from /proc for a real
// child and grandchild).
#include "record/follow.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

namespace mtier::record {
namespace {

ProcessSnap proc(int32_t pid, const std::string& job = "") {
  ProcessSnap p;
  p.pid = pid;
  p.job = job;
  return p;
}

// A Follow by one criterion (the others left unset).
Follow follow(int32_t pid, const std::string& job, pid_t tree) {
  Follow f;
  f.pid = pid;
  f.job = job;
  f.tree = tree;
  return f;
}
Follow tree_of(pid_t pid) { return follow(0, "", pid); }
Follow job_of(const std::string& job) { return follow(0, job, 0); }
Follow pid_of(int32_t pid) { return follow(pid, "", 0); }

// 10 started 11 and 12; 11 started 13; 20 is someone else's.
pid_t fake_parent(pid_t pid) {
  static const std::map<pid_t, pid_t> parents = {{10, 1}, {11, 10}, {12, 10}, {13, 11}, {20, 1}};
  auto it = parents.find(pid);
  return it == parents.end() ? -1 : it->second;
}

TEST(Follow, ByPidJobOrTree) {
  Snapshot s;
  for (int32_t pid : {10, 11, 12, 13, 20}) s.procs.push_back(proc(pid, pid == 11 || pid == 20 ? "j" : ""));
  Snapshot by_tree = s;
  EXPECT_EQ(keep_followed(tree_of(10), &by_tree, fake_parent), 4u);
  for (const ProcessSnap& p : by_tree.procs) EXPECT_NE(p.pid, 20);
  Snapshot by_job = s;
  ASSERT_EQ(keep_followed(job_of("j"), &by_job, fake_parent), 2u);
  EXPECT_EQ(by_job.procs[0].pid, 11);
  EXPECT_EQ(by_job.procs[1].pid, 20);
  Snapshot by_pid = s;
  EXPECT_EQ(keep_followed(pid_of(13), &by_pid, fake_parent), 1u);
  Snapshot all = s;
  EXPECT_EQ(keep_followed(Follow{}, &all, fake_parent), 5u);
  Snapshot none = s;
  EXPECT_EQ(keep_followed(tree_of(99), &none, fake_parent), 0u);
  EXPECT_EQ(followed_text(tree_of(10)), "pid 10 and its children");
  EXPECT_EQ(followed_text(job_of("j")), "job j");
}

TEST(ProcTree, AChildAndItsChildDescendFromThisProcess) {
  int up[2];
  ASSERT_EQ(pipe(up), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      pause();
      _exit(0);
    }
    (void)!write(up[1], &grandchild, sizeof grandchild);
    pause();
    _exit(0);
  }
  pid_t grandchild = 0;
  ASSERT_EQ(read(up[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  EXPECT_EQ(sys::parent_of(child), getpid());
  EXPECT_EQ(sys::parent_of(grandchild), child);
  EXPECT_TRUE(sys::descends_from(grandchild, getpid()));
  EXPECT_TRUE(sys::descends_from(child, child));
  EXPECT_FALSE(sys::descends_from(getpid(), child));
  kill(grandchild, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(sys::parent_of(child), -1);  // gone
  close(up[0]);
  close(up[1]);
}

}  // namespace
}  // namespace mtier::record
