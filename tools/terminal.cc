// SPDX-License-Identifier: Apache-2.0
#include "terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mtier::tools {
namespace {

// Enter the alternate screen, hide the cursor; and back, attributes reset.
constexpr char kEnterScreen[] = "\033[?1049h\033[?25l";
constexpr char kLeaveScreen[] = "\033[0m\033[?25h\033[?1049l";

// The key of a CSI sequence's parameters and final byte, or 0 for none.
int csi_key(std::string_view params, char final_byte) {
  switch (final_byte) {
    case 'A':
      return kKeyUp;
    case 'B':
      return kKeyDown;
    case 'C':
      return kKeyRight;
    case 'D':
      return kKeyLeft;
    case 'H':
      return kKeyHome;
    case 'F':
      return kKeyEnd;
    case '~':
      if (params == "5") return kKeyPageUp;
      if (params == "6") return kKeyPageDown;
      if (params == "1" || params == "7") return kKeyHome;
      if (params == "4" || params == "8") return kKeyEnd;
      return 0;
    default:
      return 0;
  }
}

}  // namespace

int terminal_size(int fd, unsigned* cols, unsigned* rows) {
  struct winsize ws {};
  if (ioctl(fd, TIOCGWINSZ, &ws) < 0) return -errno;
  if (ws.ws_col == 0 || ws.ws_row == 0) return -EINVAL;
  *cols = ws.ws_col;
  *rows = ws.ws_row;
  return 0;
}

std::vector<int> decode_keys(std::string_view b) {
  std::vector<int> keys;
  for (size_t i = 0; i < b.size();) {
    unsigned char c = static_cast<unsigned char>(b[i]);
    if (c != 27 || i + 1 >= b.size() || (b[i + 1] != '[' && b[i + 1] != 'O')) {
      keys.push_back(c);
      i++;
      continue;
    }
    // ESC [ params final, or ESC O final (SS3, what keypads in application
    // mode send): a final byte is in 0x40..0x7e.
    size_t j = i + 2;
    if (b[i + 1] == '[')
      while (j < b.size() && (b[j] < 0x40 || b[j] > 0x7e)) j++;
    if (j >= b.size()) break;  // cut off: dropped
    int key = csi_key(b.substr(i + 2, j - i - 2), b[j]);
    if (key) keys.push_back(key);
    i = j + 1;
  }
  return keys;
}

int write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

int TerminalSession::begin(int in_fd, int out_fd, std::string* why) {
  end();
  if (in_fd >= 0) {
    if (tcgetattr(in_fd, &saved_) < 0) {
      int e = errno;
      *why = std::string("reading the terminal's settings: ") + strerror(e);
      return -e;
    }
    struct termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | ISIG | IEXTEN);
    raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
    raw.c_cc[VMIN] = 0;  // reads never wait: the caller polls
    raw.c_cc[VTIME] = 0;
    if (tcsetattr(in_fd, TCSANOW, &raw) < 0) {
      int e = errno;
      *why = std::string("setting the terminal to raw mode: ") + strerror(e);
      return -e;
    }
    in_fd_ = in_fd;
    have_termios_ = true;
  }
  out_fd_ = out_fd;
  int rc = write_all(out_fd, kEnterScreen);
  if (rc < 0) {
    *why = std::string("writing to the terminal: ") + strerror(-rc);
    end();
  }
  return rc;
}

void TerminalSession::end() {
  if (out_fd_ >= 0) (void)write_all(out_fd_, kLeaveScreen);
  // TCSADRAIN: the sequences above reach the terminal before echo returns.
  if (have_termios_) (void)tcsetattr(in_fd_, TCSADRAIN, &saved_);
  have_termios_ = false;
  in_fd_ = out_fd_ = -1;
}

int TerminalSession::draw(std::string_view frame, unsigned rows) const {
  if (out_fd_ < 0) return -EBADF;
  // Rows are addressed absolutely rather than by writing '\n': a line that
  // fills the last column leaves the cursor in the "pending wrap" state, in
  // which an erase-to-end would clear that last character; and the rows
  // below the frame are cleared one by one, since a cursor moved past the
  // last row stays on it and an erase-below from there would clear it.
  std::string out;
  out.reserve(frame.size() + 1024);
  unsigned row = 1;
  for (size_t start = 0;; row++) {
    size_t end = frame.find('\n', start);
    out += "\033[" + std::to_string(row) + ";1H\033[2K";
    out += frame.substr(start, end == std::string_view::npos ? end : end - start);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  for (row++; row <= rows; row++) out += "\033[" + std::to_string(row) + ";1H\033[2K";
  return write_all(out_fd_, out);
}

}  // namespace mtier::tools
