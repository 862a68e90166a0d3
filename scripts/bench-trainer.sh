#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-trainer.sh: steps/s and set-up time of the DLRM test trainer
# (tests/trainer/dlrm_train.py) all in DRAM without mtier, under the kernel's
# swap in a memory cgroup (`mtier bench swap-run`) and under mtier with 0..K
# steps of lookahead, at several DRAM budgets, on the same generated trace;
# medians of N runs and ratios to the baseline and to swap, printed beside
# the workload. Run with --help for the options.
set -eu

usage() {
  cat <<'EOF'
usage: scripts/bench-trainer.sh [options] [-- trainer options...]

Runs tests/trainer/dlrm_train.py (Debian's /usr/bin/python3 + python3-torch)
in these configurations, REPEATS times each, interleaved (run 1 of every
configuration, then run 2, ...), all on the same generated trace (same
workload options, same seed); B is each of --budgets, in % of the table bytes:

  dram             all tables in DRAM, no mtier (the baseline)
  mtier B% K=1     for each B >= 100: LD_PRELOAD=libmtier.so,
                   MTIER_DRAM_BYTES = B% of the table bytes, MTIER_LOOKAHEAD=1
                   (the integration's overhead; goal: at most 3% slower than
                   the baseline; scripts/bench-overhead.py measures it inside
                   one process, free of the drift between runs)
  swap B%          for each B < 100: no mtier, the kernel's swap: run by
                   `mtier bench swap-run` in a memory cgroup whose limit is
                   B% of the table bytes + the trainer's non-table memory
                   (--swap-slack), swapping to a swap file of its own in the
                   store directory (same disk as mtier's store); needs root, a
                   memory cgroup and swap, else "skipped" with the reason
  mtier B% K=k     for each B < 100 and each k of --lookahead: LD_PRELOAD=
                   libmtier.so, MTIER_DRAM_BYTES = B% of the table bytes,
                   MTIER_LOOKAHEAD=k

Every mtier run also has MTIER_MIN_BYTES, MTIER_STATS=1, a fresh store
directory (MTIER_STORE_PATH) and PYTHONPATH=<checkout>/python (before any
PYTHONPATH already set), where mtier's Python package reads MTIER_LOOKAHEAD.

Prints one table, a row per configuration: the median steps/s (the
trainer's own figure: forward + backward + SGD only, not init and not the
workload generator), its spread across the runs and its ratio to the
baseline's median, the same for the second half of the steps (after the
warm-up) and for 1 / the median step time, the median set-up time (the
trainer's init_s: model build and table init, before the first step),
steps/s over swap's at the same budget, the device-bound time per step
(the pages the run moved during its steps over the device's QD32 random
4 KiB IOPS, measured once before the runs by `mtier bench device`) with the
mean step time over it, and whether every step's loss and the final
weights' hash equal the baseline's. The workload (tables, rows,
dims, pooling, Zipf skew, batch, steps, seed) is printed with them.

options:
  --lib PATH          libmtier.so (default: $abs_top_builddir/lib/.libs, else
                      build/lib/.libs, lib/.libs or ../build/lib/.libs of
                      this checkout, the first that exists)
  --mtier PATH        the mtier command, for the swap runs (default: tools/mtier
                      of the build of --lib, else mtier on PATH)
  --repeats N         runs per configuration (default 3)
  --preset NAME       trainer preset: small, ci, cgroup, long (default ci)
  --tables SPEC       tables, COUNTxROWSxDIM[,...] (overrides the preset's)
  --table-bytes SIZE  scale the tables to about SIZE bytes in all (e.g. 2G)
  --steps N           training steps per run (default 200)
  --batch N           samples per step (default: the preset's)
  --pooling MEAN      mean lookups per bag (default 16)
  --workers N         feed the steps through a torch DataLoader with N worker
                      processes, as trainers do (default 1; 0: the trainer's
                      plain loop, no DataLoader, which leaves the lookahead
                      only the embedding ops' own ids)
  --zipf S[,S...]     Zipf exponents cycled over the tables (trainer default)
  --seed N            workload and init seed (default 42)
  --threads N         torch threads (default 1)
  --budgets LIST      DRAM budgets in % of the table bytes (default 200,50,25)
  --lookahead LIST    MTIER_LOOKAHEAD values of the mtier runs at budgets below
                      100% (default 0,1,2; empty: none); budgets >= 100% run
                      with 1
  --swap-slack SIZE   the swap cgroup's limit beyond the budget (K, M, G
                      suffixes; default: measured, the first baseline run's
                      anonymous RSS after init minus the table bytes)
  --min-bytes SIZE    MTIER_MIN_BYTES (default: half the smallest table)
  --store DIR         directory for the file store (default /var/tmp; a
                      fresh subdirectory per run, removed afterwards) and
                      the swap runs' swap file (one per run, removed)
  --python PATH       the Python with torch (default /usr/bin/python3)
  --checkpoint        every run saves a checkpoint (torch.save of the state
                      dict to a file in --store's directory, fsync'd) half-way
                      through its steps, trains 10 more steps, loads it back
                      (torch.load + load_state_dict) and replays the saved
                      step's first 3 steps, whose losses must be the same;
                      a second table gives the save and load seconds, their
                      speed over all-DRAM's and swap's, and steps/s in the 10
                      steps after the save (and after the load) over the 10
                      before it. With --steps below 40 it takes 40
  --checkpoint-at STEP  with --checkpoint: save before this step instead of
                      half-way (the trainer wants it >= 10 and 10 steps
                      after it before the run's end). Why: the steps before
                      a save are only a steady state once DRAM is full; the
                      table's ev-bef column says whether it was
  --keep DIR          keep every run's stdout and stderr in DIR
  -h, --help          this text
Anything after -- goes to the trainer unchanged. MTIER_* variables already in
the environment (other than those set here; MTIER_LOOKAHEAD is unset) apply
to the mtier runs and are printed with the results.
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
TRAINER="$here/tests/trainer/dlrm_train.py"
PYTHON=/usr/bin/python3
LIB=
MTIER=
REPEATS=3
PRESET=ci
WORKERS=1
STEPS=200
BUDGETS=200,50,25
LOOKAHEAD=0,1,2
SWAP_SLACK=
STORE=/var/tmp
MIN_BYTES=
KEEP=
CHECKPOINT=
CKPT_AT=
TARGS=()
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --lib) LIB=$2; shift 2 ;;
    --mtier) MTIER=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --budgets) BUDGETS=$2; shift 2 ;;
    --lookahead) LOOKAHEAD=$2; shift 2 ;;
    --swap-slack) SWAP_SLACK=$2; shift 2 ;;
    --min-bytes) MIN_BYTES=$2; shift 2 ;;
    --store) STORE=$2; shift 2 ;;
    --python) PYTHON=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --checkpoint) CHECKPOINT=1; shift ;;
    --checkpoint-at) CKPT_AT=$2; shift 2 ;;
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
if [ -z "$MTIER" ]; then
  MTIER=$(dirname "$LIB")/../../tools/mtier
  [ -x "$MTIER" ] || MTIER=$(command -v mtier || true)
