#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-daemon.sh: mtierd's policies against the engine's local CLOCK on the
# benchmark suite's replay: hit ratio and lookups/s at one DRAM budget,
# medians of N runs, beside the offline oracle (MIN, LRU), the winner, and
# the daemon's sampling overhead at a budget where everything fits. Run with
# --help for the options.
set -eu

usage() {
  cat <<'EOF'
usage: scripts/bench-daemon.sh [options]

Generates one trace of a workload preset and replays it with
`mtier bench suite --configs dram,mtier` (each run in its own process and
memory cgroup, REPEATS runs interleaved, medians reported) once per
contender:

  clock        no daemon: each process's engine runs its local CLOCK
  POLICY       an mtierd running POLICY (default: lfu lru hot-promote static)

at BUDGET % of the table bytes, and prints per contender the hit ratio, the
lookups/s and their ratios to CLOCK, beside Belady's MIN and LRU from the
suite's oracle, then which contender won and whether the goals hold (the best
policy beats CLOCK in hit ratio and lookups/s; its hit ratio within 10% of
MIN). Then the overhead: the same replay at FIT % (default 200: every page
fits, nothing is evicted, so the daemon's sampling at its defaults and its
ticks are all it adds; goal: within 3%) with and without the daemon, and at
100% (the watermark evictions start at the high mark, 98%: there the policy's hints also
change what is evicted, so the ratio is the policy's effect too).

  --preset NAME       workload preset (default meta2022)
  --table-bytes SIZE  tables scaled to about SIZE (default 256M)
  --batches N         batches in the trace (default 100)
  --budget PCT        DRAM budget in % of the table bytes (default 25)
  --repeats N         runs per contender (default 3)
  --policies "LIST"   the daemon's policies to try (default "lfu lru hot-promote static")
  --fit PCT           the budget for the sampling overhead (default 200)
  --overhead-only     measure only the overhead (no policy comparison)
  --build DIR         the build tree with tools/mtier and daemon/mtierd
                      (default: the directory this script's tree was built in, ./)
  -h, --help          this text

Needs root (the suite's memory cgroups; userfaultfd; perf on the replayer).
EOF
}

preset=meta2022 table_bytes=256M batches=100 budget=25 repeats=3
policies="lfu lru hot-promote static" build=. fit=200 compare=1
while [ $# -gt 0 ]; do
  case $1 in
    --preset) preset=$2; shift 2 ;;
    --table-bytes) table_bytes=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --fit) fit=$2; shift 2 ;;
    --overhead-only) compare=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-daemon.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
MTIER="$build/tools/mtier" MTIERD="$build/daemon/mtierd"
for p in "$MTIER" "$MTIERD"; do
  [ -x "$p" ] || { echo "bench-daemon.sh: $p is not built (--build DIR)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench-daemon.sh: needs root" >&2; exit 1; }
PYTHON=/usr/bin/python3
work=$(mktemp -d /var/tmp/bench-daemon.XXXXXX)
daemon=
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM

echo "workload: $preset scaled to $table_bytes, $batches batches; budget $budget%; $repeats runs each" >&2
"$MTIER" bench trace --preset "$preset" --table-bytes "$table_bytes" --batches "$batches" \
  -o "$work/trace" >"$work/trace.txt"

# run NAME POLICY BUDGET: the suite with the daemon running POLICY ("" = none).
run() {
  name=$1 policy=$2 pct=$3
  sock="$work/$name.sock"
  if [ -n "$policy" ]; then
    "$MTIERD" --config "$work/none.conf" --socket "$sock" --policy "$policy" >"$work/$name.mtierd.log" 2>&1 &
    daemon=$!
    for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  else
    sock=none
  fi
  echo "running $name at $pct% ..." >&2
  MTIER_DAEMON_SOCKET=$sock "$MTIER" bench suite --trace "$work/trace" --configs dram,mtier \
    --budgets "$pct" --repeats "$repeats" --dir "$work" --json -q >"$work/$name.$pct.json"
  if [ -n "$policy" ]; then
    kill "$daemon"; wait "$daemon" || true; daemon=
    grep -q "registered" "$work/$name.mtierd.log" ||
      { echo "bench-daemon.sh: the replayer never registered with mtierd ($name)" >&2; exit 1; }
  fi
}
: >"$work/none.conf"

