// SPDX-License-Identifier: Apache-2.0
#include "config/read_file.h"

#include <sys/stat.h>

#include <cerrno>

#include "sys/text_file.h"

namespace mtier::config {
namespace {

// The reason in read_config_file's line; type is 0 when the open failed.
std::string reason(int rc, mode_t type) {
  if (type != 0 && type != S_IFREG)
    return std::string("not a regular file (") + sys::file_type_name(type) + ")";
  if (rc == -EFBIG)
    return "larger than " + std::to_string(kConfigFileMaxBytes >> 20) +
           " MiB, the most a configuration file may hold";
  return "cannot read: " + sys::error_text(-rc);
}

}  // namespace

int read_config_file(const std::string& path, bool required, std::string* text,
                     std::string* why) {
  text->clear();
  mode_t type = 0;
  int rc = sys::read_regular_file(path, kConfigFileMaxBytes, text, &type);
  if (rc == -ENOENT && !required) return 0;
  if (rc != 0) {
    if (why) *why = path + ": " + reason(rc, type);
    text->clear();
  }
  return rc;
}

}  // namespace mtier::config
