#include "sample_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "zipf.h"

namespace mtier::tools {
namespace {

using bench::ZipfSampler;

// Scatters popular ranks over the table, as hashed ids do in real models.
uint64_t scatter(uint64_t rank, uint64_t rows) {
  uint64_t x = rank * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return x % rows;
}

uint64_t fnv1a(uint64_t h, const void* data, uint64_t len) {
  auto* p = static_cast<const unsigned char*>(data);
  for (uint64_t i = 0; i < len; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

void init_table(float* t, uint64_t rows, unsigned dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (uint64_t i = 0; i < rows * dim; i++) t[i] = u(rng);
}

}  // namespace

double TrainResult::steady_steps_per_second() const {
  size_t n = step_end.size();
  if (n < 2) return steps_per_second();
  size_t half = n / 2;
  double secs = step_end[n - 1] - step_end[half - 1];
  return secs > 0 ? (n - half) / secs : 0;
}

uint64_t Workload::table_bytes() const {
  uint64_t b = 0;
  for (auto& t : tables) b += t.rows * dim * sizeof(float);
  return b;
}

std::string Workload::describe() const {
  char buf[256];
  snprintf(buf, sizeof buf, "%zu tables, %.0f MiB, dim %u fp32, pooling %u, batch %u, %u steps, zipf",
           tables.size(), table_bytes() / 1048576.0, dim, pooling, batch, steps);
  std::string out = buf;
  for (auto& t : tables) {
    snprintf(buf, sizeof buf, " %.2f", t.zipf);
    out += buf;
  }
  return out + ", ids scattered";
}

Workload default_workload() {
  Workload w;
  // A Criteo-like mix: two large tables and several small ones, skew varying
  // per table (HugeCTR uses 0.9 / 1.1 / 1.3).
  w.tables = {{400000, 1.05}, {300000, 0.9}, {120000, 1.1}, {80000, 1.3},
              {60000, 1.2},   {40000, 0.95}, {20000, 1.1},  {10000, 1.3}};
  return w;
}

TrainResult train(const Workload& w, const TableAllocator& alloc,
                  const std::function<void(unsigned)>& progress) {
  std::vector<float*> tables;
  std::vector<ZipfSampler> samplers;
  for (unsigned t = 0; t < w.tables.size(); t++) {
    tables.push_back(alloc(t, w.tables[t].rows * w.dim * sizeof(float)));
    init_table(tables.back(), w.tables[t].rows, w.dim, w.seed + t);
    samplers.emplace_back(w.tables[t].rows, w.tables[t].zipf);
  }
  std::mt19937_64 rng(w.seed);
  std::vector<float> pooled(w.dim), dense(w.dim);
  for (unsigned d = 0; d < w.dim; d++) dense[d] = std::sin(0.1f * d);
  std::vector<uint64_t> ids(w.pooling);
  TrainResult r;
  const float lr = 0.01f;
  auto start = std::chrono::steady_clock::now();
  for (unsigned step = 0; step < w.steps; step++) {
    double loss = 0;
    for (unsigned b = 0; b < w.batch; b++) {
      float label = (rng() & 1) ? 1.0f : 0.0f;
      for (unsigned t = 0; t < tables.size(); t++) {
        std::fill(pooled.begin(), pooled.end(), 0.0f);
        for (auto& id : ids) {
          id = scatter(samplers[t](rng), w.tables[t].rows);
          const float* row = tables[t] + id * w.dim;
          for (unsigned d = 0; d < w.dim; d++) pooled[d] += row[d];
        }
        float logit = 0;
        for (unsigned d = 0; d < w.dim; d++) logit += pooled[d] * dense[d];
        float p = 1.0f / (1.0f + std::exp(-logit));
        loss += -(label * std::log(p + 1e-7f) + (1 - label) * std::log(1 - p + 1e-7f));
        float g = (p - label) * lr;
        for (auto id : ids) {
          float* row = tables[t] + id * w.dim;
          for (unsigned d = 0; d < w.dim; d++) row[d] -= g * dense[d];
        }
      }
    }
    r.losses.push_back(loss / (w.batch * tables.size()));
    r.step_end.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (progress) progress(step);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.weights_hash = 0xcbf29ce484222325ull;
  for (unsigned t = 0; t < tables.size(); t++)
    r.weights_hash = fnv1a(r.weights_hash, tables[t], w.tables[t].rows * w.dim * sizeof(float));
  return r;
}

}  // namespace mtier::tools
