// SPDX-License-Identifier: Apache-2.0
#include "engine_instance.h"

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>

#include "boundary.h"
#include "interposer_state.h"
#include "log/log.h"

extern char** environ;

namespace mtier::lib {
namespace {

std::mutex g_mu;                      // serialises starts
std::atomic<Engine*> g_engine{nullptr};
int g_start_error = 0;                // why the start failed for good

void print_options(const OptionSet& set) {
  // One log line per option: a log line is capped at a fixed buffer.
  log::set_level(log::Level::kInfo);
  MTIER_LOG_INFO("options in effect:");
  std::string all = set.describe();
  for (size_t at = 0, nl; at < all.size(); at = nl + 1) {
    nl = all.find('\n', at);
    if (nl == std::string::npos) nl = all.size();
    MTIER_LOG_INFO("  %s", all.substr(at, nl - at).c_str());
  }
}

// Under g_mu.
int start(const char* extra) {
  OptionSet set;
  std::string why;
  if (load_options(&set, &why) < 0 ||
      (extra && set.load_text(extra, OptionSource::kApi, &why) < 0)) {
    MTIER_LOG_ERROR("%s", why.c_str());
    return -EINVAL;
  }
  if (set.get().verbose) print_options(set);
  int err = 0;
  auto e = Engine::create(set.get(), &err);
  if (!e) return err ? err : -EIO;
  g_engine.store(e.release(), std::memory_order_release);
  // Forked children read the tables through this engine (lib/fork_signals.cc),
  // whether the interposer or the C API started it.
  install_fork_handlers();
  return 0;
}

// start(), with an exception as its -errno (what it made is destroyed by
// the unwinding: nothing is kept).
int start_contained(const char* extra) noexcept {
  try {
    return start(extra);
  } catch (...) {
    return current_exception_errno();
  }
}

}  // namespace

int load_options(OptionSet* set, std::string* why) { return set->load_all(environ, why); }

Engine* engine(int* err, const char* extra) noexcept {
  if (Engine* e = g_engine.load(std::memory_order_acquire)) {
    *err = 0;
    return e;
  }
  std::lock_guard<std::mutex> lk(g_mu);
  *err = g_start_error;
  if (!g_engine.load() && !g_start_error) {
    *err = start_contained(extra);
    if (!start_may_retry(*err)) g_start_error = *err;
  }
  return g_engine.load();
}

bool start_may_retry(int err) noexcept { return err == -ENOMEM || err == -EAGAIN; }

Engine* running_engine() noexcept { return g_engine.load(std::memory_order_acquire); }

bool no_engine_at_fork() noexcept {
  if (g_engine.load(std::memory_order_acquire)) return false;
  if (!g_mu.try_lock()) return false;  // a thread of the parent was starting it
  g_mu.unlock();
  return true;
}

int start_engine_explicitly(const char* extra) noexcept {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_engine.load()) return -EALREADY;
  int rc = start_contained(extra);
  g_start_error = start_may_retry(rc) ? 0 : rc;
  return rc;
}

}  // namespace mtier::lib
