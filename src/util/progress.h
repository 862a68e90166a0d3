// SPDX-License-Identifier: Apache-2.0
// The progress of a long command: one live line on stderr, redrawn in
// place, "LABEL DONE/TOTAL UNIT (P%), ELAPSED elapsed, about ETA left".
// Drawn only on a terminal and never when the command was asked to be
// quiet: a pipe, a log file or a test gets no carriage returns or escape
// sequences. Log lines (what the command prints as it goes) go through the
// same object so that on a terminal they land above the live line instead
// of through it.
//
// The clock and the output are a seam (Io), so tests drive the object with
// a fake clock and a captured "terminal".
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace mtier::progress {

struct Io {
  std::function<double()> now;                  // seconds, monotonic
  std::function<void(std::string_view)> write;  // all of it, or as much as goes
  bool terminal = false;                        // draw the live line
  unsigned columns = 0;  // the terminal's width: the live line is cut to fit
                         // (a wrapped line would not be erased); 0 unknown
};

// stderr and the steady clock; terminal when stderr is a terminal and TERM
// is not "dumb" (which cannot erase a line), with its width then.
Io stderr_io();

// "7s", "3m05s", "2h04m" (whole seconds, rounded down; negative as 0).
std::string format_duration(double seconds);

// The live line's text (no "\r", no erase): the ETA is the elapsed time
// scaled to what is left, given once something is done and a second has
// passed (before that, "estimating"); none once done == total. An empty
// unit leaves the unit out; total 0 shows only the label and the time.
std::string format_line(std::string_view label, uint64_t done, uint64_t total,
                        std::string_view unit, double elapsed);

class Progress {
 public:
  // Redraws are at most this often (and at a phase's end), so that a
  // caller may report every item however small.
  static constexpr double kRedrawSeconds = 0.25;

  // quiet: neither the live line nor log lines.
  Progress(Io io, bool quiet);
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a phase: TOTAL items of UNIT; the ETA's clock starts here. Draws
  // the line at once (done 0).
  void start(std::string label, uint64_t total, std::string unit);
  // DONE items of the phase so far (a total that changed as well, e.g. runs
  // that will not happen after all): redrawn when kRedrawSeconds have passed
  // since the last draw, or when done reaches total.
  void update(uint64_t done);
  void update(uint64_t done, uint64_t total);
  // A new label for the phase (a count in it changed); the clock goes on,
  // and the next update() draws it.
  void relabel(std::string label) { label_ = std::move(label); }
  // A whole log line (no trailing newline needed): on a terminal the live
  // line is erased, the text written, the live line drawn again below it.
  void line(std::string_view text);
  // Erases the live line (and ends the phase): before the command's result
  // is printed, and at destruction.
  void clear();

  bool live() const { return live_; }  // drawing on a terminal

 private:
  void draw();
  Io io_;
  bool quiet_, live_;
  bool drawn_ = false;  // the live line is on the screen
  std::string label_, unit_;
  uint64_t done_ = 0, total_ = 0;
  double started_ = 0, last_draw_ = 0;
  bool in_phase_ = false;
};

}  // namespace mtier::progress
