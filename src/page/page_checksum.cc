// SPDX-License-Identifier: Apache-2.0
#include "page/page_checksum.h"

#include <cerrno>

#include "log/log.h"
#include "util/crc32c.h"

namespace mtier {

void record_page_sum(Table* t, uint64_t page, const void* bytes) {
  t->sums[page] = crc32c(bytes, kPageSize);
}

int verify_page_sum(Core& core, Table* t, uint64_t page, const void* bytes) {
  uint32_t found = crc32c(bytes, kPageSize), expected = t->sums[page];
  if (found == expected) return 0;
  uint64_t w = core.word(t, page).load(std::memory_order_acquire);
  const Store& s = *core.stores[PageWord::store(w)];
  MTIER_LOG_ERROR("table %s page %llu: checksum mismatch in %s store %s slot %llu: crc32c "
                  "expected %08x, found %08x (the store's copy changed behind mtier: "
                  "overwritten, truncated, or a device error); the page is not placed",
                  t->name.c_str(), static_cast<unsigned long long>(page), s.kind(),
                  s.path().c_str(), static_cast<unsigned long long>(PageWord::slot(w)), expected,
                  found);
  return -EBADMSG;
}

}  // namespace mtier
