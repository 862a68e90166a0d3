// SPDX-License-Identifier: Apache-2.0
// The benchmark workload: presets against their locality targets, the
// generator's determinism and semantics, the Zipf sampler and permutation,
// locality statistics on a hand-made trace, and trace files (round trip,
// truncation at every byte, corrupt input).
//
// The preset test generates every preset at its own default size (~2M
// lookups for the Meta-like ones: ~1 s here for generation and statistics),
// since the shares depend on trace length and table sizes: scaling down
// would test a different statistic than the one the presets were fitted to.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "locality.h"
#include "permutation.h"
#include "trace.h"
#include "workload.h"
#include "zipf.h"

namespace mtier::bench {
namespace {

void expect_near_rel(double got, double want, double tol, const std::string& what) {
  if (want == 0) return;  // unchecked target
  EXPECT_LE(std::abs(got - want), tol * want) << what << ": got " << got << ", target " << want;
}

TEST(Presets, MeetTheirLocalityTargets) {
  for (auto& p : presets()) {
    SCOPED_TRACE(p.name);
    Trace t = generate(p.spec);
    LocalityStats s = compute_locality(t);
    auto& g = p.targets;
    expect_near_rel(s.share_50, g.share_50, g.tolerance, "share_50");
    expect_near_rel(s.share_80, g.share_80, g.tolerance, "share_80");
    expect_near_rel(s.share_90, g.share_90, g.tolerance, "share_90");
    expect_near_rel(s.mean_pooling, g.mean_pooling, g.tolerance, "mean_pooling");
    EXPECT_EQ(s.lookups, t.lookups());
  }
}

TEST(Presets, NamedUniqueAndDescribed) {
  std::set<std::string> names;
  for (auto& p : presets()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_EQ(p.spec.name, p.name);
    std::string err;
    EXPECT_EQ(check_spec(p.spec, &err), 0) << p.name << ": " << err;
    std::string d = p.spec.describe();
    EXPECT_EQ(d.find('\n'), std::string::npos);
    EXPECT_NE(d.find(p.name), std::string::npos);
  }
  for (const char* n : {"meta2022", "meta2021", "criteo-kaggle", "uniform", "tiny"})
    ASSERT_NE(find_preset(n), nullptr) << n;
  for (const char* n : {"meta2022", "meta2021"}) {  // the checked statistics stay checked
    auto& g = find_preset(n)->targets;
    EXPECT_TRUE(g.share_50 > 0 && g.share_80 > 0 && g.share_90 > 0 && g.mean_pooling > 0) << n;
  }
  EXPECT_EQ(find_preset("meta2022")->spec.tables.size(), 26u);
  EXPECT_EQ(find_preset("criteo-kaggle")->spec.tables.size(), 26u);
  EXPECT_EQ(find_preset("no-such-preset"), nullptr);
  EXPECT_EQ(find_preset(""), nullptr);
}

TEST(Presets, DefaultSizes) {
  const double gib = 1 << 30;
  for (const char* n : {"meta2022", "meta2021", "criteo-kaggle", "uniform"}) {
    auto& spec = find_preset(n)->spec;
    EXPECT_NEAR(spec.table_bytes() / gib, 1.0, 0.05) << n;
    uint64_t lookups = spec.lookups_per_batch_estimate() * spec.batches;
    EXPECT_GE(lookups, 1000000u) << n;
    EXPECT_LE(lookups, 4000000u) << n;
  }
  auto& tiny = find_preset("tiny")->spec;
  EXPECT_NEAR(tiny.table_bytes() / double(1 << 20), 8.0, 0.5);
  EXPECT_NEAR(double(tiny.lookups_per_batch_estimate() * tiny.batches), 20000, 2000);
}

TEST(ScaleToBytes, KeepsProportions) {
  WorkloadSpec w = find_preset("meta2022")->spec;
  const auto before = w.tables;
  scale_to_bytes(&w, 256ull << 20);
  EXPECT_NEAR(double(w.table_bytes()), double(256ull << 20), 0.001 * (256ull << 20));
  for (size_t i = 0; i < w.tables.size(); i++) {
    EXPECT_GE(w.tables[i].rows, 1u);
    if (before[i].rows >= 10000) {  // rounding aside, every table shrinks 4x
      EXPECT_NEAR(double(w.tables[i].rows) / double(before[i].rows), 0.25, 0.001) << i;
    }
  }
  scale_to_bytes(&w, 1);  // far too small: every table keeps a row
  for (auto& t : w.tables) EXPECT_EQ(t.rows, 1u);
}

TEST(CheckSpec, RejectsWhatGenerateCannotMake) {
  WorkloadSpec w = find_preset("tiny")->spec;
  std::string err;
  ASSERT_EQ(check_spec(w, &err), 0) << err;
  auto rejects = [&](WorkloadSpec bad) {
    err.clear();
    EXPECT_EQ(check_spec(bad, &err), -EINVAL);
    EXPECT_FALSE(err.empty());
  };
  WorkloadSpec b = w;
  b.tables[1].rows = 0;
  rejects(b);
  b = w;
  b.tables[0].rows = (1ull << 32) + 1;
  rejects(b);
  b = w;
  b.pooling_dist = "geometric";
  rejects(b);
  b = w;
  b.reuse = 1.5;
  rejects(b);
  b = w;
  b.tables[2].zipf = NAN;
  rejects(b);
  b = w;
  b.batch = 0;
  rejects(b);
}

bool same(const Trace& a, const Trace& b) {
  if (a.batches.size() != b.batches.size()) return false;
  for (size_t i = 0; i < a.batches.size(); i++)
    if (a.batches[i].offsets != b.batches[i].offsets || a.batches[i].rows != b.batches[i].rows)
      return false;
  return true;
}

WorkloadSpec small_spec() {
  WorkloadSpec w = find_preset("tiny")->spec;
  w.reuse = 0.3;
  return w;
}

TEST(Generate, DeterministicForItsSeed) {
  WorkloadSpec w = small_spec();
  Trace a = generate(w), b = generate(w);
  EXPECT_TRUE(same(a, b));
  w.seed++;
  EXPECT_FALSE(same(a, generate(w)));
}

TEST(Generate, EachTableHasItsOwnStream) {
  WorkloadSpec w = small_spec();
  Trace a = generate(w);
  w.tables[1].zipf = 0.5;  // another table's skew leaves table 0's rows alone
  Trace b = generate(w);
  for (size_t i = 0; i < a.batches.size(); i++) {
    auto& x = a.batches[i];
    auto& y = b.batches[i];
    std::vector<uint32_t> rx(x.rows.begin(), x.rows.begin() + x.offsets[w.batch]);
    std::vector<uint32_t> ry(y.rows.begin(), y.rows.begin() + y.offsets[w.batch]);
    EXPECT_EQ(rx, ry) << "batch " << i;
  }
}

TEST(Generate, ShapeRowsAndFixedPooling) {
  WorkloadSpec w = small_spec();
  w.pooling_dist = "fixed";
  w.tables[3].pooling = 2.6;  // rounds to 3
  Trace t = generate(w);
  ASSERT_EQ(t.batches.size(), w.batches);
  for (auto& b : t.batches) {
    ASSERT_EQ(b.offsets.size(), w.tables.size() * w.batch + 1);
    EXPECT_EQ(b.offsets[0], 0u);
    EXPECT_EQ(b.offsets.back(), b.rows.size());
    for (size_t t_ = 0; t_ < w.tables.size(); t_++) {
      uint64_t want = t_ == 3 ? 3 : std::llround(w.tables[t_].pooling);
      for (uint32_t s = 0; s < w.batch; s++) {
        size_t bag = t_ * w.batch + s;
        EXPECT_EQ(b.offsets[bag + 1] - b.offsets[bag], want);
        for (uint32_t i = b.offsets[bag]; i < b.offsets[bag + 1]; i++)
          EXPECT_LT(b.rows[i], w.tables[t_].rows);
      }
    }
  }
}

TEST(Generate, PoissonBagsHaveTheMeanAndAtLeastOne) {
  WorkloadSpec w;
  w.name = "custom";
  w.tables = {{1000, 8, 1.0, 1.0}, {1000, 8, 1.0, 3.5}, {1000, 8, 1.0, 300}};
  w.batch = 500;
  w.batches = 4;
  Trace t = generate(w);
  for (size_t tab = 0; tab < w.tables.size(); tab++) {
    uint64_t n = 0, bags = 0;
    for (auto& b : t.batches)
      for (uint32_t s = 0; s < w.batch; s++, bags++) {
        size_t bag = tab * w.batch + s;
        uint32_t k = b.offsets[bag + 1] - b.offsets[bag];
        EXPECT_GE(k, 1u);
        n += k;
      }
    double mean = double(n) / double(bags), want = w.tables[tab].pooling;
    EXPECT_NEAR(mean, want, 0.03 * want + 0.01) << "table " << tab;
  }
}

TEST(Generate, FullReuseRepeatsThePreviousBatch) {
  WorkloadSpec w = small_spec();
  w.reuse = 1.0;
  Trace t = generate(w);
  for (size_t i = 1; i < t.batches.size(); i++) {
    auto& prev = t.batches[i - 1];
    auto& cur = t.batches[i];
    for (size_t tab = 0; tab < w.tables.size(); tab++) {
      std::set<uint32_t> before(prev.rows.begin() + prev.offsets[tab * w.batch],
                                prev.rows.begin() + prev.offsets[(tab + 1) * w.batch]);
      for (uint32_t j = cur.offsets[tab * w.batch]; j < cur.offsets[(tab + 1) * w.batch]; j++)
        ASSERT_TRUE(before.count(cur.rows[j])) << "batch " << i << " table " << tab;
    }
  }
}

TEST(Permutation, IsABijectionForSmallN) {
  for (uint64_t n = 1; n <= 300; n++) {
    for (uint64_t seed : {1ull, 42ull, 0xdeadbeefull}) {
      Permutation p(n, seed);
      std::vector<bool> seen(n);
      for (uint64_t i = 0; i < n; i++) {
        uint64_t y = p(i);
        ASSERT_LT(y, n) << "n " << n;
        ASSERT_FALSE(seen[y]) << "n " << n << " seed " << seed << ": " << y << " twice";
        seen[y] = true;
      }
    }
  }
  for (uint64_t n : {1024ull, 4097ull, 65535ull, 100003ull}) {
    Permutation p(n, 7);
    std::vector<bool> seen(n);
    for (uint64_t i = 0; i < n; i++) {
      uint64_t y = p(i);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]) << "n " << n;
      seen[y] = true;
    }
  }
}

