#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-ddp.sh: steps/s of a two-rank DDP DLRM-style job (tests/trainer/
# ddp_train.py, gloo, env-launched ranks) whose ranks need different amounts
# of DRAM - rank 0 small tables, rank 1 large ones - under one DRAM budget
# for the job, given three ways: all in DRAM (no mtier); mtier with the
# budget split per rank (each rank half, each a job of its own to mtierd);
# mtier with the ranks one job to mtierd (MASTER_ADDR:MASTER_PORT), holding
# the same budget together, divided by need. Every table is managed
# (MTIER_MIN_BYTES=4M). Medians of --repeats runs; the workload printed beside.
set -eu

usage() {
  cat <<'USAGE'
usage: scripts/bench-ddp.sh [--repeats N] [--steps N] [--batch N] [--zipf S]
                            [--budget SIZE] [--tables0 SPEC] [--tables1 SPEC]
                            [--build DIR]

  --repeats N     runs per configuration, interleaved (default 3)
  --steps N       training steps per run (default 150)
  --batch N       samples per step (default 256)
  --zipf S        Zipf exponent of row popularity (default 1.05)
  --budget SIZE   the job's DRAM budget (default 64M): per rank, half each
  --tables0 SPEC  rank 0's tables, COUNTxROWSxDIM (default 3x16384x64: 12 MiB)
  --tables1 SPEC  rank 1's tables (default 3x131072x64: 96 MiB)
  --build DIR     the build tree (default: build/ of this checkout)

Needs root (userfaultfd for the runtime, mtierd's perf events).
Prints per configuration the median steps/s of the job (the slower rank's
training time: DDP steps together), each rank's training seconds and the
ratio to all-DRAM, and whether the losses and final weights equal the
all-DRAM run's.
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
repeats=3 steps=150 batch=256 zipf=1.05 budget=64M tables0=3x16384x64 tables1=3x131072x64 build="$top/build"
while [ $# -gt 0 ]; do
  case $1 in
    --repeats) repeats=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --zipf) zipf=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --tables0) tables0=$2; shift 2 ;;
    --tables1) tables1=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-ddp.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
PY=/usr/bin/python3
MTIER="$build/tools/mtier" MTIERD="$build/daemon/mtierd"
for f in "$MTIER" "$MTIERD"; do [ -x "$f" ] || { echo "bench-ddp.sh: $f is not built" >&2; exit 1; }; done
half=$("$PY" -c "
import sys; s=sys.argv[1]; u={'K':1<<10,'M':1<<20,'G':1<<30}
n=int(s[:-1])*u[s[-1].upper()] if s[-1].upper() in u else int(s); print(n // 2)" "$budget")
work=$(mktemp -d /var/tmp/bench-ddp.XXXXXX)
daemon_pid=
cleanup() { [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# run CONFIG N: one run of the job; its outputs in $work/CONFIG.N/.
run() {
  local cfg=$1 n=$2 dir="$work/$1.$2" port=$((29500 + RANDOM % 2000)) pids= r
  mkdir -p "$dir/store"
  for r in 0 1; do
    local tables=$tables0
    [ $r = 1 ] && tables=$tables1
    local env=(RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port)
    local cmd=("$PY" "$top/tests/trainer/ddp_train.py" --out-dir "$dir" --steps "$steps" --batch "$batch" --zipf "$zipf"
               --tables "$tables0" --tables-of "0=$tables0" --tables-of "1=$tables1")
    case $cfg in
      dram) env "${env[@]}" "${cmd[@]}" 2>"$dir/rank$r.err" & ;;
      # The same daemon either way: per rank, each rank a job of its own
      # (MTIER_JOB); per job, the ranks one job (MASTER_ADDR:MASTER_PORT).
      per-rank) env "${env[@]}" MTIER_JOB="bench-ddp-$n-rank$r" MTIER_DAEMON_SOCKET="$work/d.sock" \
                  MTIER_STORE_PATH="$dir/store" MTIER_MIN_BYTES=4M \
                  "$MTIER" run --dram "$half" -- "${cmd[@]}" 2>"$dir/rank$r.err" & ;;
      per-job) env "${env[@]}" MTIER_DAEMON_SOCKET="$work/d.sock" MTIER_STORE_PATH="$dir/store" \
                 MTIER_MIN_BYTES=4M \
                 "$MTIER" run --dram "$half" -- "${cmd[@]}" 2>"$dir/rank$r.err" & ;;
    esac
    pids="$pids $!"
  done
  local rc=0
  for p in $pids; do wait "$p" || rc=1; done
  [ $rc = 0 ] || { tail -n 5 "$dir"/rank*.err >&2; echo "bench-ddp.sh: a rank of $cfg run $n failed" >&2; exit 1; }
  # The per-job ranks must have been one job of the daemon's.
  if [ "$cfg" = per-job ] && ! grep -q "job torch:127.0.0.1:$port" "$work/mtierd.log"; then
    echo "bench-ddp.sh: mtierd did not see the ranks as one job" >&2; exit 1
  fi
}

echo "workload: 2 ranks (gloo, env-launched), rank 0 tables $tables0, rank 1 tables $tables1,"
echo "  $steps steps of batch $batch, Zipf $zipf, pooling 8; job DRAM budget $budget (per rank: $((half >> 20)) MiB each); repeats $repeats"
echo "metrics_address = none" >"$work/mtierd.conf"
"$MTIERD" --config "$work/mtierd.conf" --socket "$work/d.sock" >"$work/mtierd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do [ -S "$work/d.sock" ] && break; sleep 0.1; done
[ -S "$work/d.sock" ] || { cat "$work/mtierd.log" >&2; echo "bench-ddp.sh: mtierd did not start" >&2; exit 1; }
for n in $(seq "$repeats"); do
  for cfg in dram per-rank per-job; do
    run "$cfg" "$n"
    echo "  run $n $cfg: $(grep -ho 'trained [0-9]* steps in [0-9.]* s' "$work/$cfg.$n"/rank*.err | tr '\n' ' ')" >&2
  done
done
"$PY" - "$work" "$repeats" "$steps" <<'PY'
import glob, os, re, statistics, sys
work, repeats, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def secs(cfg, n, r):
    t = open(f"{work}/{cfg}.{n}/rank{r}.err").read()
    return float(re.search(r"trained \d+ steps in ([0-9.]+) s", t).group(1))
def outs(cfg, n):
    return [open(f"{work}/{cfg}.{n}/rank{r}.out").read() for r in (0, 1)]
base = None
print(f"{'config':10} {'job steps/s':>11} {'x dram':>7} {'rank0 s':>8} {'rank1 s':>8}  same results as dram")
for cfg in ("dram", "per-rank", "per-job"):
    job = statistics.median(steps / max(secs(cfg, n, 0), secs(cfg, n, 1)) for n in range(1, repeats + 1))
    r0 = statistics.median(secs(cfg, n, 0) for n in range(1, repeats + 1))
    r1 = statistics.median(secs(cfg, n, 1) for n in range(1, repeats + 1))
    if base is None:
        base = job
    same = all(outs(cfg, n) == outs("dram", 1) for n in range(1, repeats + 1))
    print(f"{cfg:10} {job:11.2f} {job / base:7.3f} {r0:8.2f} {r1:8.2f}  {'yes' if same else 'NO'}")
PY
