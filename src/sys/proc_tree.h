// SPDX-License-Identifier: Apache-2.0
// Who started whom, from /proc: for the tools that follow a command and the
// processes it starts (`mtier record -- LAUNCHER`: the ranks a launcher
// spawns register, the launcher itself may not).
#pragma once
#include <sys/types.h>

#include <functional>

namespace mtier::sys {

// The parent of `pid` (field 4 of /proc/PID/stat), or -1 when the process
// is gone or the file does not parse.
pid_t parent_of(pid_t pid);

using ParentOf = std::function<pid_t(pid_t)>;

// Whether `pid` is `ancestor` or one of its descendants, walking parents
// (at most 256 steps: a chain longer than that is not followed). A process
// whose parent died was re-parented (to init or a subreaper) and is no
// longer anyone's descendant here.
bool descends_from(pid_t pid, pid_t ancestor, const ParentOf& parent = parent_of);

}  // namespace mtier::sys
