// SPDX-License-Identifier: Apache-2.0
#include "util/runtime_scope.h"

namespace mtier {
namespace {

// A depth, not a flag: scopes nest (the API calls the engine, which may log).
// initial-exec: read from malloc, it must not make the dynamic linker
// allocate TLS on first use.
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;

}  // namespace

bool in_runtime() { return t_depth > 0; }
RuntimeScope::RuntimeScope() { ++t_depth; }
RuntimeScope::~RuntimeScope() { --t_depth; }

}  // namespace mtier
