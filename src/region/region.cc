// SPDX-License-Identifier: Apache-2.0
#include "region/region.h"
#include "sys/runtime_fds.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log/log.h"
#include "sys/vm.h"

namespace mtier {

std::unique_ptr<Region> Region::create(uint64_t bytes, int* err) {
  bytes &= ~(sys::kPageSize - 1);
  std::unique_ptr<Region> r(new Region());
  r->bytes_ = bytes;
  r->memfd_ = sys::memfd_open("mtier-region", bytes);
  if (r->memfd_ < 0) {
    *err = r->memfd_;
    MTIER_LOG_ERROR("region: memfd of %llu bytes: %s", static_cast<unsigned long long>(bytes),
                    strerror(-*err));
    return nullptr;
  }
  r->base_ = static_cast<char*>(sys::map_shared(r->memfd_, bytes));
  if (r->base_) r->alias_ = static_cast<char*>(sys::map_shared(r->memfd_, bytes));
  if (!r->base_ || !r->alias_) {
    *err = -errno;
    MTIER_LOG_ERROR("region: mapping %llu bytes: %s", static_cast<unsigned long long>(bytes),
                    strerror(errno));
    return nullptr;
  }
  // A child of fork() does not inherit these mappings: a shared mapping's
  // faults would not be served in the child, and a page it touched would
  // appear in the memfd behind the engine's back. A child that reads the
  // tables maps the memfd privately instead (uffd/child_attach.h); fork
  // stays cheap, copying no page table of the region.
  if (sys::dont_fork(r->base_, bytes) < 0 || sys::dont_fork(r->alias_, bytes) < 0)
    MTIER_LOG_WARN("region: MADV_DONTFORK failed: %s; do not touch tables after fork()",
                   strerror(errno));
  // Nor into core dumps: a dump (or gcore) of a region of tens of GiB
  // would allocate a page for every hole - the process's cgroup or the
  // node out of memory, or the disk full - and show evicted pages as
  // zeros. A dump holds no table memory (mtier(7), "Debuggers and core
  // dumps").
  if (sys::dont_dump(r->base_, bytes) < 0 || sys::dont_dump(r->alias_, bytes) < 0)
    MTIER_LOG_WARN("region: MADV_DONTDUMP failed: %s; a core dump may try to hold the whole "
                   "region", strerror(errno));
  *err = 0;
  return r;
}

Region::~Region() {
  if (base_) (void)sys::unmap(base_, bytes_);
  if (alias_) (void)sys::unmap(alias_, bytes_);
  if (memfd_ >= 0) (void)sys::close_fd(memfd_);
}

int Region::punch(uint64_t off, uint64_t len) const { return sys::memfd_punch(memfd_, off, len); }

int Region::read(uint64_t off, void* buf, uint64_t len) const {
  return sys::read_at(memfd_, off, buf, len);
}

long Region::resident_pages(uint64_t off, uint64_t len) const {
  return sys::resident_pages(alias_ + off, len);
}

}  // namespace mtier
