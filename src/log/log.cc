// SPDX-License-Identifier: Apache-2.0
// Logging: one stack buffer, vsnprintf and write(2); no stdio streams, no malloc.
#include "log/log.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>  // snprintf / vsnprintf only: they format into our buffer
#include <cstdlib>
#include <cstring>

namespace mtier::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kWarning)};
std::atomic<int> g_fd{2};
// Whether g_fd is the journal's stream: -1 not known yet (set_fd resets it).
std::atomic<int> g_journal{-1};
std::atomic<long long (*)()> g_clock{nullptr};
// The prefix's name, NUL-terminated; written only by set_ident.
char g_ident[kMaxIdentBytes + 1] = "mtier";

// Set while this thread is inside vwrite. initial-exec: the preload library
// must not make the dynamic linker allocate TLS on first use.
__attribute__((tls_model("initial-exec"))) thread_local bool t_in_log = false;

// capture_errors(): while set, error lines land in g_captured (the last one
// wins) instead of the fd. Written by one starting thread at a time.
std::atomic<bool> g_capture{false};
char g_captured[kMaxLineBytes];

// Rate cap: the current window (in seconds), lines admitted in it, lines dropped.
std::atomic<long long> g_window{-1};
std::atomic<unsigned> g_admitted{0};
std::atomic<unsigned long> g_suppressed{0};

long long now_seconds() {
  if (auto clock = g_clock.load(std::memory_order_relaxed)) return clock();
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return ts.tv_sec;
}

// Writes all of buf[0, len) to fd, retrying short writes and EINTR; other errors drop the line.
void write_all(int fd, const char* buf, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    buf += n;
    len -= static_cast<size_t>(n);
  }
}

// True if fd is the stream systemd connected to the journal: JOURNAL_STREAM
// ("DEV:INO", systemd.exec(5)) names fd's device and inode. getenv and fstat
// allocate nothing.
bool is_journal(int fd) {
  const char* env = getenv("JOURNAL_STREAM");
  struct stat st {};
  if (env == nullptr || *env == '\0' || fstat(fd, &st) != 0) return false;
  char mine[48];
  snprintf(mine, sizeof mine, "%llu:%llu", static_cast<unsigned long long>(st.st_dev),
           static_cast<unsigned long long>(st.st_ino));
  return strcmp(env, mine) == 0;
}

bool journal() {
  int j = g_journal.load(std::memory_order_relaxed);
  if (j < 0) g_journal.store(j = is_journal(g_fd.load(std::memory_order_relaxed)) ? 1 : 0);
  return j == 1;
}

// The word a line of this level carries on a terminal or in a file.
const char* level_word(int level) {
  if (level <= static_cast<int>(Level::kError)) return "error: ";
  return level == static_cast<int>(Level::kWarning) ? "warning: " : "";
}

// Formats the head and fmt + '\n' into a stack buffer (truncating) and
// writes it. The head is "<level>IDENT: " into the journal, else
// "IDENT: warning: " (error, warning) or "IDENT: ".
void emit(int level, const char* fmt, va_list ap) {
  char buf[kMaxLineBytes];
  int head = journal() ? snprintf(buf, sizeof buf, "<%d>%s: ", level, g_ident)
                       : snprintf(buf, sizeof buf, "%s: %s", g_ident, level_word(level));
  int body = vsnprintf(buf + head, sizeof buf - static_cast<size_t>(head), fmt, ap);
  size_t len = static_cast<size_t>(head) + (body > 0 ? static_cast<size_t>(body) : 0);
  if (len > sizeof buf - 1) len = sizeof buf - 1;  // truncated: keep room for '\n'
  if (len > static_cast<size_t>(head) && buf[len - 1] == '\n') --len;
  buf[len++] = '\n';
  write_all(g_fd.load(std::memory_order_relaxed), buf, len);
}

void emitf(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void emitf(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(level, fmt, ap);
  va_end(ap);
}

// Starts a new window if the clock moved on; the thread that starts it
// reports what the previous windows dropped.
void roll_window(long long now) {
  long long window = g_window.load();
  if (now == window || !g_window.compare_exchange_strong(window, now)) return;
  g_admitted.store(0);
  unsigned long dropped = g_suppressed.exchange(0);
  if (dropped == 0) return;
  emitf(static_cast<int>(Level::kWarning), "%lu messages suppressed (more than %u lines per second)",
        dropped, kMaxLinesPerSecond);
}

// Returns true if one more line may be written in the current window.
bool admit() {
  roll_window(now_seconds());
  if (g_admitted.fetch_add(1) < kMaxLinesPerSecond) return true;
  g_suppressed.fetch_add(1);
  return false;
}

}  // namespace

void set_level(Level level) { g_level.store(static_cast<int>(level)); }
Level level() { return static_cast<Level>(g_level.load()); }
void set_fd(int fd) {
  g_fd.store(fd);
  g_journal.store(-1);
}

bool stderr_is_journal() { return is_journal(2); }

void set_ident(const char* ident) {
  if (ident == nullptr || *ident == '\0') ident = "mtier";
  size_t n = strnlen(ident, kMaxIdentBytes);
  memcpy(g_ident, ident, n);
  g_ident[n] = '\0';
}

void write(Level level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite(level, fmt, ap);
  va_end(ap);
}

void vwrite(Level level, const char* fmt, va_list ap) {
  int lv = static_cast<int>(level);
  if (level == Level::kError && g_capture.load(std::memory_order_relaxed)) {
    int saved_errno = errno;
    vsnprintf(g_captured, sizeof g_captured, fmt, ap);
    errno = saved_errno;
    return;
  }
  if (lv > g_level.load(std::memory_order_relaxed) || t_in_log) return;
  int saved_errno = errno;
  t_in_log = true;
  if (admit()) emit(lv, fmt, ap);
  t_in_log = false;
  errno = saved_errno;
}

void capture_errors(bool on) {
  if (on) g_captured[0] = '\0';
  g_capture.store(on);
}

const char* captured_error() { return g_captured; }

void set_clock_for_testing(long long (*now_seconds)()) { g_clock.store(now_seconds); }

void reset_rate_cap_for_testing() {
  g_window.store(-1);
  g_admitted.store(0);
  g_suppressed.store(0);
}

}  // namespace mtier::log