TEST(Permutation, ScattersAndDependsOnSeed) {
  const uint64_t n = 1000000;
  Permutation a(n, 1), b(n, 2);
  int differ = 0, low = 0;
  for (uint64_t i = 0; i < 1000; i++) {
    differ += a(i) != b(i);
    low += a(i) < n / 100;  // the first ranks must not stay together
  }
  EXPECT_GT(differ, 990);
  EXPECT_LT(low, 40);
}

TEST(Zipf, ExponentZeroIsUniform) {
  ZipfSampler z(10, 0);
  std::mt19937_64 rng(3);
  std::vector<int> hist(10);
  for (int i = 0; i < 100000; i++) hist[z.sample(rng)]++;
  for (int h : hist) EXPECT_NEAR(h, 10000, 500);
}

TEST(Zipf, MatchesThePmfForSmallN) {
  const double s = 1.0;
  ZipfSampler z(5, s);
  std::mt19937_64 rng(4);
  std::vector<double> hist(5);
  const int draws = 200000;
  for (int i = 0; i < draws; i++) hist[z.sample(rng)]++;
  double norm = 0;
  for (int k = 1; k <= 5; k++) norm += std::pow(k, -s);
  for (int k = 1; k <= 5; k++) EXPECT_NEAR(hist[k - 1] / draws, std::pow(k, -s) / norm, 0.005);
}

