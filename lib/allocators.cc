// SPDX-License-Identifier: Apache-2.0
#include "allocators.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "log/log.h"

namespace mtier::lib {
namespace {

// The allocators' file names, as their Debian packages install them.
constexpr const char* kAllocatorNames[] = {"jemalloc", "tcmalloc", "mimalloc", "hoard",
                                           "snmalloc", "rpmalloc", "tbbmalloc", "scalloc"};

struct Range {
  std::atomic<uintptr_t> lo{0}, hi{0};
};
constexpr size_t kMaxRanges = 32;  // executable segments of allocator objects
Range g_ranges[kMaxRanges];
std::atomic<size_t> g_count{0};

bool is_allocator(const char* path) {
  if (!path || !*path) return false;
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* name : kAllocatorNames)
    if (strstr(base, name)) return true;
  return false;
}

int note_object(struct dl_phdr_info* info, size_t, void*) {
  if (!is_allocator(info->dlpi_name)) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    size_t n = g_count.load(std::memory_order_relaxed);
    if (n == kMaxRanges) return 1;
    g_ranges[n].lo.store(info->dlpi_addr + ph.p_vaddr, std::memory_order_relaxed);
    g_ranges[n].hi.store(info->dlpi_addr + ph.p_vaddr + ph.p_memsz, std::memory_order_relaxed);
    g_count.store(n + 1, std::memory_order_release);
  }
  return 0;
}

}  // namespace

void find_allocators() noexcept {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  dl_iterate_phdr(note_object, nullptr);
  // Who serves malloc for the program: libmtier.so first (mtier run puts
  // it first), or another allocator whose allocations mtier never sees.
  Dl_info info;
  void* first = dlsym(RTLD_DEFAULT, "malloc");
  if (first && dladdr(first, &info) && is_allocator(info.dli_fname))
    MTIER_LOG_WARN("malloc comes from %s, before libmtier.so in LD_PRELOAD: its allocations are "
                   "never tables; put libmtier.so first (mtier run does)", info.dli_fname);
}

bool in_allocator(const void* code) noexcept {
  auto a = reinterpret_cast<uintptr_t>(code);
  size_t n = g_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; i++)
    if (a >= g_ranges[i].lo.load(std::memory_order_relaxed) &&
        a < g_ranges[i].hi.load(std::memory_order_relaxed))
      return true;
  return false;
}

}  // namespace mtier::lib
