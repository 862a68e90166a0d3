// SPDX-License-Identifier: Apache-2.0
#include "sys/numa_nodes.h"

#include <numa.h>

#include <cerrno>

namespace mtier::sys {

bool numa_present() { return numa_available() >= 0; }

int max_node() { return numa_present() ? numa_max_node() : -1; }

bool node_exists(int node) {
  // numa_nodes_ptr is set when libnuma is loaded; isbitset is 0 past its size.
  return node >= 0 && node <= max_node() &&
         numa_bitmask_isbitset(numa_nodes_ptr, static_cast<unsigned>(node)) != 0;
}

long long node_bytes(int node) { return node_exists(node) ? numa_node_size64(node, nullptr) : -1; }

int node_has_cpus(int node) {
  if (!node_exists(node)) return -ENOENT;
  bitmask* cpus = numa_allocate_cpumask();  // exits the process if out of memory
  int rc = numa_node_to_cpus(node, cpus);
  int out = rc < 0 ? -(errno ? errno : EINVAL) : numa_bitmask_weight(cpus) > 0 ? 1 : 0;
  numa_free_cpumask(cpus);
  return out;
}

int node_distance(int from, int to) {
  // numa_distance indexes its table without a range check.
  return node_exists(from) && node_exists(to) ? numa_distance(from, to) : 0;
}

}  // namespace mtier::sys
