// SPDX-License-Identifier: Apache-2.0
// mtier's own mark on a store file: one 4096-byte page after the slots (at
// offset `slot_bytes`, so slot offsets are unchanged). An existing non-empty
// file is taken as a store only if it carries this mark: mtier never
// overwrites a file it did not make a store.
#pragma once
#include <cstdint>

namespace mtier {

// Writes the mark at offset slot_bytes. Returns 0 or -errno.
[[nodiscard]] int write_store_header(int fd, uint64_t slot_bytes);
// True if the file of `file_size` bytes ends with the mark.
bool has_store_header(int fd, uint64_t file_size);

}  // namespace mtier