fi
for v in ${BUDGETS//,/ } ${LOOKAHEAD//,/ }; do
  case $v in
    ''|*[!0-9]*) echo "bench-trainer.sh: --budgets and --lookahead want whole numbers: '$v'" >&2; exit 2 ;;
  esac
done
if [ -n "$SWAP_SLACK" ]; then
  SWAP_SLACK=$(numfmt --from=iec "$SWAP_SLACK" 2>/dev/null) ||
    { echo "bench-trainer.sh: --swap-slack: not a size" >&2; exit 2; }
fi
unset MTIER_LOOKAHEAD
"$PYTHON" -c 'import torch, numpy' 2>/dev/null ||
  { echo "bench-trainer.sh: $PYTHON cannot import torch and numpy" >&2; exit 1; }

case $WORKERS in
  ''|*[!0-9]*) echo "bench-trainer.sh: --workers wants a whole number: '$WORKERS'" >&2; exit 2 ;;
esac
LOADER=()
[ "$WORKERS" -gt 0 ] && LOADER=(--loader --workers "$WORKERS")
CKPT=()
if [ -n "$CHECKPOINT" ]; then
  [ "$STEPS" -ge 40 ] || STEPS=40
  CKPT=(--checkpoint "$STORE")
  [ -n "$CKPT_AT" ] && CKPT+=(--checkpoint-at "$CKPT_AT")
