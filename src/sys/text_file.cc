// SPDX-License-Identifier: Apache-2.0
#include "sys/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace mtier::sys {
namespace {

// Reads fd to its end into *out; more than max_bytes is -EFBIG. Returns 0
// or -errno.
int read_all(int fd, size_t max_bytes, std::string* out) {
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    if (static_cast<size_t>(n) > max_bytes - text.size()) return -EFBIG;
    text.append(buf, static_cast<size_t>(n));
  }
  out->append(text);
  return 0;
}

int check_and_read(int fd, size_t max_bytes, std::string* out, mode_t* type) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return -errno;
  if (type) *type = st.st_mode & S_IFMT;
  if (S_ISDIR(st.st_mode)) return -EISDIR;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return -EFBIG;
  return read_all(fd, max_bytes, out);
}

}  // namespace

int read_regular_file(const std::string& path, size_t max_bytes, std::string* out,
                      mode_t* type) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = check_and_read(fd, max_bytes, out, type);
  close(fd);
  return rc;
}

const char* file_type_name(mode_t type) {
  switch (type & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
  }
  return "not a regular file";
}

std::string error_text(int err) {
  char buf[128];
  return strerror_r(err, buf, sizeof buf);
}

}  // namespace mtier::sys
