// SPDX-License-Identifier: Apache-2.0
// no_uffd: runs a program where userfaultfd is not permitted.
//
//   no_uffd PROGRAM [ARG...]   installs a seccomp-BPF filter under which the
//                              userfaultfd(2) syscall and
//                              ioctl(fd, USERFAULTFD_IOC_NEW, ...) on
//                              /dev/userfaultfd fail with EPERM, then execs
//                              PROGRAM (PATH is searched)
//   no_uffd --check            installs the filter and checks that both ways
//                              to get a userfaultfd fail with EPERM
//   no_uffd --probe            (no filter) exit 0 if this process can get a
//                              userfaultfd one way or the other, else 1 with
//                              the reason: the preload tests skip without it
//
// Exit 77 when seccomp filters are not available (the tests skip).
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

#if defined(__x86_64__)
#define ARCH_NR AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_NR AUDIT_ARCH_AARCH64
#else
#error "no_uffd: unsupported architecture"
#endif

namespace {

int install_filter() {
  constexpr unsigned kErrPerm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  struct sock_filter code[] = {
      // Another architecture (x32, i386 via int 0x80): let it be.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NR, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      // userfaultfd(2): EPERM.
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrPerm),
      // ioctl(fd, USERFAULTFD_IOC_NEW, ...): EPERM (the command is 32 bits:
      // the low word of args[1]; little-endian).
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, USERFAULTFD_IOC_NEW, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrPerm),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fprintf(stderr, "no_uffd: prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
    return errno == EINVAL ? 77 : 1;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    fprintf(stderr, "no_uffd: prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER): %s\n", strerror(errno));
    return errno == EINVAL ? 77 : 1;
  }
  return 0;
}

// 0: got one; else the errno of the syscall and of the ioctl.
int try_uffd(int* sys_err, int* dev_err) {
  *sys_err = *dev_err = 0;
  long fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return 0;
  }
  *sys_err = errno;
  int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
  if (dev < 0) {
    *dev_err = errno;
    return -1;
  }
  int u = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
  *dev_err = u < 0 ? errno : 0;
  close(dev);
  if (u >= 0) {
    close(u);
    return 0;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: no_uffd PROGRAM [ARG...] | --check | --probe\n");
    return 2;
  }
  int sys_err, dev_err;
  if (strcmp(argv[1], "--probe") == 0) {
    if (try_uffd(&sys_err, &dev_err) == 0) return 0;
    printf("userfaultfd is not available to this process: userfaultfd(2): %s; /dev/userfaultfd: %s\n",
           strerror(sys_err), strerror(dev_err));
    return 1;
  }
  int rc = install_filter();
  if (rc) return rc;
  if (strcmp(argv[1], "--check") == 0) {
    errno = 0;
    long fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 || errno != EPERM) {
      printf("FAIL: under the filter userfaultfd(2) expected -1/EPERM, found %ld errno %d\n", fd, errno);
      return 1;
    }
    printf("ok: userfaultfd(2) = -1 EPERM\n");
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev >= 0) {
      errno = 0;
      int u = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
      if (u >= 0 || errno != EPERM) {
        printf("FAIL: under the filter ioctl(USERFAULTFD_IOC_NEW) expected -1/EPERM, found %d errno %d\n", u,
               errno);
        return 1;
      }
      printf("ok: ioctl(/dev/userfaultfd, USERFAULTFD_IOC_NEW) = -1 EPERM\n");
      close(dev);
    } else {
      printf("ok: /dev/userfaultfd cannot be opened here (%s)\n", strerror(errno));
    }
    // Other ioctls still work.
    if (ioctl(1, FIONREAD, &rc) < 0 && errno == EPERM) {
      printf("FAIL: the filter blocks other ioctls too\n");
      return 1;
    }
    printf("PASS: no_uffd --check\n");
    return 0;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "no_uffd: exec %s: %s\n", argv[1], strerror(errno));
  return 127;
}