elif [ -n "$CKPT_AT" ]; then
  echo "bench-trainer.sh: --checkpoint-at wants --checkpoint" >&2
  exit 2
fi
ARGS=(--preset "$PRESET" --steps "$STEPS" "${LOADER[@]}" "${CKPT[@]}" "${TARGS[@]}" "${EXTRA[@]}")
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


# The configurations, in the order they run and are printed: name, kind
# (base, swap or mtier), budget in % and in bytes, lookahead K, label.
names=() kinds=() pcts=() budgets=() ks=() labels=()
config() { names+=("$1"); kinds+=("$2"); pcts+=("$3"); budgets+=("$4"); ks+=("$5"); labels+=("$6"); }
config base base 0 0 - "dram (all tables in DRAM)"
IFS=, read -r -a budget_list <<<"$BUDGETS"
IFS=, read -r -a lookahead_list <<<"$LOOKAHEAD"
for p in "${budget_list[@]}"; do
  b=$(( table_bytes * p / 100 / 4096 * 4096 ))
  if [ "$p" -ge 100 ]; then
    config "m${p}k1" mtier "$p" "$b" 1 "mtier $p% K=1 ($(mib "$b"))"
    continue
  fi
  config "s$p" swap "$p" "$b" - "swap $p% ($(mib "$b"))"
  for k in "${lookahead_list[@]}"; do
    config "m${p}k$k" mtier "$p" "$b" "$k" "mtier $p% K=$k ($(mib "$b"))"
  done
done

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
mtier_env=$(env | grep '^MTIER_' | grep -Ev '^MTIER_(DRAM_BYTES|MIN_BYTES|STORE_PATH)=' | tr '\n' ' ' || true)
echo "bench-trainer: $REPEATS runs per configuration, interleaved; started $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  workload: $workload"
echo "  trainer: $TRAINER ${ARGS[*]}"
echo "  python: $PYTHON, torch $("$PYTHON" -c 'import torch; print(torch.__version__)'), BLAS $blas"
echo "  library: $LIB; MTIER_MIN_BYTES=$MIN_BYTES ($(mib "$MIN_BYTES")); file store under $STORE ($(df -PT "$STORE" | awk 'NR == 2 { print $2 }')); other MTIER_* in effect: ${mtier_env:-none}"
echo "  machine: $(nproc) CPUs, $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"

# The swap runs: why they cannot run here (from the first one), why a
# configuration's runs stopped, and the cgroup's allowance beyond the budget.
swap_skip=
[ -n "$MTIER" ] && [ -x "$MTIER" ] || swap_skip="no mtier command for \`mtier bench swap-run\` (give --mtier)"
declare -A failed=()
slack_how="given by --swap-slack"
hwm=0
vmstat_swap() { awk '$1 == "pswpin" { i = $2 } $1 == "pswpout" { o = $2 } END { print i + 0, o + 0 }' /proc/vmstat; }

# run_swap I OUT ERR: one swap run; 1 (with swap_skip or failed[] set) when
# it did not complete.
run_swap() {
  local n=${names[$1]} limit=$(( budgets[$1] + SWAP_SLACK )) rc=0 before
  # Swap for all the trainer's peak beyond the limit (the init's temporaries
  # too), a quarter more, and 64 MiB.
  local swap=$(( (hwm > limit ? hwm - limit : 0) * 5 / 4 + (64 << 20) ))
  before=$(vmstat_swap)
  "$MTIER" bench swap-run --limit "$limit" --dir "$STORE" --swap-bytes "$swap" -- \
    "$PYTHON" "$TRAINER" "${ARGS[@]}" >"$2" 2>"$3" || rc=$?
  # pages swapped in and out meanwhile, machine-wide
  paste -d' ' <(echo "$before") <(vmstat_swap) | awk '{ print $3 - $1, $4 - $2 }' >"$2.vmstat"
  case $rc in
    0) return 0 ;;
    77) swap_skip=$(sed -n 's/^mtier bench swap-run: cannot run here: //p' "$3" | head -n 1)
        swap_skip=${swap_skip:-$(tail -n 1 "$3")} ;;
    *) failed[$n]="status $rc: $(grep -E '^mtier bench swap-run: |Error|Killed' "$3" | tail -n 1)"
       tail -n 5 "$3" >&2 ;;
  esac
  return 1
}

