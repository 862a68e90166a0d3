// SPDX-License-Identifier: Apache-2.0
#include "engine/default_budget.h"

#include <cstdio>
#include <cstdlib>

#include "sys/page_size.h"
#include "sys/vm.h"

namespace mtier {
namespace {

std::string size_text(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  else snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1ull << 20));
  return buf;
}

}  // namespace

uint64_t default_dram_budget(const BudgetBasis& b, std::string* why) {
  uint64_t usable = b.ram;
  std::string from = "the machine's memory (" + size_text(b.ram) + ")";
  if (b.limit.bytes && (!usable || b.limit.bytes < usable)) {
    usable = b.limit.bytes;
    from = "the memory cgroup's limit (" + size_text(b.limit.bytes) + ", " + b.limit.where + ")";
  }
  unsigned ranks = b.ranks ? b.ranks : 1;
  uint64_t share = usable / ranks;
  // What the process holds already is not the tables'; at most half the
  // share is taken off, so that a large start (a preloaded dataset) still
  // leaves the tables something.
  uint64_t in_use = std::min(b.rss, share / 2);
  uint64_t budget = ((share - in_use) / 2) & kPageMask;
  *why = "default: half of " + from;
  if (ranks > 1) *why += " shared by " + std::to_string(ranks) + " ranks (LOCAL_WORLD_SIZE)";
  if (in_use) *why += ", less the " + size_text(in_use) + " this process used at start";
  return budget;
}

unsigned local_ranks() {
  const char* v = getenv("LOCAL_WORLD_SIZE");
  if (!v || !*v) return 1;
  char* end = nullptr;
  unsigned long n = strtoul(v, &end, 10);
  return *end || n < 1 || n > 4096 ? 1 : static_cast<unsigned>(n);
}

BudgetBasis own_budget_basis() {
  BudgetBasis b;
  b.ram = sys::physical_memory();
  b.limit = sys::own_memory_limit();
  b.rss = sys::own_rss_bytes();
  b.ranks = local_ranks();
  return b;
}

}  // namespace mtier
