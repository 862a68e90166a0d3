// SPDX-License-Identifier: Apache-2.0
// Reading claimed pages back from a store, verified: the one fetch routine
// behind every path that brings a stored page into DRAM - a fault's own page,
// its read-around and the daemon's fetch orders (FaultHandler), the
// lookahead's reads ahead (Lookahead). The caller then places each page
// (place_claimed) or gives it back, under the page's stripe lock.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "page/core.h"
#include "page/page_checksum.h"
#include "store/store.h"

namespace mtier {

// Fetches `n` FETCHING pages held by `ch`'s store, at most ch.depth() at a
// time: page_of(i) gives item i's table and page (a std::pair<Table*,
// uint64_t>); done(i, source, result) is called for each, in order, with no
// lock held, `source` the page's bytes (a staging buffer of `ch`, valid
// until done returns and the next chunk starts, or the store's own mapping)
// and `result` 0 or -errno (the read failed, or the bytes do not match the
// page's checksum: never wrong data). `ios` is scratch (capacity: the
// channel's depth).
template <class PageOf, class Done>
void fetch_pages(Core& core, StoreChannel& ch, size_t n, PageOf&& page_of, Done&& done,
                 std::vector<StoreIo>& ios) {
  for (size_t i = 0; i < n; i += ch.depth()) {
    const size_t m = std::min<size_t>(ch.depth(), n - i);
    ios.clear();
    for (size_t k = 0; k < m; k++) {
      auto [t, page] = page_of(i + k);
      uint64_t slot = PageWord::slot(core.word(t, page).load());
      if (!ch.direct(slot)) ios.push_back({slot, ch.buffer(static_cast<unsigned>(ios.size())), 0});
    }
    if (!ios.empty()) (void)ch.read_pages(ios.data(), ios.size());  // per-page results below
    for (size_t k = 0, io = 0; k < m; k++) {
      auto [t, page] = page_of(i + k);
      const void* src = ch.direct(PageWord::slot(core.word(t, page).load()));
      int rc = 0;
      if (!src) {
        src = ios[io].buf;
        rc = ios[io++].result;
      }
      if (rc == 0) rc = verify_page_sum(core, t, page, src);
      done(i + k, src, rc);
    }
  }
}

}  // namespace mtier
