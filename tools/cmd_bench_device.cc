// SPDX-License-Identifier: Apache-2.0
// mtier bench device: the device's own speed at mtier's I/O pattern - QD32
// random 4 KiB writes and reads through a file store's channel (the suite's
// probe, suite_device.h) - on its own, for scripts that turn pages moved into
// a device-bound time (scripts/bench-trainer.sh).
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "suite_device.h"
#include "util/json.h"

namespace mtier::tools {
namespace {

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench device [--dir DIR] [--bytes SIZE] [--json]\n\n"
          "Measures the device under DIR as mtier's file store uses it: random 4 KiB\n"
          "writes into a new file of SIZE (then again, overwriting), then random reads,\n"
          "32 in flight, through the store's io_uring channel (O_DIRECT, registered\n"
          "buffers; its fallback where the kernel lacks them). The file is removed.\n"
          "Prints the read and write IOPS; a page count over them is the time the\n"
          "device alone needs for it (the device-bound time `mtier bench suite` and\n"
          "scripts/bench-trainer.sh report). Exit status 1 when the probe failed.\n\n"
          "  --dir DIR     directory on the device (default /var/tmp)\n"
          "  --bytes SIZE  the probe file (K, M, G; at least 1M; default 256M)\n"
          "  --json        one JSON object: dir, bytes, mode, reads_per_second,\n"
          "                writes_per_second, seconds (or failure)\n");
}

}  // namespace

int bench_device(int argc, char** argv) {
  const cli::Command cmd("bench device");
  std::string dir = "/var/tmp";
  uint64_t bytes = 256ull << 20;
  bool json_out = false;
  cli::Parser p(cmd, usage);
  p.text("--dir", &dir).size("--bytes", &bytes, 1u << 20).flag("--json", &json_out);
  if (int rc = p.parse(argc, argv, nullptr); rc >= 0) return rc;
  suite::DeviceSpeed d = suite::measure_device(dir, bytes);
  if (json_out) {
    json::Json j = {{"dir", dir}, {"bytes", bytes}, {"mode", d.mode}};
    if (d.ok) {
      j["reads_per_second"] = json::number(d.read_iops);
      j["writes_per_second"] = json::number(d.write_iops);
      j["seconds"] = json::number(d.seconds);
    } else {
      j["failure"] = d.failure;
    }
    printf("%s\n", json::dump(j).c_str());
  } else if (d.ok) {
    printf("device: %s (%s): QD32 random 4 KiB: read %.0f IOPS, write %.0f IOPS "
           "(a %.0f MiB file, %.1f s)\n",
           dir.c_str(), d.mode.c_str(), d.read_iops, d.write_iops,
           static_cast<double>(bytes) / (1 << 20), d.seconds);
  } else {
    cmd.say(d.failure);
  }
  return d.ok ? 0 : 1;
}

}  // namespace mtier::tools
