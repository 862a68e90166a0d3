// SPDX-License-Identifier: Apache-2.0
#include "sys/memory_limit.h"

#include <cstdlib>
#include <sstream>

#include "sys/text_file.h"

namespace mtier::sys {
namespace {

constexpr size_t kMaxFile = 64 << 10;
constexpr uint64_t kV1Unlimited = 1ull << 60;  // v1 says "no limit" as ~2^63 rounded to pages

// The limit in `file` ("max" or a byte count), 0 for none or unreadable.
uint64_t read_limit(const std::string& file) {
  std::string text;
  if (read_regular_file(file, kMaxFile, &text) < 0) return 0;
  if (text.compare(0, 3, "max") == 0) return 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || v >= kV1Unlimited) return 0;
  return v;
}

// The least limit in `name` of dir and its ancestors up to base.
MemoryLimit least_along(const std::string& base, std::string path, const std::string& name) {
  MemoryLimit out;
  while (!path.empty() && path.back() == '/') path.pop_back();
  for (;;) {
    std::string file = base + path + "/" + name;
    uint64_t v = read_limit(file);
    if (v && (!out.bytes || v < out.bytes)) out = {v, file};
    if (path.empty()) break;
    size_t slash = path.rfind('/');
    path = slash == std::string::npos ? "" : path.substr(0, slash);
  }
  return out;
}

}  // namespace

MemoryLimit cgroup_memory_limit(const std::string& proc_cgroup, const std::string& root) {
  std::istringstream lines(proc_cgroup);
  std::string line, v1_path, v2_path;
  bool v1 = false, v2 = false;
  while (std::getline(lines, line)) {
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      v2 = true;
      v2_path = path;
    }
    std::istringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');)
      if (c == "memory") {
        v1 = true;
        v1_path = path;
      }
  }
  // A v1 memory controller wins over a v2 hierarchy without it (hybrid).
  if (v1) return least_along(root + "/memory", v1_path, "memory.limit_in_bytes");
  if (v2) return least_along(root, v2_path, "memory.max");
  return {};
}

MemoryLimit own_memory_limit() {
  std::string text;
  if (read_regular_file("/proc/self/cgroup", kMaxFile, &text) < 0) return {};
  return cgroup_memory_limit(text, "/sys/fs/cgroup");
}

uint64_t own_rss_bytes() {
  std::string text;
  if (read_regular_file("/proc/self/status", kMaxFile, &text) < 0) return 0;
  size_t at = text.find("\nVmRSS:");
  if (at == std::string::npos) return 0;
  return strtoull(text.c_str() + at + 7, nullptr, 10) * 1024;  // "VmRSS:   1234 kB"
}

}  // namespace mtier::sys
