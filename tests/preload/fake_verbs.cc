// SPDX-License-Identifier: Apache-2.0
// A stand-in for libibverbs' memory-region calls (pins.test): this machine
// has no RDMA device, so the test checks what mtier does around them -
// the pages stay in DRAM while registered - through this library, which
// hands out regions and checks that only live ones are moved or freed.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

struct FakeMr {  // the head of struct ibv_mr
  void* context;
  void* pd;
  void* addr;
  size_t length;
  uint32_t handle, lkey, rkey;
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* ibv_reg_mr(void* pd, void* addr, size_t len, int) {
  auto* mr = static_cast<FakeMr*>(calloc(1, sizeof(FakeMr)));
  if (!mr) return nullptr;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = len;
  mr->handle = 0x6d72;
  return mr;
}

__attribute__((visibility("default"))) void* ibv_reg_mr_iova2(void* pd, void* addr, size_t len,
                                                              uint64_t, unsigned access) {
  return ibv_reg_mr(pd, addr, len, static_cast<int>(access));
}

__attribute__((visibility("default"))) int ibv_rereg_mr(void* m, int flags, void*, void* addr,
                                                        size_t len, int) {
  auto* mr = static_cast<FakeMr*>(m);
  if (!mr || mr->handle != 0x6d72) return EINVAL;
  if (flags & 1) {
    mr->addr = addr;
    mr->length = len;
  }
  return 0;
}

__attribute__((visibility("default"))) int ibv_dereg_mr(void* m) {
  auto* mr = static_cast<FakeMr*>(m);
  if (!mr || mr->handle != 0x6d72) {
    fprintf(stderr, "fake ibv_dereg_mr: not a live region\n");
    return EINVAL;
  }
  mr->handle = 0;
  free(mr);
  return 0;
}
}
