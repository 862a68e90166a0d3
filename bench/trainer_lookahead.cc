// SPDX-License-Identifier: Apache-2.0
#include "trainer_lookahead.h"

#include <chrono>

#include "mtier.h"

namespace mtier::tools {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

LookaheadWindow::LookaheadWindow(std::vector<const void*> tables, size_t row_bytes,
                                 const LookaheadOptions& o)
    : tables_(std::move(tables)), row_bytes_(row_bytes), o_(o) {}

LookaheadWindow::~LookaheadWindow() {
  while (!tickets_.empty()) wait(tickets_.front().first);
}

void LookaheadWindow::count(long rc) {
  if (rc >= 0) {
    c_.pages_read += static_cast<uint64_t>(rc);
    return;
  }
  c_.errors++;
  if (!c_.first_error) c_.first_error = static_cast<int>(-rc);
}

void LookaheadWindow::advance(uint64_t step) {
  // Only -ENODEV (no engine) can come back; the steps still run, on demand
  // faults, so it is counted and not fatal.
  int rc = mtier_prefetch_advance(step);
  if (rc < 0) count(rc);
}

void LookaheadWindow::name(uint64_t step, const StepRows& rows) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<long> tickets;
  for (size_t t = 0; t < tables_.size() && t < rows.size(); t++) {
    c_.calls++;
    // The step updates every row it reads (SGD): named for writing.
    long rc = mtier_prefetch_rows(tables_[t], row_bytes_, rows[t].data(), rows[t].size(), 8, step,
                                  MTIER_PREFETCH_WRITE | (o_.async ? MTIER_PREFETCH_ASYNC : 0u));
    if (o_.async && rc > 0)
      tickets.push_back(rc);
    else
      count(rc);  // a synchronous result, or an error either way
  }
  if (o_.async)
    tickets_.emplace_back(step, std::move(tickets));
  else
    c_.wait_seconds += since(t0);
}

void LookaheadWindow::wait(uint64_t step) {
  auto t0 = std::chrono::steady_clock::now();
  // Tickets are waited for in the order they were issued; earlier steps'
  // leftovers (none in the trainer's order) go first.
  while (!tickets_.empty() && tickets_.front().first <= step) {
    for (long ticket : tickets_.front().second) count(mtier_prefetch_wait(ticket, -1));
    tickets_.pop_front();
  }
  c_.wait_seconds += since(t0);
}

}  // namespace mtier::tools
