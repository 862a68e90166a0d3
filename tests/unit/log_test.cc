// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/log: prefix (plain, and into the journal), level
// filter, recursion guard, rate cap.
#include "log/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <printf.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// ASan's printf interceptor warns about the custom %W conversion below.
extern "C" const char* __asan_default_options() { return "check_printf=0"; }

namespace mtier::log {
namespace {

long long g_fake_now = 1000;
long long fake_clock() { return g_fake_now; }

// Points the log at a non-blocking pipe with a fake clock; restores stderr after.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe2(fds_, O_NONBLOCK | O_CLOEXEC), 0);
    set_fd(fds_[1]);
    set_level(Level::kWarning);
    g_fake_now = 1000;
    set_clock_for_testing(fake_clock);
    reset_rate_cap_for_testing();
  }
  void TearDown() override {
    set_fd(2);
    set_level(Level::kWarning);
    set_clock_for_testing(nullptr);
    reset_rate_cap_for_testing();
    close(fds_[0]);
    close(fds_[1]);
  }
  // Everything written so far.
  std::string drain() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds_[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  std::vector<std::string> lines() {
    std::vector<std::string> v;
    std::string all = drain();
    size_t pos = 0, nl;
    while ((nl = all.find('\n', pos)) != std::string::npos) {
      v.push_back(all.substr(pos, nl - pos));
      pos = nl + 1;
    }
    EXPECT_EQ(pos, all.size()) << "output does not end with a newline";
    return v;
  }
  int fds_[2] = {-1, -1};
};

// Read before any test changes it (the level is constant-initialized).
const Level g_initial_level = level();

TEST_F(LogTest, DefaultLevelIsWarning) { EXPECT_EQ(g_initial_level, Level::kWarning); }

TEST_F(LogTest, PlainLinesNameErrorsAndWarnings) {
  set_level(Level::kDebug);
  MTIER_LOG_ERROR("disk %s is %d%% full", "sda", 97);
  MTIER_LOG_WARN("w");
  MTIER_LOG_NOTICE("n");
  MTIER_LOG_INFO("i");
  MTIER_LOG_DEBUG("d");
  EXPECT_EQ(drain(), "mtier: error: disk sda is 97% full\nmtier: warning: w\nmtier: n\n"
                     "mtier: i\nmtier: d\n");
}

TEST_F(LogTest, TrailingNewlineIsNotDoubled) {
  MTIER_LOG_WARN("one line\n");
  EXPECT_EQ(drain(), "mtier: warning: one line\n");
}

TEST_F(LogTest, LevelFilterDropsLessSevere) {
  MTIER_LOG_INFO("hidden");
  MTIER_LOG_NOTICE("hidden");
  MTIER_LOG_WARN("shown");
  set_level(Level::kError);
  EXPECT_EQ(level(), Level::kError);
  MTIER_LOG_WARN("hidden");
  MTIER_LOG_ERROR("err");
  EXPECT_EQ(drain(), "mtier: warning: shown\nmtier: error: err\n");
}

TEST_F(LogTest, LongLineIsTruncatedAndEndsInNewline) {
  std::string big(3 * kMaxLineBytes, 'x');
  MTIER_LOG_ERROR("%s", big.c_str());
  std::string out = drain();
  EXPECT_EQ(out.size(), kMaxLineBytes);
  EXPECT_EQ(out.rfind("mtier: error: xxx", 0), 0u);
  EXPECT_EQ(out.back(), '\n');
}

TEST_F(LogTest, PreservesErrno) {
  errno = EXDEV;
  MTIER_LOG_WARN("x");
  EXPECT_EQ(errno, EXDEV);
  set_fd(-1);
  MTIER_LOG_WARN("write(2) fails with EBADF and the line is dropped");
  EXPECT_EQ(errno, EXDEV);
  EXPECT_EQ(drain(), "mtier: warning: x\n");
}

// A printf conversion (%W) whose handler logs: the nested call must be dropped.
int g_nested_calls = 0;
int nested_log_handler(FILE* stream, const printf_info*, const void* const*) {
  ++g_nested_calls;
  MTIER_LOG_ERROR("nested");
  return fprintf(stream, "[W]");
}
int nested_log_arginfo(const printf_info*, size_t, int*, int*) { return 0; }

// Calls vwrite with a format the compiler cannot check (%W is ours).
void log_unchecked(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite(Level::kError, fmt, ap);
  va_end(ap);
}

TEST_F(LogTest, RecursiveCallIsDropped) {
  ASSERT_EQ(register_printf_specifier('W', nested_log_handler, nested_log_arginfo), 0);
  log_unchecked("outer %W done");
  EXPECT_EQ(g_nested_calls, 1);
  EXPECT_EQ(drain(), "mtier: error: outer [W] done\n");
  MTIER_LOG_ERROR("after");  // the guard is released
  EXPECT_EQ(drain(), "mtier: error: after\n");
}

TEST_F(LogTest, RateCapSuppressesAndReports) {
  const unsigned extra = 37;
  for (unsigned i = 0; i < kMaxLinesPerSecond + extra; ++i) MTIER_LOG_WARN("line %u", i);
  std::vector<std::string> first = lines();
  ASSERT_EQ(first.size(), kMaxLinesPerSecond);
  EXPECT_EQ(first.back(), "mtier: warning: line " + std::to_string(kMaxLinesPerSecond - 1));
  g_fake_now += 1;
  MTIER_LOG_ERROR("next window");
  std::vector<std::string> second = lines();
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].rfind("mtier: warning: 37 messages suppressed", 0), 0u) << second[0];
  EXPECT_EQ(second[1], "mtier: error: next window");
}

