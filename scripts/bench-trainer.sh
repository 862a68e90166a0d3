#!/bin/bash
# bench-trainer.sh: steps/s of the DLRM test trainer (tests/trainer/dlrm_train.py)
# all in DRAM without mtier and under mtier at several DRAM budgets, on the
# same generated trace; medians of N runs and ratios to the baseline, printed
# beside the workload. Run with --help for the options.
set -eu

usage() {
  cat <<'EOF'
usage: scripts/bench-trainer.sh [options] [-- trainer options...]

Runs tests/trainer/dlrm_train.py (Debian's /usr/bin/python3 + python3-torch)
in four configurations, REPEATS times each, interleaved (run 1 of every
configuration, then run 2, ...), all on the same generated trace (same
workload options, same seed):

  all tables in DRAM, no mtier (the baseline)
  LD_PRELOAD=libmtier.so, MTIER_DRAM_BYTES = 2x the table bytes (overhead goal:
      at most 3% slower than the baseline)
  LD_PRELOAD=libmtier.so, MTIER_DRAM_BYTES = 50% of the table bytes
  LD_PRELOAD=libmtier.so, MTIER_DRAM_BYTES = 25% of the table bytes

and prints, per configuration, the median steps/s (the trainer's own figure:
forward + backward + SGD only, not init and not the workload generator),
its spread across the runs and its ratio to the baseline's median, the same
for the second half of the steps (after the warm-up) and for 1 / the median
step time, the median init time, and whether every step's loss and the
final weights' hash equal the baseline's. The workload (tables,
rows, dims, pooling, Zipf skew, batch, steps, seed) is printed with them.

options:
  --lib PATH          libmtier.so (default: $abs_top_builddir/lib/.libs, else
                      build/lib/.libs, lib/.libs or ../build/lib/.libs of
                      this checkout, the first that exists)
  --repeats N         runs per configuration (default 3)
  --preset NAME       trainer preset: small, ci, cgroup, long (default ci)
  --tables SPEC       tables, COUNTxROWSxDIM[,...] (overrides the preset's)
  --table-bytes SIZE  scale the tables to about SIZE bytes in all (e.g. 2G)
  --steps N           training steps per run (default 200)
  --batch N           samples per step (default: the preset's)
  --pooling MEAN      mean lookups per bag (default 16)
  --zipf S[,S...]     Zipf exponents cycled over the tables (trainer default)
  --seed N            workload and init seed (default 42)
  --threads N         torch threads (default 1)
  --budgets LIST      mtier budgets in % of the table bytes (default 200,50,25)
  --min-bytes SIZE    MTIER_MIN_BYTES (default: half the smallest table)
  --store DIR         directory for the file store (default /var/tmp; a
                      fresh subdirectory per run, removed afterwards)
  --python PATH       the Python with torch (default /usr/bin/python3)
  --keep DIR          keep every run's stdout and stderr in DIR
  -h, --help          this text
Anything after -- goes to the trainer unchanged. MTIER_* variables already in
the environment (other than those set here) apply to the mtier runs and are
printed with the results.
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
TRAINER="$here/tests/trainer/dlrm_train.py"
PYTHON=/usr/bin/python3
LIB=
REPEATS=3
PRESET=ci
STEPS=200
BUDGETS=200,50,25
STORE=/var/tmp
MIN_BYTES=
KEEP=
TARGS=()
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --lib) LIB=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --budgets) BUDGETS=$2; shift 2 ;;
    --min-bytes) MIN_BYTES=$2; shift 2 ;;
    --store) STORE=$2; shift 2 ;;
    --python) PYTHON=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --tables|--table-bytes|--batch|--pooling|--zipf|--seed|--threads)
      TARGS+=("$1" "$2"); shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "bench-trainer.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$LIB" ]; then
  for c in ${abs_top_builddir:+"$abs_top_builddir/lib/.libs/libmtier.so"} \
           "$here/build/lib/.libs/libmtier.so" "$here/lib/.libs/libmtier.so" \
           "$here/../build/lib/.libs/libmtier.so"; do
    if [ -f "$c" ]; then LIB=$c; break; fi
  done
  [ -n "$LIB" ] || { echo "bench-trainer.sh: no built libmtier.so found; give --lib" >&2; exit 1; }
