// SPDX-License-Identifier: Apache-2.0
// Other memory allocators loaded in the process (jemalloc, tcmalloc,
// mimalloc, ... preloaded beside libmtier.so). Their own mappings are an
// allocator's arenas, not a program's data: they are never tables. A table
// there would put the allocator's heap in the region (a forked child would
// see it change under it), send its frees of small blocks to mtier, and make
// mtier allocate - through that allocator - while it holds its own lock,
// which hangs (jemalloc's extent hooks).
#pragma once
#include <cstddef>

namespace mtier::lib {

// Notes the address ranges of the loaded objects that are allocators (by
// their file name), and says once when one of them serves malloc before
// libmtier.so does (its allocations are then never seen). Called once at
// activation, before any table: dl_iterate_phdr takes the loader's lock.
void find_allocators() noexcept;

// Whether `code` (a return address) lies in an allocator's object.
// Lock-free; allocates nothing.
bool in_allocator(const void* code) noexcept;

}  // namespace mtier::lib
