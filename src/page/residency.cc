// SPDX-License-Identifier: Apache-2.0
#include "page/residency.h"

#include <algorithm>
#include <chrono>

#include "page/lock_order.h"

namespace mtier {

Residency::Residency(uint64_t budget_bytes, unsigned high_pct, unsigned low_pct)
    : own_(budget_bytes, high_pct, low_pct),
      budget_(own_.pages_budget()),
      high_(own_.pages_high()),
      low_(own_.pages_low()) {}

void Residency::set_budget_pages(uint64_t pages, uint64_t ceiling) {
  uint64_t own = own_.pages_budget();
  if (pages == 0) pages = own;
  pages = std::min(pages, std::max(own, ceiling));
  MemoryBudget b(pages * own_.page_size(), own_.high_pct(), own_.low_pct(), own_.page_size());
  // Low first when shrinking, high first when growing: low <= high at
  // every moment a reader could see.
  if (pages < budget_pages()) {
    low_.store(b.pages_low(), std::memory_order_relaxed);
    high_.store(b.pages_high(), std::memory_order_relaxed);
    budget_.store(b.pages_budget(), std::memory_order_release);
  } else {
    budget_.store(b.pages_budget(), std::memory_order_release);
    high_.store(b.pages_high(), std::memory_order_relaxed);
    low_.store(b.pages_low(), std::memory_order_relaxed);
  }
  kick();
  notify_progress();
}

uint64_t Residency::excess_over_low() const {
  // Pages claimed and not placed yet, and those a waiter asks room for,
  // count as resident: the room is made for them.
  int64_t r = resident() + claimed() + wanted_.load(std::memory_order_acquire);
  uint64_t low = low_pages();
  return r > static_cast<int64_t>(low) ? static_cast<uint64_t>(r) - low : 0;
}

void Residency::add(int64_t pages) {
  int64_t now = resident_.fetch_add(pages, std::memory_order_acq_rel) + pages;
  uint64_t p = peak_.load(std::memory_order_relaxed);
  while (now > static_cast<int64_t>(p) &&
         !peak_.compare_exchange_weak(p, static_cast<uint64_t>(now), std::memory_order_relaxed)) {
  }
  if (now > static_cast<int64_t>(high_pages())) kick();
}

void Residency::sub(int64_t pages) {
  resident_.fetch_sub(pages, std::memory_order_acq_rel);
}

bool Residency::wait_for_room(uint64_t pages, int timeout_ms) {
  if constexpr (build::kCheckLockOrder) lock_order::assert_unlocked("waiting for DRAM room");
  if (room_below(budget_pages()) >= static_cast<int64_t>(pages)) return true;
  std::unique_lock<std::mutex> lk(mu_);
  waiters_.fetch_add(1, std::memory_order_acq_rel);
  wanted_.fetch_add(static_cast<int64_t>(pages), std::memory_order_acq_rel);
  bool room = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (room_below(budget_pages()) >= static_cast<int64_t>(pages)) break;
    if (stuck()) {
      overruns_.fetch_add(1, std::memory_order_relaxed);
      room = false;
      break;
    }
    if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline) {
      room = false;
      break;
    }
    kicked_ = true;
    work_.notify_all();
    room_.wait_for(lk, std::chrono::milliseconds(50));
  }
  waiters_.fetch_sub(1, std::memory_order_acq_rel);
  wanted_.fetch_sub(static_cast<int64_t>(pages), std::memory_order_acq_rel);
  return room;
}

bool Residency::reserve_room(uint64_t pages) {
  for (;;) {
    if (!wait_for_room(pages)) return false;
    if (try_claim(budget_pages(), pages)) return true;
  }
}

void Residency::notify_progress() {
  std::lock_guard<std::mutex> lk(mu_);
  room_.notify_all();
}

void Residency::set_stuck(bool stuck) {
  if (stuck_.exchange(stuck, std::memory_order_acq_rel) == stuck) return;
  std::lock_guard<std::mutex> lk(mu_);
  room_.notify_all();
}

void Residency::wait_for_work(unsigned timeout_ms) {
  std::unique_lock<std::mutex> lk(mu_);
  if (!kicked_ && !over_high())
    work_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return kicked_; });
  kicked_ = false;
}

void Residency::kick() {
  std::lock_guard<std::mutex> lk(mu_);
  kicked_ = true;
  work_.notify_all();
}

}  // namespace mtier
