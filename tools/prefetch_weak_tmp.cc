// TEMPORARY (remove when the lookahead lands in lib/): weak no-op
// definitions of the lookahead API so that tools/mtier links before the
// implementation is merged. The real definitions override them.
#include <cerrno>

#include "mtier.h"

extern "C" {
__attribute__((weak)) long mtier_prefetch_rows(const void*, size_t, const void*, size_t, int, uint64_t,
                                               unsigned) { return 0; }
__attribute__((weak)) long mtier_prefetch_ranges(const struct mtier_range*, size_t, uint64_t,
                                                 unsigned) { return 0; }
__attribute__((weak)) long mtier_prefetch_wait(long, int) { return 0; }
__attribute__((weak)) int mtier_prefetch_advance(uint64_t) { return 0; }
}
