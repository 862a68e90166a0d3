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

// Returns -EINVAL after storing msg in *why (if given).
inline int fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return -EINVAL;
}

}  // namespace mtier::config_text
