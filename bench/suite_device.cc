// SPDX-License-Identifier: Apache-2.0
// A separate file: bench_probes.h declares mtier::tools::bench, which would
// hide mtier::bench (the replayer's) from the suite's other files.
#include "suite_device.h"

#include <chrono>
#include <cstring>

#include "bench_probes.h"
#include "sys/page_size.h"

namespace mtier::tools::suite {

double DeviceSpeed::bound_seconds(uint64_t read_pages, uint64_t written_pages) const {
  if (!ok || read_iops <= 0 || write_iops <= 0) return 0;
  return static_cast<double>(read_pages) / read_iops + static_cast<double>(written_pages) / write_iops;
}

DeviceSpeed measure_device(const std::string& dir, uint64_t bytes) {
  DeviceSpeed d;
  d.bytes = bytes;
  bench::BenchConfig c;
  c.dir = dir;
  c.pages = bytes / kPageSize;
  bench::Samples s;
  auto t0 = std::chrono::steady_clock::now();
  int rc = bench::probe_device(c, &s);
  d.seconds = bench::seconds_since(t0);
  d.mode = c.file_mode;
  if (rc < 0) {
    d.failure = "the device probe failed in " + dir + ": " + strerror(-rc);
    return d;
  }
  d.read_iops = bench::median_of(s, "dev_read_kiops") * 1000;
  d.write_iops = bench::median_of(s, "dev_write_kiops") * 1000;
  d.ok = d.read_iops > 0 && d.write_iops > 0;
  if (!d.ok) d.failure = "the device probe measured no I/O";
  return d;
}

}  // namespace mtier::tools::suite
