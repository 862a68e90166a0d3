// SPDX-License-Identifier: Apache-2.0
// The child's side of a fork (uffd/forked_children.h has the parent's).
#pragma once
#include "uffd/fork_hello.h"

namespace mtier {

// How long a child waits for its parent's fault handler to take it.
inline constexpr int kForkReplyTimeoutMs = 30'000;

// In a forked child, before fork() returns there (one thread: the fork's
// child handler): makes the parent's region readable here. With
// `map_region`, maps the region's memfd privately at the parent's address
// (a grandchild instead inherits its parent's private mapping, and must
// not map again); then registers the mapping for MISSING faults on a
// userfaultfd of its own, hands that to the parent's fault handler over
// in.socket and waits for the reply. From then on a read of a page not in
// the memfd waits for the parent to bring it in, and a write copies the
// page into the child's own memory.
// Returns 0, or -errno with *step naming what failed; on failure nothing
// stays registered (the caller decides what becomes of the mapping).
// Allocates nothing; logs nothing.
[[nodiscard]] int attach_to_parent(const Inheritance& in, bool map_region, const char** step);

}  // namespace mtier