# The device, once, before the runs: its QD32 IOPS turn each run's pages
# moved into a device-bound time.
dev_read_iops= dev_write_iops= dev_line="not measured (no mtier command)"
if [ -n "$MTIER" ] && [ -x "$MTIER" ]; then
  if dev_json=$("$MTIER" bench device --dir "$STORE" --json 2>"$WORK/device.err"); then
    dev_read_iops=$(printf '%s' "$dev_json" | sed -n 's/.*"reads_per_second":\([0-9.e+]*\).*/\1/p')
    dev_write_iops=$(printf '%s' "$dev_json" | sed -n 's/.*"writes_per_second":\([0-9.e+]*\).*/\1/p')
    dev_line="QD32 random 4 KiB: read $dev_read_iops IOPS, write $dev_write_iops IOPS (\`mtier bench device --dir $STORE\`)"
  else
    dev_line="not measured: $(tail -n 1 "$WORK/device.err")"
  fi
fi
echo "  device: $dev_line"

for r in $(seq 1 "$REPEATS"); do
  for i in "${!names[@]}"; do
    n=${names[$i]}
    out="$WORK/$n.$r.out" err="$WORK/$n.$r.err"
    case ${kinds[$i]} in
      base)
        "$PYTHON" "$TRAINER" "${ARGS[@]}" >"$out" 2>"$err" || { cat "$err" >&2; echo "run failed: ${labels[$i]}" >&2; exit 1; }
        if [ "$r" -eq 1 ]; then
          hwm=$(sed -n 's/^# vmhwm_bytes //p' "$err")
          if [ -z "$SWAP_SLACK" ]; then
            anon=$(sed -n 's/^# rss_anon_after_init_bytes //p' "$err")
            workers=$(sed -n 's/^# workers_private_bytes //p' "$err")
            SWAP_SLACK=$(( (${anon:-0} > table_bytes ? anon - table_bytes : 0) + ${workers:-0} ))
            slack_how="measured: run 1 of dram's anonymous RSS after init, $(mib "${anon:-0}"), minus the table bytes${workers:+, plus the private memory of its DataLoader workers before the first step (later it also holds their copies of the table pages the trainer writes), $(mib "$workers")}; not its VmHWM ($(mib "$hwm")), which also counts the init's temporaries (under swap they go to the swap file, as under mtier to its store) and shared library pages (not charged to the cgroup)"
          fi
        fi ;;
      swap)
        if [ -n "$swap_skip" ] || [ -n "${failed[$n]:-}" ]; then continue; fi
        if ! run_swap "$i" "$out" "$err"; then
          printf '  run %d/%d  %-30s %s\n' "$r" "$REPEATS" "${labels[$i]}" \
            "${swap_skip:+skipped ($swap_skip)}${failed[$n]:+FAILED (${failed[$n]})}"
          continue
        fi ;;
      mtier)
        store=$(mktemp -d "$STORE/bench-trainer-store.XXXXXX")
        rc=0
        env LD_PRELOAD="$LIB" MTIER_DRAM_BYTES="${budgets[$i]}" MTIER_MIN_BYTES="$MIN_BYTES" MTIER_STATS=1 \
          MTIER_STORE_PATH="$store" MTIER_LOOKAHEAD="${ks[$i]}" PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" \
          "$PYTHON" "$TRAINER" "${ARGS[@]}" >"$out" 2>"$err" || rc=$?
        rm -rf "$store"
        [ "$rc" -eq 0 ] || { cat "$err" >&2; echo "run failed (status $rc): ${labels[$i]}" >&2; exit 1; }
        # mtier refusing its environment runs the trainer all in DRAM: not an mtier run.
        if grep -q 'running with plain allocation' "$err"; then
          grep -E '^(<[0-7]>)?mtier: ' "$err" >&2
          echo "run not under mtier (it fell back to plain allocation): ${labels[$i]}" >&2
          exit 1
        fi ;;
    esac
    printf '  run %d/%d  %-30s %9s steps/s, init %s s\n' "$r" "$REPEATS" "${labels[$i]}" \
      "$(sed -n 's/^# steps_per_s //p' "$err")" "$(sed -n 's/^# init_s //p' "$err")"
  done
