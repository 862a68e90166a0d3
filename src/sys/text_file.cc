#include "sys/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mtier::sys {
namespace {

// Reads all of fd into *out. Returns 0 or -errno.
int read_all(int fd, std::string* out) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return 0;
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

int read_text_file(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct stat st {};
  int rc = fstat(fd, &st) != 0 ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : read_all(fd, out);
  close(fd);
  return rc;
}

std::string error_text(int err) {
  char buf[128];
  return strerror_r(err, buf, sizeof buf);
}

}  // namespace mtier::sys
