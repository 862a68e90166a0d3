// SPDX-License-Identifier: Apache-2.0
// mtierfs' writes: who may write a file, and what a write asks of mtierd.
// Everything is checked here, before anything is sent, so that a mistake
// comes back to the writer as EINVAL with its reason in mtierfs' log; the
// daemon checks again (it may know better, e.g. a table that shrank).
#include <cerrno>
#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "config/options.h"
#include "config/parse_text.h"
#include "fs_tree.h"
#include "policy/policy.h"

namespace mtier::fs {
namespace {

static_assert(ipc::kPinDram == 0 && ipc::kPinSlow == 1 && ipc::kPinStore == 2,
              "pin tiers are indices into kTierNames");

using Value = json::Json;

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) i++;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') i++;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

int invalid(std::string* why, std::string msg) { return config_text::fail(why, std::move(msg)); }

// A memory tier exists when mtierd's status gives it NUMA nodes (a node
// without a slow memory tier reports "slow" with none); the store tier
// always exists. 0, or -EINVAL with *why naming the tier.
int tier_exists(const Value& status, int tier, std::string* why) {
  const Value* t = find_tier(status, tier);
  if (t && (json::str(*t, "kind") == "store" || !json::str(*t, "nodes").empty())) return 0;
  return invalid(why, std::string("tier ") + kTierNames[tier] +
                          " does not exist on this node (no NUMA node of that kind)");
}

int parse_policy(std::string_view line, ipc::Message* out, std::string* why) {
  std::vector<std::string> w = words(line);
  ipc::PolicySet set{w[0], ""};
  for (size_t i = 1; i < w.size(); i++) {
    if (w[i].find('=') == std::string::npos) return invalid(why, "'" + w[i] + "' is not key=value");
    set.params += (i > 1 ? " " : "") + w[i];
  }
  if (set.name.size() > ipc::kMaxNameBytes) return invalid(why, "the policy name is too long");
  if (set.params.size() > ipc::kMaxParamsBytes) return invalid(why, "the parameters are too long");
  std::unique_ptr<policy::Policy> p;
  if (policy::make_policy(set.name, set.params, &p, why) < 0) return -EINVAL;
  *out = ipc::Message{set};
  return 0;
}

int parse_budget(const Value& status, const Node& n, std::string_view line, ipc::Message* out,
                 std::string* why) {
  std::string text(line);
  if (words(line).size() != 1) return invalid(why, "'" + text + "' is not one size");
  uint64_t bytes = 0;
  int rc = parse_size(text, &bytes);
  if (rc == -ERANGE) return invalid(why, "'" + text + "' is too large");
  if (rc < 0)
    return invalid(why, "'" + text + "' is not a size (use e.g. 4096, 64M, 2G; 0 = none)");
  if (bytes && tier_exists(status, n.tier, why) < 0) return -EINVAL;
  const Value* tier = find_tier(status, n.tier);
  double capacity = tier ? json::num(*tier, "capacity_bytes") : 0;
  if (capacity > 0 && static_cast<double>(bytes) > capacity)
    return invalid(why, "'" + text + "' is more than the tier's capacity (" +
                            number_text(capacity) + " bytes)");
  *out = ipc::Message{ipc::BudgetSet{static_cast<uint32_t>(n.tier), bytes}};
  return 0;
}

// A page number: decimal digits only (no sign, no unit), within uint64_t.
bool parse_count(const std::string& s, uint64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && s[0] != '-' && s[0] != '+' && r.ec == std::errc() &&
         r.ptr == s.data() + s.size();
}

int parse_pin(const Value& status, const Node& n, std::string_view line, ipc::Message* out,
              std::string* why) {
  std::vector<std::string> w = words(line);
  if (w.size() != 1 && w.size() != 3)
    return invalid(why,
                   "expected TIER [FIRST_PAGE PAGES], got " + std::to_string(w.size()) + " words");
  ipc::PinSet pin{n.pid, n.table_id, 0, 0, ipc::kUnpin};
  if (w[0] != "none") {
    int tier = 0;
    while (tier < kTierCount && w[0] != kTierNames[tier]) tier++;
    if (tier == kTierCount)
      return invalid(why, "unknown tier '" + w[0] + "' (dram, slow, store or none)");
    if (tier_exists(status, tier, why) < 0) return -EINVAL;
    pin.tier = static_cast<uint32_t>(tier);
  }
  const Value& t = *find_table(*find_process(status, n.pid), n.table_id);
  uint64_t table_pages = static_cast<uint64_t>(json::num(t, "pages"));
  pin.pages = table_pages;
  if (w.size() == 3) {
    if (!parse_count(w[1], &pin.first_page))
      return invalid(why, "first page '" + w[1] + "' is not a page number");
    if (!parse_count(w[2], &pin.pages)) return invalid(why, "'" + w[2] + "' is not a page count");
  }
  if (pin.pages == 0) return invalid(why, "a range of no pages");
  if (pin.first_page >= table_pages || pin.pages > table_pages - pin.first_page)
    return invalid(why, std::to_string(pin.pages) + " pages from page " +
                            std::to_string(pin.first_page) + " are outside the table (" +
                            std::to_string(table_pages) + " pages)");
  *out = ipc::Message{pin};
  return 0;
}

}  // namespace

int check_writer(const Value& status, const Node& n, uid_t caller, std::string* why) {
  if (caller == 0) return 0;
  Attr a = attributes(&status, n);
  bool process_file = n.pid != 0;
  if (process_file && caller == a.uid && resolve(&status, n) == 0) return 0;
  *why = process_file ? "not the process's user" : "not root";
  return -EACCES;
}

int parse_write(const Value& status, const Node& n, std::string_view text, ipc::Message* out,
                std::string* why) {
  if (!writable(n)) return invalid(why, "the file is read-only");
  if (text.size() > kMaxWriteBytes)
    return invalid(why, "more than " + std::to_string(kMaxWriteBytes) + " bytes");
  std::string_view line = config_text::trim(text);
  if (line.empty()) return invalid(why, "an empty write");
  if (line.find('\n') != std::string_view::npos) return invalid(why, "more than one line");
  if (line.find('\0') != std::string_view::npos) return invalid(why, "a NUL byte");
  if (n.file == FileKind::kPolicy) return parse_policy(line, out, why);
  if (resolve(&status, n) < 0) return invalid(why, "the process or its table is gone");
  if (n.file == FileKind::kTierBudget) return parse_budget(status, n, line, out, why);
  return parse_pin(status, n, line, out, why);
}

}  // namespace mtier::fs
