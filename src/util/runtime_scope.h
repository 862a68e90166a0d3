// SPDX-License-Identifier: Apache-2.0
// Marks the stretches of code in which a thread runs the runtime itself (the
// engine's threads for their whole life, the C API while it works), so that
// the preload library sends that thread's allocations and memory-map calls
// straight to libc: the runtime must never turn its own buffers into managed
// tables, nor take its own calls on the region for the trainer's.
#pragma once

namespace mtier {

// True while the calling thread is inside a RuntimeScope.
bool in_runtime();

class RuntimeScope {
 public:
  RuntimeScope();
  ~RuntimeScope();
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;
};

}  // namespace mtier
