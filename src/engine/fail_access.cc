#include <signal.h>

#include "engine/core.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier {

void fail_access(Core& core, void* addr, unsigned tid) {
  if ((core.uffd_features & UFFD_FEATURE_POISON) && sys::uffd_poison(core.uffd, addr, 4096) == 0)
    return;
  if (tid) (void)sys::signal_thread(static_cast<pid_t>(tid), SIGBUS);
}

}  // namespace mtier
