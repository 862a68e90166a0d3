// SPDX-License-Identifier: Apache-2.0
// A Snapshot (snapshot.h) as one JSON object: what `mtier heat --json`
// prints. The names follow mtierd's status document (docs/protocol.md)
// where the two hold the same figure.
#pragma once
#include <string>

#include "record/snapshot.h"

namespace mtier::record {

// {"unix_seconds", "processes": [{"pid", "name", "job" (null: none), "rank"
// (null: not said), "dram_budget_bytes", "dram_resident_bytes",
// "slow_budget_bytes", "slow_resident_bytes", "missing_faults", "evictions",
// "fetches", "tables": [{"id", "name", "bytes", "pages", "dram_pages",
// "slow_pages", "store_pages", "untouched_pages", "active_bytes", "heat",
// "samples_per_second", "moves": {"new>dram": pages, ...}, "heat_map": [slice
// heat...], "place": "DDm~s " (a char per slice, as TableSnap::place)}]}]}
std::string snapshot_json(const Snapshot& s);

}  // namespace mtier::record
