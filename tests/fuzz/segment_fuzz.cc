// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the shared segment's parser (src/ipc/segment.h:
// attach() and read_directory(), what mtierd runs on a segment a hostile
// process sent): see segment_fuzz.h for the invariants. `make check` runs a
// seeded version of this (tests/unit/ipc_segment_test.cc,
// IpcSegment.SeededFuzz); this one is for long runs.
//
// Build and run with clang (not needed by the normal build), from the
// source tree:
//
//   clang++ -std=c++20 -g -O1 -D_GNU_SOURCE -Isrc -Itests/fuzz
//       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//       src/ipc/segment.cc src/sys/shm.cc src/sys/vm.cc tests/fuzz/segment_fuzz.cc
//       -o segment_fuzz   (one command line)
//   mkdir -p seg-corpus && ./segment_fuzz -max_len=8192 -timeout=5 seg-corpus
//
// A crash leaves its input in crash-<sha1>; ./segment_fuzz crash-<sha1> replays it.
#include <cstddef>
#include <cstdint>

#include "segment_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!mtier::ipc::fuzz::segment_one(data, size)) __builtin_trap();
  return 0;
}
