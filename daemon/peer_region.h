// SPDX-License-Identifier: Apache-2.0
// Whether a registering process really maps the region its segment claims:
// the segment's region_base and region_pages are the peer's word, so before
// the daemon sizes anything by them it reads the peer's /proc/PID/maps.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mtier::daemon {

// Whether `maps` (the text of a /proc/PID/maps) covers [base, base + bytes)
// with adjacent mappings of one file (same device and inode, as the
// runtime's region memfd is, however its mbind/uffd calls split it). 0, or
// -EINVAL with *why saying what is missing. bytes 0 or a range that wraps
// is -EINVAL.
[[nodiscard]] int maps_cover(std::string_view maps, uint64_t base, uint64_t bytes,
                             std::string* why);

// maps_cover() over /proc/PID/maps. -errno (and *why) when it cannot be read
// (the process is gone, or has more than 64 MiB of map lines).
[[nodiscard]] int peer_maps_region(pid_t pid, uint64_t base, uint64_t bytes, std::string* why);

}  // namespace mtier::daemon
