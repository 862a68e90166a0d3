// SPDX-License-Identifier: Apache-2.0
// Which job a process is a rank of (see job_identity.h).
#include "engine/job_identity.h"

#include <stdlib.h>

namespace mtier {

namespace {

bool set(const char* v) { return v && *v; }

// A rank from a variable's text, or -1 when it is not a whole number in range.
int32_t rank_of(const char* v) {
  if (!set(v)) return -1;
  char* end = nullptr;
  long n = strtol(v, &end, 10);
  return *end || n < 0 || n > INT32_MAX ? -1 : static_cast<int32_t>(n);
}

}  // namespace

JobIdentity job_identity(const EnvLookup& env) {
  JobIdentity j;
  const char* run_id = env("TORCHELASTIC_RUN_ID");
  const char* addr = env("MASTER_ADDR");
  const char* port = env("MASTER_PORT");
  if (const char* own = env("MTIER_JOB"); set(own)) {
    j.name = own;
    j.source = "MTIER_JOB";
  } else if (set(run_id) && std::string(run_id) != "none") {
    j.name = std::string("torchelastic:") + run_id;
    j.source = "TORCHELASTIC_RUN_ID";
  } else if (set(addr) && set(port)) {
    j.name = std::string("torch:") + addr + ":" + port;
    j.source = "MASTER_ADDR:MASTER_PORT";
  }
  if (j.name.size() > kMaxJobNameBytes) j.name.resize(kMaxJobNameBytes);
  j.rank = rank_of(env("RANK"));
  if (j.rank < 0) j.rank = rank_of(env("LOCAL_RANK"));
  j.world = rank_of(env("WORLD_SIZE"));
  if (j.world == 0) j.world = -1;
  return j;
}

JobIdentity own_job_identity() {
  return job_identity([](const char* name) -> const char* { return getenv(name); });
}

}  // namespace mtier
