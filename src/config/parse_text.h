// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the config parsers (mtier.conf, mtierd.conf).
#pragma once
#include <cctype>
#include <cerrno>
#include <string>
#include <string_view>

namespace mtier::config_text {

// s without leading and trailing white space.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Strips one pair of surrounding double quotes.
inline std::string_view unquote(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

// Drops a comment: '#' at the start of the line or after whitespace, to the end.
inline std::string_view strip_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || isspace(static_cast<unsigned char>(line[i - 1]))))
      return line.substr(0, i);
  return line;
}

// Returns -EINVAL after storing msg in *why (if given).
inline int fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return -EINVAL;
}

}  // namespace mtier::config_text
