// SPDX-License-Identifier: Apache-2.0
#include "sys/fd_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

namespace mtier::sys {

int raise_fd_limit(uint64_t want, uint64_t* now) {
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) < 0) return -errno;
  *now = r.rlim_cur;
  rlim_t target = std::min<rlim_t>(static_cast<rlim_t>(want), r.rlim_max);
  if (target <= r.rlim_cur) return 0;
  r.rlim_cur = target;
  if (setrlimit(RLIMIT_NOFILE, &r) < 0) return -errno;
  *now = r.rlim_cur;
  return 0;
}

}  // namespace mtier::sys
