// SPDX-License-Identifier: Apache-2.0
#include "util/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mtier::progress {
namespace {

// Carriage return and erase to the end of the line: the live line's start.
constexpr char kErase[] = "\r\033[K";
// Before this much has elapsed an ETA is mostly noise.
constexpr double kEtaAfterSeconds = 1.0;

void write_stderr(std::string_view s) {
  while (!s.empty()) {
    ssize_t n = write(STDERR_FILENO, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // progress is best effort: never fail the command for it
    s.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Io stderr_io() {
  Io io;
  io.now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  io.write = write_stderr;
  const char* term = getenv("TERM");
  io.terminal = isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
  struct winsize ws {};
  if (io.terminal && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0) io.columns = ws.ws_col;
  return io;
}

std::string format_duration(double seconds) {
  uint64_t s = seconds > 0 ? static_cast<uint64_t>(seconds) : 0;
  char buf[48];
  if (s < 60)
    snprintf(buf, sizeof buf, "%" PRIu64 "s", s);
  else if (s < 3600)
    snprintf(buf, sizeof buf, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
  else
    snprintf(buf, sizeof buf, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
  return buf;
}

std::string format_line(std::string_view label, uint64_t done, uint64_t total,
                        std::string_view unit, double elapsed) {
  std::string out(label);
  if (total > 0) {
    if (done > total) done = total;
    char buf[96];
    snprintf(buf, sizeof buf, " %" PRIu64 "/%" PRIu64, done, total);
    out += buf;
    if (!unit.empty()) out += " " + std::string(unit);
    snprintf(buf, sizeof buf, " (%d%%)", static_cast<int>(100.0 * done / total));
    out += buf;
  }
  out += ", " + format_duration(elapsed) + " elapsed";
  if (total == 0 || done == total) return out;
  if (done == 0 || elapsed < kEtaAfterSeconds) return out + ", estimating the time left";
  return out + ", about " + format_duration(elapsed * (total - done) / done) + " left";
}

Progress::Progress(Io io, bool quiet)
    : io_(std::move(io)), quiet_(quiet), live_(!quiet && io_.terminal) {}

void Progress::start(std::string label, uint64_t total, std::string unit) {
  label_ = std::move(label);
  unit_ = std::move(unit);
  done_ = 0;
  total_ = total;
  in_phase_ = true;
  if (!live_) return;
  started_ = io_.now();
  draw();
}

void Progress::update(uint64_t done) { update(done, total_); }

void Progress::update(uint64_t done, uint64_t total) {
  done_ = done;
  total_ = total;
  if (!live_ || !in_phase_) return;
  bool finished = total > 0 && done >= total;
  if (!finished && io_.now() - last_draw_ < kRedrawSeconds) return;
  draw();
}

void Progress::line(std::string_view text) {
  if (quiet_) return;
  std::string out = drawn_ ? kErase : "";
  out += text;
  if (out.empty() || out.back() != '\n') out += '\n';
  drawn_ = false;
  io_.write(out);
  if (live_ && in_phase_) draw();
}

void Progress::clear() {
  in_phase_ = false;
  if (!drawn_) return;
  drawn_ = false;
  io_.write(kErase);
}

void Progress::draw() {
  last_draw_ = io_.now();
  std::string text = format_line(label_, done_, total_, unit_, last_draw_ - started_);
  // One column short of the width: a line that fills the last column
  // leaves the cursor pending a wrap on some terminals.
  if (io_.columns > 1 && text.size() >= io_.columns) text.resize(io_.columns - 1);
  io_.write(kErase + text);
  drawn_ = true;
}

}  // namespace mtier::progress
