#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-device.sh: the whole benchmark round for a machine with more cores
# (a lent one, for a few minutes): builds, then runs the suite at 25%
# (unhinted and hinted, the kernel's swap beside mtier), the PyTorch
# trainer benchmark with 1, 2, 4 and 8 torch threads where the machine has
# the cores, the set-up benchmark (dlrm-reference) and the trainer's
# checkpoint benchmark (save and load beside all-DRAM and swap), each step
# under a time limit of its own, and writes one JSON (results.json) and a
# short text table (summary.txt) to the output directory. --small runs every
# step at sizes a 2-vCPU machine does in seconds (tests/bench/device_script.test).
set -eu

usage() {
  cat <<'EOF'
usage: scripts/bench-device.sh [--out DIR] [--builddir DIR] [--small] [--store DIR]
                               [--steps LIST]

Runs, in this order, each step under `timeout` (its limit below, full sizes):
  build     autoreconf, configure --enable-werror, make tools/mtier and
            lib/libmtier.la with -j<cores> (skipped with --builddir)     160 s
  suite     mtier bench suite --budgets 25 --configs dram,mtier,swap
            --lookahead 1 (unhinted and hinted; 1G of tables, 3 repeats)   90 s
  trainer   scripts/bench-trainer.sh --budgets 25 --lookahead 0,1
            --threads T for T in 1 2 4 8 up to the cores (2 repeats)      100 s
  setup     mtier bench setup --pattern dlrm-reference (4G, 8 tables,
            25%, 3 runs; 1G and 2 runs when the machine has < 32 GiB)      120 s
  checkpoint  scripts/bench-trainer.sh --checkpoint --budgets 25
            --lookahead 1 (160M of tables, 40 steps, 2 repeats): a
            torch.save and a torch.load + load_state_dict mid-run, all-DRAM,
            swap and mtier; save and load seconds, the steps after the save
            over those before it, the replayed steps' losses (needs torch)  60 s
The limits add up to 8 minutes 50 seconds: under 9 minutes on a 16-core
machine; a step that reaches its limit is recorded as timed out and the
rest still run.

Writes to DIR (default $OUT, else ./bench-device-out): results.json (the
machine: cores, memory, kernel, CPU model; per step: command, exit status,
seconds, and the step's own JSON where it has one, else its text; the
checkpoint step's table also as figures, one entry a configuration:
save_s, load_s, their speed over all-DRAM's and swap's, steps/s after the
save and the load over before, the table pages mtier evicted in the 10
steps before the save, replay_identical, same_as_dram),
summary.txt (one line per step and the set-up's, suite's and checkpoint's
key figures), and each step's stdout and stderr.

  --out DIR       output directory
  --builddir DIR  an existing build (tools/mtier, lib/.libs/libmtier.so): no build
  --small         tiny sizes, 1 repeat, threads 1 only, the trainer and the
                  checkpoint at 200% without a DataLoader (a dry run, about
                  45 seconds)
  --store DIR     store, swap and trace directory (default /var/tmp)
  --steps LIST    steps to run, comma-separated (default build,suite,trainer,setup,checkpoint)
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=${OUT:-$PWD/bench-device-out}
BUILDDIR=
SMALL=0
STORE=/var/tmp
STEPS=build,suite,trainer,setup,checkpoint
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --builddir) BUILDDIR=$2; shift 2 ;;
    --small) SMALL=1; shift ;;
    --store) STORE=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    *) echo "bench-device.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
CORES=$(nproc)
MEM_KB=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
PY=/usr/bin/python3

want() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# A step: name, time limit, command...; its stdout and stderr go to
# $OUTDIR/<name>.out and .err, its exit status and seconds to <name>.status.
step() {
  local name=$1 limit=$2
  shift 2
  echo "bench-device.sh: $name ($*)" >&2
  local t0 rc=0
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@" >"$OUTDIR/$name.out" 2>"$OUTDIR/$name.err" || rc=$?
  printf '%s %s %s\n' "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')" "$*" >"$OUTDIR/$name.status"
}
skip_step() { printf 'skipped %s\n' "$2" >"$OUTDIR/$1.status"; }

if [ -n "$BUILDDIR" ]; then
  BUILDDIR=$(cd "$BUILDDIR" && pwd)
elif want build; then
  BUILDDIR=$OUTDIR/build
  mkdir -p "$BUILDDIR"
  step build 160 bash -c "cd '$here' && autoreconf -fi && cd '$BUILDDIR' && \
    '$here/configure' --enable-werror CXXFLAGS=-O2 && make -j$CORES tools/mtier lib/libmtier.la"
else
  BUILDDIR=$here/build
fi
MTIER=$BUILDDIR/tools/mtier
LIB=$BUILDDIR/lib/.libs/libmtier.so

if [ "$SMALL" = 1 ]; then
  SUITE=(--preset tiny --repeats 1 --device-bytes 16M)
  # Above the tables and without a DataLoader: the trainer's runs in seconds.
  TRAINER=(--preset small --steps 2 --repeats 1 --budgets 200 --lookahead 1 --workers 0)
  THREADS=(1)
  SETUP=(--tables 16M --count 2 --runs 1)
  # 4 MiB of tables above the budget, 40 steps (the least --checkpoint takes)
  CHECKPOINT=(--preset small --tables 2x16384x32 --repeats 1 --budgets 200 --lookahead 1 --workers 0)
