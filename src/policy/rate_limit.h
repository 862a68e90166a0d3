// SPDX-License-Identifier: Apache-2.0
// Post-processing of a plan's move list, shared by every policy: merging
// moves of adjacent pages into ranges, and the node's migration rate limit.
#pragma once
#include <cstdint>
#include <vector>

#include "policy/policy.h"

namespace mtier::policy {

// Merges each move into the one before it when both have the same client,
// table and op and it starts where that one ends (ascending adjacency only,
// so the list's priority order is kept). A merged count stays below 2^32.
void merge_moves(std::vector<Move>* moves);

// Keeps the longest prefix of *moves (priority order) that moves at most
// `max_pages` pages in all, splitting the move at the boundary. 0 means
// unlimited. Returns the pages dropped.
uint64_t limit_moves(std::vector<Move>* moves, uint64_t max_pages);

}  // namespace mtier::policy
