// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the control-socket decoder (src/ipc/wire.h):
// decode() must not crash, read out of bounds or leak on any input, and
// whatever decodes must re-encode to exactly the input (the encoding is
// canonical). `make check` runs a seeded version of this
// (tests/unit/ipc_wire_test.cc, Wire.SeededFuzz); this one is for long runs.
//
// Build and run with clang (not needed by the normal build), from the
// source tree:
//
//   clang++ -std=c++20 -g -O1 -D_GNU_SOURCE -Isrc -fsanitize=fuzzer,address,undefined
//       -fno-sanitize-recover=all src/ipc/wire.cc tests/fuzz/wire_fuzz.cc -o wire_fuzz
//   (one command line)
//   mkdir -p fuzz-corpus && ./wire_fuzz -max_len=65600 -timeout=5 fuzz-corpus
//
// A crash leaves its input in crash-<sha1>; ./wire_fuzz crash-<sha1> replays it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ipc/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mtier::ipc::Message m;
  std::string why;
  int rc = mtier::ipc::decode(data, size, &m, &why);
  if (rc != 0) {
    if (why.empty()) __builtin_trap();  // every rejection names its reason
    return 0;
  }
  std::vector<uint8_t> again;
  if (mtier::ipc::encode(m, &again) != 0 || again.size() != size ||
      memcmp(again.data(), data, size) != 0)
    __builtin_trap();
  return 0;
}
