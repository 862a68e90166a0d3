// The file or device behind a store: opened or created, sized, closed.
#pragma once
#include <cstdint>
#include <string>

#include "store/store.h"

namespace mtier {

struct BackingFile {
  int fd = -1;
  std::string path;      // the file really used (a new file's full name)
  bool created = false;  // this store created it (only such a file is ever unlinked)
  bool device = false;   // block or character device: never truncated
  bool chardev = false;  // character device (devdax)
  uint64_t bytes = 0;    // usable size, a multiple of 4096; 0 for a chardev given no size
};

// Opens opts.path for a store: a directory gets a new file mtier-<pid>-XXXXXX,
// a missing path is created, a regular file is sized to opts.bytes rounded
// down to 4096 (at least 4096 must remain), a block device uses its own size
// when opts.bytes is 0. The file is locked (flock): a second store on it
// fails with -EBUSY. On failure logs one line starting with `who` ("file
// store") and naming the path and reason. Returns 0 or -errno.
[[nodiscard]] int open_backing_file(const StoreOptions& opts, const char* who, BackingFile* out);
// Closes the fd; unlinks the file if this store created it and `remove`.
void close_backing_file(BackingFile* f, bool remove);
// The name of the filesystem holding fd ("tmpfs", "ext4", ... or "fs 0x<magic>").
std::string fs_name(int fd);

}  // namespace mtier
