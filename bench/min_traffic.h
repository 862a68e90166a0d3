// SPDX-License-Identifier: Apache-2.0
// Belady's MIN counted in bytes moved rather than misses: a page-granularity
// simulation of an allocation and access sequence (a set-up's, where most
// pages are written before they are ever read and many are freed unread)
// that says how many page writes and reads a store would see if every
// eviction took the resident page used farthest in the future. A page
// first touched is placed as zeros (no read); evicting a page with no
// further use costs nothing; a dirty page with a further use is written
// once, and stays clean until written again.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace mtier::bench {

// One reference to a page. Page ids are never reused: an allocation's pages
// get fresh ids, so a freed allocation's pages simply have no next use.
struct PageRef {
  uint64_t page = 0;
  bool write = false;
};

struct Traffic {
  uint64_t references = 0;
  uint64_t zero_fills = 0;  // first touches: placed as zeros
  uint64_t reads = 0;       // pages read back from the store
  uint64_t writes = 0;      // dirty pages written to the store
};

// MIN's traffic for a cache of `capacity` pages (>= 1) over refs.
// Cost: O(n log capacity) time, O(n + pages) memory.
Traffic min_traffic(std::span<const PageRef> refs, uint64_t capacity);

// The page references of the DLRM reference trainer's set-up (the PyTorch
// reference model's per-table initialisation: nn.EmbeddingBag's table A
// written; a float64 array B of twice its size written; its float32 copy C
// written while B is read front to back, B freed, the previous table's C
// freed; the torch tensor D written while C is read; A freed unread), for
// `tables` tables of `table_bytes` each, then every D read once.
std::vector<PageRef> dlrm_reference_refs(unsigned tables, uint64_t table_bytes,
                                         uint64_t page_size);

}  // namespace mtier::bench
