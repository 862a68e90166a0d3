// SPDX-License-Identifier: Apache-2.0
// Which registered processes a tool follows (see follow.h).
#include "record/follow.h"

#include <algorithm>

namespace mtier::record {

bool follows(const Follow& f, const ProcessSnap& p, const sys::ParentOf& parent) {
  if (f.pid != 0 && p.pid != f.pid) return false;
  if (!f.job.empty() && p.job != f.job) return false;
  if (f.tree != 0 && !sys::descends_from(p.pid, f.tree, parent)) return false;
  return true;
}

size_t keep_followed(const Follow& f, Snapshot* snap, const sys::ParentOf& parent) {
  auto& procs = snap->procs;
  procs.erase(std::remove_if(procs.begin(), procs.end(),
                             [&](const ProcessSnap& p) { return !follows(f, p, parent); }),
              procs.end());
  return procs.size();
}

std::string followed_text(const Follow& f) {
  std::string s;
  if (f.pid != 0) s = "pid " + std::to_string(f.pid);
  if (!f.job.empty()) s += (s.empty() ? "" : ", ") + std::string("job ") + f.job;
  if (f.tree != 0) s += (s.empty() ? "" : ", ") + ("pid " + std::to_string(f.tree) + " and its children");
  return s.empty() ? "every process" : s;
}

}  // namespace mtier::record