TEST_F(LogTest, FilteredLinesDoNotCountAgainstTheCap) {
  for (unsigned i = 0; i < 2 * kMaxLinesPerSecond; ++i) MTIER_LOG_DEBUG("hidden");
  MTIER_LOG_WARN("shown");
  EXPECT_EQ(drain(), "mtier: warning: shown\n");
}

TEST_F(LogTest, NoSuppressedLineWhenNothingWasDropped) {
  MTIER_LOG_WARN("a");
  g_fake_now += 5;
  MTIER_LOG_WARN("b");
  EXPECT_EQ(drain(), "mtier: warning: a\nmtier: warning: b\n");
}

TEST_F(LogTest, IdentChangesThePrefixAndBack) {
  set_ident("mtierd");
  MTIER_LOG_ERROR("daemon line");
  set_ident("an-identifier-longer-than-15");  // truncated to kMaxIdentBytes
  MTIER_LOG_WARN("long");
  set_ident(nullptr);  // back to the default
  MTIER_LOG_ERROR("library line");
  set_ident("mtierd");
  set_ident("mtier");
  MTIER_LOG_WARN("explicit default");
  EXPECT_EQ(drain(), "mtierd: error: daemon line\nan-identifier-l: warning: long\n"
                     "mtier: error: library line\nmtier: warning: explicit default\n");
}

// JOURNAL_STREAM set to "DEV:INO" of fd (nullptr: unset), then the fd
// pointed at again so that the next line checks it.
void set_journal_stream(int fd, bool same) {
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  std::string v = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + (same ? 0 : 1));
  ASSERT_EQ(setenv("JOURNAL_STREAM", v.c_str(), 1), 0);
  set_fd(fd);
}

TEST_F(LogTest, IntoTheJournalLinesCarrySyslogLevels) {
  set_journal_stream(fds_[1], true);
  set_level(Level::kDebug);
  MTIER_LOG_ERROR("disk %s is %d%% full", "sda", 97);
  MTIER_LOG_WARN("w");
  MTIER_LOG_NOTICE("n");
  MTIER_LOG_INFO("i");
  MTIER_LOG_DEBUG("d");
  unsetenv("JOURNAL_STREAM");
  EXPECT_EQ(drain(), "<3>mtier: disk sda is 97% full\n<4>mtier: w\n<5>mtier: n\n"
                     "<6>mtier: i\n<7>mtier: d\n");
}

TEST_F(LogTest, AJournalStreamOfAnotherFileIsNotTheJournal) {
  set_journal_stream(fds_[1], false);  // another inode: stderr was redirected
  MTIER_LOG_WARN("w");
  unsetenv("JOURNAL_STREAM");
  set_fd(fds_[1]);
  MTIER_LOG_WARN("unset");
  EXPECT_EQ(drain(), "mtier: warning: w\nmtier: warning: unset\n");
}

}  // namespace
}  // namespace mtier::log
