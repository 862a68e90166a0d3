// SPDX-License-Identifier: Apache-2.0
// Page-aligned 4 KiB staging buffers owned by one store channel.
#pragma once
#include <cstddef>
#include <cstdint>

#include "sys/page_size.h"

namespace mtier {

inline constexpr size_t kStorePage = kPageSize;

class StagingBuffers {
 public:
  StagingBuffers() = default;
  ~StagingBuffers();
  StagingBuffers(const StagingBuffers&) = delete;
  StagingBuffers& operator=(const StagingBuffers&) = delete;

  // Allocates n zeroed buffers in one page-aligned block. 0 or -ENOMEM.
  [[nodiscard]] int init(unsigned n);
  unsigned count() const { return count_; }
  void* at(unsigned i) const { return base_ + size_t{i} * kStorePage; }
  // Index of the buffer that starts at p, or -1 if p is not one of them.
  int index_of(const void* p) const;

 private:
  unsigned char* base_ = nullptr;
  unsigned count_ = 0;
};

}  // namespace mtier
