// SPDX-License-Identifier: Apache-2.0
// The kinds of page move mtierd counts per table, in the order and with the
// names of the status document's "moves" object (docs/protocol.md) and of
// the recordings of `mtier record` (docs/recording.md). The order is part
// of both formats: it only ever grows at the end.
#pragma once

namespace mtier::ipc {

// "new" is a page never touched before.
enum PageMove : unsigned {
  kNewToDram,
  kNewToSlow,
  kStoreToDram,
  kStoreToSlow,
  kSlowToDram,
  kDramToSlow,
  kDramToStore,
  kSlowToStore,
  kPageMoveKinds
};

// "new>dram", "new>slow", "store>dram", "store>slow", "slow>dram",
// "dram>slow", "dram>store", "slow>store"; nullptr for m >= kPageMoveKinds.
const char* page_move_name(unsigned m);

}  // namespace mtier::ipc
