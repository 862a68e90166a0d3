// SPDX-License-Identifier: Apache-2.0
// libpmem2 through dlopen/dlsym (see pmem2_api.h for why it is not linked).
#include "sys/pmem2_api.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstdio>

namespace mtier::sys {
namespace {

// Resolves `name` into *fn; false (with `why` filled) when it is missing.
template <typename Fn>
bool resolve(void* handle, const char* soname, const char* name, Fn* fn, char* why,
             size_t why_len) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn) return true;
  snprintf(why, why_len, "%s has no %s (a libpmem2 older than 1.0? Debian package %s)", soname,
           name, kPmem2Package);
  return false;
}

bool resolve_all(void* h, const char* so, Pmem2Api* a, char* why, size_t n) {
  return resolve(h, so, "pmem2_source_from_fd", &a->source_from_fd, why, n) &&
         resolve(h, so, "pmem2_source_delete", &a->source_delete, why, n) &&
         resolve(h, so, "pmem2_config_new", &a->config_new, why, n) &&
         resolve(h, so, "pmem2_config_delete", &a->config_delete, why, n) &&
         resolve(h, so, "pmem2_config_set_required_store_granularity",
                 &a->config_set_required_store_granularity, why, n) &&
         resolve(h, so, "pmem2_map_new", &a->map_new, why, n) &&
         resolve(h, so, "pmem2_map_delete", &a->map_delete, why, n) &&
         resolve(h, so, "pmem2_map_get_address", &a->map_get_address, why, n) &&
         resolve(h, so, "pmem2_map_get_size", &a->map_get_size, why, n) &&
         resolve(h, so, "pmem2_map_get_store_granularity", &a->map_get_store_granularity, why,
                 n) &&
         resolve(h, so, "pmem2_get_memcpy_fn", &a->get_memcpy_fn, why, n) &&
         resolve(h, so, "pmem2_get_persist_fn", &a->get_persist_fn, why, n) &&
         resolve(h, so, "pmem2_get_drain_fn", &a->get_drain_fn, why, n) &&
         resolve(h, so, "pmem2_errormsg", &a->errormsg, why, n);
}

}  // namespace

int load_pmem2(const char* soname, Pmem2Api* api, char* why, size_t why_len) {
  *api = {};
  // RTLD_LOCAL: its symbols (and its dependencies') stay out of the
  // program's global scope.
  void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* err = dlerror();
    snprintf(why, why_len, "cannot load %s (install Debian's %s package): %s", soname,
             kPmem2Package, err ? err : "unknown error");
    return -ELIBACC;
  }
  if (resolve_all(h, soname, api, why, why_len)) return 0;
  *api = {};
  dlclose(h);
  return -ELIBACC;
}

const Pmem2Api* pmem2_api(const char** why) {
  struct Loaded {
    Pmem2Api api;
    char why[512];
    int rc;
  };
  static Loaded* const loaded = [] {
    static Loaded l;
    l.rc = load_pmem2(kPmem2Soname, &l.api, l.why, sizeof l.why);
    return &l;
  }();
  if (loaded->rc == 0) return &loaded->api;
  *why = loaded->why;
  return nullptr;
}

}  // namespace mtier::sys
