// SPDX-License-Identifier: Apache-2.0
// Whole-file reads for configuration files (mtier.conf, mtierd.conf).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>

namespace mtier::sys {

// Reads the regular file at path, at most max_bytes of it, into *out
// (appended). The file is opened with O_NONBLOCK (a FIFO with no writer does
// not block the open) and checked with fstat on what was opened. *type, if
// not nullptr, gets the file's S_IFMT bits once it is open. Returns 0 or
// -errno: -EISDIR for a directory, -EINVAL for anything else that is not a
// regular file (FIFO, device, socket), -EFBIG for a file larger than
// max_bytes (by its size or by what a read returned); nothing is appended
// then.
[[nodiscard]] int read_regular_file(const std::string& path, size_t max_bytes, std::string* out,
                                    mode_t* type = nullptr);

// "a FIFO", "a directory", "a character device", ... for S_IFMT bits.
const char* file_type_name(mode_t type);

// strerror(err) as a string, thread-safe (strerror_r).
std::string error_text(int err);

}  // namespace mtier::sys
