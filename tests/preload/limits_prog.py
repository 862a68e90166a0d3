# SPDX-License-Identifier: Apache-2.0
"""A program for limits.test: a table (a 32 MiB bytearray) pushed to the
store by newer ones, then, as argv[1] says: `table` reads it back;
`proc-mem` reads its first page through /proc/self/mem (EIO while it is in
the store, the data once touched); `abort` prints the table's address and
dies of SIGABRT (a core dump)."""
import ctypes
import errno
import os
import sys


def main():
    a = bytearray(32 << 20)
    a[::4096] = b"\x07" * (len(a) // 4096)
    for _ in range(3):
        b = bytearray(32 << 20)
        b[::4096] = b"\x01" * (len(b) // 4096)
        del b
    addr = ctypes.addressof((ctypes.c_char * len(a)).from_buffer(a))
    mode = sys.argv[1]
    if mode == "table":
        if a[::4096] != b"\x07" * (len(a) // 4096):
            print("FAIL: the table read back wrong")
            sys.exit(1)
        print("ok: the table read back")
    elif mode == "proc-mem":
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        try:
            first = os.pread(fd, 4096, addr)[:1]
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            first = None
        if a[0] != 7:
            print("FAIL: the table read back wrong")
            sys.exit(1)
        after = os.pread(fd, 4096, addr)[:1]
        if after != b"\x07":
            print("FAIL: /proc/self/mem of a touched page: %r" % after)
            sys.exit(1)
        print("ok: /proc/self/mem: %s while in the store, the data once touched"
              % ("EIO" if first is None else "the data"))
    elif mode == "abort":
        print("table at %#x" % addr, flush=True)
        os.abort()


if __name__ == "__main__":
    main()