if [ "$compare" = 1 ]; then
  run clock "" "$budget"
  for p in $policies; do run "$p" "$p" "$budget"; done
fi
run clock-fit "" "$fit"
run daemon-fit lfu "$fit"
run clock-100 "" 100
run daemon-100 lfu 100

cat "$work/trace.txt" | sed -n '1,3p'
[ "$compare" = 1 ] || policies=
"$PYTHON" - "$work" "$budget" "$fit" "$compare" clock $policies <<'PY'
import json, sys
work, budget, fit, compare, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]
def cell(name, pct):
    d = json.load(open(f"{work}/{name}.{pct}.json"))
    b = d["budgets"][0]
    m = [c for c in b["configs"] if c["config"] == "mtier"][0]
    return d, b, m
d, b, _ = cell("clock" if compare else "clock-fit", budget if compare else fit)
print(f"machine: {d['machine']}")
print(f"workload: {d['workload']}; {d['lookups']} lookups, {d['page_references']} page references")
if compare:
  print(f"budget {budget}% = {b['bytes'] >> 20} MiB; oracle hit ratio: MIN {b['oracle']['min_hit_ratio']:.4f}, "
        f"LRU {b['oracle']['lru_hit_ratio']:.4f}")
  base = cell("clock", budget)[2]
  print(f"{'contender':<14}{'hit ratio':>10}{'misses/clock':>14}{'lookups/s':>12}{'/clock':>8}{'hit/MIN':>9}")
  rows = []
  for n in names:
      _, _, m = cell(n, budget)
      hr, lps = m["hit_ratio"], m["lookups_per_second"]
      miss_ratio = (1 - hr) / (1 - base["hit_ratio"]) if base["hit_ratio"] < 1 else float("nan")
      rows.append((n, hr, lps))
      print(f"{n:<14}{hr:>10.4f}{miss_ratio:>14.3f}{lps:>12.0f}{lps / base['lookups_per_second']:>8.3f}"
            f"{hr / b['oracle']['min_hit_ratio']:>9.3f}")
  best = max(rows[1:], key=lambda r: (r[1], r[2])) if len(rows) > 1 else None
  if best:
      beats = best[1] > base["hit_ratio"] and best[2] > base["lookups_per_second"]
      near = best[1] >= 0.9 * b["oracle"]["min_hit_ratio"]
      print(f"best policy: {best[0]}")
      print(f"goal: best policy beats CLOCK in hit ratio and lookups/s: {'PASS' if beats else 'MISS'}")
      print(f"goal: best policy's hit ratio within 10% of MIN: {'PASS' if near else 'MISS'}")
for pct, what in ((fit, "everything fits: the sampling and the ticks"),
                  ("100", "watermark evictions: the policy's hints too")):
    _, _, off = cell("clock-100" if pct == "100" else "clock-fit", pct)
    _, _, on = cell("daemon-100" if pct == "100" else "daemon-fit", pct)
    r = on["lookups_per_second"] / off["lookups_per_second"]
    goal = f" (goal >= 0.97: {'PASS' if r >= 0.97 else 'MISS'})" if pct == fit else ""
    print(f"daemon at {pct}% ({what}): {on['lookups_per_second']:.0f} lookups/s with mtierd "
          f"(lfu, page-fault sampling) vs {off['lookups_per_second']:.0f} without: {r:.3f}; "
          f"hit ratio {on['hit_ratio']:.4f} vs {off['hit_ratio']:.4f}{goal}")
PY
