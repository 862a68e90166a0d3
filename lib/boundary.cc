// SPDX-License-Identifier: Apache-2.0
#include "boundary.h"

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "log/log.h"

namespace mtier::lib {
namespace {

// The where/reason pairs logged so far (hashes); a full table logs on.
constexpr size_t kSeen = 32;
std::atomic<uint64_t> g_seen[kSeen];

uint64_t hash(uint64_t h, const char* s) {
  for (; s && *s; s++) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
  return h;
}

// True the first time this hash is offered.
bool first_time(uint64_t h) {
  if (h == 0) h = 1;
  for (auto& slot : g_seen) {
    uint64_t v = slot.load(std::memory_order_relaxed);
    if (v == h) return false;
    if (v == 0) {
      if (slot.compare_exchange_strong(v, h)) return true;
      if (v == h) return false;
    }
  }
  return true;
}

}  // namespace

void note_exception(const char* where, const char* reason, const char* outcome) noexcept {
  if (!first_time(hash(hash(0xcbf29ce484222325ull, where), reason))) return;
  MTIER_LOG_WARN("%s: %s; %s", where, reason, outcome);
}

int current_exception_errno() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  } catch (const std::system_error& e) {
    int v = e.code().value();
    return v > 0 && v < 4096 ? -v : -EIO;
  } catch (...) {
    return -EIO;
  }
}

}  // namespace mtier::lib