TEST(Zipf, SkewPutsMassOnLowRanks) {
  const uint64_t n = 1000000;
  ZipfSampler z(n, 1.2);
  std::mt19937_64 rng(5);
  int head = 0, zero = 0;
  const int draws = 100000;
  for (int i = 0; i < draws; i++) {
    uint64_t k = z.sample(rng);
    ASSERT_LT(k, n);
    head += k < 100;
    zero += k == 0;
  }
  EXPECT_GT(head, draws * 0.6);  // ~0.68 in theory
  EXPECT_NEAR(double(zero) / draws, 0.19, 0.01);
}

TEST(Locality, HandMadeTrace) {
  // One table, batch 2, one batch: row 0 six times, row 1 twice, rows 2, 3 once.
  Trace t;
  t.spec.name = "custom";
  t.spec.tables = {{10, 4, 1.0, 5}};
  t.spec.batch = 2;
  t.spec.batches = 1;
  t.batches = {{{0, 5, 10}, {0, 0, 1, 0, 2, 0, 0, 1, 0, 3}}};
  LocalityStats s = compute_locality(t);
  EXPECT_EQ(s.lookups, 10u);
  EXPECT_EQ(s.distinct_rows, 4u);
  EXPECT_DOUBLE_EQ(s.share_50, 0.25);  // row 0: 6 of 10
  EXPECT_DOUBLE_EQ(s.share_80, 0.5);   // rows 0, 1: 8 of 10
  EXPECT_DOUBLE_EQ(s.share_90, 0.75);
  EXPECT_DOUBLE_EQ(s.mean_pooling, 5);
  EXPECT_DOUBLE_EQ(s.mean_reuse_per_unique_row_in_batch, 2.5);
  EXPECT_DOUBLE_EQ(s.once_in_batch_fraction, 0.5);
  EXPECT_EQ(describe(s).find('\n'), std::string::npos);
}

class TraceFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/workload_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (auto& p : paths_) unlink(p.c_str());
    rmdir(dir_.c_str());
  }
  std::string path(const std::string& name) {
    paths_.insert(dir_ + "/" + name);
    return dir_ + "/" + name;
  }
  static std::vector<unsigned char> slurp(const std::string& p) {
    std::vector<unsigned char> v;
    FILE* f = fopen(p.c_str(), "rb");
    if (!f) return v;
    for (int c; (c = fgetc(f)) != EOF;) v.push_back(static_cast<unsigned char>(c));
    fclose(f);
    return v;
  }
  static void spill(const std::string& p, const std::vector<unsigned char>& v) {
    FILE* f = fopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    size_t wrote = v.empty() ? 0 : fwrite(v.data(), 1, v.size(), f);
    ASSERT_EQ(wrote, v.size());
    fclose(f);
  }
  static void put32(std::vector<unsigned char>* v, size_t at, uint32_t x) {
    for (int i = 0; i < 4; i++) (*v)[at + i] = static_cast<unsigned char>(x >> (8 * i));
  }
  // A small trace: two tables, batch 2, pooling 2, three batches.
  static Trace small_trace() {
    WorkloadSpec w;
    w.name = "small";
    w.tables = {{50, 4, 1.0, 2}, {7, 4, 0.5, 2}};
    w.batch = 2;
    w.batches = 3;
    w.pooling_dist = "fixed";
    return generate(w);
  }
  // Reads p, expecting -EINVAL and a reason containing `why`.
  static void expect_invalid(const std::string& p, const std::string& why) {
    Trace t;
    std::string err;
    EXPECT_EQ(read_trace(p, &t, &err), -EINVAL) << why;
    EXPECT_NE(err.find(why), std::string::npos) << "reason: " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos);
    EXPECT_TRUE(t.batches.empty());
  }
  std::string dir_;
  std::set<std::string> paths_;
};

TEST_F(TraceFile, RoundTrip) {
  Trace a = generate(small_spec());
  std::string err, p = path("a.trace");
  ASSERT_EQ(write_trace(a, p, &err), 0) << err;
  Trace b;
  ASSERT_EQ(read_trace(p, &b, &err), 0) << err;
  EXPECT_TRUE(same(a, b));
  EXPECT_EQ(b.lookups(), a.lookups());
  EXPECT_EQ(b.spec.describe(), a.spec.describe());
  EXPECT_EQ(b.spec.seed, a.spec.seed);
  EXPECT_EQ(b.spec.reuse, a.spec.reuse);
  ASSERT_EQ(b.spec.tables.size(), a.spec.tables.size());
  for (size_t i = 0; i < a.spec.tables.size(); i++) {
    EXPECT_EQ(b.spec.tables[i].rows, a.spec.tables[i].rows);
    EXPECT_EQ(b.spec.tables[i].dim, a.spec.tables[i].dim);
    EXPECT_EQ(b.spec.tables[i].zipf, a.spec.tables[i].zipf);
    EXPECT_EQ(b.spec.tables[i].pooling, a.spec.tables[i].pooling);
  }
}

