// SPDX-License-Identifier: Apache-2.0
// open_pmem_store() for a build without libpmem2.
#include <cerrno>

#include "log/log.h"
#include "store/store.h"

namespace mtier {

std::unique_ptr<Store> open_pmem_store(const StoreOptions& opts, int* err) {
  MTIER_LOG_ERROR("PMem store unavailable: built without libpmem2 (%s)", opts.path.c_str());
  *err = -ENOTSUP;
  return nullptr;
}

}  // namespace mtier
