// SPDX-License-Identifier: Apache-2.0
#include "store/store_header.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store/staging.h"

namespace mtier {
namespace {

constexpr char kMagic[] = "mtier store v1\n";  // 16 bytes with its NUL

}  // namespace

int write_store_header(int fd, uint64_t slot_bytes) {
  alignas(64) char page[kStorePage] = {};
  memcpy(page, kMagic, sizeof kMagic);
  memcpy(page + sizeof kMagic, &slot_bytes, sizeof slot_bytes);
  ssize_t n = pwrite(fd, page, sizeof page, static_cast<off_t>(slot_bytes));
  if (n < 0) return -errno;
  return n == static_cast<ssize_t>(sizeof page) ? 0 : -EIO;
}

bool has_store_header(int fd, uint64_t file_size) {
  if (file_size < kStorePage || file_size % kStorePage) return false;
  char head[sizeof kMagic] = {};
  ssize_t n = pread(fd, head, sizeof head, static_cast<off_t>(file_size - kStorePage));
  return n == static_cast<ssize_t>(sizeof head) && memcmp(head, kMagic, sizeof kMagic) == 0;
}

}  // namespace mtier