done

# The device-bound time of a run: the pages it moved during the steps over
# the device's QD32 IOPS (`mtier bench device`, measured before the runs), in
# ms per step. mtier: the bytes the trainer's process read and wrote on block
# devices (/proc/self/io: every thread's, the store's included); swap: pages
# swapped in and out machine-wide (/proc/vmstat; the kernel does not charge
# swap-outs to the process); all-DRAM: none.
devms_run() {
  local kind=$1 line
  line=$(sed -n 's/^# steps_io \([0-9]*\) \([0-9]*\) \([0-9]*\) \([0-9]*\).*/\1 \2 \3 \4/p' "$2")
  [ -n "$line" ] && [ -n "$dev_read_iops" ] || { echo nan; return; }
  # one figure a line: devms pipes the runs' into median
  awk -v k="$kind" -v ri="$dev_read_iops" -v wi="$dev_write_iops" -v steps="$STEPS" -v l="$line" 'BEGIN {
    split(l, f, " ")
    if (k == "mtier") { r = f[1] / 4096; w = f[2] / 4096 } else if (k == "swap") { r = f[3]; w = f[4] } else { r = 0; w = 0 }
    printf "%.3f\n", 1000 * (r / ri + w / wi) / steps }'
}
devms() { for r in $(seq 1 "$REPEATS"); do devms_run "${kinds[$1]}" "$WORK/${names[$1]}.$r.err"; done | median; }

# Whether configuration I has all its runs.
complete() { [ "${kinds[$1]}" != swap ] || { [ -z "$swap_skip" ] && [ -z "${failed[${names[$1]}]:-}" ]; }; }
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
printf '  %-30s %8s %6s %6s %9s %6s %9s %6s %7s %7s %7s %5s  %s\n' configuration steps/s spread ratio steady/s ratio \
  med-step ratio init_s vs-swap dev-ms /dev "same losses+weights"
for i in "${!names[@]}"; do
  n=${names[$i]}
  if ! complete "$i"; then
    printf '  %-30s %s\n' "${labels[$i]}" "${swap_skip:+skipped: $swap_skip}${failed[$n]:+FAILED: ${failed[$n]}}"
    continue
  fi
  sps=$(med "$n" steps_per_s)
  steady=$(med "$n" steady_steps_per_s)
  ms=$(mstep "$n")
  init=$(med "$n" init_s)
  vs_swap=-
  if [ "${kinds[$i]}" != base ] && [ "${pcts[$i]}" -lt 100 ] && [ -z "$swap_skip" ] && [ -z "${failed[s${pcts[$i]}]:-}" ]; then
    vs_swap=$(ratio "$sps" "$(med "s${pcts[$i]}" steps_per_s)")
  fi
  same=yes
  for r in $(seq 1 "$REPEATS"); do cmp -s "$WORK/base.1.out" "$WORK/$n.$r.out" || same=NO; done
  dms=$(devms "$i")
  over=$(awk -v d="$dms" -v s="$sps" 'BEGIN { if (d + 0 > 0 && s > 0) printf "%.2f", 1000 / s / d; else print "-" }')
  [ "${kinds[$i]}" = base ] && dms=-
  printf '  %-30s %8.2f %6s %6s %9.2f %6s %9.2f %6s %7.1f %7s %7s %5s  %s\n' "${labels[$i]}" "$sps" \
    "$(spread "$n" steps_per_s)" "$(ratio "$sps" "$base_sps")" "$steady" \
    "$(ratio "$steady" "$base_steady")" "$ms" "$(ratio "$ms" "$base_mstep")" "$init" "$vs_swap" \
    "$dms" "$over" "$same"
done
echo "  steps/s: steps / time in forward + backward + SGD (not init, not the id generator);"
echo "  spread: (max - min) / median of steps/s across the runs: differences smaller than the"
echo "  baseline's spread are noise; steady: the second half of the steps; med-step: 1 / the median"
echo "  step time (robust to bursts from other work on the machine); ratio: to the baseline's figure;"
echo "  init_s: set-up time (model build and table init, before the first step; not in steps/s);"
echo "  vs-swap: steps/s over swap's at the same budget; K: MTIER_LOOKAHEAD; dev-ms: the device-bound"
echo "  time per step (the pages moved during the steps at the device's QD32 IOPS; mtier: the process's"
echo "  block I/O, /proc/self/io; swap: pages swapped in and out, /proc/vmstat); /dev: the mean step"
echo "  time (1 / steps/s) over it"
if [ -n "$swap_skip" ]; then
  echo "swap: skipped ($swap_skip)"
