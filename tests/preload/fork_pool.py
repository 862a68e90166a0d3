# SPDX-License-Identifier: Apache-2.0
"""Python's fork-based multiprocessing under LD_PRELOAD=libmtier.so (run by
fork.test with MTIER_MIN_BYTES=1M and MTIER_EXCLUDE_SIZES=1M-1M: CPython's
object allocator takes its arenas as 1 MiB anonymous maps, which must not
be tables: a child sees its parent's later writes to a table, and a heap
cannot stand that). A bytearray(8 MiB) is a managed table
(malloc), pushed to the store; a Pool of 2 fork workers works, and its
workers read the array (the parent's bytes, from the store) and write their
own copies of it; a fork worker that rewrites the whole array leaves the
parent's unchanged; subprocess.run works.

Prints "ok: ..." per check; exits 1 with "FAIL: ..." on the first failure.
"""
import ctypes
import hashlib
import multiprocessing as mp
import os
import subprocess
import sys

SIZE = 8 << 20
PAGE = 4096


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def ok(msg):
    print("ok: " + msg, flush=True)


def fill(arr, seed):
    """Every page distinct: a base pattern, then page number and seed in each page."""
    arr[:] = bytes(range(256)) * (len(arr) // 256)
    for i in range(len(arr) // PAGE):
        arr[i * PAGE:i * PAGE + 16] = i.to_bytes(8, "little") + seed.to_bytes(8, "little")


def digest(arr):
    return hashlib.sha256(arr).hexdigest()


def address(arr):
    return ctypes.addressof((ctypes.c_char * len(arr)).from_buffer(arr))


def table_find(addr):
    """mtier_table_find(addr), or None without the API (no preload)."""
    try:
        fn = ctypes.CDLL(None).mtier_table_find
    except AttributeError:
        return None
    fn.argtypes = [ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn(addr)


def square(x):
    return x * x


def big_work(n):
    # A worker's own big allocation: plain memory in a forked child.
    b = bytearray(4 << 20)
    b[::PAGE] = bytes([n % 256]) * (len(b) // PAGE)
    return sum(b[::PAGE]) == (n % 256) * (len(b) // PAGE)


ARR = None  # the parent's managed array, inherited by forked workers


def array_digest(_):
    # Reads the inherited array (its pages come from the parent's store).
    return digest(ARR)


def rewrite_array(seed):
    # Writes the worker's own copy; returns what it then reads back.
    fill(ARR, seed)
    return digest(ARR)


def main():
    global ARR
    preloaded = "libmtier" in os.environ.get("LD_PRELOAD", "")
    ARR = bytearray(SIZE)
    fill(ARR, 1)
    want = digest(ARR)
    tid = table_find(address(ARR))
    if preloaded:
        if tid is None:
            fail("libmtier is preloaded but mtier_table_find is not exported")
        if tid <= 0:
            fail("bytearray(8 MiB) with MTIER_MIN_BYTES=1M: expected a managed table, "
                 "mtier_table_find = %d" % tid)
        ok("bytearray(8 MiB) is managed: table %d" % tid)
    # Evict it: 3 x 8 MiB of other arrays against a few MiB of budget.
    for s in range(3):
        other = bytearray(SIZE)
        fill(other, 10 + s)
        del other
    if digest(ARR) != want:
        fail("the array changed after eviction")
    ok("the array survived eviction: sha256 %s" % want[:16])

    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        try:  # a worker that dies makes map() wait forever: time out instead
            got = pool.map_async(square, range(100)).get(60)
        except mp.TimeoutError:
            fail("Pool(2).map(square) did not finish in 60 s (its fork workers died?)")
        if got != [x * x for x in range(100)]:
            fail("Pool(2).map(square): wrong results")
        ok("Pool(2) of fork workers: map(square, range(100)) correct")
        try:
            good = pool.map_async(big_work, range(8)).get(60)
        except mp.TimeoutError:
            fail("Pool(2).map(big_work) did not finish in 60 s (its fork workers died?)")
        if not all(good):
            fail("Pool(2).map(big_work): a worker's own 4 MiB bytearray was wrong")
        ok("Pool(2) workers' own big allocations work")

        try:
            seen = pool.map_async(array_digest, range(8)).get(60)
        except mp.TimeoutError:
            fail("Pool(2).map(array_digest) did not finish in 60 s (its fork workers died?)")
        if seen != [want] * 8:
            fail("Pool(2) workers read the inherited array as %r, expected %s" % (seen, want[:16]))
        ok("Pool(2) workers read the inherited array: sha256 %s, 8 of 8" % want[:16])
    ref = bytearray(SIZE)
    fill(ref, 77)
    mine = digest(ref)
    del ref
    with ctx.Pool(2) as pool:
        try:
            got = pool.map_async(rewrite_array, [77, 77]).get(60)
        except mp.TimeoutError:
            fail("Pool(2).map(rewrite_array) did not finish in 60 s (its fork workers died?)")
        if got != [mine, mine]:
            fail("fork workers rewriting their copy of the array read back %r, expected %s"
                 % (got, mine[:16]))
    if digest(ARR) != want:
        fail("the parent's array changed after fork workers rewrote their copies")
    ok("fork workers rewrote their own copies (sha256 %s); the parent's is unchanged" % mine[:16])

    r = subprocess.run(["true"])
    if r.returncode != 0:
        fail("subprocess.run(['true']): expected 0, found %r" % r.returncode)
    r = subprocess.run(["sh", "-c", "exit 3"])
    if r.returncode != 3:
        fail("subprocess.run(['sh', '-c', 'exit 3']): expected 3, found %r" % r.returncode)
    out = subprocess.run([sys.executable, "-c", "print(len(bytearray(4 << 20)))"],
                         capture_output=True, text=True)
    if out.returncode != 0 or out.stdout.strip() != str(4 << 20):
        fail("subprocess python -c bytearray(4M): %r %r" % (out.returncode, out.stdout))
    ok("subprocess.run works (exit 0, exit 3, a child python allocating 4 MiB)")

    got = digest(ARR)
    if got != want:
        fail("the parent's array changed: sha256 %s, expected %s" % (got, want))
    if preloaded and table_find(address(ARR)) != tid:
        fail("the parent's array is no longer table %d" % tid)
    ok("the parent's array is unchanged: sha256 %s" % got[:16])
    # The parent keeps working: more tables.
    for s in range(3):
        b = bytearray(SIZE)
        fill(b, 20 + s)
        d = digest(b)
        fill(ARR, 1)  # rewrite the same data: evicts b
        if digest(b) != d:
            fail("a new array in the parent lost data")
        del b
    ok("the parent keeps allocating and freeing managed arrays")
    print("PASS: fork_pool.py", flush=True)


if __name__ == "__main__":
    main()
