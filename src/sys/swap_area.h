// SPDX-License-Identifier: Apache-2.0
// swapon(2)/swapoff(2), raw: each returns 0 or -errno. (Named swap_area,
// not swap, so that it does not shadow the C library's <sys/swap.h>.)
#pragma once

namespace mtier::sys {

// Activates the swap area at `path` (a file or device already set up by
// mkswap), with the kernel's default priority and no flags. Needs
// CAP_SYS_ADMIN; EINVAL when the filesystem cannot hold swap (tmpfs,
// overlayfs) or the file has holes, EBUSY when already active.
[[nodiscard]] int swap_on(const char* path);
// Deactivates it, bringing every page in it back into memory first (ENOMEM
// when they do not fit); EINVAL when `path` is not an active swap area.
[[nodiscard]] int swap_off(const char* path);

}  // namespace mtier::sys
