// SPDX-License-Identifier: Apache-2.0
#include "store/staging.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mtier {

StagingBuffers::~StagingBuffers() { std::free(base_); }

int StagingBuffers::init(unsigned n) {
  if (base_ || n == 0) return -EINVAL;
  size_t bytes = size_t{n} * kStorePage;
  base_ = static_cast<unsigned char*>(std::aligned_alloc(kStorePage, bytes));
  if (!base_) return -ENOMEM;
  std::memset(base_, 0, bytes);
  count_ = n;
  return 0;
}

int StagingBuffers::index_of(const void* p) const {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto base = reinterpret_cast<uintptr_t>(base_);
  if (addr < base || addr >= base + size_t{count_} * kStorePage) return -1;
  if ((addr - base) % kStorePage != 0) return -1;
  return static_cast<int>((addr - base) / kStorePage);
}

}  // namespace mtier
