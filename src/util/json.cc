// SPDX-License-Identifier: Apache-2.0
#include "util/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mtier::json {

Json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[32];
  snprintf(buf, sizeof buf, "%.6g", v);
  double r = strtod(buf, nullptr);
  if (r == std::trunc(r) && std::fabs(r) < 9007199254740992.0) return static_cast<int64_t>(r);
  return r;
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

int parse(const std::string& text, Json* out, std::string* why) {
  try {
    *out = Json::parse(text);
    return 0;
  } catch (const Json::exception& e) {
    *out = nullptr;
    // "[json.exception.parse_error.101] parse error at line 1, column 8: ...":
    // the part after the exception's id.
    std::string what = e.what();
    size_t id_end = what.find("] ");
    *why = id_end == std::string::npos ? what : what.substr(id_end + 2);
    return -EINVAL;
  }
}

const Json& at(const Json& v, const char* key) {
  static const Json null;
  if (!v.is_object()) return null;
  auto it = v.find(key);
  return it == v.end() ? null : *it;
}

const Json& items(const Json& v) {
  static const Json none = Json::array();
  return v.is_array() ? v : none;
}

double num(const Json& v, const char* key) {
  const Json& m = at(v, key);
  return m.is_number() ? m.get<double>() : 0;
}

std::string str(const Json& v, const char* key) {
  const Json& m = at(v, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

Json table_head(const TableHead& t) {
  Json j = Json::object();
  if (t.pid >= 0) j["pid"] = t.pid;
  j["id"] = t.id;
  j["name"] = std::string(t.name);
  j["bytes"] = t.bytes;
  return j;
}

}  // namespace mtier::json
