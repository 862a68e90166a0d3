// SPDX-License-Identifier: Apache-2.0
// The DRAM budget an engine takes when none is given (dram_bytes=0): half
// of what the process may really use - the machine's memory or its memory
// cgroup's limit, whichever is less, shared among the job's ranks on this
// node (LOCAL_WORLD_SIZE, set by torch's launchers or by hand), less what
// the process already uses (its resident set at start: the interpreter,
// its libraries). Why: a default of half the machine's memory whatever the
// cgroup or the number of ranks let four ranks overcommit a node twice,
// and a trainer in a memory cgroup be killed by it.
#pragma once
#include <cstdint>
#include <string>

#include "sys/memory_limit.h"

namespace mtier {

struct BudgetBasis {
  uint64_t ram = 0;        // the machine's memory (0: unknown)
  sys::MemoryLimit limit;  // the cgroup's (bytes 0: none)
  uint64_t rss = 0;        // this process's resident set now
  unsigned ranks = 1;      // ranks of the job on this node
};

// The budget, whole pages (0 when nothing is known), and in *why the
// sentence for the start line that says where it came from.
uint64_t default_dram_budget(const BudgetBasis& b, std::string* why);

// LOCAL_WORLD_SIZE when it is a number from 1 to 4096, else 1.
unsigned local_ranks();

// The basis of this process, read now.
BudgetBasis own_budget_basis();

}  // namespace mtier
