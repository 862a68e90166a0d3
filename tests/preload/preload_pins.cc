// SPDX-License-Identifier: Apache-2.0
// Memory pinned for a device (run by pins.test, with and without
// LD_PRELOAD=libmtier.so; under mtier with MTIER_DRAM_BYTES=16M).
//   preload_pins uring   a 4 MiB part of a table registered as an io_uring
//                        fixed buffer stays in its frames while 3 budgets'
//                        worth of other pages pass through: the CPU's
//                        writes reach the file by WRITE_FIXED and the
//                        file's bytes read by READ_FIXED reach the CPU
//                        (before: the old bytes both ways, silently); a
//                        registration past 3/4 of the budget fails with
//                        -ENOMEM; once unregistered the part can leave
//                        like any other page, every byte intact
//   preload_pins verbs   the same residency through ibv_reg_mr,
//                        ibv_reg_mr_iova2, ibv_rereg_mr and ibv_dereg_mr
//                        of a stand-in libibverbs (libfakeverbs.so, found
//                        through dlsym: this machine has no RDMA device,
//                        so the stand-in pins nothing itself)
#include <dlfcn.h>
#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace {

using pt::MiB;
using pt::kPage;

char* page_aligned_part(char* t, size_t off) {
  return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(t) + off) & ~(kPage - 1));
}

// One fixed-buffer transfer of buffer 0 ([buf, buf+len)) to or from fd.
void fixed_io(io_uring* ring, bool write, int fd, char* buf, size_t len) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  CHECK(sqe, "io_uring_get_sqe: NULL");
  if (write)
    io_uring_prep_write_fixed(sqe, fd, buf, static_cast<unsigned>(len), 0, 0);
  else
    io_uring_prep_read_fixed(sqe, fd, buf, static_cast<unsigned>(len), 0, 0);
  CHECK(io_uring_submit(ring) == 1, "io_uring_submit");
  io_uring_cqe* cqe;
  CHECK(io_uring_wait_cqe(ring, &cqe) == 0, "io_uring_wait_cqe");
  CHECK(cqe->res == static_cast<int>(len), "%s_FIXED of %zu bytes: res %d", write ? "WRITE" : "READ",
        len, cqe->res);
  io_uring_cqe_seen(ring, cqe);
}

void test_uring() {
  const size_t len = 32 * MiB, part = 4 * MiB;
  char* t = static_cast<char*>(malloc(len));
  CHECK(t, "malloc(32M): NULL");
  EXPECT_MANAGED(t, len, "malloc(32M)");
  pt::fill(t, len, 3);
  char* buf = page_aligned_part(t, 4 * MiB);
  size_t buf_off = static_cast<size_t>(buf - t);
  std::string path = std::string(getenv("MTIER_TEST_TMP") ? getenv("MTIER_TEST_TMP") : "/tmp") +
                     "/pins.data";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0, "open %s: errno %d", path.c_str(), errno);
  io_uring ring;
  CHECK(io_uring_queue_init(8, &ring, 0) == 0, "io_uring_queue_init");
  iovec iov{buf, part};
  int rc = io_uring_register_buffers(&ring, &iov, 1);
  CHECK(rc == 0, "io_uring_register_buffers(4M of a table): %d (%s)", rc, strerror(-rc));
  pt::churn_thrice("while 4M of a table is a fixed buffer");
  CHECK(pt::pages_in_memory(buf, part) == part / kPage,
        "fixed buffer after the churn: %zu of %zu pages in memory", pt::pages_in_memory(buf, part),
        part / kPage);
  pt::ok("the registered part stayed in memory through the churn");

  // The CPU writes, the device reads (WRITE_FIXED): the file gets the new bytes.
  pt::fill(buf, part, 7);
  fixed_io(&ring, true, fd, buf, part);
  std::vector<char> file(part);
  CHECK(pread(fd, file.data(), part, 0) == static_cast<ssize_t>(part), "pread: errno %d", errno);
  EXPECT_DATA(file.data(), part, 7, "the file written by WRITE_FIXED from the CPU's new bytes");

  // The device writes (READ_FIXED), the CPU reads, after another churn.
  pt::fill(file.data(), part, 9);
  CHECK(pwrite(fd, file.data(), part, 0) == static_cast<ssize_t>(part), "pwrite: errno %d", errno);
  pt::churn_thrice("before READ_FIXED");
  fixed_io(&ring, false, fd, buf, part);
  pt::churn_thrice("after READ_FIXED");
  EXPECT_DATA(buf, part, 9, "the fixed buffer as the CPU reads what READ_FIXED put in it");

  if (pt::managing()) {
    char* big = page_aligned_part(t, 12 * MiB);
    iovec more{big, 16 * MiB};
    io_uring second;
    CHECK(io_uring_queue_init(2, &second, 0) == 0, "io_uring_queue_init");
    rc = io_uring_register_buffers(&second, &more, 1);
    CHECK(rc == -ENOMEM, "a 16M fixed buffer past 3/4 of the budget: expected -ENOMEM, found %d",
          rc);
    io_uring_queue_exit(&second);
    pt::ok("a registration past 3/4 of the budget fails with -ENOMEM");
  }

  CHECK(io_uring_unregister_buffers(&ring) == 0, "io_uring_unregister_buffers");
  pt::churn_thrice("after unregistering");
  if (pt::managing())
    CHECK(pt::pages_in_memory(buf, part) < part / kPage,
          "after unregistering and the churn: all %zu pages still in memory", part / kPage);
  EXPECT_DATA(buf, part, 9, "the part once unregistered, after the churn");
  EXPECT_DATA_RANGE(t, 0, buf_off, 3, "the table before the part");
  EXPECT_DATA_RANGE(t, buf_off + part, len - buf_off - part, 3, "the table after the part");
  io_uring_queue_exit(&ring);
  close(fd);
  free(t);
}

