// SPDX-License-Identifier: Apache-2.0
// An I/O channel of the file store: one io_uring ring and `depth` registered
// staging buffers, used by one thread at a time. I/Os on consecutive slots
// from consecutive staging buffers go to the device as one transfer.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "store/staging.h"
#include "store/store.h"
#include "sys/uring.h"

namespace mtier {

class FileChannel final : public StoreChannel {
 public:
  // `ring` replaces the real one in tests; nullptr means a real sys::Uring.
  FileChannel(int fd, uint64_t capacity_slots, std::unique_ptr<sys::Uring> ring = nullptr)
      : fd_(fd),
        capacity_(capacity_slots),
        ring_(ring ? std::move(ring) : std::make_unique<sys::Uring>()) {}
  // Sets up the ring and the staging buffers. Returns 0 or -errno, with the
  // reason logged naming `path`. Buffers that cannot be registered (memlock
  // limit) are used unregistered, with a warning.
  [[nodiscard]] int init(unsigned depth, const std::string& path);

  unsigned depth() const override { return bufs_.count(); }
  void* buffer(unsigned i) override { return i < bufs_.count() ? bufs_.at(i) : nullptr; }
  // A slot beyond the capacity gets -EINVAL; a short transfer -EIO. After a
  // ring failure every later call fails with that error.
  [[nodiscard]] int read_pages(StoreIo* ios, size_t n) override { return transfer(ios, n, false); }
  [[nodiscard]] int write_pages(StoreIo* ios, size_t n) override { return transfer(ios, n, true); }
  const void* direct(uint64_t) override { return nullptr; }
  bool registered() const { return registered_; }

 private:
  struct Batch;
  int transfer(StoreIo* ios, size_t n, bool write);
  void fill(Batch* b);
  size_t mergeable(const Batch& b, size_t i) const;
  int queue(Batch* b, size_t i, size_t len);
  int wait();
  void reap(Batch* b);
  void abandon(Batch* b, int err);

  const int fd_;
  const uint64_t capacity_;
  std::string path_;  // for messages
  std::unique_ptr<sys::Uring> ring_;
  StagingBuffers bufs_;
  std::vector<sys::UringCompletion> cqes_;
  bool registered_ = false;
  int broken_ = 0;  // the ring error that ended this channel, or 0
  static constexpr size_t kMaxMerge = 256;  // pages in one transfer (1 MiB)
};

}  // namespace mtier
