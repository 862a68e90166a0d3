// SPDX-License-Identifier: Apache-2.0
// Memory-mapping and file syscalls used by the region: each returns 0 or -errno.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>
#include <cstddef>
#include <cstdint>

#include "sys/page_size.h"

namespace mtier::sys {

// Creates a memfd of `size` bytes (sparse: costs no memory). Returns fd or -errno.
[[nodiscard]] int memfd_open(const char* name, uint64_t size);
// Gives the memory behind [off, off+len) back to the system at once.
[[nodiscard]] int memfd_punch(int fd, uint64_t off, uint64_t len);
// Reads [off, off+len) of fd into buf (pread, retried on EINTR and short
// reads; a hole reads as zeros). 0, -EIO at end of file, or -errno.
[[nodiscard]] int read_at(int fd, uint64_t off, void* buf, size_t len);
// Maps fd shared at [0, len), read-write or (writable false) read-only.
// Returns the address or nullptr (errno set).
void* map_shared(int fd, size_t len, bool writable = true);
// Reserves address space only: PROT_NONE, MAP_NORESERVE.
void* map_reserve(size_t len);
// Maps fd privately (copy on write) at exactly `addr` for len bytes,
// read-write, MAP_NORESERVE; fails with -EEXIST where anything is mapped
// there already (MAP_FIXED_NOREPLACE). 0 or -errno.
[[nodiscard]] int map_private_at(int fd, void* addr, size_t len);
// Replaces whatever is mapped at [addr, addr+len) with fresh anonymous
// memory: read-write and zero (`writable`), or PROT_NONE, MAP_NORESERVE.
// What was there (pages, userfaultfd registration) is gone. 0 or -errno.
[[nodiscard]] int map_anonymous_at(void* addr, size_t len, bool writable);
[[nodiscard]] int unmap(void* addr, size_t len);
// Drops the page-table entries of a shared mapping; the file keeps the pages,
// so the next access is a MINOR fault (the access sampler's "zap").
[[nodiscard]] int zap(void* addr, size_t len);
// A pidfd of this process (pidfd_open), for zap_ranges; the caller closes
// it (and opens another after a fork: it names the process it was opened
// in). fd or -errno.
[[nodiscard]] int pidfd_self();
// A pidfd of process `pid` (pidfd_open): readable once the process has
// exited. fd (O_CLOEXEC) or -errno.
[[nodiscard]] int pidfd_of(pid_t pid);
// zap() over n ranges in one call: process_madvise(MADV_DONTNEED) through
// `pidfd`, which must name the calling process (Linux 6.13 and later take
// any advice for the caller's own memory). Ranges are page-aligned, n at
// most IOV_MAX (1024; more is -EINVAL). Returns the bytes
// advised, or -errno (-EINVAL where the kernel lacks it). Where the kernel
// batches one TLB flush over all the ranges (6.16) it does so only for
// entries it may drop lazily: a dirty entry of a shared file mapping is
// flushed before its zap returns, one flush per range - and in a writable
// shared mapping of shared memory every entry is dirty, a read fault's too
// (the kernel marks it so, the page being dirty). `mtier bench fault`
// measures both kinds.
[[nodiscard]] long zap_ranges(int pidfd, const struct iovec* ranges, size_t n);
// Maps the pages of [addr, addr+len) that the file already holds
// (MADV_POPULATE_READ). 0 or -errno.
[[nodiscard]] int populate_read(void* addr, size_t len);
// Faults in [addr, addr+len) for writing (MADV_POPULATE_WRITE), as
// MAP_POPULATE would. 0 or -errno.
[[nodiscard]] int populate_write(void* addr, size_t len);
// Keeps [addr, addr+len) out of children made by fork().
[[nodiscard]] int dont_fork(void* addr, size_t len);
// Keeps [addr, addr+len) out of core dumps (MADV_DONTDUMP).
[[nodiscard]] int dont_dump(void* addr, size_t len);
// mprotect: `writable` gives PROT_READ|PROT_WRITE, else PROT_NONE. 0 or -errno.
[[nodiscard]] int protect(void* addr, size_t len, bool writable);
// Number of pages of [addr, addr+len) in memory (mincore), or -errno.
[[nodiscard]] long resident_pages(void* addr, size_t len);
// Whether each page of [addr, addr+len) (addr page-aligned) is in memory:
// out[i] & 1 for page i (mincore; for a shared file mapping, whether the
// file holds the page). 0 or -errno.
[[nodiscard]] int pages_in_memory(const void* addr, size_t len, unsigned char* out);
// Resident bytes of the process's mapping that contains addr, from
// /proc/self/smaps ("Rss:"), or -errno.
[[nodiscard]] long long smaps_rss(const void* addr);
// Address space this process may still map under RLIMIT_AS (its soft
// limit less VmSize), UINT64_MAX without a limit.
uint64_t address_space_left();
// Total memory of the machine in bytes (sysconf), 0 if unknown.
uint64_t physical_memory();
// Thread id of the caller, and a signal to one thread of this process.
pid_t thread_id();
[[nodiscard]] int signal_thread(pid_t tid, int sig);
// A signal to thread `tid` of process `pid` (tgkill). 0 or -errno.
[[nodiscard]] int signal_thread_of(pid_t pid, pid_t tid, int sig);

}  // namespace mtier::sys