fi
[ -f "$LIB" ] || { echo "bench-trainer.sh: $LIB: no such file" >&2; exit 1; }
LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
"$PYTHON" -c 'import torch, numpy' 2>/dev/null ||
  { echo "bench-trainer.sh: $PYTHON cannot import torch and numpy" >&2; exit 1; }

ARGS=(--preset "$PRESET" --steps "$STEPS" "${TARGS[@]}" "${EXTRA[@]}")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-trainer.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

"$PYTHON" "$TRAINER" "${ARGS[@]}" --describe 2>"$WORK/describe" ||
  { cat "$WORK/describe" >&2; exit 1; }
workload=$(sed -n 's/^# workload: //p' "$WORK/describe")
table_bytes=$(sed -n 's/^# table_bytes //p' "$WORK/describe")
smallest=$(sed -n 's/^# tables //p' "$WORK/describe" | tr ' ' '\n' | sort -n | head -n 1)
[ -n "$MIN_BYTES" ] || MIN_BYTES=$(( smallest / 2 ))

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

names=(base)
labels=("all tables in DRAM, no mtier")
budgets=(0)
IFS=, read -r -a pcts <<<"$BUDGETS"
for p in "${pcts[@]}"; do
  names+=("b$p")
  b=$(( table_bytes * p / 100 / 4096 * 4096 ))
  budgets+=("$b")
  if [ "$p" -ge 100 ]; then
    labels+=("mtier, budget $(awk -v p="$p" 'BEGIN { printf "%gx", p / 100 }') tables ($(mib "$b"))")
  else
    labels+=("mtier, budget $p% ($(mib "$b"))")
  fi
done

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
mtier_env=$(env | grep '^MTIER_' | grep -Ev '^MTIER_(DRAM_BYTES|MIN_BYTES|STORE_PATH)=' | tr '\n' ' ' || true)
echo "bench-trainer: $REPEATS runs per configuration, interleaved; started $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  workload: $workload"
echo "  trainer: $TRAINER ${ARGS[*]}"
echo "  python: $PYTHON, torch $("$PYTHON" -c 'import torch; print(torch.__version__)'), BLAS $blas"
echo "  library: $LIB; MTIER_MIN_BYTES=$MIN_BYTES ($(mib "$MIN_BYTES")); file store under $STORE ($(df -PT "$STORE" | awk 'NR == 2 { print $2 }')); other MTIER_* in effect: ${mtier_env:-none}"
echo "  machine: $(nproc) CPUs, $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"

for r in $(seq 1 "$REPEATS"); do
  for i in "${!names[@]}"; do
    n=${names[$i]}
    out="$WORK/$n.$r.out" err="$WORK/$n.$r.err"
    if [ "$n" = base ]; then
      "$PYTHON" "$TRAINER" "${ARGS[@]}" >"$out" 2>"$err" || { cat "$err" >&2; echo "run failed: ${labels[$i]}" >&2; exit 1; }
    else
      store=$(mktemp -d "$STORE/bench-trainer-store.XXXXXX")
      rc=0
      env LD_PRELOAD="$LIB" MTIER_DRAM_BYTES="${budgets[$i]}" MTIER_MIN_BYTES="$MIN_BYTES" MTIER_STATS=1 \
        MTIER_STORE_PATH="$store" "$PYTHON" "$TRAINER" "${ARGS[@]}" >"$out" 2>"$err" || rc=$?
      rm -rf "$store"
      [ "$rc" -eq 0 ] || { cat "$err" >&2; echo "run failed (status $rc): ${labels[$i]}" >&2; exit 1; }
    fi
    printf '  run %d/%d  %-44s %9s steps/s\n' "$r" "$REPEATS" "${labels[$i]}" \
      "$(sed -n 's/^# steps_per_s //p' "$err")"
  done
