// A small JSON writer for status replies and reports: values appended to a
// string in order, commas placed by the writer. Strings are escaped and made
// valid UTF-8 (a byte that does not start or continue a well-formed sequence
// becomes U+FFFD), since names and paths come from other processes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mtier::json {

// `s` as a JSON string literal, quotes included.
std::string quote(const std::string& s);

class Writer {
 public:
  Writer& begin_object(const char* key = nullptr);
  Writer& end_object();
  Writer& begin_array(const char* key = nullptr);
  Writer& end_array();
  // A member (inside an object, key given) or an element (inside an array).
  Writer& str(const char* key, const std::string& v);
  Writer& num(const char* key, double v);  // null when not finite
  Writer& uint(const char* key, uint64_t v);
  Writer& integer(const char* key, int64_t v);
  Writer& boolean(const char* key, bool v);
  Writer& null(const char* key);  // a member (or element) known to have no value
  const std::string& text() const { return out_; }

 private:
  void prefix(const char* key);
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
};

}  // namespace mtier::json
