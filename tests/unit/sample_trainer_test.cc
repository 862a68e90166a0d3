// SPDX-License-Identifier: Apache-2.0
// The sample trainer (bench/sample_trainer) and its lookahead: losses and
// weights do not depend on whether, how far and how (sync, async) the steps
// ahead are named, in malloc'd memory and under mtier; under mtier the
// lookahead reads pages ahead of the access.
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mtier.h"
#include "sample_trainer.h"

namespace mtier::tools {
namespace {

Workload small_workload() {
  Workload w;
  w.tables = {{6000, 1.05}, {3000, 0.9}, {1000, 1.3}};
  w.pooling = 4;
  w.batch = 16;
  w.steps = 8;
  return w;
}

struct MallocTables {
  std::vector<void*> blocks;
  ~MallocTables() {
    for (void* p : blocks) free(p);
  }
  TableAllocator alloc() {
    return [this](unsigned, uint64_t bytes) { return static_cast<float*>(blocks.emplace_back(malloc(bytes))); };
  }
};

TrainResult train_malloc(const Workload& w, const LookaheadOptions& la) {
  MallocTables m;
  return train(w, m.alloc(), {}, la);
}

void expect_same(const TrainResult& a, const TrainResult& b, const char* what) {
  ASSERT_EQ(a.losses.size(), b.losses.size()) << what;
  EXPECT_EQ(0, memcmp(a.losses.data(), b.losses.data(), a.losses.size() * sizeof(double))) << what;
  EXPECT_EQ(a.weights_hash, b.weights_hash) << what;
}

TEST(SampleTrainer, DeterministicForASeed) {
  Workload w = small_workload();
  TrainResult a = train_malloc(w, {}), b = train_malloc(w, {});
  expect_same(a, b, "two runs");
  ASSERT_EQ(a.losses.size(), w.steps);
  EXPECT_EQ(a.step_end.size(), w.steps);
  w.seed++;
  EXPECT_NE(train_malloc(w, {}).weights_hash, a.weights_hash);
}

TEST(SampleTrainer, LookaheadKeepsResultsInMallocMemory) {
  Workload w = small_workload();
  TrainResult plain = train_malloc(w, {});
  EXPECT_EQ(plain.lookahead.calls, 0u);
  for (unsigned depth : {1u, 3u, 100u})  // 100: more than the steps
    for (bool async : {true, false}) {
      TrainResult la = train_malloc(w, {depth, async});
      std::string what = "depth " + std::to_string(depth) + (async ? " async" : " sync");
      expect_same(plain, la, what.c_str());
      // Every step's rows named once per table, whatever the depth.
      EXPECT_EQ(la.lookahead.calls, uint64_t{w.steps} * w.tables.size()) << what;
      EXPECT_EQ(la.lookahead.pages_read, 0u) << what << ": malloc'd memory is not mtier's";
    }
}

// Under mtier with 1/divisor of the tables' bytes: the same results, and
// with the lookahead pages are read ahead of the access. One engine per
// process (mtier_init): one such test per run of the binary.
void lookahead_under_mtier(unsigned divisor) {
  Workload w = small_workload();
  TrainResult plain = train_malloc(w, {});
  char dir[] = "/var/tmp/mtier-trainer-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr) << strerror(errno);
  uint64_t budget = w.table_bytes() / divisor / 4096 * 4096;
  std::string opts = "dram_bytes=" + std::to_string(budget) + ",store_path=" + dir +
                     ",store_bytes=" + std::to_string(4 * w.table_bytes());
  int rc = mtier_init(opts.c_str());
  if (rc == -EPERM || rc == -ENOSYS) {
    rmdir(dir);
    GTEST_SKIP() << "mtier cannot start here: " << strerror(-rc);
  }
  ASSERT_EQ(rc, 0) << strerror(-rc);
  std::vector<int> ids;
  auto alloc = [&](unsigned t, uint64_t bytes) {
    void* addr = nullptr;
    int id = mtier_table_create(("t" + std::to_string(t)).c_str(), bytes, &addr);
    EXPECT_GT(id, 0) << strerror(-id);
    ids.push_back(id);
    return static_cast<float*>(addr);
  };
  auto free_tables = [&] {
    for (int id : ids) EXPECT_EQ(mtier_table_free(id), 0);
    ids.clear();
  };
  TrainResult tiered = train(w, alloc, {});
  free_tables();
  expect_same(plain, tiered, "mtier");
  for (bool async : {true, false}) {
    // New tables: initialising them writes every row, which leaves most
    // pages in the store when training starts.
    TrainResult la = train(w, alloc, {}, {1, async});
    const char* what = async ? "mtier, async lookahead" : "mtier, sync lookahead";
    expect_same(plain, la, what);
    EXPECT_EQ(la.lookahead.errors, 0u) << what << ": " << strerror(la.lookahead.first_error);
    EXPECT_GT(la.lookahead.pages_read, 0u) << what;
    free_tables();
  }
  struct mtier_stats st;
  ASSERT_EQ(mtier_stats(&st), 0);
  EXPECT_GT(st.prefetch_calls, 0u);
  EXPECT_GT(st.prefetch_reads, 0u);
  EXPECT_EQ(st.pinned_pages, 0u) << "the trainer's last advance releases every pin";
  rmdir(dir);  // the store's file was unlinked when made
}

// A quarter of the tables' bytes: a step names up to 192 pages (3 tables x
// 64 rows), so the window of two steps overflows the pin limit (117 pages):
// the pages beyond it are demand-faulted, and nothing waits forever (the
// engine once did, in the lookahead's wait for room).
TEST(SampleTrainer, LookaheadUnderMtier) { lookahead_under_mtier(4); }

}  // namespace
}  // namespace mtier::tools
