// SPDX-License-Identifier: Apache-2.0
// The one way a configuration file is read: mtier.conf (SYSCONFDIR/mtier.conf and
// an MTIER_CONF path, read by libmtier.so at start and by `mtier`) and
// mtierd.conf (mtierd, mtierd --check-config, SIGHUP). Bounded and never
// blocking: a configuration file is a regular file of at most
// kConfigFileMaxBytes; a FIFO, a device, a directory or a larger file is
// refused with one line that names it, never read.
#pragma once
#include <cstddef>
#include <string>

namespace mtier::config {

// The largest configuration file read, 1 MiB (mtier.conf(5), mtierd(8)).
inline constexpr size_t kConfigFileMaxBytes = size_t{1} << 20;

// Reads the configuration file at path into *text. A missing file is not an
// error unless `required` (returns 0, *text empty). Returns 0, or -errno
// with *text empty and *why one line that starts with the path:
//   "PATH: cannot read: REASON"          (open or read failed; -ENOENT ...)
//   "PATH: not a regular file (a FIFO)"  (-EISDIR for a directory, else -EINVAL)
//   "PATH: larger than 1 MiB, the most a configuration file may hold" (-EFBIG)
[[nodiscard]] int read_config_file(const std::string& path, bool required, std::string* text,
                                   std::string* why);

}  // namespace mtier::config