TEST_F(TraceFile, RejectsWhatIsNotATrace) {
  std::string p = path("text");
  const char* text = "hello, this is not a trace file at all\n";
  spill(p, std::vector<unsigned char>(text, text + strlen(text)));
  expect_invalid(p, "not a trace");
  spill(p, {});
  expect_invalid(p, "not a trace");
  Trace t;
  std::string err;
  EXPECT_EQ(read_trace(path("missing"), &t, &err), -ENOENT);
  EXPECT_EQ(read_trace(dir_, &t, &err), -EINVAL);  // a directory
}

TEST_F(TraceFile, RejectsAnotherVersion) {
  std::string err, p = path("v.trace");
  ASSERT_EQ(write_trace(small_trace(), p, &err), 0) << err;
  auto bytes = slurp(p);
  put32(&bytes, 8, 2);
  spill(p, bytes);
  expect_invalid(p, "version 2");
}

TEST_F(TraceFile, EveryTruncationIsAnError) {
  std::string err, p = path("t.trace"), cut = path("cut.trace");
  ASSERT_EQ(write_trace(small_trace(), p, &err), 0) << err;
  auto bytes = slurp(p);
  ASSERT_GT(bytes.size(), 100u);
  for (size_t n = 0; n < bytes.size(); n++) {
    spill(cut, std::vector<unsigned char>(bytes.begin(), bytes.begin() + n));
    Trace t;
    EXPECT_EQ(read_trace(cut, &t, &err), -EINVAL) << "cut at " << n;
  }
  bytes.push_back(0);  // and one byte too many
  spill(cut, bytes);
  expect_invalid(cut, "after the end marker");
}

// The last batch's rows end 16 bytes before the end of the file (the end
// marker); its offsets come just before its rows.
TEST_F(TraceFile, RejectsRowOutOfItsTable) {
  Trace tr = small_trace();
  std::string err, p = path("r.trace");
  ASSERT_EQ(write_trace(tr, p, &err), 0) << err;
  auto bytes = slurp(p);
  put32(&bytes, bytes.size() - 16 - 4, 7);  // table 1 has 7 rows: ids 0..6
  spill(p, bytes);
  expect_invalid(p, "outside table 1");
}

TEST_F(TraceFile, RejectsDecreasingOffsets) {
  Trace tr = small_trace();
  std::string err, p = path("o.trace");
  ASSERT_EQ(write_trace(tr, p, &err), 0) << err;
  auto bytes = slurp(p);
  auto& last = tr.batches.back();
  size_t offsets_at = bytes.size() - 16 - 4 * last.rows.size() - 4 * last.offsets.size();
  put32(&bytes, offsets_at + 4 * 2, last.offsets[1] - 1);  // offsets[2] < offsets[1]
  spill(p, bytes);
  expect_invalid(p, "offset 2 decreases");
  // write_trace refuses the same inconsistency in memory.
  tr.batches.back().offsets[2] = tr.batches.back().offsets[1] - 1;
  EXPECT_EQ(write_trace(tr, path("o2.trace"), &err), -EINVAL);
  EXPECT_NE(err.find("decreases"), std::string::npos) << err;
}

TEST_F(TraceFile, RejectsAWrongEndMarkerCount) {
  std::string err, p = path("e.trace");
  ASSERT_EQ(write_trace(small_trace(), p, &err), 0) << err;
  auto bytes = slurp(p);
  bytes[bytes.size() - 8]++;
  spill(p, bytes);
  expect_invalid(p, "lookup count");
}

}  // namespace
}  // namespace mtier::bench
