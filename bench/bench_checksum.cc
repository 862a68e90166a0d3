// SPDX-License-Identifier: Apache-2.0
// The checksum's probe: the crc32c every page read from a store is checked
// against before it is placed (page/page_checksum.h), timed over a buffer
// the size of the probes' table, page by page in address order. The buffer
// is larger than the caches, as a page just read from a device (DMA into a
// staging buffer) is not in them: the figure is the cold cost a fetch pays.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "bench_probes.h"
#include "sys/page_size.h"
#include "util/crc32c.h"

namespace mtier::tools::bench {

int probe_checksum(BenchConfig& c, Samples* s) {
  size_t bytes = c.pages * kPageSize;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return -errno;
  auto buf = static_cast<unsigned char*>(m);
  for (size_t i = 0; i < bytes; i++) buf[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  std::vector<double> passes;
  volatile uint32_t sink = 0;
  // Three passes over the whole buffer (each evicts the last from the
  // caches), the median kept.
  for (int pass = 0; pass < 3; pass++) {
    auto t0 = Clock::now();
    uint32_t acc = 0;
    for (size_t off = 0; off < bytes; off += kPageSize) acc ^= crc32c(buf + off, kPageSize);
    passes.push_back(seconds_since(t0) * 1e6 / static_cast<double>(c.pages));
    sink = sink ^ acc;
  }
  munmap(m, bytes);
  std::sort(passes.begin(), passes.end());
  (*s)["checksum"].push_back(passes[1]);
  c.checksum_impl = crc32c_hardware() ? "crc32c, SSE4.2 instruction" : "crc32c, portable table";
  return 0;
}

}  // namespace mtier::tools::bench
