// SPDX-License-Identifier: Apache-2.0
// Shared-memory syscalls for segments handed between processes (the runtime's
// ipc segment, a memfd the daemon receives over a unix socket): sealable
// memfds, seals, and what fstat/fstatfs say about a received fd. Mapping and
// hole punching are in sys/vm.h. Each call returns 0 (or an fd, a value) or
// -errno.
#pragma once
#include <cstdint>

namespace mtier::sys {

// memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING). Returns the fd or -errno.
[[nodiscard]] int memfd_sealable(const char* name);
// ftruncate(fd, size): sparse, costs no memory. 0 or -errno.
[[nodiscard]] int resize_fd(int fd, uint64_t size);
// Adds `seals` (F_SEAL_*) to a memfd. 0 or -errno.
[[nodiscard]] int add_seals(int fd, int seals);
// The seals of fd (F_SEAL_* bits), or -errno (-EINVAL: fd cannot be sealed,
// i.e. it is not a memfd or shmem file).
[[nodiscard]] int get_seals(int fd);

// What fstat/fstatfs say about fd, for checking an fd received from another
// process before mapping it.
struct FileFacts {
  bool regular = false;      // S_ISREG
  bool shmem = false;        // on tmpfs/shmem (a plain memfd), not hugetlbfs
  uint64_t size = 0;         // st_size
  uint64_t allocated = 0;    // st_blocks * 512: memory the file holds
};
[[nodiscard]] int file_facts(int fd, FileFacts* out);

}  // namespace mtier::sys
