// SPDX-License-Identifier: Apache-2.0
#include "store/device_signature.h"

#include <cstring>

namespace mtier {
namespace {

struct Magic {
  size_t offset;
  const char* bytes;
  size_t len;
  const char* what;
};

// The first match names the device's contents; a DOS boot sector (0x55AA)
// comes last: FAT and NTFS volumes carry one too.
constexpr Magic kMagics[] = {
    {0x438, "\x53\xef", 2, "an ext2/3/4 filesystem"},
    {0, "XFSB", 4, "an XFS filesystem"},
    {0x10040, "_BHRfS_M", 8, "a btrfs filesystem"},
    {0x400, "\x10\x20\xf5\xf2", 4, "an F2FS filesystem"},
    {0, "LUKS\xba\xbe", 6, "a LUKS encrypted volume"},
    {0x218, "LVM2 001", 8, "an LVM physical volume"},
    {0xff6, "SWAPSPACE2", 10, "swap space"},
    {0xff6, "SWAP-SPACE", 10, "swap space"},
    {0x200, "EFI PART", 8, "a GPT partition table"},
    {0x1000, "EFI PART", 8, "a GPT partition table"},
    {0x8001, "CD001", 5, "an ISO 9660 filesystem"},
    {0x3, "NTFS    ", 8, "an NTFS filesystem"},
    {0x1fe, "\x55\xaa", 2, "a DOS partition table or boot sector (FAT?)"},
};

}  // namespace

const char* device_signature(const unsigned char* buf, size_t n) {
  for (const Magic& m : kMagics)
    if (m.offset + m.len <= n && memcmp(buf + m.offset, m.bytes, m.len) == 0) return m.what;
  return nullptr;
}

}  // namespace mtier
