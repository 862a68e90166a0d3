// Names of the page moves of snapshot.h, as `mtier report migrations` and the
// JSON/CSV outputs print them; the order is the Move enum's and is part of the
// recording format (docs/recording.md), so it only ever grows at the end.
#include "snapshot.h"

namespace mtier::record {

const char* move_name(unsigned m) {
  static constexpr const char* kNames[kMoveKinds] = {
      "new>dram",  "new>slow",  "store>dram", "store>slow",
      "slow>dram", "dram>slow", "dram>store", "slow>store",
  };
  return m < kMoveKinds ? kNames[m] : nullptr;
}

}  // namespace mtier::record
