// Whole-file reads for configuration files (mtier.conf, mtierd.conf).
#pragma once
#include <string>

namespace mtier::sys {

// Appends the contents of the file at path to *out. Returns 0 or -errno
// (-EISDIR for a directory).
[[nodiscard]] int read_text_file(const std::string& path, std::string* out);

// strerror(err) as a string, thread-safe (strerror_r).
std::string error_text(int err);

}  // namespace mtier::sys
