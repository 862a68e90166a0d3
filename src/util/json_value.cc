#include "util/json_value.h"

#include <cerrno>
#include <cstdlib>

namespace mtier::json {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  int run(Value* out, std::string* why) {
    bool ok = value(out, 0);
    skip();
    if (ok && i_ != t_.size()) ok = fail("end of text");
    if (!ok) *why = "offset " + std::to_string(i_) + ": expected " + expected_;
    return ok ? 0 : -EINVAL;
  }

 private:
  bool fail(const char* what) {
    expected_ = what;
    return false;
  }
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r'))
      i_++;
  }
  bool literal(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (t_.compare(i_, n, word) != 0) return fail(word);
    i_ += n;
    return true;
  }
  bool value(Value* v, int depth) {
    if (depth > kMaxDepth) return fail("less nesting");
    skip();
    if (i_ >= t_.size()) return fail("a value");
    char c = t_[i_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v->kind = Value::Kind::kString;
      return string(&v->s);
    }
    if (c == 't' || c == 'f') {
      v->kind = Value::Kind::kBool;
      v->b = c == 't';
      return literal(v->b ? "true" : "false");
    }
    if (c == 'n') return literal("null");
    char* end = nullptr;
    v->n = strtod(t_.c_str() + i_, &end);
    if (end == t_.c_str() + i_) return fail("a value");
    v->kind = Value::Kind::kNumber;
    i_ = static_cast<size_t>(end - t_.c_str());
    return true;
  }
  bool string(std::string* s) {
    i_++;  // the opening quote
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c != '\\') {
        *s += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      char e = t_[i_++];
      if (e == 'u') {
        if (i_ + 4 > t_.size()) return fail("4 hex digits");
        unsigned cp = static_cast<unsigned>(strtoul(t_.substr(i_, 4).c_str(), nullptr, 16));
        i_ += 4;
        if (cp < 0x80) {
          *s += static_cast<char>(cp);
        } else if (cp < 0x800) {
          *s += static_cast<char>(0xc0 | cp >> 6);
          *s += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
          *s += static_cast<char>(0xe0 | cp >> 12);
          *s += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
          *s += static_cast<char>(0x80 | (cp & 0x3f));
        }
      } else {
        const char* from = "\"\\/bfnrt";
        const char* to = "\"\\/\b\f\n\r\t";
        const char* p = std::char_traits<char>::find(from, 8, e);
        if (!p) return fail("an escape");
        *s += to[p - from];
      }
    }
    if (i_ >= t_.size()) return fail("'\"'");
    i_++;
    return true;
  }
  bool array(Value* v, int depth) {
    v->kind = Value::Kind::kArray;
    i_++;
    skip();
    if (i_ < t_.size() && t_[i_] == ']') return ++i_, true;
    for (;;) {
      v->items.emplace_back();
      if (!value(&v->items.back(), depth + 1)) return false;
      skip();
      if (i_ < t_.size() && t_[i_] == ',') {
        i_++;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == ']') return ++i_, true;
      return fail("',' or ']'");
    }
  }
  bool object(Value* v, int depth) {
    v->kind = Value::Kind::kObject;
    i_++;
    skip();
    if (i_ < t_.size() && t_[i_] == '}') return ++i_, true;
    for (;;) {
      skip();
      std::string key;
      if (i_ >= t_.size() || t_[i_] != '"') return fail("a member name");
      if (!string(&key)) return false;
      skip();
      if (i_ >= t_.size() || t_[i_] != ':') return fail("':'");
      i_++;
      if (!value(&v->members[key], depth + 1)) return false;
      skip();
      if (i_ < t_.size() && t_[i_] == ',') {
        i_++;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == '}') return ++i_, true;
      return fail("',' or '}'");
    }
  }

  const std::string& t_;
  size_t i_ = 0;
  const char* expected_ = "";
};

}  // namespace

const Value& Value::operator[](const std::string& key) const {
  static const Value null;
  auto it = members.find(key);
  return it == members.end() ? null : it->second;
}

int parse(const std::string& text, Value* out, std::string* why) {
  *out = Value{};
  return Parser(text).run(out, why);
}

}  // namespace mtier::json
