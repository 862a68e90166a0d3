#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench-hugepage.py: what mtier costs an array that fits in its DRAM
budget and that the program asked transparent huge pages for.

Run it with Debian's /usr/bin/python3 (python3-numpy); --help for options.

numpy asks for transparent huge pages (madvise MADV_HUGEPAGE) on every
array of 4 MiB or more; with the kernel's THP in "madvise" mode (Debian's
default) such an array gets 2 MiB pages: one fault per 2 MiB at first
touch, and a TLB entry covers 512 times as much for random reads. Under
mtier a table is 4 KiB pages of a shared-memory file, moved a page at a
time by userfaultfd, and the advice is ignored (mtier(7), Huge pages).

Each run starts three child processes in turn (the order alternates): one
plain, one under LD_PRELOAD=libmtier.so with a budget of twice the array
(nothing is ever evicted), and one plain with numpy's madvise turned off
(the kernel's 4 KiB pages: what mtier's pages are), each doing:

  first touch   np.empty(SIZE) then a.fill(1.0): every page written once
  random reads  a[idx].sum() over --reads random float64 indices

Printed: each run's times and the process's AnonHugePages (from
/proc/self/smaps_rollup: whether the plain run had huge pages), then the
medians and the ratios mtier / plain, against the goal of 1.1, and mtier /
plain with 4 KiB pages.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
GOAL = 1.1

CHILD = r"""
import json, sys, time
import numpy as np
size, reads = int(sys.argv[1]), int(sys.argv[2])
if sys.argv[3] == "4k":  # numpy's madvise off: the kernel's 4 KiB pages
    np.core.multiarray._set_madvise_hugepage(False)
t0 = time.perf_counter()
a = np.empty(size // 8, dtype=np.float64)
a.fill(1.0)
t1 = time.perf_counter()
rng = np.random.default_rng(7)
idx = rng.integers(0, a.size, reads)
t2 = time.perf_counter()
s = float(a[idx].sum())
t3 = time.perf_counter()
huge = 0
with open("/proc/self/smaps_rollup") as f:
    for line in f:
        if line.startswith("AnonHugePages:") or line.startswith("ShmemPmdMapped:"):
            huge += int(line.split()[1]) * 1024
print(json.dumps({"touch_s": t1 - t0, "read_s": t3 - t2, "sum": s, "huge_bytes": huge}))
"""


def find_lib(given):
    if given:
        return os.path.abspath(given)
    for d in ("build/lib/.libs", "lib/.libs", "build/.libs", ".libs"):
        p = os.path.join(TOP, d, "libmtier.so")
        if os.path.exists(p):
            return p
    sys.exit("bench-hugepage: libmtier.so not found; build first or give --lib")


def run_one(lib, size, reads, name):
    env = dict(os.environ)
    if name == "mtier":
        env["LD_PRELOAD"] = lib
        env["MTIER_DRAM_BYTES"] = str(2 * size)
    else:
        env.pop("LD_PRELOAD", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(size), str(reads),
                          "4k" if name == "plain-4k" else "thp"], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1G", help="the array's bytes (K/M/G suffix; default 1G)")
    ap.add_argument("--reads", type=int, default=8_000_000, help="random reads (default 8000000)")
    ap.add_argument("--runs", type=int, default=5, help="runs, medians printed (default 5)")
    ap.add_argument("--lib", help="libmtier.so (default: the build tree's)")
    args = ap.parse_args()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = args.size.upper()
    size = int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)
    lib = find_lib(args.lib)
    thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    print(f"workload: one float64 numpy array of {size >> 20} MiB (MADV_HUGEPAGE by numpy), "
          f"written once, then {args.reads} random reads; mtier's budget {2 * size >> 20} MiB; "
          f"THP: {thp}; {args.runs} runs")
    names = ("plain", "mtier", "plain-4k")
    res = {n: [] for n in names}
    for r in range(args.runs):
        order = names if r % 2 == 0 else tuple(reversed(names))
        for name in order:
            x = run_one(lib, size, args.reads, name)
            res[name].append(x)
            print(f"run {r + 1} {name:8s} first touch {x['touch_s']:.3f} s  random reads "
                  f"{x['read_s']:.3f} s  huge pages {x['huge_bytes'] >> 20} MiB", flush=True)
        if len({res[n][-1]["sum"] for n in names}) != 1:
            sys.exit("bench-hugepage: the sums differ")
    print(f"{'':14s}{'plain':>10s}{'mtier':>10s}{'ratio':>8s}  goal <= {GOAL}"
          f"{'plain 4K':>12s}{'mtier/4K':>10s}")
    for key, label in (("touch_s", "first touch"), ("read_s", "random reads")):
        p, m, k = (statistics.median(x[key] for x in res[n]) for n in names)
        print(f"{label:14s}{p:9.3f}s{m:9.3f}s{m / p:8.2f}  {'met' if m / p <= GOAL else 'missed':11s}"
              f"{k:11.3f}s{m / k:10.2f}")


if __name__ == "__main__":
    main()
