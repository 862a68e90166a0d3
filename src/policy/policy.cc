// SPDX-License-Identifier: Apache-2.0
// The policy registry and the parsing of policy parameters (TunedPolicy,
// declared in plan_common.h).
#include "policy/policy.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "policy/plan_common.h"

namespace mtier::policy {

namespace {

int fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return -EINVAL;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool is_separator(char c) { return c == ',' || isspace(static_cast<unsigned char>(c)); }

// Parses a whole decimal number (strtod syntax, finite). Returns false if
// `text` is anything else.
bool parse_number(const std::string& text, double* out) {
  if (text.empty() || isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  double v = strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::string key_list(const PolicyInfo& info) {
  std::string s;
  for (const Tunable& t : info.tunables) s += (s.empty() ? "" : ", ") + std::string(t.key);
  return s;
}

struct Entry {
  const PolicyInfo& (*info)();
  std::unique_ptr<Policy> (*make)();
};
const Entry kEntries[] = {
    {detail::hot_promote_info, detail::new_hot_promote_policy},
    {detail::lfu_info, detail::new_lfu_policy},
    {detail::lru_info, detail::new_lru_policy},
    {detail::static_info, detail::new_static_policy},
};

}  // namespace

const char* op_name(Move::Op op) {
  switch (op) {
    case Move::kEvict: return "evict";
    case Move::kPrefetch: return "prefetch";
    case Move::kPromote: return "promote";
    case Move::kDemote: return "demote";
  }
  return "?";
}

std::string format_number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string default_text(const Tunable& t) { return format_number(t.default_value); }

std::string range_text(const Tunable& t) {
  return format_number(t.min) + " to " + format_number(t.max) + (t.integer ? ", whole" : "");
}

const std::vector<PolicyInfo>& policy_table() {
  static const std::vector<PolicyInfo> table = [] {
    std::vector<PolicyInfo> v;
    for (const Entry& e : kEntries) v.push_back(e.info());
    return v;
  }();
  return table;
}

const PolicyInfo* find_policy(const std::string& name) {
  for (const PolicyInfo& info : policy_table())
    if (name == info.name) return &info;
  return nullptr;
}

int make_policy(const std::string& name, const std::string& params, std::unique_ptr<Policy>* out,
                std::string* why) {
  for (const Entry& e : kEntries) {
    if (name != e.info().name) continue;
    std::unique_ptr<Policy> p = e.make();
    std::string reason;
    if (p->configure(params, &reason) != 0) return fail(why, "policy " + name + ": " + reason);
    *out = std::move(p);
    return 0;
  }
  std::string names;
  for (const Entry& e : kEntries) names += (names.empty() ? "" : ", ") + std::string(e.info().name);
  return fail(why, "unknown policy " + quoted(name) + " (one of: " + names + ")");
}

namespace detail {

std::vector<Tunable> with_common_tunables(std::vector<Tunable> own) {
  own.push_back({"cool_period_s", 1.0, 0.01, 3600, false,
                 "seconds between coolings of the heat model (every heat halved)"});
  return own;
}

TunedPolicy::TunedPolicy(const PolicyInfo& info) : info_(info) {
  for (const Tunable& t : info.tunables) values_.push_back(t.default_value);
}

int TunedPolicy::configure(const std::string& params, std::string* why) {
  std::vector<double> next = values_;
  size_t i = 0, n = params.size();
  while (i < n) {
    while (i < n && is_separator(params[i])) ++i;
    if (i == n) break;
    size_t start = i;
    while (i < n && !is_separator(params[i])) ++i;
    std::string pair = params.substr(start, i - start);
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(why, quoted(pair) + ": expected key=value (keys: " + key_list(info_) + ")");
    std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
    size_t k = 0;
    while (k < info_.tunables.size() && key != info_.tunables[k].key) ++k;
    if (k == info_.tunables.size())
      return fail(why, "unknown key " + quoted(key) + " (value " + quoted(value) +
                           "); keys: " + key_list(info_));
    const Tunable& t = info_.tunables[k];
    double v;
    bool ok = parse_number(value, &v);
    if (!ok || (t.integer && v != std::floor(v)))
      return fail(why, key + ": " + quoted(value) + " is not a" +
                           (t.integer ? " whole number" : " number") + " (" + range_text(t) + ")");
    if (v < t.min || v > t.max)
      return fail(why, key + ": " + quoted(value) + " is out of range (" + range_text(t) + ")");
    next[k] = v;
  }
  values_ = std::move(next);
  return 0;
}

std::string TunedPolicy::params_text() const {
  std::string s;
  for (size_t k = 0; k < values_.size(); ++k)
    s += (k ? " " : "") + std::string(info_.tunables[k].key) + "=" + format_number(values_[k]);
  return s;
}

double TunedPolicy::cool_period_s() const {
  for (size_t k = 0; k < values_.size(); ++k)
    if (std::string_view(info_.tunables[k].key) == "cool_period_s") return values_[k];
  return 1.0;
}

}  // namespace detail

}  // namespace mtier::policy
