// SPDX-License-Identifier: Apache-2.0
// CRC-32C with the CPU's crc32 instruction (SSE4.2, chosen at run time),
// three streams interleaved, else a portable byte table.
//
// Why our own and not a library: Debian packages Google's crc32c
// (libcrc32c-dev), which is the same method; a page is a fixed 4 KiB, so
// twenty lines with compile-time tables do it at about a third of the
// instruction's latency-bound single-stream cost, with no new build
// dependency and no allocation. The crc32 instruction has a latency of 3
// cycles and a throughput of 1, so one stream waits on itself; three
// independent streams over thirds of a block keep it busy, and the three
// results are joined with tables that advance a CRC over a third's zeros
// (the CRC register is linear in its input).
#include "util/crc32c.h"

#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace mtier {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // Castagnoli, reflected

struct ByteTable {
  uint32_t v[256] = {};
};

constexpr ByteTable make_byte_table() {
  ByteTable t;
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t r = b;
    for (int k = 0; k < 8; k++) r = r & 1 ? (r >> 1) ^ kPoly : r >> 1;
    t.v[b] = r;
  }
  return t;
}

constexpr ByteTable kBytes = make_byte_table();

uint32_t update_portable(uint32_t r, const unsigned char* p, size_t n) {
  while (n--) r = kBytes.v[(r ^ *p++) & 0xff] ^ (r >> 8);
  return r;
}

#if defined(__x86_64__)
// Bytes in each of the three streams of a block: 3 x 1360 + 16 = 4096,
// a page is one block and two 8-byte words.
constexpr size_t kLane = 1360;

// The raw CRC register advanced over `bytes` zero bytes, as four byte
// tables (the register is linear: its image is the XOR of its bytes').
struct ShiftTable {
  uint32_t v[4][256] = {};
};

constexpr uint32_t over_zeros(uint32_t r, size_t bytes) {
  for (size_t i = 0; i < bytes * 8; i++) r = r & 1 ? (r >> 1) ^ kPoly : r >> 1;
  return r;
}

constexpr ShiftTable make_shift_table(size_t bytes) {
  uint32_t bit[32] = {};
  for (int k = 0; k < 32; k++) bit[k] = over_zeros(1u << k, bytes);
  ShiftTable t;
  for (int i = 0; i < 4; i++)
    for (uint32_t b = 0; b < 256; b++)
      for (int j = 0; j < 8; j++)
        if (b & (1u << j)) t.v[i][b] ^= bit[8 * i + j];
  return t;
}

constexpr ShiftTable kOverLane = make_shift_table(kLane);
constexpr ShiftTable kOverTwoLanes = make_shift_table(2 * kLane);

uint32_t shift(const ShiftTable& t, uint32_t r) {
  return t.v[0][r & 0xff] ^ t.v[1][(r >> 8) & 0xff] ^ t.v[2][(r >> 16) & 0xff] ^ t.v[3][r >> 24];
}

uint64_t load64(const unsigned char* p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

__attribute__((target("sse4.2"))) uint32_t update_sse42(uint32_t r, const unsigned char* p,
                                                        size_t n) {
  uint64_t a = r;
  for (; n >= 3 * kLane; p += 3 * kLane, n -= 3 * kLane) {
    uint64_t b = 0, c = 0;
    for (size_t i = 0; i < kLane; i += 8) {
      a = _mm_crc32_u64(a, load64(p + i));
      b = _mm_crc32_u64(b, load64(p + kLane + i));
      c = _mm_crc32_u64(c, load64(p + 2 * kLane + i));
    }
    a = shift(kOverTwoLanes, static_cast<uint32_t>(a)) ^ shift(kOverLane, static_cast<uint32_t>(b)) ^
        c;
  }
  for (; n >= 8; p += 8, n -= 8) a = _mm_crc32_u64(a, load64(p));
  uint32_t s = static_cast<uint32_t>(a);
  for (; n > 0; p++, n--) s = _mm_crc32_u8(s, *p);
  return s;
}

bool detect() {
  __builtin_cpu_init();  // callable before constructors have run (the preload library's start)
  return __builtin_cpu_supports("sse4.2");
}
#else
bool detect() { return false; }
#endif

}  // namespace

bool crc32c_hardware() {
  static const bool yes = detect();
  return yes;
}

uint32_t crc32c_portable(const void* data, size_t len, uint32_t crc) {
  return ~update_portable(~crc, static_cast<const unsigned char*>(data), len);
}

uint32_t crc32c(const void* data, size_t len, uint32_t crc) {
  auto p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (crc32c_hardware()) return ~update_sse42(~crc, p, len);
#endif
  return ~update_portable(~crc, p, len);
}

}  // namespace mtier
