// SPDX-License-Identifier: Apache-2.0
// mtier bench suite: the device's own speed, measured by the suite in the
// same run and directory as the configurations, so that each run's pages
// read and written below DRAM can be turned into the time the device alone
// needs for them (the device-bound time: no tiering can beat it).
#pragma once
#include <cstdint>
#include <string>

namespace mtier::tools::suite {

struct DeviceSpeed {
  bool ok = false;
  std::string failure;     // why not ok (the store could not open, an I/O failed)
  uint64_t bytes = 0;      // the probe's file
  std::string mode;        // the store's I/O path (O_DIRECT io_uring, or its fallback)
  double read_iops = 0, write_iops = 0;  // QD32 random 4 KiB, overwriting
  double seconds = 0;      // the probe's own time
  // Seconds the device needs to read and write these pages at its IOPS.
  double bound_seconds(uint64_t read_pages, uint64_t written_pages) const;
};

// Random 4 KiB writes (into a new file of `bytes` in `dir`, then again,
// overwriting), then reads, 32 in flight, through a file store's channel:
// the same io_uring, O_DIRECT and registered buffers mtier's store uses
// (bench_device.cc, also behind `mtier bench fault`). The file is removed.
DeviceSpeed measure_device(const std::string& dir, uint64_t bytes);

}  // namespace mtier::tools::suite
