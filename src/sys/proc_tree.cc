// SPDX-License-Identifier: Apache-2.0
// Who started whom, from /proc (see proc_tree.h).
#include "sys/proc_tree.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "sys/text_file.h"

namespace mtier::sys {

pid_t parent_of(pid_t pid) {
  std::string stat;
  if (read_regular_file("/proc/" + std::to_string(pid) + "/stat", 4096, &stat) < 0) return -1;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and ')', so the
  // fields start after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return -1;
  const char* p = stat.c_str() + close + 2;  // the state
  if (*p == '\0' || p[1] != ' ') return -1;
  char* end = nullptr;
  long ppid = strtol(p + 2, &end, 10);
  return end == p + 2 || ppid < 0 ? -1 : static_cast<pid_t>(ppid);
}

bool descends_from(pid_t pid, pid_t ancestor, const ParentOf& parent) {
  for (int step = 0; step < 256 && pid > 0; step++) {
    if (pid == ancestor) return true;
    pid = parent(pid);
  }
  return false;
}

}  // namespace mtier::sys
