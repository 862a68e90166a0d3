// SPDX-License-Identifier: Apache-2.0
#include "ipc/page_moves.h"

namespace mtier::ipc {

const char* page_move_name(unsigned m) {
  static constexpr const char* kNames[kPageMoveKinds] = {
      "new>dram",  "new>slow",  "store>dram", "store>slow",
      "slow>dram", "dram>slow", "dram>store", "slow>store",
  };
  return m < kPageMoveKinds ? kNames[m] : nullptr;
}

}  // namespace mtier::ipc
