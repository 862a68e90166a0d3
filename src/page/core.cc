// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the engine's threads.
#include <signal.h>

#include <cerrno>

#include "page/core.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier {

int open_channels(Core& core, std::vector<std::unique_ptr<StoreChannel>>* out) {
  for (auto& s : core.stores) {
    auto ch = s->open_channel(core.opts.queue_depth);
    if (!ch) return -ENOMEM;
    out->push_back(std::move(ch));
  }
  return 0;
}

void fail_access(Core& core, void* addr, unsigned tid) {
  if ((core.uffd_features & UFFD_FEATURE_POISON) && core.uffd->poison(addr, kPageSize) == 0)
    return;
  if (tid) (void)sys::signal_thread(static_cast<pid_t>(tid), SIGBUS);
}

}  // namespace mtier