elif [[ " ${kinds[*]} " == *" swap "* ]]; then
  echo "swap: cgroup limit = the budget + $(mib "$SWAP_SLACK") for the trainer's non-table memory ($slack_how)"
  for i in "${!names[@]}"; do
    if [ "${kinds[$i]}" = swap ] && complete "$i"; then
      echo "  $(sed -n 's/^mtier bench swap-run: \(cgroup v.*\)/\1/p' "$WORK/${names[$i]}.1.err")"
      break
    fi
  done
fi
echo "own counts (run 1, init and training together; mtier: its MTIER_STATS=1 summary at exit;"
echo "swap: the cgroup's peak and OOM kills, pages swapped in and out machine-wide):"
for i in "${!names[@]}"; do
  [ "${kinds[$i]}" != base ] && complete "$i" || continue
  e="$WORK/${names[$i]}.1.err"
  if [ "${kinds[$i]}" = swap ]; then
    printf '  %-30s %s, swap-ins %s, swap-outs %s pages\n' "${labels[$i]}" \
      "$(sed -n 's/^mtier bench swap-run: cgroup \(peak .*\)/\1/p' "$e")" \
      $(cat "$WORK/${names[$i]}.1.out.vmstat")
    continue
  fi
  summary=$(grep -E '^(<[0-7]>)?mtier: ' "$e" | sed -E 's/^(<[0-7]>)?mtier: (summary \(pid [0-9]+\): )?//' | tr '\n' ';' || true)
  printf '  %-30s %s\n' "${labels[$i]}" "$(
    for k in 'peak resident [0-9.]* MiB' 'faults missing [0-9]*' 'fetches [0-9]*' 'evictions [0-9]*' 'written back [0-9]*'; do
      printf '%s' "$summary" | grep -Eo "$k" | head -n 1
    done | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
done
echo "  (the DLRM-style init's temporaries, up to the tables so far + 4x a table, also count against"
echo "  the budget: a budget above the table bytes can still evict during init)"
for i in "${!names[@]}"; do
  if [ "${kinds[$i]}" = mtier ] && [ "${pcts[$i]}" -ge 100 ]; then
    r1=$(ratio "$(med "${names[$i]}" steps_per_s)" "$base_sps")
    r2=$(ratio "$(mstep "${names[$i]}")" "$base_mstep")
    verdict=$(awk -v r="$r1" 'BEGIN { print (r >= 0.97) ? "PASS" : "MISS" }')
    # Run r of this configuration over run r of the baseline, which ran
    # just before it: a ratio the machine's slow spells disturb less.
    paired=$(paste <(vals "${names[$i]}" steps_per_s) <(vals base steps_per_s) |
      awk '$2 > 0 { print $1 / $2 }' | median)
    echo "goal: ${labels[$i]} at most 3% slower than all-DRAM: steps/s ratio $r1 -> $verdict" \
      "(med-step ratio $r2; median of the $REPEATS paired runs' ratios $(printf '%.3f' "$paired");" \
      "baseline spread $(spread base steps_per_s) across $REPEATS runs)"
    echo "  (runs of one configuration differ by more than 3% on a shared machine; the same cost" \
      "measured inside one process, where that cancels: scripts/bench-overhead.py)"
  fi
done
for i in "${!names[@]}"; do
  if [ "${kinds[$i]}" = mtier ] && [ "${pcts[$i]}" -lt 100 ] && [ "${ks[$i]}" -ge 1 ]; then
    sps=$(med "${names[$i]}" steps_per_s) dms=$(devms "$i")
    awk -v d="$dms" -v s="$sps" -v l="${labels[$i]}" 'BEGIN {
      if (!(d + 0 > 0) || !(s > 0)) { printf "goal: %s step time at most 1.5x the device-bound time: not measured\n", l; exit }
      r = 1000 / s / d
      printf "goal: %s step time at most 1.5x the device-bound time: %.2fx (%.1f ms a step, device-bound %.1f ms) -> %s\n", l, r, 1000 / s, d, (r <= 1.5 ? "PASS" : "MISS") }'
  fi
