// SPDX-License-Identifier: Apache-2.0
// The machine's NUMA nodes as libnuma reports them: which exist, their
// memory, whether they have CPUs, and the distances between them. libnuma
// reads /sys/devices/system/node itself (the node list once, when it is
// loaded), so these always describe the live machine; tests that need other
// machines inject node facts at build_topology (tier/topology.h) instead.
// Topology discovery is the one user: it runs once at start, never on the
// fault path (libnuma allocates and reads files here).
#pragma once

namespace mtier::sys {

// Whether the kernel has NUMA (numa_available). Without it the calls below
// report no nodes (libnuma leaves them undefined; these check first).
[[nodiscard]] bool numa_present();
// The highest node id with a sysfs directory (numa_max_node), -1 without NUMA.
[[nodiscard]] int max_node();
// Whether `node` has a directory in /sys/devices/system/node (libnuma's
// numa_nodes_ptr: memory-less and CPU-less nodes included).
[[nodiscard]] bool node_exists(int node);
// The node's MemTotal in bytes (numa_node_size64; 0 for a memory-less
// node), or -1 if libnuma cannot read it.
[[nodiscard]] long long node_bytes(int node);
// Whether some CPU belongs to the node (numa_node_to_cpus): 1 or 0, or
// -errno if libnuma cannot read the node's CPU mask.
[[nodiscard]] int node_has_cpus(int node);
// The ACPI SLIT distance from one node to another (numa_distance): 10 from a
// node to itself, larger farther; 0 if unknown or a node does not exist.
[[nodiscard]] int node_distance(int from, int to);

}  // namespace mtier::sys
