// SPDX-License-Identifier: Apache-2.0
#include "ipc/order_ring.h"

#include <cerrno>

namespace mtier::ipc {

OrderRing::OrderRing(const Segment& segment)
    : header_(segment.header()),
      ring_(segment.ring()),
      slots_(segment.ring_slots()),
      mask_(segment.ring_slots() - 1),
      head_(header_->ring_head.load(std::memory_order_acquire)),
      tail_(header_->ring_tail.load(std::memory_order_acquire)) {}

bool OrderRing::push(const Order& order) {
  if (corrupt()) return false;
  uint64_t tail = header_->ring_tail.load(std::memory_order_acquire);
  uint64_t used = head_ - tail;  // wraps to huge when tail ran past head
  if (used > slots_) {
    corrupt_.store(true, std::memory_order_relaxed);
    return false;
  }
  if (used == slots_) return false;
  ring_[head_ & mask_] = order;
  header_->ring_head.store(++head_, std::memory_order_release);
  return true;
}

size_t OrderRing::pop(Order* out, size_t max) {
  if (corrupt()) return 0;
  uint64_t head = header_->ring_head.load(std::memory_order_acquire);
  uint64_t avail = head - tail_;  // wraps to huge when head went backwards
  if (avail > slots_) {
    corrupt_.store(true, std::memory_order_relaxed);
    return 0;
  }
  size_t n = avail < max ? static_cast<size_t>(avail) : max;
  for (size_t i = 0; i < n; i++) out[i] = ring_[(tail_ + i) & mask_];
  if (n) {
    tail_ += n;
    header_->ring_tail.store(tail_, std::memory_order_release);
  }
  return n;
}

int validate_order(const Order& order, const std::vector<TableEntry>& tables) {
  if (order.reserved != 0 || order.tier > 1) return -EINVAL;
  switch (static_cast<OrderOp>(order.op)) {
    case OrderOp::kSetBudget:
      return order.table_id == 0 && order.count == 0 ? 0 : -EINVAL;
    case OrderOp::kPrefetch:
      if (order.tier != 0) return -EINVAL;
      break;
    case OrderOp::kEvict:
    case OrderOp::kMove:
      break;
    default:
      return -EINVAL;
  }
  if (order.table_id == 0 || order.count == 0) return -EINVAL;
  for (const TableEntry& t : tables) {
    if (t.id != order.table_id) continue;
    // first_page >= t.first_page, then compare offsets: no overflow.
    if (order.first_page < t.first_page) return -EINVAL;
    uint64_t off = order.first_page - t.first_page;
    return off <= t.pages && order.count <= t.pages - off ? 0 : -EINVAL;
  }
  return -EINVAL;
}

}  // namespace mtier::ipc
