// SPDX-License-Identifier: Apache-2.0
// JSON for the tools, mtierd and mtierfs, through nlohmann::json
// (nlohmann-json3-dev): the helpers the outputs and readers share, in
// libmtierjson (libmtier.so, the preload library, carries no JSON).
// Documents are built as Json values (members keep the order they were
// added in) and written by dump(); input is read by parse(), which never
// throws.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mtier::json {

using Json = nlohmann::ordered_json;

// A measured figure as the outputs give it: 6 significant digits (printf's
// %.6g), written without a fraction when that is whole; null when not finite.
Json number(double v);

// Compact text (no spaces). Strings are made valid UTF-8: a byte that does
// not start or continue a well-formed sequence becomes U+FFFD, since names
// and paths come from other processes.
std::string dump(const Json& j);

// Parses a whole text. 0, or -EINVAL with *why (where and what, from
// nlohmann's parse error: bad UTF-8, a bad \u escape, a truncated document,
// text after the value); never throws.
[[nodiscard]] int parse(const std::string& text, Json* out, std::string* why);

// Lenient reads of a parsed document, for members a reply may lack: member
// `key` of an object (a shared null when absent or `v` is not an object);
// the elements of an array (none when `v` is not one); a number (0 when
// absent or not a number); a string ("" likewise).
const Json& at(const Json& v, const char* key);
const Json& items(const Json& v);
double num(const Json& v, const char* key);
std::string str(const Json& v, const char* key);

// The head of a table's object, the same in mtierd's status reply
// (docs/protocol.md) and in `mtier report tables|heatmap --json`: "pid"
// (when pid >= 0; the daemon's reply nests tables in their process's
// object), "id", "name" and "bytes", in that order. Callers add their own
// members after them.
struct TableHead {
  int64_t pid = -1;
  uint64_t id = 0;
  std::string_view name;
  uint64_t bytes = 0;
};
Json table_head(const TableHead& t);

}  // namespace mtier::json
