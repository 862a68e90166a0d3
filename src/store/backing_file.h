// SPDX-License-Identifier: Apache-2.0
// The file or device behind a store: opened or created, sized, closed.
#pragma once
#include <cstdint>
#include <string>

#include "store/store.h"

namespace mtier {

struct BackingFile {
  int fd = -1;
  std::string path;      // the file really used (a new file's full name)
  bool created = false;  // this store created it and keeps it (only such a file is ever unlinked)
  bool scratch = false;  // this store created it and unlinked it at once
  bool device = false;   // block or character device: never truncated
  bool chardev = false;  // character device (devdax)
  uint64_t bytes = 0;    // usable size, a multiple of 4096; 0 for a chardev given no size
};

// Opens opts.path for a store. A directory gets a new file mtier-<pid>-XXXXXX
// and a missing path a new file (both O_EXCL, O_NOFOLLOW, mode 0600; unlinked
// at once unless !opts.remove_on_close). An existing regular file is taken
// only if this user owns it and it is empty or carries mtier's store header
// (it is made 0600); a symbolic link only to a directory or device. Regular
// files are sized to opts.bytes rounded down to 4096 (at least 4096) plus
// the header page, refused (opts.bytes_given) or warned about without that
// much free space on their filesystem. A block device is claimed with
// O_EXCL (a mounted or held one fails with -EBUSY), refused if it holds a
// filesystem or partition signature unless opts.force, and uses its own
// size when opts.bytes is 0. The file is locked (flock): a second store on
// it fails with -EBUSY. On failure logs one line starting with `who` ("file
// store") and naming the path and reason. Returns 0 or -errno.
[[nodiscard]] int open_backing_file(const StoreOptions& opts, const char* who, BackingFile* out);
// Closes the fd; unlinks the file if this store created it and `remove`.
void close_backing_file(BackingFile* f, bool remove);
// The name of the filesystem holding fd ("tmpfs", "ext4", ... or "fs 0x<magic>").
std::string fs_name(int fd);

}  // namespace mtier
