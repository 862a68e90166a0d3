// SPDX-License-Identifier: Apache-2.0
// The page size of the managed region, named once. Every page-granular
// computation in src/ and lib/ (offsets, lengths, alignment, buffer sizes)
// uses these; 2 MiB pages (hugetlbfs) would change them here. (A store's
// slot is one page too: StoreIo buffers, slot offsets.)
#pragma once
#include <cstddef>
#include <cstdint>

namespace mtier {

inline constexpr size_t kPageSize = 4096;
inline constexpr uint64_t kPageMask = ~static_cast<uint64_t>(kPageSize - 1);
inline constexpr unsigned kPageShift = 12;
static_assert((size_t{1} << kPageShift) == kPageSize);

namespace sys {
using mtier::kPageSize;  // the syscall layer names it too (sys::kPageSize)
}  // namespace sys

}  // namespace mtier
