# SPDX-License-Identifier: Apache-2.0
"""A program that closes "all" its descriptors while it has tables (run by
fds.test, with and without LD_PRELOAD=libmtier.so): os.closerange(3, 65536)
- what daemonising code and launchers do - then every close() of 3..1023
one by one, then dup2() over every one of them; the tables, pushed to the
store before and after, read back what was written. Its own descriptors
do what it asked: a pipe it made before is closed, a file it opens after
gets a number, a dup2 onto a number it chose works. Prints "ok: ..." per
check; exits 1 with "FAIL: ..." on the first failure.
"""
import errno
import hashlib
import os
import sys

SIZE = 8 << 20


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def ok(msg):
    print("ok: " + msg, flush=True)


def fill(arr, seed):
    arr[:] = hashlib.sha256(b"%d" % seed).digest() * (len(arr) // 32)


def churn():
    """Pushes older tables out of DRAM (a few budgets' worth of new ones)."""
    for s in range(3):
        b = bytearray(SIZE)
        fill(b, 100 + s)
        del b


def main():
    a = bytearray(SIZE)
    fill(a, 1)
    want = hashlib.sha256(a).hexdigest()
    churn()
    r, w = os.pipe()
    os.closerange(3, 65536)
    for fd in (r, w):
        try:
            os.fstat(fd)
            fail("the program's pipe end %d is still open after os.closerange" % fd)
        except OSError as e:
            if e.errno != errno.EBADF:
                raise
    ok("os.closerange(3, 65536) closed the program's own pipe")
    if hashlib.sha256(a).hexdigest() != want:
        fail("a table read back wrong after os.closerange(3, 65536)")
    b = bytearray(SIZE)
    fill(b, 2)
    want_b = hashlib.sha256(b).hexdigest()
    churn()
    if hashlib.sha256(a).hexdigest() != want or hashlib.sha256(b).hexdigest() != want_b:
        fail("tables read back wrong after os.closerange and more eviction")
    ok("tables intact after os.closerange(3, 65536), before and after eviction")
    for fd in range(3, 1024):
        try:
            os.close(fd)
        except OSError:
            pass
    churn()
    if hashlib.sha256(a).hexdigest() != want or hashlib.sha256(b).hexdigest() != want_b:
        fail("tables read back wrong after close() of 3..1023")
    ok("tables intact after close() of every descriptor 3..1023")
    null = os.open("/dev/null", os.O_RDWR)
    refused = 0
    for fd in range(3, 1024):
        if fd == null:
            continue
        try:
            os.dup2(null, fd)
            os.close(fd)
        except OSError as e:
            if e.errno != errno.EBUSY:
                fail("dup2(/dev/null, %d): %s" % (fd, e))
            refused += 1
    churn()
    if hashlib.sha256(a).hexdigest() != want or hashlib.sha256(b).hexdigest() != want_b:
        fail("tables read back wrong after dup2 over 3..1023")
    ok("tables intact after dup2 over every descriptor 3..1023 (%d refused)" % refused)
    os.dup2(null, 200)
    os.fstat(200)
    os.close(200)
    ok("dup2 onto a number the program chose (200) works")
    print("PASS: close_fds.py", flush=True)


if __name__ == "__main__":
    main()
