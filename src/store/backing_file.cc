#include "store/backing_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "log/log.h"
#include "store/staging.h"

namespace mtier {
namespace {

int log_fail(const char* who, const std::string& path, const char* what, int err) {
  MTIER_LOG_ERROR("%s %s: %s: %s", who, path.c_str(), what, strerror(-err));
  return err;
}

// Creates a new file mtier-<pid>-XXXXXX in directory `dir`.
int create_in_dir(const std::string& dir, BackingFile* f) {
  std::string name = dir + "/mtier-" + std::to_string(getpid()) + "-XXXXXX";
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  int fd = mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) return -errno;
  f->fd = fd;
  f->path = tmpl.data();
  // A scratch file: unlinked at once, so that nothing is left behind when
  // the process ends without closing the store (the engine of a preloaded
  // process is never torn down). The open fd keeps the space until then.
  unlink(f->path.c_str());
  f->path += " (unlinked)";
  f->created = false;
  return 0;
}

// Opens path read-write: an existing file or device, a new file in a
// directory, or a new file at path. *what says which step failed.
int open_path(const std::string& path, BackingFile* f, const char** what) {
  *what = "cannot open";
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == EISDIR) {
    *what = "cannot create a file in the directory";
    return create_in_dir(path, f);
  }
  if (fd < 0 && errno == ENOENT) {
    *what = "cannot create";
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    f->created = fd >= 0;
  }
  if (fd < 0) return -errno;
  f->fd = fd;
  f->path = path;
  return 0;
}

// Sizes a regular file to `bytes` (sparse; only if its size differs).
int size_regular(BackingFile* f, uint64_t bytes, off_t cur, const char** what) {
  if (bytes < kStorePage) {
    *what = "size must be at least 4096 bytes (rounded down to 4096) for a file";
    return -EINVAL;
  }
  f->bytes = bytes;
  *what = "cannot set the file's size";
  if (static_cast<uint64_t>(cur) == bytes) return 0;
  return ftruncate(f->fd, static_cast<off_t>(bytes)) == 0 ? 0 : -errno;
}

// A block device: its own size, or the requested bytes if they fit.
int size_blockdev(BackingFile* f, uint64_t bytes, const char** what) {
  *what = "cannot read the device's size";
  off_t end = lseek(f->fd, 0, SEEK_END);
  if (end < 0) return -errno;
  uint64_t dev = static_cast<uint64_t>(end) & kPageMask;
  *what = "requested size is larger than the device";
  if (bytes > dev) return -EINVAL;
  f->bytes = bytes ? bytes : dev;
  *what = "device is smaller than one 4096-byte slot";
  return f->bytes ? 0 : -EINVAL;
}

int size_file(BackingFile* f, uint64_t bytes, const char** what) {
  struct stat st;
  *what = "cannot stat";
  if (fstat(f->fd, &st) != 0) return -errno;
  if (S_ISREG(st.st_mode)) return size_regular(f, bytes, st.st_size, what);
  f->device = S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode);
  f->chardev = S_ISCHR(st.st_mode);
  if (S_ISBLK(st.st_mode)) return size_blockdev(f, bytes, what);
  f->bytes = bytes;
  *what = "not a regular file, directory or device";
  return f->chardev ? 0 : -EINVAL;
}

// One store a file: two processes (or ranks) given the same file path would
// otherwise hand out the same slots. A directory gives each its own file.
int lock_file(const BackingFile& f, const char** what) {
  *what = "in use by another store (give a directory to get one file per process)";
  if (flock(f.fd, LOCK_EX | LOCK_NB) == 0) return 0;
  return errno == EWOULDBLOCK ? -EBUSY : -errno;
}

}  // namespace

int open_backing_file(const StoreOptions& opts, const char* who, BackingFile* out) {
  BackingFile f;
  const char* what = "no path given";
  if (opts.path.empty()) return log_fail(who, opts.path, what, -EINVAL);
  int rc = open_path(opts.path, &f, &what);
  if (rc < 0) return log_fail(who, opts.path, what, rc);
  rc = lock_file(f, &what);
  if (rc == 0) rc = size_file(&f, opts.bytes & kPageMask, &what);
  if (rc < 0) {
    close_backing_file(&f, true);
    return log_fail(who, f.path, what, rc);
  }
  *out = std::move(f);
  return 0;
}

void close_backing_file(BackingFile* f, bool remove) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (remove && f->created) unlink(f->path.c_str());
  f->created = false;
}

std::string fs_name(int fd) {
  struct statfs sf;
  if (fstatfs(fd, &sf) != 0) return "unknown fs";
  switch (static_cast<unsigned long>(sf.f_type)) {
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case HUGETLBFS_MAGIC: return "hugetlbfs";
    case EXT4_SUPER_MAGIC: return "ext4";
    case XFS_SUPER_MAGIC: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case F2FS_SUPER_MAGIC: return "f2fs";
    case FUSE_SUPER_MAGIC: return "fuse";
    case 0x2fc12fc1UL: return "zfs";
    case 0x9fa0UL: return "proc";
    default: break;
  }
  char buf[32];
  snprintf(buf, sizeof buf, "fs 0x%lx", static_cast<unsigned long>(sf.f_type));
  return buf;
}

}  // namespace mtier
