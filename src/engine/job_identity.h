// SPDX-License-Identifier: Apache-2.0
// Which job a process is a rank of, from its environment: the name mtierd
// groups ranks by (one DRAM budget per job on a node) and the rank shown
// beside its pid. Read once, when the engine is made (the link thread must
// not call getenv while the program may be calling setenv).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace mtier {

struct JobIdentity {
  std::string name;   // empty: not part of a job; at most kMaxJobNameBytes
  int32_t rank = -1;  // RANK, else LOCAL_RANK; -1: not said
  int32_t world = -1;  // WORLD_SIZE: the job's ranks on every node; -1: not said
  const char* source = "none";  // the variable(s) the name came from
};

inline constexpr size_t kMaxJobNameBytes = 64;  // the wire's limit (ipc::kMaxNameBytes)

using EnvLookup = std::function<const char*(const char*)>;

// The job, first found of:
//  - MTIER_JOB (any text: the user's own name for the job);
//  - TORCHELASTIC_RUN_ID, unless "none" (torchrun's default id when no
//    rendezvous id is given, the same for every job): "torchelastic:ID";
//  - MASTER_ADDR and MASTER_PORT, both set (torch.distributed's env://
//    rendezvous; torch.multiprocessing.spawn's children inherit them):
//    "torch:ADDR:PORT" - ranks of one job share them, two jobs on one node
//    cannot (the port is the rank 0 store's).
// Names longer than kMaxJobNameBytes are cut. The rank is RANK, else
// LOCAL_RANK, when it is a number from 0 to 2^31-1; the world WORLD_SIZE,
// when it is a number from 1 to 2^31-1 (more than the ranks a node's mtierd
// sees: the job has ranks on other nodes).
JobIdentity job_identity(const EnvLookup& env);

// The same from this process's environment (getenv).
JobIdentity own_job_identity();

}  // namespace mtier
