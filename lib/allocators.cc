// SPDX-License-Identifier: Apache-2.0
#include "allocators.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

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

const char* base_name(const char* path) {
  const char* base = strrchr(path, '/');
  return base ? base + 1 : path;
}

bool is_allocator(const char* path) {
  if (!path || !*path) return false;
  const char* base = base_name(path);
  for (const char* name : kAllocatorNames)
    if (strstr(base, name)) return true;
  return false;
}

// CPython's object allocator (obmalloc) takes its arenas (1 MiB since
// 3.10, 256 KiB before) with mmap straight from the interpreter - the
// python executable or libpython - and keeps every small object in them:
// refcounts, dicts, frames. Arenas in the tables would put the
// interpreter's heap in the region, where a forked child (a DataLoader
// worker) sees its parent's later writes: its own objects change under it
// and it crashes. Its other big blocks (lists' item arrays, bytes,
// arrays) go through malloc and stay candidates.
bool is_interpreter(const char* path) {
  char exe[256];
  if (!path || !*path) {  // the main program: its name from /proc
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = '\0';
    path = exe;
  }
  const char* base = base_name(path);
  return strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
}

int note_object(struct dl_phdr_info* info, size_t, void*) {
  if (!is_allocator(info->dlpi_name) && !is_interpreter(info->dlpi_name)) return 0;
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
