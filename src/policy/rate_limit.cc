// SPDX-License-Identifier: Apache-2.0
// Range merging and the migration rate limit (see rate_limit.h).
#include "policy/rate_limit.h"

namespace mtier::policy {

void merge_moves(std::vector<Move>* moves) {
  size_t out = 0;
  for (size_t i = 0; i < moves->size(); ++i) {
    const Move& m = (*moves)[i];
    if (out > 0) {
      Move& last = (*moves)[out - 1];
      if (last.client == m.client && last.table_id == m.table_id && last.op == m.op &&
          last.first_page + last.count == m.first_page &&
          static_cast<uint64_t>(last.count) + m.count <= UINT32_MAX) {
        last.count += m.count;
        continue;
      }
    }
    (*moves)[out++] = m;
  }
  moves->resize(out);
}

uint64_t limit_moves(std::vector<Move>* moves, uint64_t max_pages) {
  if (max_pages == 0) return 0;
  uint64_t used = 0, dropped = 0;
  size_t keep = moves->size();
  for (size_t i = 0; i < moves->size(); ++i) {
    Move& m = (*moves)[i];
    if (keep != moves->size()) {
      dropped += m.count;
      continue;
    }
    uint64_t room = max_pages - used;
    if (m.count <= room) {
      used += m.count;
      if (used == max_pages) keep = i + 1;
      continue;
    }
    dropped += m.count - room;
    m.count = static_cast<uint32_t>(room);
    keep = i + (room > 0 ? 1 : 0);
  }
  moves->resize(keep);
  return dropped;
}

}  // namespace mtier::policy
