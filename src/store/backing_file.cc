// SPDX-License-Identifier: Apache-2.0
#include "store/backing_file.h"
#include "sys/runtime_fds.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "log/log.h"
#include "store/device_signature.h"
#include "store/staging.h"
#include "store/store_header.h"

namespace mtier {
namespace {

int log_fail(const char* who, const std::string& path, const std::string& what, int err) {
  MTIER_LOG_ERROR("%s %s: %s: %s", who, path.c_str(), what.c_str(), strerror(-err));
  return err;
}

// "1.50 GiB", or "12.0 MiB" below a GiB.
std::string human(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ull << 30));
  else snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1ull << 20));
  return buf;
}

// A scratch file: unlinked at once, so that nothing is left behind when the
// process ends without closing the store (the engine of a preloaded process
// is never torn down). The open fd keeps the space until then.
void unlink_now(BackingFile* f) {
  unlink(f->path.c_str());
  f->path += " (unlinked)";
  f->created = false;
  f->scratch = true;
}

// Creates a new file mtier-<pid>-XXXXXX (O_EXCL, mode 0600) in directory `dir`.
int create_in_dir(const std::string& dir, BackingFile* f) {
  std::string name = dir + "/mtier-" + std::to_string(getpid()) + "-XXXXXX";
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  int fd = mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) return -errno;
  f->fd = sys::adopt_fd(fd);
  f->path = tmpl.data();
  unlink_now(f);
  return 0;
}

// Opens an existing path that is a symbolic link: followed only to a
// device (/dev/disk/by-id/...) or a directory; a link to a file is refused
// (in a sticky directory another user may have planted it).
int open_link(const std::string& path, BackingFile* f, std::string* what) {
  struct stat st;
  *what = "cannot follow the symbolic link";
  if (stat(path.c_str(), &st) != 0) return -errno;
  if (S_ISDIR(st.st_mode)) {
    *what = "cannot create a file in the directory";
    return create_in_dir(path, f);
  }
  *what = "is a symbolic link to a file: refusing to follow it (give the file itself)";
  if (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode)) return -ELOOP;
  *what = "cannot open";
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_EXCL);
  if (fd < 0) return -errno;
  f->fd = sys::adopt_fd(fd);
  f->path = path;
  return 0;
}

// Opens path read-write: an existing file or device, a new file in a
// directory, or a new file at path (O_EXCL, O_NOFOLLOW, mode 0600; unlinked
// at once if `remove`). O_EXCL on an existing block device claims it: a
// mounted or otherwise held device fails with EBUSY. *what says which step
// failed.
int open_path(const std::string& path, bool remove, BackingFile* f, std::string* what) {
  *what = "cannot open";
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_EXCL);
  if (fd < 0 && errno == EISDIR) {
    *what = "cannot create a file in the directory";
    return create_in_dir(path, f);
  }
  if (fd < 0 && errno == ELOOP) return open_link(path, f, what);
  if (fd < 0 && errno == EBUSY)
    *what = "device in use (mounted, or held by swap, md, dm or another store)";
  if (fd < 0 && errno == ENOENT) {
    *what = "cannot create";
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    f->created = fd >= 0;
  }
  if (fd < 0) return -errno;
  f->fd = sys::adopt_fd(fd);
  f->path = path;
  if (f->created && remove) unlink_now(f);
  return 0;
}

// An existing regular file is taken only if this user owns it and it is
// empty or an mtier store already (its header says so); it is made 0600.
int check_existing(const BackingFile& f, const struct stat& st, std::string* what) {
  if (st.st_uid != geteuid()) {
    *what = "owned by uid " + std::to_string(st.st_uid) +
            ", not this user: refusing to put this process's memory in it";
    return -EPERM;
  }
  if (st.st_size > 0 && !has_store_header(f.fd, static_cast<uint64_t>(st.st_size))) {
    *what = "exists, is not empty and is not an mtier store: refusing to overwrite it "
            "(remove it, or give a directory)";
    return -EEXIST;
  }
  *what = "cannot make it private (chmod 0600)";
  if ((st.st_mode & 077) && fchmod(f.fd, 0600) != 0) return -errno;
  return 0;
}

// Refuses a filesystem without `bytes` free (besides the file's own
// blocks), or warns only if the size was not asked for. A filesystem that
// counts no blocks (ramfs) is not checked.
int check_room(const BackingFile& f, uint64_t bytes, const struct stat& st, bool given,
               std::string* what) {
  struct statvfs sv;
  if (fstatvfs(f.fd, &sv) != 0 || sv.f_blocks == 0) return 0;
  uint64_t room = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize +
                  static_cast<uint64_t>(st.st_blocks) * 512;
  if (room >= bytes + kStorePage) return 0;
  std::string line = "the filesystem has " + human(room) + " free, the store is " + human(bytes);
  if (!given) {
    MTIER_LOG_WARN("file store %s: %s: evictions past that fail with ENOSPC (logged, counted); "
                   "set store_bytes to refuse this at start", f.path.c_str(), line.c_str());
    return 0;
  }
  *what = line + " (store_bytes): give a smaller store_bytes or a store_path with room";
  return -ENOSPC;
}