done
if [ -n "$CHECKPOINT" ]; then
  # the checkpoint's figures of run r of configuration $1 ("# checkpoint" line)
  cvals() { for r in $(seq 1 "$REPEATS"); do awk -v k="$2" '$2 == "checkpoint" { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }' "$WORK/$1.$r.err"; done; }
  cmed() { cvals "$1" "$2" | median; }
  # median over the runs of the ratio of two figures of each run
  cratio() { paste <(cvals "$1" "$2") <(cvals "$1" "$3") | awk '$2 > 0 { print $1 / $2 }' | median; }
  echo
  echo "checkpoint (medians of $REPEATS runs): torch.save of the state dict ($(mib "$(cmed base bytes)")) to a file in $STORE"
  echo "(fsync'd) before step ${CKPT_AT:-$(( STEPS / 2 ))}, torch.load + load_state_dict 10 steps later:"
  printf '  %-30s %7s %7s %7s %7s %7s %7s %8s %8s %8s %8s  %s\n' configuration save_s vs-dram vs-swap load_s \
    vs-dram vs-swap after/bef load/bef min-aft ev-bef replay
  base_save=$(cmed base save_s) base_load=$(cmed base load_s)
  for i in "${!names[@]}"; do
    n=${names[$i]}
    complete "$i" || continue
    save=$(cmed "$n" save_s) load=$(cmed "$n" load_s)
    sv_swap=- ld_swap=-
    if [ "${kinds[$i]}" = mtier ] && [ "${pcts[$i]}" -lt 100 ] && [ -z "$swap_skip" ] && [ -z "${failed[s${pcts[$i]}]:-}" ]; then
      sv_swap=$(ratio "$(cmed "s${pcts[$i]}" save_s)" "$save")
      ld_swap=$(ratio "$(cmed "s${pcts[$i]}" load_s)" "$load")
    fi
    minaft=$(paste <(cvals "$n" after_save_sps) <(cvals "$n" before_sps) | awk '$2 > 0 { print $1 / $2 }' | sort -g | head -n 1)
    # the model's table pages evicted in the 10 steps before the save
    # (the trainer's checkpoint_mtier line; mtier runs only)
    evbef=$(for r in $(seq 1 "$REPEATS"); do sed -n 's/^# checkpoint_mtier before: evictions \([0-9]*\) .*/\1/p' "$WORK/$n.$r.err"; done | median)
    [ "$evbef" = nan ] && evbef=-
    same=identical
    for r in $(seq 1 "$REPEATS"); do grep -q '^# checkpoint .* replay identical' "$WORK/$n.$r.err" || same=DIFFERENT; done
    printf '  %-30s %7.3f %7s %7s %7.3f %7s %7s %8.3f %8.3f %8.3f %8s  %s\n' "${labels[$i]}" "$save" \
      "$(ratio "$base_save" "$save")" "$sv_swap" "$load" "$(ratio "$base_load" "$load")" "$ld_swap" \
      "$(cratio "$n" after_save_sps before_sps)" "$(cratio "$n" after_load_sps before_sps)" \
      "${minaft:-nan}" "${evbef:--}" "$same"
  done
  echo "  vs-dram, vs-swap: all-DRAM's (swap's) seconds over this one's (speed ratio); after/bef:"
  echo "  steps/s in the 10 steps after the save over the 10 before it (median of the runs' ratios;"
  echo "  min-aft: the lowest run's); load/bef: the 10 steps after the load (3 replayed) over the 10"
  echo "  before the save; ev-bef: pages of the model's tables mtier evicted in the 10 steps before the"
  echo "  save (median; 0: DRAM was not full yet, and after/bef compares a warm-up with a steady state:"
  echo "  use --checkpoint-at); replay: the 3 replayed steps' losses equal those after the save in every run"
  echo "  (and 'same losses+weights' above compares every loss with all-DRAM's)"
fi
if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP" && cp "$WORK"/*.out "$WORK"/*.err "$KEEP"/ && echo "runs kept in $KEEP"
fi
