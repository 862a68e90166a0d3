// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/sys/unix_socket: fd passing (the memfd readable on the
// other side, fds past max_fds closed, CLOEXEC), truncation, credentials,
// and unix_listen's handling of what already sits at the path: a stale
// socket replaced, a live one refused, a regular file left alone.
#include "sys/unix_socket.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace mtier::sys {
namespace {

size_t open_fds() {
  size_t n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1;  // the directory's own fd
}

bool is_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

class Pair : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    a_ = sv[0];
    b_ = sv[1];
  }
  void TearDown() override {
    if (a_ >= 0) close(a_);
    close(b_);
  }
  int a_ = -1, b_ = -1;
};

int memfd_with(const char* text) {
  int fd = memfd_create("mtier-test", MFD_CLOEXEC);
  if (fd >= 0 && write(fd, text, strlen(text)) != static_cast<ssize_t>(strlen(text))) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST_F(Pair, PassesAMemfdReadableOnTheOtherSide) {
  int mfd = memfd_with("segment");
  ASSERT_GE(mfd, 0);
  ASSERT_EQ(unix_send(a_, "reg", 3, &mfd, 1), 3);
  close(mfd);  // the receiver's copy keeps the file alive
  char buf[16];
  int fds[4] = {-1, -1, -1, -1};
  size_t nfds = 99;
  bool truncated = true;
  ASSERT_EQ(unix_recv(b_, buf, sizeof buf, fds, 4, &nfds, &truncated), 3);
  EXPECT_EQ(memcmp(buf, "reg", 3), 0);
  EXPECT_FALSE(truncated);
  ASSERT_EQ(nfds, 1u);
  EXPECT_EQ(fcntl(fds[0], F_GETFD), FD_CLOEXEC);
  char data[8] = {};
  EXPECT_EQ(pread(fds[0], data, 7, 0), 7);
  EXPECT_STREQ(data, "segment");
  // Shared, not copied: a write through the received fd is seen by a map.
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  ASSERT_NE(p, MAP_FAILED);
  EXPECT_EQ(memcmp(p, "segment", 7), 0);
  munmap(p, 4096);
  close(fds[0]);
}

TEST_F(Pair, FdsBeyondMaxAreClosedNotLeaked) {
  int sent[4];
  for (int& f : sent) ASSERT_GE(f = memfd_with("x"), 0);
  ASSERT_EQ(unix_send(a_, "m", 1, sent, 4), 1);
  for (int f : sent) close(f);
  const size_t before = open_fds();
  // The numbers the kernel will install the four at: the lowest free ones.
  int slot[4];
  for (int& f : slot) ASSERT_GE(f = dup(b_), 0);
  for (int f : slot) close(f);
  char buf[4];
  int fds[1] = {-1};
  size_t nfds = 0;
  bool truncated = false;
  ASSERT_EQ(unix_recv(b_, buf, sizeof buf, fds, 1, &nfds, &truncated), 1);
  EXPECT_TRUE(truncated);  // the message came with more than we took
  ASSERT_EQ(nfds, 1u);
  EXPECT_EQ(fds[0], slot[0]);
  EXPECT_EQ(fcntl(fds[0], F_GETFD), FD_CLOEXEC);
  EXPECT_EQ(open_fds(), before + 1);
  // The three others were installed at the next free numbers and closed again.
  for (int k = 1; k <= 3; k++) EXPECT_FALSE(is_open(slot[k])) << slot[k];
  close(fds[0]);
  EXPECT_EQ(open_fds(), before);

  // max_fds 0 with fds sent: all closed.
  int f = memfd_with("y");
  ASSERT_EQ(unix_send(a_, "n", 1, &f, 1), 1);
  close(f);
  ASSERT_EQ(unix_recv(b_, buf, sizeof buf, nullptr, 0, nullptr, &truncated), 1);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(open_fds(), before);
}

TEST_F(Pair, TruncatedReceiveIsReported) {
  char msg[100];
  memset(msg, 'a', sizeof msg);
  ASSERT_EQ(unix_send(a_, msg, sizeof msg, nullptr, 0), 100);
  char buf[10];
  bool truncated = false;
  EXPECT_EQ(unix_recv(b_, buf, sizeof buf, nullptr, 0, nullptr, &truncated), 10);
  EXPECT_TRUE(truncated);
  // Boundaries are kept: the rest of that message is gone, the next is whole.
  ASSERT_EQ(unix_send(a_, "next", 4, nullptr, 0), 4);
  EXPECT_EQ(unix_recv(b_, buf, sizeof buf, nullptr, 0, nullptr, &truncated), 4);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(memcmp(buf, "next", 4), 0);
}

TEST_F(Pair, ArgumentChecks) {
  int fds[5] = {0, 0, 0, 0, 0};
  EXPECT_EQ(unix_send(a_, "x", 1, fds, 5), -EINVAL);
  EXPECT_EQ(unix_send(a_, "x", 0, nullptr, 0), -EINVAL);
  EXPECT_EQ(unix_send(a_, "x", 1, nullptr, 1), -EINVAL);
  char buf[4];
  EXPECT_EQ(unix_recv(b_, buf, 0, nullptr, 0, nullptr, nullptr), -EINVAL);
  EXPECT_EQ(unix_recv(b_, buf, 4, nullptr, 2, nullptr, nullptr), -EINVAL);
}

TEST_F(Pair, NonblockingEmptyAndPeerClosed) {
  ASSERT_EQ(fcntl(b_, F_SETFL, O_NONBLOCK), 0);
  char buf[4];
  EXPECT_EQ(unix_recv(b_, buf, sizeof buf, nullptr, 0, nullptr, nullptr), -EAGAIN);
  close(a_);
  a_ = -1;
  EXPECT_EQ(unix_recv(b_, buf, sizeof buf, nullptr, 0, nullptr, nullptr), 0);
  EXPECT_EQ(unix_send(b_, "x", 1, nullptr, 0), -EPIPE);  // and no SIGPIPE
}

TEST_F(Pair, PeerCredIsThisProcess) {
  pid_t pid = 0;
  uid_t uid = 12345;
  gid_t gid = 12345;
  ASSERT_EQ(unix_peer_cred(a_, &pid, &uid, &gid), 0);
  EXPECT_EQ(pid, getpid());
  EXPECT_EQ(uid, getuid());
  EXPECT_EQ(gid, getgid());
  EXPECT_EQ(unix_peer_cred(a_, nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(unix_peer_cred(-1, &pid, nullptr, nullptr), -EBADF);
}

class Path : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mtier-sock-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/mtierd.sock";
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_, path_;
};

TEST_F(Path, ListenConnectAccept) {
  int l = unix_listen(path_, 0660);
  ASSERT_GE(l, 0) << strerror(-l);
  EXPECT_EQ(fcntl(l, F_GETFD), FD_CLOEXEC);
  struct stat st;
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(unix_accept(l), -EAGAIN);  // nobody waiting, non-blocking listener

  int c = unix_connect(path_);
  ASSERT_GE(c, 0) << strerror(-c);
  EXPECT_EQ(fcntl(c, F_GETFD), FD_CLOEXEC);
  EXPECT_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0);  // the client blocks
  int s = unix_accept(l);
  ASSERT_GE(s, 0) << strerror(-s);
  EXPECT_EQ(fcntl(s, F_GETFD), FD_CLOEXEC);
  EXPECT_NE(fcntl(s, F_GETFL) & O_NONBLOCK, 0);

  ASSERT_EQ(unix_send(c, "hello", 5, nullptr, 0), 5);
  char buf[8];
  EXPECT_EQ(unix_recv(s, buf, sizeof buf, nullptr, 0, nullptr, nullptr), 5);
  pid_t pid;
  ASSERT_EQ(unix_peer_cred(s, &pid, nullptr, nullptr), 0);
  EXPECT_EQ(pid, getpid());
  close(s);
  close(c);
  close(l);
}

TEST_F(Path, StaleSocketIsReplaced) {
  // A bound socket whose owner is gone: the path stays, nobody listens.
  int l = unix_listen(path_, 0600);
  ASSERT_GE(l, 0);
  close(l);
  ASSERT_EQ(access(path_.c_str(), F_OK), 0);
  EXPECT_EQ(unix_connect(path_), -ECONNREFUSED);
  l = unix_listen(path_, 0600);
  ASSERT_GE(l, 0) << strerror(-l);
  int c = unix_connect(path_);
  EXPECT_GE(c, 0);
  close(c);
  close(l);

  // Also a plain bound, never-listening socket of another type.
  unlink(path_.c_str());
  int raw = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a = {};
  a.sun_family = AF_UNIX;
  strcpy(a.sun_path, path_.c_str());
  ASSERT_EQ(bind(raw, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  close(raw);
  l = unix_listen(path_, 0600);
  EXPECT_GE(l, 0) << strerror(-l);
  close(l);
}

TEST_F(Path, LiveSocketIsRefused) {
  int l = unix_listen(path_, 0600);
  ASSERT_GE(l, 0);
  EXPECT_EQ(unix_listen(path_, 0600), -EADDRINUSE);
  // The running one is untouched; its probe connection reads as a client
  // that left at once.
  int probe = unix_accept(l);
  ASSERT_GE(probe, 0);
  char buf[4];
  EXPECT_EQ(unix_recv(probe, buf, sizeof buf, nullptr, 0, nullptr, nullptr), 0);
  close(probe);
  int c = unix_connect(path_);
  EXPECT_GE(c, 0);
  close(c);

  // A live listener of another type is in use too.
  close(l);
  unlink(path_.c_str());
  int stream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a = {};
  a.sun_family = AF_UNIX;
  strcpy(a.sun_path, path_.c_str());
  ASSERT_EQ(bind(stream, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(stream, 4), 0);
  EXPECT_EQ(unix_listen(path_, 0600), -EADDRINUSE);
  close(stream);
}

TEST_F(Path, RegularFileIsLeftAlone) {
  int f = open(path_.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(f, 0);
  ASSERT_EQ(write(f, "keep", 4), 4);
  close(f);
  EXPECT_EQ(unix_listen(path_, 0600), -EEXIST);
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 4);
  // A directory too.
  unlink(path_.c_str());
  ASSERT_EQ(mkdir(path_.c_str(), 0700), 0);
  EXPECT_EQ(unix_listen(path_, 0600), -EEXIST);
  rmdir(path_.c_str());
}

TEST_F(Path, PathLimits) {
  const size_t max = sizeof(sockaddr_un{}.sun_path) - 1;  // room for the NUL
  std::string longest = dir_ + "/" + std::string(max - dir_.size() - 1, 's');
  ASSERT_EQ(longest.size(), max);
  int l = unix_listen(longest, 0600);
  EXPECT_GE(l, 0) << strerror(-l);
  close(l);
  unlink(longest.c_str());
  EXPECT_EQ(unix_listen(longest + "s", 0600), -ENAMETOOLONG);
  EXPECT_EQ(unix_connect(longest + "s"), -ENAMETOOLONG);
  EXPECT_EQ(unix_listen("", 0600), -EINVAL);
  EXPECT_EQ(unix_connect(dir_ + "/absent"), -ENOENT);
  EXPECT_EQ(unix_listen(dir_ + "/no/such/dir", 0600), -ENOENT);
}

}  // namespace
}  // namespace mtier::sys
