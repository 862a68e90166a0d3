// SPDX-License-Identifier: Apache-2.0
// One connection to mtierd: who is at the other end (from SO_PEERCRED, never
// from what it says), its role, and for a registered runtime everything the
// daemon keeps about that process: its shared segment, the producer side of
// its order ring, the table directory last read, its heat model, its heat
// source and the budget last sent.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "perf/address_map.h"
#include "perf/perf_source.h"
#include "ipc/order_ring.h"
#include "ipc/segment.h"
#include "ipc/wire.h"
#include "page_moves.h"
#include "pins.h"
#include "policy/heat_model.h"
#include "sys/page_size.h"

namespace mtier::daemon {

struct Client {
  enum class Phase { kNew, kHello, kRegistered };

  uint32_t id = 0;
  int fd = -1;
  pid_t pid = 0;  // the peer's, from SO_PEERCRED
  uid_t uid = 0;
  gid_t gid = 0;
  Phase phase = Phase::kNew;
  ipc::Role role = ipc::Role::kRuntime;
  std::string name;  // what HELLO said (for the log and status only)

  // A registered runtime.
  unsigned weight = 1;
  std::string job;  // REGISTER's: the job it is a rank of ("" none); grouped with the uid
  int32_t rank = -1;
  int32_t world = -1;  // REGISTER's: WORLD_SIZE, the job's ranks on every node; -1 not said
  std::unique_ptr<ipc::Segment> segment;
  std::unique_ptr<ipc::OrderRing> ring;  // producer side
  std::vector<ipc::TableEntry> tables;   // directory as last read
  AddressMap addresses;                  // its tables' address ranges (owner: table id), for the samples
  uint64_t directory_generation = 1;     // odd: never read yet
  std::unique_ptr<policy::HeatModel> heat;
  std::unique_ptr<HeatSource> source;    // nullptr: no sampling for this process
  uint64_t budget_sent = 0, slow_budget_sent = 0;  // pages; 0 = none sent yet
  uint64_t samples = 0, unattributed = 0;          // heat samples taken from its source
  uint64_t orders_sent = 0, orders_dropped = 0;    // ring full
  uint64_t pages_moved = 0;                        // by orders, all ops
  std::map<uint32_t, TableTrack> tracks;           // by table id: places and page moves
  uint64_t faults_at_rate = 0;                     // missing_faults at the last rate update
  double faults_per_s = 0;                         // over the last second
  std::vector<Pin> pins;                           // PIN_SET, sorted by table and page

  // Set by Server::guarded() when the tick's work for this process threw:
  // the connection is dropped at the end of the tick with this reason.
  bool failed = false;
  char failed_why[160] = {};

  bool is_runtime() const { return phase == Phase::kRegistered; }
  // Bytes in one of its pages: the page size its segment names (version 2),
  // else the runtime's before it (sys/page_size.h).
  uint64_t page_bytes() const {
    uint64_t p = segment && segment->version() >= 2 ? segment->header()->page_size.load() : 0;
    return p ? p : kPageSize;
  }
  // "pid 1234 (python3)" for log lines.
  std::string label() const { return "pid " + std::to_string(pid) + " (" + name + ")"; }
};

}  // namespace mtier::daemon
