// SPDX-License-Identifier: Apache-2.0
// libpmem2, loaded with dlopen the first time a PMem store is set up rather
// than linked: linked, it would pull libndctl, libdaxctl, libudev, libkmod,
// libcrypto and more into every process that preloads libmtier.so, most of
// which never configure a PMem store. The header (libpmem2-dev) still gives
// the types and constants; the functions come from this table.
#pragma once
#include <libpmem2.h>

#include <cstddef>

namespace mtier::sys {

// The SONAME Debian 12's libpmem2-1 package ships (libpmem2.so is only in -dev).
inline constexpr const char* kPmem2Soname = "libpmem2.so.1";
inline constexpr const char* kPmem2Package = "libpmem2-1";

// The libpmem2 functions the PMem store calls, each resolved with dlsym.
struct Pmem2Api {
  decltype(&::pmem2_source_from_fd) source_from_fd;
  decltype(&::pmem2_source_delete) source_delete;
  decltype(&::pmem2_config_new) config_new;
  decltype(&::pmem2_config_delete) config_delete;
  decltype(&::pmem2_config_set_required_store_granularity) config_set_required_store_granularity;
  decltype(&::pmem2_map_new) map_new;
  decltype(&::pmem2_map_delete) map_delete;
  decltype(&::pmem2_map_get_address) map_get_address;
  decltype(&::pmem2_map_get_size) map_get_size;
  decltype(&::pmem2_map_get_store_granularity) map_get_store_granularity;
  decltype(&::pmem2_get_memcpy_fn) get_memcpy_fn;
  decltype(&::pmem2_get_persist_fn) get_persist_fn;
  decltype(&::pmem2_get_drain_fn) get_drain_fn;
  decltype(&::pmem2_errormsg) errormsg;
};

// Loads `soname` and fills *api. Returns 0, or -ELIBACC when the library
// cannot be loaded or lacks one of the functions; then `why` holds one line
// naming the library, the Debian package and the reason. The
// library stays loaded for the life of the process (the table points into it).
[[nodiscard]] int load_pmem2(const char* soname, Pmem2Api* api, char* why, size_t why_len);

// The process's table, loaded from kPmem2Soname on the first call (thread
// safe; the outcome, failure included, is kept). nullptr when it could not
// be loaded: *why is then load_pmem2()'s line.
const Pmem2Api* pmem2_api(const char** why);

}  // namespace mtier::sys
