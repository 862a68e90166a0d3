// SPDX-License-Identifier: Apache-2.0
#include "page_moves.h"

#include "page/page_state.h"

namespace mtier::daemon {

policy::Place place_of_word(uint64_t w) {
  switch (PageWord::state(w)) {
    case PageState::kAbsent:
      return PageWord::has_slot(w) ? policy::Place::kStore : policy::Place::kUntouched;
    case PageState::kFailed:
      return policy::Place::kStore;
    default:  // resident, or being placed / evicted: in memory for now
      return PageWord::slow(w) ? policy::Place::kSlow : policy::Place::kDram;
  }
}

unsigned page_move(policy::Place was, policy::Place now) {
  using policy::Place;
  if (was == now) return kPageMoveKinds;
  switch (was) {
    case Place::kUntouched:
      return now == Place::kDram ? kNewToDram : now == Place::kSlow ? kNewToSlow : kPageMoveKinds;
    case Place::kStore:
      return now == Place::kDram   ? kStoreToDram
             : now == Place::kSlow ? kStoreToSlow
                                   : kPageMoveKinds;
    case Place::kSlow:
      return now == Place::kDram    ? kSlowToDram
             : now == Place::kStore ? kSlowToStore
                                    : kPageMoveKinds;
    case Place::kDram:
      return now == Place::kSlow    ? kDramToSlow
             : now == Place::kStore ? kDramToStore
                                    : kPageMoveKinds;
  }
  return kPageMoveKinds;
}

}  // namespace mtier::daemon