template <class F>
F verbs(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  CHECK(f, "%s: not found (LD_PRELOAD must name libfakeverbs.so)", name);
  return reinterpret_cast<F>(f);
}

void test_verbs() {
  auto reg = verbs<void* (*)(void*, void*, size_t, int)>("ibv_reg_mr");
  auto reg2 = verbs<void* (*)(void*, void*, size_t, uint64_t, unsigned)>("ibv_reg_mr_iova2");
  auto rereg = verbs<int (*)(void*, int, void*, void*, size_t, int)>("ibv_rereg_mr");
  auto dereg = verbs<int (*)(void*)>("ibv_dereg_mr");
  const size_t len = 32 * MiB, part = 4 * MiB;
  char* t = static_cast<char*>(malloc(len));
  CHECK(t, "malloc(32M): NULL");
  EXPECT_MANAGED(t, len, "malloc(32M)");
  pt::fill(t, len, 4);
  char* a = page_aligned_part(t, 2 * MiB);
  char* b = page_aligned_part(t, 20 * MiB);
  void* mr = reg(nullptr, a, part, 0);
  CHECK(mr, "ibv_reg_mr: NULL (errno %d)", errno);
  void* mr2 = reg2(nullptr, b, part, reinterpret_cast<uintptr_t>(b), 0);
  CHECK(mr2, "ibv_reg_mr_iova2: NULL (errno %d)", errno);
  pt::churn_thrice("while two RDMA regions are registered");
  CHECK(pt::pages_in_memory(a, part) == part / kPage && pt::pages_in_memory(b, part) == part / kPage,
        "registered regions after the churn: %zu and %zu of %zu pages in memory",
        pt::pages_in_memory(a, part), pt::pages_in_memory(b, part), part / kPage);
  pt::ok("both registered regions stayed in memory through the churn");
  // The second region moves to a page range right after the first.
  char* c = a + part;
  CHECK(rereg(mr2, 1, nullptr, c, part, 0) == 0, "ibv_rereg_mr");
  pt::churn_thrice("after moving the second region");
  CHECK(pt::pages_in_memory(c, part) == part / kPage, "the moved region: %zu of %zu pages in memory",
        pt::pages_in_memory(c, part), part / kPage);
  if (pt::managing())
    CHECK(pt::pages_in_memory(b, part) < part / kPage, "the region's old range: all %zu pages still in memory",
          part / kPage);
  CHECK(dereg(mr) == 0 && dereg(mr2) == 0, "ibv_dereg_mr");
  pt::churn_thrice("after deregistering");
  if (pt::managing())
    CHECK(pt::pages_in_memory(a, 2 * part) < 2 * part / kPage,
          "after deregistering and the churn: all %zu pages still in memory", 2 * part / kPage);
  EXPECT_DATA(t, len, 4, "the table after the regions went");
  free(t);
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::start("preload_pins");
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "uring")
    test_uring();
  else if (mode == "verbs")
    test_verbs();
  else {
    fprintf(stderr, "usage: preload_pins uring|verbs\n");
    return 2;
  }
  printf("PASS: preload_pins %s\n", mode.c_str());
  return 0;
}
