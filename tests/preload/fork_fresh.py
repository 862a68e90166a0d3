#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A launcher that forks its workers before it has any table (as
torch.multiprocessing's fork and forkserver start methods, or a job's
launcher, fork their ranks): under LD_PRELOAD=libmtier.so each child is a
process of its own and its big allocations are tables of its own engine,
forced through the store by a small budget, with its data intact.

Run with MTIER_MIN_BYTES=4M MTIER_DRAM_BYTES=2M (the test sets them).
Prints 'ok: ...' lines and 'PASS: fork_fresh.py', or 'FAIL: ...' (exit 1).
Without the library the region checks are skipped (the baseline run)."""

import hashlib
import mmap
import os
import sys

PRELOADED = "libmtier" in os.environ.get("LD_PRELOAD", "")
MIB = 1 << 20
PAGE = mmap.PAGESIZE


def has_region():
    with open("/proc/self/maps") as f:
        return any("memfd:mtier-region" in line for line in f)


def child(k):
    """Writes 16 MiB (8x the budget) through two 8 MiB bytearrays (malloc),
    reads it back, exits 0 if every byte is right and (preloaded) the
    allocation became a table of this process's own region."""
    bufs = [bytearray(8 * MIB) for _ in range(2)]  # malloc: interposed
    if PRELOADED and not has_region():
        print(f"FAIL: child {k} (pid {os.getpid()}) has no mtier region: its "
              "allocations were not managed", flush=True)
        os._exit(1)
    want = []
    for i, b in enumerate(bufs):
        for off in range(0, len(b), PAGE):
            b[off:off + 16] = f"{k:4d}{i:4d}{off:8d}".encode()
        want.append(hashlib.sha256(b).hexdigest())
    for i, b in enumerate(bufs):
        for off in range(0, len(b), PAGE):
            if b[off:off + 16] != f"{k:4d}{i:4d}{off:8d}".encode():
                print(f"FAIL: child {k}: page at {off} of buffer {i} lost", flush=True)
                os._exit(1)
        if hashlib.sha256(b).hexdigest() != want[i]:
            print(f"FAIL: child {k}: buffer {i} changed", flush=True)
            os._exit(1)
    os._exit(0)


def main():
    if PRELOADED and has_region():
        print("FAIL: the launcher has a region before it made any table")
        return 1
    pids = []
    for k in range(2):
        pid = os.fork()
        if pid == 0:
            child(k)
        pids.append(pid)
    bad = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            print(f"FAIL: child {pid} exited with status {status:#x}")
            bad += 1
    if bad:
        return 1
    print("ok: 2 children forked by a launcher without tables: 2 x 8 MiB each, "
          + ("tables of their own regions, " if PRELOADED else "")
          + "every page read back")
    print("PASS: fork_fresh.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
