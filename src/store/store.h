// SPDX-License-Identifier: Apache-2.0
// A store is a lower tier that holds evicted pages in fixed 4 KiB slots.
// Slot management is shared (a Store is thread-safe); I/O goes through a
// StoreChannel, one per thread (an io_uring ring is not thread-safe).
// Every int result is 0 or -errno.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mtier {

struct StoreIo {
  uint64_t slot;  // in: slot index
  void* buf;      // in: page-aligned 4096-byte buffer
  int result;     // out: 0 or -errno (-EIO for a short transfer)
};

class StoreChannel {
 public:
  virtual ~StoreChannel() = default;
  // Number of staging buffers the channel owns (its queue depth).
  virtual unsigned depth() const = 0;
  // Staging buffer i (page-aligned, 4096 bytes; registered with io_uring for
  // the file store, so I/O from/to it needs no page pinning per call).
  virtual void* buffer(unsigned i) = 0;
  // Performs the n reads (slot -> buf) / writes (buf -> slot), as many in
  // flight at once as the depth allows, and waits for all. Per-I/O results
  // are in ios[i].result; returns 0, or the first error seen.
  [[nodiscard]] virtual int read_pages(StoreIo* ios, size_t n) = 0;
  [[nodiscard]] virtual int write_pages(StoreIo* ios, size_t n) = 0;
  // For byte-addressable stores: the slot's bytes, to copy from directly
  // (UFFDIO_COPY from the pmem mapping, no bounce). nullptr otherwise.
  virtual const void* direct(uint64_t slot) = 0;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual const char* kind() const = 0;          // "file" or "pmem"
  virtual const std::string& path() const = 0;
  // How the store is really backed, for the startup line: "O_DIRECT",
  // "buffered (O_DIRECT unsupported on tmpfs)", "devdax", "fsdax", "page granularity file".
  virtual std::string mode() const = 0;
  virtual uint64_t capacity_slots() const = 0;
  virtual uint64_t used_slots() const = 0;
  // Reserves a free slot (freed ones are reused first). -ENOSPC when full.
  [[nodiscard]] virtual int64_t alloc_slot() = 0;
  // Reserves up to n consecutive slots for one write-back run (a transfer
  // each, in the file store), *got set to how many: SlotAllocator::alloc_run.
  // -ENOSPC when the store has no run to give (alloc_slot may still have a
  // slot). A store without runs hands out one slot.
  [[nodiscard]] virtual int64_t alloc_run(uint64_t n, uint64_t* got) {
    (void)n;
    *got = 1;
    return alloc_slot();
  }
  virtual void free_slot(uint64_t slot) = 0;
  // A new I/O channel with `depth` staging buffers (depth >= 1).
  [[nodiscard]] virtual std::unique_ptr<StoreChannel> open_channel(unsigned depth) = 0;
};

struct StoreOptions {
  std::string path;    // file store: a file or a directory (a file is created in it);
                       // pmem store: a DAX device (/dev/dax0.0), /dev/pmem0, or a file
  uint64_t bytes = 0;  // capacity; 0 = the device's size (pmem devices) or required for files
  bool remove_on_close = true;  // a file the store creates is unlinked at once (nothing is
                                // left behind, even by a process that never closes it);
                                // false: kept, carrying mtier's store header
  bool force = false;           // take a block device that holds a filesystem, partition
                                // table or other signature (its data is destroyed)
  bool bytes_given = true;      // `bytes` was asked for: a filesystem without that much free
                                // space is refused (false: only warned about)
};

// Open a store. On failure *err is -errno and a message was logged naming
// the path and the reason. A PMem store is unavailable (-ENOTSUP) when the
// build has no libpmem2, and cannot be set up (-ELIBACC) when libpmem2.so.1
// cannot be loaded (it is dlopened on the first set-up, not linked).
std::unique_ptr<Store> open_file_store(const StoreOptions& opts, int* err);
std::unique_ptr<Store> open_pmem_store(const StoreOptions& opts, int* err);

}  // namespace mtier