done

vals() { for r in $(seq 1 "$REPEATS"); do sed -n "s/^# $2 \([0-9.]*\).*/\1/p" "$WORK/$1.$r.err"; done; }
med() { vals "$1" "$2" | median; }
# (max - min) / median of a figure across the runs, in %
spread() { vals "$1" "$2" | sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f%%", (m > 0 ? 100 * (v[NR] - v[1]) / m : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
# steps/s from the median step time (robust to other tenants' bursts)
mstep() { awk -v ms="$(med "$1" median_step_ms)" 'BEGIN { printf "%.2f", (ms > 0 ? 1000 / ms : 0) }'; }
base_sps=$(med base steps_per_s)
base_steady=$(med base steady_steps_per_s)
base_mstep=$(mstep base)
echo
echo "results (medians of $REPEATS runs; workload above; same seed, same trace):"
printf '  %-44s %8s %6s %6s %9s %6s %9s %6s %7s  %s\n' configuration steps/s spread ratio steady/s ratio med-step ratio init_s "same losses+weights"
for i in "${!names[@]}"; do
  n=${names[$i]}
  sps=$(med "$n" steps_per_s)
  steady=$(med "$n" steady_steps_per_s)
  ms=$(mstep "$n")
  init=$(med "$n" init_s)
  same=yes
  for r in $(seq 1 "$REPEATS"); do cmp -s "$WORK/base.1.out" "$WORK/$n.$r.out" || same=NO; done
  printf '  %-44s %8.2f %6s %6s %9.2f %6s %9.2f %6s %7.1f  %s\n' "${labels[$i]}" "$sps" \
    "$(spread "$n" steps_per_s)" "$(ratio "$sps" "$base_sps")" "$steady" \
    "$(ratio "$steady" "$base_steady")" "$ms" "$(ratio "$ms" "$base_mstep")" "$init" "$same"
done
echo "  steps/s: steps / time in forward + backward + SGD (not init, not the id generator);"
echo "  spread: (max - min) / median of steps/s across the runs: differences smaller than the"
echo "  baseline's spread are noise; steady: the second half of the steps; med-step: 1 / the median"
echo "  step time (robust to bursts from other work on the machine); ratio: to the baseline's figure"
echo "mtier's own counts (MTIER_STATS=1 summary at exit, run 1, init and training together):"
for i in "${!names[@]}"; do
  [ "$i" -gt 0 ] || continue
  summary=$(grep -E '^(<[0-7]>)?mtier: ' "$WORK/${names[$i]}.1.err" | sed -E 's/^(<[0-7]>)?mtier: (summary: )?//' | tr '\n' ';' || true)
  printf '  %-44s %s\n' "${labels[$i]}" "$(
    for k in 'peak resident [0-9.]* MiB' 'faults missing [0-9]*' 'fetches [0-9]*' 'evictions [0-9]*' 'written back [0-9]*'; do
      printf '%s' "$summary" | grep -Eo "$k" | head -n 1
    done | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
done
echo "  (the DLRM-style init's temporaries, up to the tables so far + 4x a table, also count against"
echo "  the budget: a budget above the table bytes can still evict during init)"
for i in "${!names[@]}"; do
  p=${pcts[$((i - 1))]:-0}
  if [ "$i" -gt 0 ] && [ "$p" -ge 100 ]; then
    r1=$(ratio "$(med "${names[$i]}" steps_per_s)" "$base_sps")
    r2=$(ratio "$(mstep "${names[$i]}")" "$base_mstep")
    verdict=$(awk -v r="$r1" 'BEGIN { print (r >= 0.97) ? "PASS" : "MISS" }')
    echo "goal: ${labels[$i]} at most 3% slower than all-DRAM: steps/s ratio $r1 -> $verdict" \
      "(med-step ratio $r2; baseline spread $(spread base steps_per_s) across $REPEATS runs)"
  fi
done
if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP" && cp "$WORK"/*.out "$WORK"/*.err "$KEEP"/ && echo "runs kept in $KEEP"
fi
