// SPDX-License-Identifier: Apache-2.0
// Which registered processes a tool follows (`mtier heat`, `mtier record`):
// one pid, the ranks of a job (the name mtierd groups them by, see
// engine/job_identity.h), or a command and every process it started.
#pragma once
#include <sys/types.h>

#include <string>

#include "record/snapshot.h"
#include "sys/proc_tree.h"

namespace mtier::record {

struct Follow {
  int32_t pid = 0;   // exactly this process (0: not by pid)
  std::string job;   // the ranks of this job ("": not by job)
  pid_t tree = 0;    // this process and its descendants (0: not by tree)
  bool any() const { return pid == 0 && job.empty() && tree == 0; }
};

// Whether f follows p: by pid, by job, by tree (all given must hold; none
// given: every process).
bool follows(const Follow& f, const ProcessSnap& p, const sys::ParentOf& parent = sys::parent_of);

// Drops from *snap the processes f does not follow; returns how many are left.
size_t keep_followed(const Follow& f, Snapshot* snap, const sys::ParentOf& parent = sys::parent_of);

// "pid 123", "job NAME", "pid 123 and its children" - for messages.
std::string followed_text(const Follow& f);

}  // namespace mtier::record
