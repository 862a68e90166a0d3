// SPDX-License-Identifier: Apache-2.0
// The device's own figure, measured in the same run as the engine's: random
// 4 KiB writes, then reads, of a file store's slots through one StoreChannel
// of depth 32 - the same io_uring ring, O_DIRECT and registered buffers that
// the engine's eviction and fetches use, with nothing of the engine on top.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "bench_probes.h"
#include "store/store.h"
#include "sys/page_size.h"

namespace mtier::tools::bench {
namespace {

// One I/O per slot, in random slot order. All are handed to the channel in
// one call, so it keeps `depth` in flight until the last. Buffers are shared
// round-robin: the data is never checked, only the transfer timed.
int plan_ios(Store& store, StoreChannel& ch, uint64_t n, std::vector<StoreIo>* ios) {
  ios->clear();
  for (uint64_t i = 0; i < n; i++) {
    int64_t slot = store.alloc_slot();
    if (slot < 0) return static_cast<int>(slot);
    ios->push_back(
        {static_cast<uint64_t>(slot), ch.buffer(static_cast<unsigned>(i % ch.depth())), 0});
  }
  std::shuffle(ios->begin(), ios->end(), std::mt19937_64(42));
  return 0;
}

// Times one pass; adds "<key>" (GiB/s) and "<key>_kiops".
int timed_io(StoreChannel& ch, std::vector<StoreIo>& ios, bool write, Samples* s,
             const std::string& key) {
  auto t0 = Clock::now();
  int rc = write ? ch.write_pages(ios.data(), ios.size()) : ch.read_pages(ios.data(), ios.size());
  double secs = seconds_since(t0);
  if (rc < 0) return rc;
  auto n = static_cast<double>(ios.size());
  (*s)[key].push_back(n * kPageSize / secs / kGiB);
  (*s)[key + "_kiops"].push_back(n / secs / 1000);
  return 0;
}

}  // namespace

int probe_device(BenchConfig& c, Samples* s) {
  int err = 0;
  auto store = open_file_store({c.dir, c.pages * kPageSize, true}, &err);
  if (!store) return err ? err : -EIO;
  c.file_mode = store->mode();
  auto ch = store->open_channel(kDeviceDepth);  // closed before its store (declared after)
  if (!ch) return -ENOMEM;
  for (unsigned i = 0; i < ch->depth(); i++) memset(ch->buffer(i), 0x5a ^ i, kPageSize);
  std::vector<StoreIo> ios;
  if ((err = plan_ios(*store, *ch, c.pages, &ios)) < 0) return err;
  // The first pass writes into a new, sparse file: the filesystem allocates
  // blocks as it goes (as eviction into a new store file does). The second
  // overwrites them: the device's own figure, which the goals compare with.
  if ((err = timed_io(*ch, ios, true, s, "dev_write_fresh")) < 0) return err;
  std::shuffle(ios.begin(), ios.end(), std::mt19937_64(43));
  if ((err = timed_io(*ch, ios, true, s, "dev_write")) < 0) return err;
  std::shuffle(ios.begin(), ios.end(), std::mt19937_64(44));
  return timed_io(*ch, ios, false, s, "dev_read");
}

}  // namespace mtier::tools::bench
