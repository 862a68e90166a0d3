// SPDX-License-Identifier: Apache-2.0
#include "sys/shm.h"
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

namespace mtier::sys {

int memfd_sealable(const char* name) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  return fd >= 0 ? adopt_fd(fd) : -errno;
}

int resize_fd(int fd, uint64_t size) {
  return ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : -errno;
}

int add_seals(int fd, int seals) { return fcntl(fd, F_ADD_SEALS, seals) == 0 ? 0 : -errno; }

int get_seals(int fd) {
  int s = fcntl(fd, F_GET_SEALS);
  return s >= 0 ? s : -errno;
}

int file_facts(int fd, FileFacts* out) {
  struct stat st;
  if (fstat(fd, &st) != 0) return -errno;
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return -errno;
  out->regular = S_ISREG(st.st_mode);
  out->shmem = static_cast<unsigned long>(fs.f_type) == TMPFS_MAGIC;
  out->size = st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
  out->allocated = static_cast<uint64_t>(st.st_blocks) * 512;
  return 0;
}

}  // namespace mtier::sys
