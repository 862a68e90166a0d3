// SPDX-License-Identifier: Apache-2.0
// The layout of mtierfs (mtierfs(8)), as pure functions over mtierd's status
// document (docs/protocol.md, "Status"): which paths exist, what each
// directory lists, who owns each node and with which mode, what each file
// reads, and what a write to a writable file asks of the daemon. No I/O and
// no libfuse here, so every rule is unit-tested on a document written in the
// test (tests/unit/fs_tree_test.cc); fs/mtierfs.cc only glues these to FUSE.
//
// The tree:
//   policy  stats
//   tiers/{dram,slow,store}/{kind,node,capacity,budget,used,bandwidth}
//   procs/<pid>/{name,weight}
//   procs/<pid>/tables/<id>-<name>/{size,resident,tier_bytes,heat,faults,
//                                   migrations,placement,heatmap,pin}
// Writable: policy, tiers/{dram,slow}/budget, .../pin.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/wire.h"
#include "sys/page_size.h"
#include "util/json.h"

namespace mtier::fs {

// The tiers of the status document, in its order; a tier's index is its
// position here (BudgetSet.tier for the two memory tiers).
inline constexpr const char* kTierNames[] = {"dram", "slow", "store"};
inline constexpr int kTierCount = 3;
// Heat-map slices asked for a table's heatmap file (HEAT_REQUEST.buckets):
// the protocol's most, so a table of up to that many extents gets one line
// per extent.
inline constexpr uint32_t kHeatmapBuckets = ipc::kMaxHeatBuckets;
inline constexpr uint32_t kHeatmapWindowMs = 1000;
// The longest write a writable file accepts (policy params are at most
// 1024 bytes; anything longer is a mistake, not a request).
inline constexpr size_t kMaxWriteBytes = 4096;
// Bytes in a page where the status document does not say (a process
// whose runtime publishes no page_size_bytes): the runtime's.
inline constexpr uint64_t kPageBytes = kPageSize;

enum class NodeType { kRoot, kTiers, kTier, kProcs, kProc, kTables, kTable, kFile };

enum class FileKind {
  kPolicy,
  kStats,
  kTierKind,
  kTierNode,
  kTierCapacity,
  kTierBudget,
  kTierUsed,
  kTierBandwidth,
  kProcName,
  kProcWeight,
  kProcCounters,
  kTableSize,
  kTableResident,
  kTableTierBytes,
  kTableHeat,
  kTableFaults,
  kTableMigrations,
  kTablePlacement,
  kTableHeatmap,
  kTablePin,
};

// A path, recognized by its shape only (parse_path); whether its process
// and table exist is a question for a status document (resolve).
struct Node {
  NodeType type = NodeType::kRoot;
  FileKind file = FileKind::kPolicy;  // meaningful for kFile only
  int tier = -1;                      // index into kTierNames: kTier and the tier files
  uint32_t pid = 0;                   // kProc and everything under it
  uint32_t table_id = 0;              // kTable and its files
  std::string table_dir;              // kTable and its files: "<id>-<name>" as in the path
  bool is_dir() const { return type != NodeType::kFile; }
  bool operator==(const Node&) const = default;
};

// Recognizes an absolute path ("/", "/tiers/dram/used",
// "/procs/42/tables/1-hot/pin"). Returns 0, or -ENOENT for anything that
// is not in the layout (an unknown name, a pid or table id that is not a
// canonical decimal number, a file under a file, "." or "..", empty
// components other than one trailing slash).
[[nodiscard]] int parse_path(std::string_view path, Node* out);

// A table's directory name: "<id>-<name>" with every character of the name
// outside [A-Za-z0-9._-] replaced by '_'.
std::string table_dir_name(uint32_t id, const std::string& name);

// The process `pid` of a status document, or nullptr.
const json::Json* find_process(const json::Json& status, uint32_t pid);
// The table `id` of a process object, or nullptr.
const json::Json* find_table(const json::Json& process, uint32_t id);
// The tier named kTierNames[tier] of a status document, or nullptr.
const json::Json* find_tier(const json::Json& status, int tier);

// Whether the node exists in `status` (null: no daemon answers, so there are
// no processes). Returns 0 or -ENOENT: a pid not in the document, a table id
// the process does not have, a table directory whose name part does not
// match the table's name (table_dir_name).
[[nodiscard]] int resolve(const json::Json* status, const Node& n);

// Owner and permission bits. Everything is root's, except procs/<pid> and
// all below it, which are the process's user's (its `uid`). Directories
// 0555, files 0444, writable files 0644. The node must resolve in `status`.
struct Attr {
  bool dir = false;
  mode_t mode = 0;  // permission bits only
  uid_t uid = 0;
};
Attr attributes(const json::Json* status, const Node& n);

// Whether writes to this file mean something (policy, tiers/{dram,slow}/budget, pin).
bool writable(const Node& n);

// The entries of a directory node that resolves in `status` (without "."
// and ".."). With no daemon (status null): the fixed layout, and procs/
// empty.
std::vector<std::string> list_dir(const json::Json* status, const Node& n);

// The contents of a file other than `stats` (prometheus.h) from a status
// document. `heat` is the HEAT_REQUEST document for the node's process,
// used by heatmap only (may be null otherwise). Every file ends in '\n'
// unless empty. Returns 0, or -ENOENT when the node does not resolve (in
// `heat` too, for heatmap) with *why saying so.
[[nodiscard]] int file_content(const json::Json& status, const json::Json* heat, const Node& n,
                               std::string* out, std::string* why);

// Whether user `caller` may write the file: root always; otherwise only the
// owner attributes() gives it (the process's user for a pin; nobody else
// for the root-owned files). Returns 0, or -EACCES with *why
// ("not the process's user", "not root").
[[nodiscard]] int check_writer(const json::Json& status, const Node& n, uid_t caller,
                               std::string* why);

// Turns what was written into the request to send: PolicySet, BudgetSet or
// PinSet. One line (a trailing newline and surrounding blanks are allowed).
// Returns 0 with *out set, or -EINVAL with *why: an empty or too long write,
// more than one line, an unknown policy or parameter (checked with
// policy::make_policy), a size that does not parse or exceeds the tier's
// capacity_bytes (when that is known, > 0), an unknown pin tier, a page
// number that is not a decimal integer, a range of no pages or outside the
// table. Nothing is sent on a rejection.
[[nodiscard]] int parse_write(const json::Json& status, const Node& n, std::string_view text,
                              ipc::Message* out, std::string* why);

// A number as the files show it: an integral value in fixed notation
// ("10697285632"), others in the shortest form that reads back ("349.125");
// "nan" for the JSON null the daemon writes for a heat that is not finite.
std::string number_text(const json::Json& v);
std::string number_text(double v);

// The page moves kinds of the status document, in its order ("new>dram",
// ...; docs/protocol.md).
const std::vector<std::string>& move_kinds();
// The kinds of a moves object: move_kinds() first, then any other key the
// daemon sent (in key order), so a newer daemon's kinds are not dropped.
std::vector<std::string> move_kinds_of(const json::Json& moves);

}  // namespace mtier::fs
