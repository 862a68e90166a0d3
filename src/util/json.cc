#include "util/json.h"

#include <cmath>
#include <cstdio>

namespace mtier::json {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs,
// no surrogates, at most U+10FFFF), or 0.
size_t utf8_length(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 2 && c < 0xc2) return 0;
  if (n == 3 && ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) >= 0xa0))) return 0;
  if (n == 4 && ((c == 0xf0 && b(i + 1) < 0x90) || c > 0xf4 || (c == 0xf4 && b(i + 1) >= 0x90)))
    return 0;
  return n;
}

}  // namespace

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      i++;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out + "\"";
}

void Writer::prefix(const char* key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
  if (key) out_ += quote(key) + ':';
}

Writer& Writer::begin_object(const char* key) {
  prefix(key);
  out_ += '{';
  first_.push_back(true);
  return *this;
}

Writer& Writer::end_object() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

Writer& Writer::begin_array(const char* key) {
  prefix(key);
  out_ += '[';
  first_.push_back(true);
  return *this;
}

Writer& Writer::end_array() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

Writer& Writer::str(const char* key, const std::string& v) {
  prefix(key);
  out_ += quote(v);
  return *this;
}

Writer& Writer::num(const char* key, double v) {
  prefix(key);
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[32];
  snprintf(buf, sizeof buf, "%.6g", v);
  out_ += buf;
  return *this;
}

Writer& Writer::uint(const char* key, uint64_t v) {
  prefix(key);
  out_ += std::to_string(v);
  return *this;
}

Writer& Writer::integer(const char* key, int64_t v) {
  prefix(key);
  out_ += std::to_string(v);
  return *this;
}

Writer& Writer::null(const char* key) {
  prefix(key);
  out_ += "null";
  return *this;
}

Writer& Writer::boolean(const char* key, bool v) {
  prefix(key);
  out_ += v ? "true" : "false";
  return *this;
}

}  // namespace mtier::json
