// SPDX-License-Identifier: Apache-2.0
// mtierfs' layout: path recognition, lookups in the status document,
// ownership and modes, directory listings, number formatting. File contents
// are in fs_content.cc, writes in fs_write.cc.
#include "fs_tree.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "ipc/page_moves.h"

namespace mtier::fs {
namespace {

struct NamedFile {
  const char* name;
  FileKind kind;
};

constexpr NamedFile kRootFiles[] = {{"policy", FileKind::kPolicy}, {"stats", FileKind::kStats}};
constexpr NamedFile kTierFiles[] = {
    {"kind", FileKind::kTierKind},         {"node", FileKind::kTierNode},
    {"capacity", FileKind::kTierCapacity}, {"budget", FileKind::kTierBudget},
    {"used", FileKind::kTierUsed},         {"bandwidth", FileKind::kTierBandwidth}};
constexpr NamedFile kProcFiles[] = {{"name", FileKind::kProcName},
                                    {"weight", FileKind::kProcWeight},
                                    {"counters", FileKind::kProcCounters}};
constexpr NamedFile kTableFiles[] = {{"size", FileKind::kTableSize},
                                     {"resident", FileKind::kTableResident},
                                     {"tier_bytes", FileKind::kTableTierBytes},
                                     {"heat", FileKind::kTableHeat},
                                     {"faults", FileKind::kTableFaults},
                                     {"migrations", FileKind::kTableMigrations},
                                     {"placement", FileKind::kTablePlacement},
                                     {"heatmap", FileKind::kTableHeatmap},
                                     {"pin", FileKind::kTablePin}};

template <size_t N>
bool find_file(const NamedFile (&files)[N], std::string_view name, FileKind* kind) {
  for (const NamedFile& f : files)
    if (name == f.name) return *kind = f.kind, true;
  return false;
}

template <size_t N>
void append_names(const NamedFile (&files)[N], std::vector<std::string>* out) {
  for (const NamedFile& f : files) out->push_back(f.name);
}

// A pid or table id as a path shows it: decimal digits without a leading
// zero (so each number has one name), within uint32_t.
bool parse_id(std::string_view s, uint32_t* out) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::vector<std::string_view> split_path(std::string_view path, bool* ok) {
  std::vector<std::string_view> parts;
  *ok = !path.empty() && path[0] == '/';
  if (!*ok || path == "/") return parts;
  path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  while (*ok) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (part.empty() || part == "." || part == "..") *ok = false;
    parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

int tier_index(std::string_view name) {
  for (int i = 0; i < kTierCount; i++)
    if (name == kTierNames[i]) return i;
  return -1;
}

bool is_process_node(const Node& n) {
  switch (n.type) {
    case NodeType::kProc:
    case NodeType::kTables:
    case NodeType::kTable:
      return true;
    case NodeType::kFile:
      return n.pid != 0;
    default:
      return false;
  }
}

}  // namespace

int parse_path(std::string_view path, Node* out) {
  bool ok;
  std::vector<std::string_view> p = split_path(path, &ok);
  if (!ok) return -ENOENT;
  Node n;
  size_t depth = p.size();
  if (depth == 0) return *out = n, 0;
  if (depth == 1 && find_file(kRootFiles, p[0], &n.file)) {
    n.type = NodeType::kFile;
    return *out = n, 0;
  }
  if (p[0] == "tiers") {
    n.type = NodeType::kTiers;
    if (depth >= 2 && (n.tier = tier_index(p[1])) < 0) return -ENOENT;
    if (depth >= 2) n.type = NodeType::kTier;
    if (depth == 3 && !find_file(kTierFiles, p[2], &n.file)) return -ENOENT;
    if (depth == 3) n.type = NodeType::kFile;
    if (depth > 3) return -ENOENT;
    return *out = n, 0;
  }
  if (p[0] != "procs") return -ENOENT;
  n.type = NodeType::kProcs;
  if (depth == 1) return *out = n, 0;
  if (!parse_id(p[1], &n.pid) || n.pid == 0) return -ENOENT;
  n.type = NodeType::kProc;
  if (depth == 2) return *out = n, 0;
  if (depth == 3) {
    if (p[2] == "tables")
      n.type = NodeType::kTables;
    else if (find_file(kProcFiles, p[2], &n.file))
      n.type = NodeType::kFile;
    else
      return -ENOENT;
    return *out = n, 0;
  }
  if (p[2] != "tables" || depth > 5) return -ENOENT;
  size_t dash = p[3].find('-');
  if (dash == std::string_view::npos || !parse_id(p[3].substr(0, dash), &n.table_id))
    return -ENOENT;
  n.table_dir = std::string(p[3]);
  n.type = NodeType::kTable;
  if (depth == 5) {
    if (!find_file(kTableFiles, p[4], &n.file)) return -ENOENT;
    n.type = NodeType::kFile;
  }
  return *out = n, 0;
}

std::string table_dir_name(uint32_t id, const std::string& name) {
  std::string dir = std::to_string(id) + "-";
  for (char c : name) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    dir += keep ? c : '_';
  }
  return dir;
}

const json::Json* find_process(const json::Json& status, uint32_t pid) {
  for (const json::Json& p : json::items(json::at(status, "processes")))
    if (json::at(p, "pid").is_number() && json::num(p, "pid") == pid) return &p;
  return nullptr;
}

const json::Json* find_table(const json::Json& process, uint32_t id) {
  for (const json::Json& t : json::items(json::at(process, "tables")))
    if (json::at(t, "id").is_number() && json::num(t, "id") == id) return &t;
  return nullptr;
}

const json::Json* find_tier(const json::Json& status, int tier) {
  if (tier < 0 || tier >= kTierCount) return nullptr;
  for (const json::Json& t : json::items(json::at(status, "tiers")))
    if (json::str(t, "name") == kTierNames[tier]) return &t;
  return nullptr;
}

int resolve(const json::Json* status, const Node& n) {
  if (!is_process_node(n)) return 0;
  const json::Json* p = status ? find_process(*status, n.pid) : nullptr;
  if (!p) return -ENOENT;
  if (n.table_dir.empty()) return 0;
  const json::Json* t = find_table(*p, n.table_id);
  if (!t || table_dir_name(n.table_id, json::str(*t, "name")) != n.table_dir) return -ENOENT;
  return 0;
}

bool writable(const Node& n) {
  if (n.type != NodeType::kFile) return false;
  return n.file == FileKind::kPolicy || n.file == FileKind::kTablePin ||
         (n.file == FileKind::kTierBudget && n.tier >= 0 && n.tier <= 1);
}

Attr attributes(const json::Json* status, const Node& n) {
  Attr a;
  a.dir = n.is_dir();
  a.mode = a.dir ? 0555 : writable(n) ? 0644 : 0444;
  if (is_process_node(n) && status) {
    const json::Json* p = find_process(*status, n.pid);
    if (p) a.uid = static_cast<uid_t>(json::num(*p, "uid"));
  }
  return a;
}

std::vector<std::string> list_dir(const json::Json* status, const Node& n) {
  std::vector<std::string> names;
  switch (n.type) {
    case NodeType::kRoot:
      names = {"policy", "procs", "stats", "tiers"};
      break;
    case NodeType::kTiers:
      names.assign(std::begin(kTierNames), std::end(kTierNames));
      break;
    case NodeType::kTier:
      append_names(kTierFiles, &names);
      break;
    case NodeType::kProcs:
      if (status)
        for (const json::Json& p : json::items(json::at(*status, "processes")))
          if (json::at(p, "pid").is_number() && json::num(p, "pid") >= 1)
            names.push_back(number_text(json::num(p, "pid")));
      break;
    case NodeType::kProc:
      append_names(kProcFiles, &names);
      names.push_back("tables");
      break;
    case NodeType::kTables:
      if (const json::Json* p = status ? find_process(*status, n.pid) : nullptr)
        for (const json::Json& t : json::items(json::at(*p, "tables")))
          if (json::at(t, "id").is_number())
            names.push_back(table_dir_name(static_cast<uint32_t>(json::num(t, "id")), json::str(t, "name")));
      break;
    case NodeType::kTable:
      append_names(kTableFiles, &names);
      break;
    case NodeType::kFile:
      break;
  }
  return names;
}

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 9.2e18) {
    snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string number_text(const json::Json& v) {
  return number_text(v.is_number() ? v.get<double>() : NAN);
}

// The kinds in the daemon's order (ipc/page_moves.h).
const std::vector<std::string>& move_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (unsigned m = 0; m < ipc::kPageMoveKinds; m++) k.push_back(ipc::page_move_name(m));
    return k;
  }();
  return kinds;
}

std::vector<std::string> move_kinds_of(const json::Json& moves) {
  std::vector<std::string> kinds, unknown;
  if (!moves.is_object()) return kinds;
  for (const std::string& k : move_kinds())
    if (moves.contains(k)) kinds.push_back(k);
  for (const auto& [k, v] : moves.items()) {
    bool known = false;
    for (const std::string& m : move_kinds()) known = known || k == m;
    if (!known) unknown.push_back(k);
  }
  std::sort(unknown.begin(), unknown.end());  // by name, as before the known ones
  kinds.insert(kinds.end(), unknown.begin(), unknown.end());
  return kinds;
}

}  // namespace mtier::fs
