// SPDX-License-Identifier: Apache-2.0
// A page of a table: what the clock hands, the evictor and the oracle pass
// around. Valid while the table registry is held (shared) by its user.
#pragma once
#include <cstdint>

namespace mtier {

struct Table;

struct PageRef {
  Table* table;
  uint64_t page;
};

}  // namespace mtier
