// The head of a table's JSON object, the same in mtierd's status reply
// (docs/protocol.md) and in `mtier report tables|heatmap --json`: who owns
// the table and what it is. Callers add their own members after it and
// close the object.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "util/json.h"

namespace mtier::json {

// A table as its JSON object names it. pid < 0: not written (the daemon's
// reply nests tables in their process's object).
struct TableHead {
  int64_t pid = -1;
  uint64_t id = 0;
  std::string_view name;
  uint64_t bytes = 0;
};

// Opens an object (an element of the enclosing array) and writes "pid"
// (when known), "id", "name" and "bytes", in that order.
Writer& begin_table(Writer& j, const TableHead& t);

}  // namespace mtier::json
