// SPDX-License-Identifier: Apache-2.0
// The order ring of the ipc segment (segment.h): the daemon (the only
// producer) sends migration orders to the runtime (the only consumer).
// ring_slots Orders; ring_head and ring_tail are free-running u64 counts in
// the segment header, slot = count & (ring_slots - 1). The producer writes a
// slot, then publishes head with release; the consumer reads head with
// acquire, copies the slots out, then publishes tail with release, so the
// producer (acquire on tail) never overwrites a slot being read.
//
// Neither side trusts the other's counter: each keeps its own (head for the
// producer, tail for the consumer, taken from the segment when the OrderRing
// is made), every slot index is masked, and a counter that could not come
// from a correct peer (more than ring_slots ahead, or behind) marks the ring
// corrupt: from then on push() and pop() do nothing.
//
// What an Order means. For EVICT, PREFETCH and MOVE, table_id names a table
// of the directory and [first_page, first_page + count) are region page
// indexes (as in the directory and the words array) inside that table's
// range, count >= 1; the id guards against a directory that changed since
// the daemon read it.
//   EVICT      leave DRAM. tier: 1 to the slow memory tier, 0 out of memory
//              (to the runtime's store)
//   PREFETCH   bring into DRAM (a fetch order; the wire keeps the name). tier: 0
//   MOVE       move between memory tiers. tier: the destination, 0 DRAM or
//              1 slow memory
//   SET_BUDGET the budget of memory tier `tier` (0 DRAM, 1 slow) becomes
//              first_page pages. table_id 0, count 0
// reserved is 0 in version 1. Orders are advice: the runtime acts on a valid
// one as far as its state allows.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ipc/segment.h"

namespace mtier::ipc {

class OrderRing {
 public:
  // The segment must outlive the ring. Make one per side (one object may
  // also serve both sides from one thread, as tests do).
  explicit OrderRing(const Segment& segment);
  OrderRing(const OrderRing&) = delete;
  OrderRing& operator=(const OrderRing&) = delete;

  // Producer (daemon): false when the ring is full or corrupt.
  [[nodiscard]] bool push(const Order& order);
  // Consumer (runtime): copies up to `max` orders, oldest first, into out.
  // Returns how many; 0 when empty or corrupt. The orders are unchecked:
  // pass each through validate_order().
  size_t pop(Order* out, size_t max);
  // Whether a counter written by the other side was found impossible.
  bool corrupt() const { return corrupt_.load(std::memory_order_relaxed); }
  uint32_t slots() const { return slots_; }

 private:
  SegmentHeader* header_;
  Order* ring_;
  uint32_t slots_;
  uint64_t mask_;
  uint64_t head_;  // the producer's own count
  uint64_t tail_;  // the consumer's own count
  std::atomic<bool> corrupt_{false};
};

// Consumer side: 0 if `order` is well formed against the directory `tables`
// (read_directory()): op known, tier allowed for the op, reserved 0, and for
// EVICT/PREFETCH/MOVE a table of that id with the range inside it (no
// overflow); for SET_BUDGET table_id 0 and count 0. -EINVAL otherwise.
[[nodiscard]] int validate_order(const Order& order, const std::vector<TableEntry>& tables);

}  // namespace mtier::ipc
