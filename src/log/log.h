// SPDX-License-Identifier: Apache-2.0
// Logging that is safe on the fault path and before main: a fixed stack
// buffer formatted with vsnprintf and written with write(2) to stderr, a
// per-thread recursion guard (a log call made while logging is dropped), and
// one process-wide rate cap (jemalloc malloc_write_fd). No stdio, no malloc.
// Into the journal (JOURNAL_STREAM names the fd: mtierd under systemd) lines
// carry sd-daemon(3) syslog prefixes, "<3>mtier: ..." for errors ("<3>mtierd:
// ..." in the daemon, after set_ident); on a terminal, a pipe or a file they
// read "mtier: error: ...", "mtier: warning: ...", "mtier: ..." (lower levels).
#pragma once
#include <cstdarg>
#include <cstddef>

namespace mtier::log {

enum class Level : int { kError = 3, kWarning = 4, kNotice = 5, kInfo = 6, kDebug = 7 };

// A line longer than this (prefix and '\n' included) is truncated.
inline constexpr size_t kMaxLineBytes = 512;
// Rate cap: at most this many lines per one-second window, all threads
// together. Lines past the cap are counted; the first line of a later window
// is preceded by one "mtier: warning: N messages suppressed ..." line.
inline constexpr unsigned kMaxLinesPerSecond = 100;

// Messages above this level are dropped. Default kWarning; MTIER_VERBOSE=1 sets kInfo.
void set_level(Level level);
Level level();
// Where lines go (default 2, stderr). Tests point it at a pipe or file.
// Whether it is the journal is checked again at the next line.
void set_fd(int fd);
// True if stderr is the journal's stream: for the lines written with
// fprintf just before an abort, which carry "<2>" only there.
bool stderr_is_journal();
// The name after each line's level ("mtier" by default; mtierd sets "mtierd").
// Copied into a fixed static buffer (no malloc); longer names are truncated
// to kMaxIdentBytes; nullptr or "" restores "mtier". Call it at start, before
// other threads log: it is not synchronized with a line being written.
inline constexpr size_t kMaxIdentBytes = 15;
void set_ident(const char* ident);
// Formats and writes one line: the prefix above and '\n' added (a trailing
// '\n' in fmt is not doubled). Preserves errno.
void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void vwrite(Level level, const char* fmt, va_list ap);

// While on, error lines are not written: the last one is kept, for a caller
// that reports the failure in its own one line (the preload library's
// "running with plain allocation"). Process-wide; turning it on clears it.
void capture_errors(bool on);
// The last error line kept while capturing ("" if none), without prefix.
const char* captured_error();

// Test hooks: the clock the rate cap reads, in seconds (nullptr restores
// CLOCK_MONOTONIC_COARSE), and a reset of the cap's window and counters.
void set_clock_for_testing(long long (*now_seconds)());
void reset_rate_cap_for_testing();

}  // namespace mtier::log

#define MTIER_LOG_ERROR(...) ::mtier::log::write(::mtier::log::Level::kError, __VA_ARGS__)
#define MTIER_LOG_WARN(...) ::mtier::log::write(::mtier::log::Level::kWarning, __VA_ARGS__)
#define MTIER_LOG_NOTICE(...) ::mtier::log::write(::mtier::log::Level::kNotice, __VA_ARGS__)
#define MTIER_LOG_INFO(...) ::mtier::log::write(::mtier::log::Level::kInfo, __VA_ARGS__)
#define MTIER_LOG_DEBUG(...) ::mtier::log::write(::mtier::log::Level::kDebug, __VA_ARGS__)