// Sizes a regular file to `bytes` of slots plus mtier's header page
// (sparse; only if its size differs).
int size_regular(BackingFile* f, const StoreOptions& o, uint64_t bytes, const struct stat& st,
                 std::string* what) {
  if (bytes < kStorePage) {
    *what = "size must be at least " + std::to_string(kStorePage) + " bytes (rounded down to " +
            std::to_string(kStorePage) + ") for a file";
    return -EINVAL;
  }
  f->bytes = bytes;
  if (int rc = check_room(*f, bytes, st, o.bytes_given, what); rc < 0) return rc;
  *what = "cannot set the file's size";
  if (static_cast<uint64_t>(st.st_size) != bytes + kStorePage &&
      ftruncate(f->fd, static_cast<off_t>(bytes + kStorePage)) != 0)
    return -errno;
  *what = "cannot write the store header";
  return write_store_header(f->fd, bytes);
}

// Refuses a device whose start shows a filesystem, partition table or
// other data, unless forced.
int check_device(const BackingFile& f, bool force, std::string* what) {
  std::vector<unsigned char> head(kSignatureBytes);
  ssize_t n = pread(f.fd, head.data(), head.size(), 0);
  *what = "cannot read the device's first sectors";
  if (n < 0) return -errno;
  const char* sig = device_signature(head.data(), static_cast<size_t>(n));
  if (!sig) return 0;
  if (force) {
    MTIER_LOG_WARN("%s: holds %s: overwriting it (store_force)", f.path.c_str(), sig);
    return 0;
  }
  *what = std::string("holds ") + sig + ": refusing to overwrite it (wipefs it, or set "
                                        "store_force=true)";
  return -EEXIST;
}

// A block device: its own size, or the requested bytes if they fit.
int size_blockdev(BackingFile* f, uint64_t bytes, std::string* what) {
  *what = "cannot read the device's size";
  off_t end = lseek(f->fd, 0, SEEK_END);
  if (end < 0) return -errno;
  uint64_t dev = static_cast<uint64_t>(end) & kPageMask;
  *what = "requested size is larger than the device";
  if (bytes > dev) return -EINVAL;
  f->bytes = bytes ? bytes : dev;
  *what = "device is smaller than one " + std::to_string(kStorePage) + "-byte slot";
  return f->bytes ? 0 : -EINVAL;
}

int size_file(BackingFile* f, const StoreOptions& o, std::string* what) {
  uint64_t bytes = o.bytes & kPageMask;
  struct stat st;
  *what = "cannot stat";
  if (fstat(f->fd, &st) != 0) return -errno;
  if (S_ISREG(st.st_mode)) {
    int rc = f->created || f->scratch ? 0 : check_existing(*f, st, what);
    return rc < 0 ? rc : size_regular(f, o, bytes, st, what);
  }
  f->device = S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode);
  f->chardev = S_ISCHR(st.st_mode);
  if (S_ISBLK(st.st_mode)) {
    int rc = check_device(*f, o.force, what);
    return rc < 0 ? rc : size_blockdev(f, bytes, what);
  }
  f->bytes = bytes;
  *what = "not a regular file, directory or device";
  return f->chardev ? 0 : -EINVAL;
}

// One store a file: two processes (or ranks) given the same file path would
// otherwise hand out the same slots. A directory gives each its own file.
int lock_file(const BackingFile& f, std::string* what) {
  *what = "in use by another store (give a directory to get one file per process)";
  if (flock(f.fd, LOCK_EX | LOCK_NB) == 0) return 0;
  return errno == EWOULDBLOCK ? -EBUSY : -errno;
}

}  // namespace

int open_backing_file(const StoreOptions& opts, const char* who, BackingFile* out) {
  BackingFile f;
  std::string what = "no path given";
  if (opts.path.empty()) return log_fail(who, opts.path, what, -EINVAL);
  int rc = open_path(opts.path, opts.remove_on_close, &f, &what);
  if (rc < 0) return log_fail(who, opts.path, what, rc);
  rc = lock_file(f, &what);
  if (rc == 0) rc = size_file(&f, opts, &what);
  if (rc < 0) {
    close_backing_file(&f, true);
    return log_fail(who, f.path, what, rc);
  }
  *out = std::move(f);
  return 0;
}

void close_backing_file(BackingFile* f, bool remove) {
  if (f->fd >= 0) (void)sys::close_fd(f->fd);
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
