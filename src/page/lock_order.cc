// SPDX-License-Identifier: Apache-2.0
#include "page/lock_order.h"

#include <cstdio>
#include <cstdlib>

#include "log/log.h"

namespace mtier::lock_order {
namespace {

// Per thread: how many locks of each rank it holds. Plain counters, no
// allocation: this runs on the fault path in checked builds.
thread_local unsigned t_held[kLockRanks];

const char* rank_name(unsigned r) {
  static const char* const kNames[kLockRanks] = {"the evictor's pass lock",
                                                 "the table registry lock", "a page stripe lock"};
  return kNames[r];
}

[[noreturn]] void violation(const char* what, unsigned taking, unsigned holding) {
  fprintf(stderr, "%smtier: internal error: lock order: %s %s while holding %s\n",
          log::stderr_is_journal() ? "<2>" : "", what, rank_name(taking), rank_name(holding));
  abort();
}

}  // namespace

void acquiring(LockRank rank) {
  auto r = static_cast<unsigned>(rank);
  for (unsigned later = r + 1; later < kLockRanks; later++)
    if (t_held[later]) violation("taking", r, later);
  if (t_held[r] && rank != LockRank::kPage) violation("taking again", r, r);
  t_held[r]++;
}

void released(LockRank rank) { t_held[static_cast<unsigned>(rank)]--; }

void assert_unlocked(const char* what) {
  for (unsigned r = 0; r < kLockRanks; r++) {
    if (!t_held[r]) continue;
    fprintf(stderr, "%smtier: internal error: lock order: %s while holding %s\n",
            log::stderr_is_journal() ? "<2>" : "", what, rank_name(r));
    abort();
  }
}

unsigned held(LockRank r) { return t_held[static_cast<unsigned>(r)]; }

}  // namespace mtier::lock_order
