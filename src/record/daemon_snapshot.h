// SPDX-License-Identifier: Apache-2.0
// A Snapshot (snapshot.h) from mtierd: HEAT_REQUEST over the control socket,
// and the status document it answers with (docs/protocol.md) read into one.
#pragma once
#include <cstdint>
#include <string>

#include "record/snapshot.h"

namespace mtier::record {

// Asks mtierd at socket_path for a snapshot: pid 0 = every process the user
// may see; `buckets` heat-map slices per table wanted (the daemon may give
// fewer); an extent sampled within `window_ms` counts as active. unix_ms is
// set to the time of the answer. 0, or -errno with *why one line: no
// daemon ("no mtierd at PATH (is it running?)"), pid not registered or not
// the user's (the daemon's words), a reply that does not parse. A `job`
// keeps only that job's ranks (-ESRCH when none is registered).
[[nodiscard]] int fetch_snapshot(const std::string& socket_path, int32_t pid, unsigned buckets,
                                 unsigned window_ms, Snapshot* out, std::string* why, const std::string& job = "");

// The status document (JSON text) read into *out (unix_ms untouched).
// 0, or -EBADMSG with *why naming what is missing or malformed.
[[nodiscard]] int snapshot_from_status(const std::string& json, Snapshot* out, std::string* why);

}  // namespace mtier::record
