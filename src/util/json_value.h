// A small JSON reader for replies the tool gets from mtierd: parses a whole
// text into a tree of values. Depth is bounded (64) and errors are reported,
// never thrown; numbers are doubles (exact for the integers mtierd sends,
// below 2^53).
#pragma once
#include <map>
#include <string>
#include <vector>

namespace mtier::json {

struct Value {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<Value> items;              // kArray
  std::map<std::string, Value> members;  // kObject

  // Member `key` of an object, or a shared null value.
  const Value& operator[](const std::string& key) const;
  double num(const std::string& key) const { return (*this)[key].n; }
  const std::string& str(const std::string& key) const { return (*this)[key].s; }
};

// 0, or -EINVAL with *why ("offset N: expected ...").
[[nodiscard]] int parse(const std::string& text, Value* out, std::string* why);

}  // namespace mtier::json
