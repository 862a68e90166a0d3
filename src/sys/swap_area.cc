// SPDX-License-Identifier: Apache-2.0
#include "sys/swap_area.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace mtier::sys {

int swap_on(const char* path) { return syscall(SYS_swapon, path, 0) == 0 ? 0 : -errno; }

int swap_off(const char* path) { return syscall(SYS_swapoff, path) == 0 ? 0 : -errno; }

}  // namespace mtier::sys