else
  SUITE=(--table-bytes 1G --repeats 3)
  TRAINER=(--steps 100 --repeats 2 --budgets 25 --lookahead 0,1)
  THREADS=()
  for t in 1 2 4 8; do [ "$t" -le "$CORES" ] && THREADS+=("$t"); done
  if [ "$MEM_KB" -ge $((32 << 20)) ]; then SETUP=(--runs 3)
  else SETUP=(--tables 1G --runs 2); fi
  CHECKPOINT=(--table-bytes 160M --steps 40 --repeats 2 --budgets 25 --lookahead 1)
fi

if want suite; then
  step suite 90 "$MTIER" bench suite "${SUITE[@]}" --budgets 25 --configs dram,mtier,swap \
    --lookahead 1 --dir "$STORE" --json -q
fi
if want trainer; then
  if ! "$PY" -c 'import torch' 2>/dev/null; then
    skip_step trainer "no torch for $PY"
  else
    for t in "${THREADS[@]}"; do
      step "trainer-$t" $((100 / ${#THREADS[@]})) "$here/scripts/bench-trainer.sh" --lib "$LIB" \
        --mtier "$MTIER" --store "$STORE" --threads "$t" "${TRAINER[@]}"
    done
  fi
fi
if want setup; then
  step setup 120 "$MTIER" bench setup --pattern dlrm-reference "${SETUP[@]}" --dir "$STORE" --json -q
fi
if want checkpoint; then
  if ! "$PY" -c 'import torch' 2>/dev/null; then
    skip_step checkpoint "no torch for $PY"
  else
    step checkpoint 60 "$here/scripts/bench-trainer.sh" --checkpoint --lib "$LIB" \
      --mtier "$MTIER" --store "$STORE" "${CHECKPOINT[@]}"
  fi
fi

# One JSON and the summary, from the steps' files.
"$PY" - "$OUTDIR" "$CORES" "$MEM_KB" "$SMALL" <<'PY'
import glob, json, os, platform, re, sys


def checkpoint_rows(text):
    """bench-trainer.sh --checkpoint's second table, a dict a configuration;
    '-' (no swap beside it) is None; same_as_dram: its row of the first
    table says every loss and the final weights equal all-DRAM's."""
    keys = ("save_s", "save_vs_dram", "save_vs_swap", "load_s", "load_vs_dram", "load_vs_swap",
            "after_save_over_before", "after_load_over_before", "min_after_save_over_before",
            "evicted_before_save")
    row = re.compile(r"^  (\S.*?)\s+" + r"\s+".join([r"(\S+)"] * len(keys))
                     + r"\s+(identical|DIFFERENT)$")
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("checkpoint (medians of")), None)
    rows = []
    for l in lines[start + 3:] if start is not None else []:  # after its two lines and header
        m = row.match(l)
        if not m:
            break
        r = {"configuration": m.group(1)}
        for k, v in zip(keys, m.groups()[1:]):
            r[k] = None if v == "-" else float(v)
        r["replay_identical"] = m.group(len(keys) + 2) == "identical"
        same = [l2.split()[-1] for l2 in lines[:start] if l2.startswith("  " + r["configuration"] + " ")]
        r["same_as_dram"] = same[0] == "yes" if same else None
        rows.append(r)
    return rows

out, cores, mem_kb, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
res = {"machine": {"cores": cores, "memory_bytes": mem_kb * 1024, "kernel": platform.release(),
                   "cpu": cpu}, "small": small, "steps": {}}
lines = [f"machine: {cores} cores, {mem_kb >> 20} GiB, {cpu}, Linux {platform.release()}"
         + (" (--small: a dry run)" if small else "")]
for st in sorted(glob.glob(os.path.join(out, "*.status"))):
    name = os.path.basename(st)[:-len(".status")]
    first = open(st).read().strip()
    if first.startswith("skipped"):
        res["steps"][name] = {"skipped": first[len("skipped "):]}
        lines.append(f"{name:12} skipped: {first[len('skipped '):]}")
        continue
    rc, secs, cmd = first.split(" ", 2)
    text = open(os.path.join(out, name + ".out")).read()
    try:
        body = json.loads(text)
    except ValueError:
        body = text
    res["steps"][name] = {"command": cmd, "exit_status": int(rc), "seconds": float(secs),
                          "result": body}
    state = "ok" if rc == "0" else ("timed out" if rc in ("124", "137") else f"exit {rc}")
    lines.append(f"{name:12} {state:10} {float(secs):7.1f} s")
    if name == "setup" and isinstance(body, dict):
        for c in body["configurations"]:
            if c["setup_seconds"] is None:
                continue
            lines.append("  %-6s setup %6.2f s  vs_dram %s  vs_swap %s  vs_min %s  cpu %s s  same %s" % (
                c["name"], c["setup_seconds"], c["vs_dram"], c["vs_swap"], c["vs_min"],
                c["cpu_seconds"], c["same_data"]))
    if name.startswith("trainer"):
        lines.append(f"  (its table: {name}.out)")
    if name == "checkpoint" and isinstance(body, str):
        rows = checkpoint_rows(body)
        res["steps"][name]["checkpoint"] = rows
        for r in rows:
            r = {k: "-" if v is None else v for k, v in r.items()}
            lines.append("  %-26s save %6.2f s vs_dram %s vs_swap %s  load %6.2f s vs_dram %s vs_swap %s"
                         "  after/before %s  replay %s  same %s" % (
                r["configuration"], r["save_s"], r["save_vs_dram"], r["save_vs_swap"], r["load_s"],
                r["load_vs_dram"], r["load_vs_swap"], r["after_save_over_before"],
                "identical" if r["replay_identical"] is True else "DIFFERENT",
                {True: "yes", False: "NO"}.get(r["same_as_dram"], "-")))
        if not rows:
            lines.append(f"  no checkpoint table (see {name}.out and {name}.err)")
json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1)
open(os.path.join(out, "summary.txt"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
