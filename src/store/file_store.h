// SPDX-License-Identifier: Apache-2.0
// The file store: slots in a file or block device (NVMe), read and written
// with io_uring from registered staging buffers, opened O_DIRECT so that the
// page cache does not hold a second copy of evicted pages.
#pragma once
#include <memory>
#include <string>

#include "store/file_backed_store.h"

namespace mtier {

// The queue depth to open channels with when nothing else is configured.
inline constexpr unsigned kFileStoreDefaultDepth = 32;

// The OS call a test cannot make fail on demand: tmpfs accepts O_DIRECT since
// Linux 6.6, so tests replace it to exercise the buffered fallback.
struct FileStoreSys {
  int (*set_direct)(int fd);  // adds O_DIRECT to fd's status flags; 0 or -errno
};
const FileStoreSys& default_file_store_sys();

// open_file_store() with the given OS calls.
[[nodiscard]] std::unique_ptr<Store> open_file_store_with(const StoreOptions& opts,
                                                          const FileStoreSys& sys, int* err);

class FileStore final : public FileBackedStore {
 public:
  // Channels must be closed before their store.
  FileStore(BackingFile file, bool direct, std::string mode, bool remove_on_close);

  const char* kind() const override { return "file"; }
  // depth is clamped to [1, 4096]. nullptr (reason logged) if io_uring fails.
  [[nodiscard]] std::unique_ptr<StoreChannel> open_channel(unsigned depth) override;

  int fd() const { return file_.fd; }
  bool direct_io() const { return direct_; }

 private:
  bool direct_;
};

}  // namespace mtier
