// SPDX-License-Identifier: Apache-2.0
#include "store/file_store.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "log/log.h"
#include "store/file_channel.h"
#include "sys/uring.h"

namespace mtier {
namespace {

constexpr unsigned kMaxDepth = 4096;

int set_direct(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return -errno;
  return fcntl(fd, F_SETFL, flags | O_DIRECT) == 0 ? 0 : -errno;
}

bool memory_fs(const std::string& fs) { return fs == "tmpfs" || fs == "ramfs"; }

// Fails early, at open, where io_uring is disabled or missing.
int probe_uring(const std::string& path) {
  sys::Uring ring;
  int rc = ring.init(1);
  if (rc < 0)
    MTIER_LOG_ERROR("file store %s: io_uring unavailable: %s", path.c_str(), strerror(-rc));
  return rc;
}

// Turns on O_DIRECT, or says why not (once, when the store opens).
std::string direct_mode(const FileStoreSys& sys, const BackingFile& f, bool* direct) {
  std::string fs = f.device ? "device" : fs_name(f.fd);
  int rc = sys.set_direct(f.fd);
  *direct = rc == 0;
  if (*direct) return memory_fs(fs) ? "O_DIRECT (" + fs + ": pages stay in memory)" : "O_DIRECT";
  MTIER_LOG_WARN(
      "file store %s: O_DIRECT unsupported on %s (%s): using buffered I/O, "
      "the page cache may hold a second copy of evicted pages",
      f.path.c_str(), fs.c_str(), strerror(-rc));
  return "buffered (O_DIRECT unsupported on " + fs + ")";
}

}  // namespace

const FileStoreSys& default_file_store_sys() {
  static const FileStoreSys sys{set_direct};
  return sys;
}

std::unique_ptr<Store> open_file_store_with(const StoreOptions& opts, const FileStoreSys& sys,
                                            int* err) {
  BackingFile f;
  int rc = open_backing_file(opts, "file store", &f);
  if (rc == 0 && f.chardev) {
    MTIER_LOG_ERROR("file store %s: a character device (devdax?) needs the pmem store",
                    f.path.c_str());
    rc = -EINVAL;
  }
  if (rc == 0) rc = probe_uring(f.path);
  if (rc < 0) {
    close_backing_file(&f, true);
    *err = rc;
    return nullptr;
  }
  bool direct = false;
  std::string mode = direct_mode(sys, f, &direct);
  *err = 0;
  return std::make_unique<FileStore>(std::move(f), direct, std::move(mode), opts.remove_on_close);
}

std::unique_ptr<Store> open_file_store(const StoreOptions& opts, int* err) {
  return open_file_store_with(opts, default_file_store_sys(), err);
}

FileStore::FileStore(BackingFile file, bool direct, std::string mode, bool remove_on_close)
    : FileBackedStore(file, file.bytes / kStorePage, std::move(mode), remove_on_close),
      direct_(direct) {}

std::unique_ptr<StoreChannel> FileStore::open_channel(unsigned depth) {
  depth = depth < 1 ? 1 : (depth > kMaxDepth ? kMaxDepth : depth);
  auto ch = std::make_unique<FileChannel>(file_.fd, capacity_slots());
  if (ch->init(depth, file_.path) < 0) return nullptr;
  return ch;
}

}  // namespace mtier
