// SPDX-License-Identifier: Apache-2.0
// The checksum an evicted page carries, so that a page that comes back from
// its store different (overwritten, truncated and extended, a device error)
// is caught before it is placed: the access gets SIGBUS with the reason,
// never wrong data. The sums live in DRAM (Table::sums), one crc32c a page.
#pragma once
#include <cstdint>

#include "page/core.h"

namespace mtier {

// Records the sum of `bytes`, exactly what is being written to the page's
// slot. Caller: the evictor, the page EVICTING (its pass holds pass_mu_).
void record_page_sum(Table* t, uint64_t page, const void* bytes);

// Checks `bytes`, just read from the page's slot (a staging buffer, or the
// PMem store's mapping), against the recorded sum. Returns 0, or -EBADMSG
// with a line logged naming the table, page, store, slot and both sums; the
// caller fails the access or gives the claim back. Caller: the page is
// FETCHING (claimed by the caller), registry held shared. No allocation.
[[nodiscard]] int verify_page_sum(Core& core, Table* t, uint64_t page, const void* bytes);

}  // namespace mtier
