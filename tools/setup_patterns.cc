// SPDX-License-Identifier: Apache-2.0
#include "setup_patterns.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace mtier::tools::setup {
namespace {

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A value in [0, 1) from an index and a table: what normal_ or uniform
// would write, without a generator's cost.
double value(uint64_t k, unsigned t, unsigned salt) {
  return static_cast<double>((k * 2654435761u + t * 7919u + salt) % 1000) / 1000.0;
}

// The float64 temporary, as `mtier bench setup` has always run it.
int float64_tables(unsigned count, uint64_t n, const Allocator& a, std::vector<float*>* tables) {
  for (unsigned t = 0; t < count; t++) {
    std::string tmp_name = "init" + std::to_string(t), name = "emb" + std::to_string(t);
    auto* tmp = static_cast<double*>(a.alloc(tmp_name.c_str(), n * sizeof(double)));
    if (!tmp) return 1;
    for (uint64_t k = 0; k < n; k++) tmp[k] = value(k, t, 0);
    auto* table = static_cast<float*>(a.alloc(name.c_str(), n * sizeof(float)));
    if (!table) return 1;
    for (uint64_t k = 0; k < n; k++) table[k] = static_cast<float>(tmp[k]);
    a.release(tmp);
    tables->push_back(table);
  }
  return 0;
}

// The public DLRM reference trainer's create_emb, table by table:
//   EmbeddingBag(n, m)            A: T allocated and written (normal_)
//   np.random.uniform((n, m))     B: 2T of float64 allocated and written
//   .astype(np.float32)           C: T written while B is read; B freed;
//                                    the previous table's C freed (rebound)
//   torch.tensor(W)               D: T written while C is read
//   EmbeddingBag.weight = D       A freed, never read
int dlrm_reference_tables(unsigned count, uint64_t n, const Allocator& a,
                          std::vector<float*>* tables) {
  float* prev_c = nullptr;
  for (unsigned t = 0; t < count; t++) {
    const std::string s = std::to_string(t);
    auto* A = static_cast<float*>(a.alloc(("bag" + s).c_str(), n * sizeof(float)));
    if (!A) return 1;
    for (uint64_t k = 0; k < n; k++) A[k] = static_cast<float>(value(k, t, 1));
    auto* B = static_cast<double*>(a.alloc(("uniform" + s).c_str(), n * sizeof(double)));
    if (!B) return 1;
    for (uint64_t k = 0; k < n; k++) B[k] = value(k, t, 0);
    auto* C = static_cast<float*>(a.alloc(("astype" + s).c_str(), n * sizeof(float)));
    if (!C) return 1;
    for (uint64_t k = 0; k < n; k++) C[k] = static_cast<float>(B[k]);
    a.release(B);
    if (prev_c) a.release(prev_c);
    prev_c = C;
    auto* D = static_cast<float*>(a.alloc(("emb" + s).c_str(), n * sizeof(float)));
    if (!D) return 1;
    memcpy(D, C, n * sizeof(float));
    a.release(A);
    tables->push_back(D);
  }
  if (prev_c) a.release(prev_c);
  return 0;
}

}  // namespace

bool parse_pattern(const std::string& name, Pattern* out) {
  if (name == "float64") *out = Pattern::kFloat64;
  else if (name == "dlrm-reference") *out = Pattern::kDlrmReference;
  else return false;
  return true;
}

const char* pattern_name(Pattern p) {
  return p == Pattern::kFloat64 ? "float64" : "dlrm-reference";
}

double process_cpu_seconds() {
  FILE* f = fopen("/proc/self/stat", "re");
  if (!f) return -1;
  char buf[1024];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = '\0';
  const char* p = strrchr(buf, ')');  // the command name may hold spaces
  unsigned long long utime = 0, stime = 0;
  // After ")": state (field 3) ... utime is field 14, stime 15.
  if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                   &stime) != 2)
    return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int run(Pattern p, unsigned count, uint64_t table_bytes, const Allocator& a, Result* out) {
  const uint64_t n = table_bytes / count / 4;
  std::vector<float*> tables;
  const double cpu0 = process_cpu_seconds(), t0 = now_s();
  int rc = p == Pattern::kFloat64 ? float64_tables(count, n, a, &tables)
                                  : dlrm_reference_tables(count, n, a, &tables);
  if (rc != 0) return rc;
  const double t1 = now_s();
  out->setup_cpu_s = process_cpu_seconds() - cpu0;
  uint64_t sum = 0;
  for (float* table : tables)
    for (uint64_t k = 0; k < n; k++) sum = sum * 31 + static_cast<uint64_t>(table[k] * 1000.0f);
  out->setup_s = t1 - t0;
  out->readback_s = now_s() - t1;
  out->checksum = sum;
  return 0;
}

}  // namespace mtier::tools::setup
