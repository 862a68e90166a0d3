// SPDX-License-Identifier: Apache-2.0
// Whether the start of a block device says it holds data (a filesystem, a
// partition table, swap, an encrypted or LVM volume), by the magic numbers
// blkid(8) looks for. A device with one is not taken as a store unless forced.
#pragma once
#include <cstddef>

namespace mtier {

// Bytes of the device's start device_signature() looks at (btrfs's
// superblock is at 64 KiB).
inline constexpr size_t kSignatureBytes = 68 * 1024;

// The data `buf` (the device's first n bytes) shows, for a message ("an
// ext2/3/4 filesystem"), or nullptr if none is recognised.
const char* device_signature(const unsigned char* buf, size_t n);

}  // namespace mtier
