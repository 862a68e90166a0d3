#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""setup-oracle.py: what offline oracles would move for the DLRM reference
trainer's set-up (`mtier bench setup --pattern dlrm-reference`), with and
without the right to drop a page that has not been saved.

Belady's MIN, as `mtier bench setup` reports it, evicts the page used
farthest in the future and drops a dirty page with no further use for
free: it knows that the program will free that page unread. A tiering
runtime (or the kernel's swap) learns of a free only when it comes; until
then every dirty page it evicts must be written, or the program's data is
lost. This script replays the same page trace, now with its frees, and
prints three figures in table sizes (T) and MiB:

  min           Belady's MIN, dead pages dropped (the bench's oracle)
  min-keeping   MIN's choices (farthest next use), every dirty page evicted
                before its free written
  next-event    farthest next use or free, every dirty page evicted before
                its free written

The two keeping oracles know the future too; they are references, not
proven optima for the keeping cost model. Pages are simulated at
--pages per table (the figures scale with the table size).
"""
import argparse
import heapq
import sys

NEVER = float("inf")


def reference_trace(tables, n):
    """The set-up's (page, op) sequence, op in 'w', 'r', 'f' (free), as
    bench/min_traffic.cc's dlrm_reference_refs with the frees the trainer
    makes: B after .astype, the previous C when the new one is made, A
    after the table D is copied; then every D read once."""
    trace = []
    fresh = 0

    def take(pages):
        nonlocal fresh
        fresh += pages
        return fresh - pages

    ds, prev_c = [], None
    for _ in range(tables):
        a, b, c, d = take(n), take(2 * n), take(n), take(n)
        trace += [(a + k, "w") for k in range(n)]
        trace += [(b + k, "w") for k in range(2 * n)]
        for k in range(n):
            trace += [(b + 2 * k, "r"), (b + 2 * k + 1, "r"), (c + k, "w")]
        trace += [(b + k, "f") for k in range(2 * n)]
        if prev_c is not None:
            trace += [(prev_c + k, "f") for k in range(n)]
        for k in range(n):
            trace += [(c + k, "r"), (d + k, "w")]
        trace += [(a + k, "f") for k in range(n)]
        prev_c = c
        ds.append(d)
    for d in ds:
        trace += [(d + k, "r") for k in range(n)]
    return trace


def next_events(trace, count_frees):
    """For each use, the index of the page's next use (or, with
    count_frees, of its free when no use comes first); NEVER when none."""
    nxt = [NEVER] * len(trace)
    later = {}
    for i in range(len(trace) - 1, -1, -1):
        page, op = trace[i]
        if op == "f":
            if count_frees:
                later[page] = i
            else:
                later.pop(page, None)
            continue
        nxt[i] = later.get(page, NEVER)
        later[page] = i
    return nxt


def simulate(trace, capacity, keep_data, count_frees):
    """Pages written to and read from the store. Eviction takes the
    resident page whose next event is farthest (a max-heap with lazy
    deletion: an entry is live while it matches the page's current key)."""
    nxt = next_events(trace, count_frees)
    key, dirty, seen, heap = {}, set(), set(), []
    writes = reads = 0
    for i, (page, op) in enumerate(trace):
        if op == "f":
            key.pop(page, None)
            dirty.discard(page)
            continue
        if page not in key:
            if len(key) == capacity:
                while True:
                    neg, victim = heapq.heappop(heap)
                    if key.get(victim) == -neg:
                        break
                del key[victim]
                if victim in dirty and (keep_data or -neg != NEVER):
                    writes += 1
                dirty.discard(victim)
            if page in seen:
                reads += 1
            seen.add(page)
        if op == "w":
            dirty.add(page)
        key[page] = nxt[i]
        heapq.heappush(heap, (-nxt[i], page))
    return writes, reads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--count", type=int, default=8, help="tables (default 8)")
    ap.add_argument("--tables", type=float, default=4096,
                    help="MiB of all tables, for the MiB columns (default 4096)")
    ap.add_argument("--budget", type=int, default=25,
                    help="DRAM budget in %% of the tables (default 25)")
    ap.add_argument("--pages", type=int, default=256,
                    help="pages simulated per table (default 256)")
    args = ap.parse_args()
    if args.count < 1 or args.pages < 4 or not 1 <= args.budget <= 100 or args.tables <= 0:
        ap.error("--count >= 1, --pages >= 4, --budget 1-100 and --tables > 0")
    n = args.pages
    trace = reference_trace(args.count, n)
    capacity = max(1, args.count * n * args.budget // 100)
    t_mib = args.tables / args.count
    print(f"workload: DLRM reference set-up, {args.count} tables of {t_mib:.1f} MiB (T), "
          f"budget {args.budget}% of the tables; {n} pages simulated per table")
    print(f"{'oracle':<12} {'written_T':>9} {'read_T':>7} {'moved_T':>7} "
          f"{'written_MiB':>11} {'read_MiB':>9} {'vs_min':>6}")
    rows = [("min", False, False), ("min-keeping", True, False), ("next-event", True, True)]
    base = None
    for name, keep, frees in rows:
        w, r = simulate(trace, capacity, keep, frees)
        moved = (w + r) / n
        base = base or moved
        print(f"{name:<12} {w / n:9.3f} {r / n:7.3f} {moved:7.3f} "
              f"{w / n * t_mib:11.1f} {r / n * t_mib:9.1f} {moved / base:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
