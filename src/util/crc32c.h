// SPDX-License-Identifier: Apache-2.0
// CRC-32C (Castagnoli: iSCSI, ext4, Btrfs), the checksum an evicted page
// carries (page/page_checksum.h). crc32c("123456789") == 0xE3069283.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mtier {

// The CRC-32C of `len` bytes at `data`; `crc` is a previous result to
// extend (crc32c(b, crc32c(a)) is the CRC of a then b), 0 to start.
// Allocates nothing, takes no lock: safe on the fault path.
[[nodiscard]] uint32_t crc32c(const void* data, size_t len, uint32_t crc = 0);

// Whether crc32c() uses the CPU's instruction (SSE4.2) rather than the
// portable table, for the benchmark's report.
bool crc32c_hardware();

// crc32c() with the portable table only (the tests compare the two).
[[nodiscard]] uint32_t crc32c_portable(const void* data, size_t len, uint32_t crc = 0);

}  // namespace mtier
