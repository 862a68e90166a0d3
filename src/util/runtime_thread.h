// SPDX-License-Identifier: Apache-2.0
// Starting one of the runtime's own threads (fault handler, evictor, daemon
// link): inside a RuntimeScope for its whole life, and with no exception
// leaving its entry - one that escapes the body is logged with what it
// means, and the thread ends (std::terminate would kill the trainer).
#pragma once
#include <pthread.h>

#include <cerrno>
#include <cstddef>
#include <exception>
#include <new>
#include <system_error>
#include <thread>

#include "log/log.h"
#include "util/runtime_scope.h"

namespace mtier {

// Runs `body` on a new thread stored in *out. `name` and `consequence` make
// the log line if an exception escapes ("fault handler", "faults in managed
// tables are no longer served"); the thread is named "mtier <name>", cut
// to the kernel's 15 characters. 0, or -errno when the thread cannot be
// created (nothing thrown).
template <class F>
[[nodiscard]] int start_runtime_thread(std::thread* out, const char* name, const char* consequence,
                                       F body) noexcept {
  // Named for top -H, perf and /proc/PID/task/*/comm ("mtier evictor"):
  // by the creator, so that the name is there when this returns (a reader
  // of /proc right after start saw an unnamed evictor once), and by the
  // thread itself, which needs no /proc.
  char comm[16] = "mtier ";  // cut to the kernel's 15 characters on purpose
  size_t len = 6;
  for (const char* c = name; *c && len < sizeof comm - 1; ++c) comm[len++] = *c;
  comm[len] = '\0';
  try {
    *out = std::thread([name, consequence, body, comm]() noexcept {
      RuntimeScope runtime;  // this thread is the runtime: the preload passes it through
      (void)pthread_setname_np(pthread_self(), comm);
      try {
        body();
      } catch (const std::exception& e) {
        MTIER_LOG_ERROR("%s: %s; %s", name, e.what(), consequence);
      } catch (...) {
        MTIER_LOG_ERROR("%s: unknown exception; %s", name, consequence);
      }
    });
  } catch (const std::system_error& e) {
    return e.code().value() > 0 ? -e.code().value() : -EAGAIN;
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  (void)pthread_setname_np(out->native_handle(), comm);
  return 0;
}

}  // namespace mtier
