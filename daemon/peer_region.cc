// SPDX-License-Identifier: Apache-2.0
#include "peer_region.h"

#include <cerrno>
#include <charconv>

#include "sys/text_file.h"

namespace mtier::daemon {
namespace {

constexpr size_t kMaxMapsBytes = 64u << 20;

struct MapLine {
  uint64_t start = 0, end = 0;
  std::string_view dev, inode;
};

bool hex(std::string_view s, uint64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "start-end perms offset dev inode [path]"
bool parse_line(std::string_view line, MapLine* m) {
  std::string_view f[5];
  for (auto& field : f) {
    size_t i = line.find_first_not_of(' ');
    if (i == std::string_view::npos) return false;
    line.remove_prefix(i);
    size_t j = std::min(line.find(' '), line.size());
    field = line.substr(0, j);
    line.remove_prefix(j);
  }
  size_t dash = f[0].find('-');
  if (dash == std::string_view::npos) return false;
  m->dev = f[3];
  m->inode = f[4];
  return hex(f[0].substr(0, dash), &m->start) && hex(f[0].substr(dash + 1), &m->end) &&
         m->start < m->end;
}

std::string hex_text(uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  return "0x" + std::string(buf, r.ptr);
}

}  // namespace

int maps_cover(std::string_view maps, uint64_t base, uint64_t bytes, std::string* why) {
  if (bytes == 0 || base + bytes < base) {
    *why = "an empty or wrapping region";
    return -EINVAL;
  }
  const uint64_t end = base + bytes;
  uint64_t at = base;  // covered up to here
  std::string_view dev, inode;
  while (!maps.empty() && at < end) {
    size_t nl = std::min(maps.find('\n'), maps.size());
    std::string_view line = maps.substr(0, nl);
    maps.remove_prefix(std::min(nl + 1, maps.size()));
    MapLine m;
    if (!parse_line(line, &m) || m.end <= at || m.start > at) continue;
    if (inode.empty()) {
      if (m.inode == "0") break;  // anonymous memory is not the region's memfd
      dev = m.dev, inode = m.inode;
    } else if (m.dev != dev || m.inode != inode) {
      break;
    }
    at = m.end;
  }
  if (at >= end) return 0;
  *why = "it maps no region file at " + hex_text(at) + " (the region claimed is " +
         hex_text(base) + " to " + hex_text(end) + ")";
  return -EINVAL;
}

int peer_maps_region(pid_t pid, uint64_t base, uint64_t bytes, std::string* why) {
  std::string maps;
  std::string path = "/proc/" + std::to_string(pid) + "/maps";
  if (int rc = sys::read_regular_file(path, kMaxMapsBytes, &maps); rc < 0) {
    *why = path + ": " + sys::error_text(-rc);
    return rc;
  }
  return maps_cover(maps, base, bytes, why);
}

}  // namespace mtier::daemon
