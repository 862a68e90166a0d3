// SPDX-License-Identifier: Apache-2.0
// A full-screen terminal for the tool's live views (`mtier heat`), without
// curses: raw keyboard input, the alternate screen, the window size, and the
// way back to the terminal as it was. Plain ANSI/xterm sequences, which every
// terminal emulator in use understands.
#pragma once
#include <termios.h>

#include <string>
#include <string_view>
#include <vector>

namespace mtier::tools {

// Key codes decode_keys gives for sequences (bytes are given as 0..255).
enum TerminalKey : int {
  kKeyUp = 0x101,
  kKeyDown,
  kKeyRight,
  kKeyLeft,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
};

// The size of the terminal on fd: 0 with *cols and *rows (both >= 1), or
// -errno (-ENOTTY when fd is not a terminal, -EINVAL when it reports 0).
int terminal_size(int fd, unsigned* cols, unsigned* rows);

// The keys in bytes read from a terminal in raw mode: CSI and SS3 arrow,
// Home/End and PageUp/PageDown sequences become kKey* codes, other
// sequences starting with ESC [ or ESC O are dropped whole, a lone ESC (at
// the end of the bytes, or before a byte that starts no sequence) is 27,
// every other byte its value.
std::vector<int> decode_keys(std::string_view bytes);

// Writes all of `s` to fd, retrying partial writes and EINTR: 0 or -errno.
int write_all(int fd, std::string_view s);

// Takes a terminal over for a full-screen view and gives it back.
//
// begin() puts in_fd in raw mode (no echo, no line editing, no signal keys:
// Ctrl-C arrives as byte 3; output processing kept, so "\n" is a new line;
// reads return at once, with what there is) and switches out_fd to the
// alternate screen with the cursor hidden. end() undoes exactly what begin()
// did, in reverse; it is idempotent and the destructor calls it, so every
// way out of the caller's scope restores the terminal. Neither is
// async-signal-safe: a signal handler sets a flag and the caller's loop
// returns through end().
class TerminalSession {
 public:
  TerminalSession() = default;
  ~TerminalSession() { end(); }
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  // 0, or -errno with *why one line (the terminal is left as it was).
  // in_fd < 0: no keyboard (only the screen is taken over).
  int begin(int in_fd, int out_fd, std::string* why);
  void end();
  bool active() const { return out_fd_ >= 0; }

  // Draws `frame` (lines joined by '\n', as heat_view.h's render_frame
  // gives) from the top-left corner of a screen of `rows` rows: each line
  // is cleared and then written at its row, and the rows below the last
  // line up to `rows` are cleared, so nothing of a taller or wider previous
  // frame remains and nothing scrolls. One write; 0 or -errno.
  int draw(std::string_view frame, unsigned rows) const;

 private:
  int in_fd_ = -1, out_fd_ = -1;
  bool have_termios_ = false;
  struct termios saved_ {};
};

}  // namespace mtier::tools
