// SPDX-License-Identifier: Apache-2.0
#include "sample_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <memory>
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

namespace {

// One step's draws: a label per bag and, per table, pooling ids per bag.
struct StepDraw {
  std::vector<float> labels;  // [bag]
  StepRows rows;              // [table][bag * pooling + k]
};

// Draws one step from rng in the order the trainer always has (per bag: the
// label, then every table's pooled ids), so the stream, and with it every
// loss, is the same whether steps are drawn ahead or not.
StepDraw draw_step(const Workload& w, const std::vector<ZipfSampler>& samplers,
                   std::mt19937_64& rng) {
  StepDraw d;
  d.labels.resize(w.batch);
  d.rows.assign(w.tables.size(), std::vector<int64_t>(size_t{w.batch} * w.pooling));
  for (unsigned b = 0; b < w.batch; b++) {
    d.labels[b] = (rng() & 1) ? 1.0f : 0.0f;
    for (unsigned t = 0; t < w.tables.size(); t++)
      for (unsigned k = 0; k < w.pooling; k++)
        d.rows[t][size_t{b} * w.pooling + k] =
            static_cast<int64_t>(scatter(samplers[t](rng), w.tables[t].rows));
  }
  return d;
}

// The forward pass and SGD update of one step; returns the summed loss.
double compute_step(const Workload& w, const std::vector<float*>& tables, const StepDraw& d,
                    const std::vector<float>& dense, std::vector<float>& pooled) {
  const float lr = 0.01f;
  double loss = 0;
  for (unsigned b = 0; b < w.batch; b++) {
    float label = d.labels[b];
    for (unsigned t = 0; t < tables.size(); t++) {
      const int64_t* ids = &d.rows[t][size_t{b} * w.pooling];
      std::fill(pooled.begin(), pooled.end(), 0.0f);
      for (unsigned k = 0; k < w.pooling; k++) {
        const float* row = tables[t] + ids[k] * w.dim;
        for (unsigned j = 0; j < w.dim; j++) pooled[j] += row[j];
      }
      float logit = 0;
      for (unsigned j = 0; j < w.dim; j++) logit += pooled[j] * dense[j];
      float p = 1.0f / (1.0f + std::exp(-logit));
      loss += -(label * std::log(p + 1e-7f) + (1 - label) * std::log(1 - p + 1e-7f));
      float g = (p - label) * lr;
      for (unsigned k = 0; k < w.pooling; k++) {
        float* row = tables[t] + ids[k] * w.dim;
        for (unsigned j = 0; j < w.dim; j++) row[j] -= g * dense[j];
      }
    }
  }
  return loss;
}

}  // namespace

TrainResult train(const Workload& w, const TableAllocator& alloc,
                  const std::function<void(unsigned)>& progress, const LookaheadOptions& lookahead) {
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
  TrainResult r;
  std::unique_ptr<LookaheadWindow> window;
  if (lookahead.depth > 0)
    window = std::make_unique<LookaheadWindow>(std::vector<const void*>(tables.begin(), tables.end()),
                                               w.dim * sizeof(float), lookahead);
  std::deque<StepDraw> ahead;  // steps drawn and not yet computed, in order
  unsigned drawn = 0;
  auto start = std::chrono::steady_clock::now();
  for (unsigned step = 0; step < w.steps; step++) {
    // Release the pins of the steps done before naming the next one, so the
    // window holds steps step..step+depth only.
    if (window) window->advance(step);
    while (drawn < w.steps && drawn <= step + lookahead.depth) {
      ahead.push_back(draw_step(w, samplers, rng));
      if (window) window->name(drawn, ahead.back().rows);
      drawn++;
    }
    if (window) window->wait(step);
    double loss = compute_step(w, tables, ahead.front(), dense, pooled);
    ahead.pop_front();
    r.losses.push_back(loss / (w.batch * tables.size()));
    r.step_end.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (progress) progress(step);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (window) {
    // Every named step was waited for; the last steps' pins go, so that
    // hashing the tables below (and whatever the caller does next) meets an
    // ordinary cache.
    window->advance(w.steps);
    r.lookahead = window->counters();
  }
  r.weights_hash = 0xcbf29ce484222325ull;
  for (unsigned t = 0; t < tables.size(); t++)
    r.weights_hash = fnv1a(r.weights_hash, tables[t], w.tables[t].rows * w.dim * sizeof(float));
  return r;
}

}  // namespace mtier::tools
