// SPDX-License-Identifier: Apache-2.0
// Engine::start_line: what MTIER_STATS (`mtier run` on a terminal) says
// once the engine is up, in one line, after the daemon link's first try.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/daemon_link.h"
#include "engine/engine.h"
#include "page/core.h"
#include "store/store.h"
#include "sys/page_size.h"

namespace mtier {
namespace {

std::string mib(uint64_t bytes) {
  char buf[32];
  if (bytes >= (10ull << 30))
    snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  else
    snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// A store's place: "/var/tmp/mtier-1-x (unlinked)" is in /var/tmp; the
// free space of that filesystem, or "" for a device or an unknown one.
std::string place(const std::string& path) {
  std::string file = path.substr(0, path.find(" ("));
  struct stat st {};
  if (file.starts_with("/dev/") || (stat(file.c_str(), &st) == 0 && S_ISBLK(st.st_mode)))
    return "";
  std::string dir = file.substr(0, file.rfind('/'));
  struct statvfs fs {};
  if (dir.empty() || statvfs(dir.c_str(), &fs) != 0) return "";
  return ", " + mib(static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize) + " free in " + dir;
}

bool is_file(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The PyTorch lookahead, as mtier run set it up: its sitecustomize first on
// PYTHONPATH (with the mtier package beside it, or installed), K from
// MTIER_LOOKAHEAD. Only a Python program that imports torch uses it.
std::string lookahead() {
  const char* torch = secure_getenv("MTIER_TORCH");
  if (torch && std::string(torch) == "0") return "lookahead: the program's own calls only";
  const char* path = secure_getenv("PYTHONPATH");
  std::string first = path ? std::string(path).substr(0, std::string(path).find(':')) : "";
  if (first.empty() || !is_file(first + "/sitecustomize.py") ||
      !(is_file(first + "/mtier/_torch.py") || first.ends_with("/mtier/python")))
    return "lookahead: the program's own calls only";
  const char* k = secure_getenv("MTIER_LOOKAHEAD");
  std::string ks = k && *k ? k : "1";
  if (ks == "0") return "lookahead: each embedding op's ids, once torch is imported";
  return "lookahead: " + ks + " batch" + (ks == "1" ? "" : "es") + " ahead, once torch is imported";
}

}  // namespace

std::string Engine::start_line() const {
  const Options& o = core_->opts;
  std::string out = "DRAM budget " + mib(o.dram_bytes) + " (" + core_->budget_from + ")";
  std::string tiers = "tiers: DRAM";
  if (core_->has_slow_tier())
    tiers += ", slow memory node " + std::to_string(o.slow_node) + " (" + mib(o.slow_bytes) + ")";
  std::string stores;
  for (auto& st : core_->stores) {
    tiers += std::string(", ") + st->kind() + " store";
    stores += "; store " + st->path() + ", up to " +
              mib(st->capacity_slots() * kPageSize) +
              place(st->path());
  }
  if (core_->stores.empty()) stores = "; no store (pages cannot leave DRAM)";
  out += "; " + tiers + stores;
  if (core_->region_from != "given" && core_->region_from != "default")
    out += "; tables up to " + mib(o.region_bytes) + " in all (" + core_->region_from + ")";
  if (link_) out += "; daemon: " + link_->state();
  else out += segment_ ? "; daemon: off (daemon_socket=none)" : "; daemon: off (no shared segment)";
  return out + "; " + lookahead();
}

}  // namespace mtier
