#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench-overhead.py: what mtier costs a PyTorch trainer whose tables fit in
its DRAM budget, measured inside one process.

Run it with Debian's /usr/bin/python3 (python3-torch); --help for options.

Why inside one process: on these shared 2-vCPU machines the same trainer's
steps/s moves by 50-80% from one process to the next (runs seconds apart,
same configuration), far more than the 3% the goal allows; the steps of one
process alternating between configurations see the same machine.

Each run (one child process under LD_PRELOAD=libmtier.so, its budget twice
the tables of the three models it builds: nothing is evicted) builds the
DLRM test trainer's model (tests/trainer/dlrm_train.py) three times, from
the same seed:

  mtier          tables in mtier (the trainer's own allocation, managed),
                 with the torch integration's global pre-hook (MTIER_TORCH)
  mtier-nohook   tables in mtier, the global module hooks removed
  dram           tables copied into anonymous memory mapped by a raw
                 mmap system call (never seen by mtier), hooks removed

and trains all three on the same batches, one step each in turn (the order
rotates), timing each step's forward, backward and SGD by the wall clock
(a wait for a page fault counts) and by the thread's CPU clock (which a
slice given to another process does not disturb; the two agree when no
step waits). Printed per run: each configuration's median step, the ratios
mtier / dram (the whole cost), mtier / mtier-nohook (the integration's
hook) and mtier-nohook / dram (managed memory), and whether the three
models' losses were bit-identical at every step, and the whole cost on
the CPU clock; then the medians of the runs' ratios and the goal line
(mtier at most 3% slower than dram by the wall clock).

What it does not measure: the malloc interposer's cost on the process's
other allocations (every configuration runs in the same process), and
set-up time (bench-trainer.sh and `mtier bench setup` do).
"""

import argparse
import copy
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "trainer"))

CONFIGS = ("mtier", "mtier-nohook", "dram")
GOAL = 1.03


def find_lib(given):
    if given:
        return os.path.abspath(given)
    cands = []
    if os.environ.get("abs_top_builddir"):
        cands.append(os.path.join(os.environ["abs_top_builddir"], "lib/.libs/libmtier.so"))
    cands += [os.path.join(TOP, p, "lib/.libs/libmtier.so") for p in ("build", ".", "../build")]
    for c in cands:
        if os.path.isfile(c):
            return os.path.abspath(c)
    return None


def raw_anonymous(nbytes):
    """nbytes of private anonymous memory from the mmap system call itself
    (not libc's mmap, which libmtier.so interposes)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall.argtypes = [ctypes.c_long] * 7
    sys_mmap, prot_rw, map_private_anon = 9, 0x3, 0x22
    addr = libc.syscall(sys_mmap, 0, nbytes, prot_rw, map_private_anon, -1, 0)
    if addr == -1:
        raise OSError(ctypes.get_errno(), "mmap")
    return addr


def child(args):
    """One run, under libmtier.so: prints one JSON line on stdout."""
    import numpy as np
    import dlrm_train as D
    from workload import Workload
    import torch
    from mtier import _boot, _lib

    lib = _lib.load()
    if lib is None:
        sys.exit("bench-overhead.py: --child runs only under LD_PRELOAD=libmtier.so")
    torch.set_num_threads(1)
    zipf = [float(z) for z in D.ZIPF_DEFAULT.split(",")]
    tables = D.make_tables(D.parse_tables(D.PRESETS[args.preset]["tables"]), zipf)
    w = Workload(tables, D.PRESETS[args.preset]["batch"], args.steps, 16.0, 13, args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    base = D.build_model(torch, w, [64], [64, 32], "dlrm", 32 << 20)
    # Three copies made the same way: no configuration gets the model the
    # init built among its freed temporaries.
    models = {k: copy.deepcopy(base) for k in CONFIGS}
    del base
    for emb in models["dram"].emb_l:
        src = emb.weight.detach().numpy()
        addr = raw_anonymous(src.nbytes)
        arr = np.frombuffer((ctypes.c_char * src.nbytes).from_address(addr),
                            dtype=np.float32).reshape(src.shape)
        arr[:] = src
        emb.weight = torch.nn.Parameter(torch.from_numpy(arr))
    managed = {k: sum(lib.table_find(e.weight.data_ptr()) >= 0 for e in m.emb_l)
               for k, m in models.items()}
    if managed["mtier"] != len(tables) or managed["mtier-nohook"] != len(tables) \
            or managed["dram"] != 0:
        sys.exit(f"bench-overhead.py: tables managed by mtier per model: {managed} "
                 f"(want {len(tables)}, {len(tables)}, 0; MTIER_MIN_BYTES too high?)")
    useful = lib.prefetch_useful()  # 0: every table fits and nothing went to the store
    hooks = torch.nn.modules.module._global_forward_pre_hooks
    installed = dict(hooks)
    opts = {k: torch.optim.SGD(m.parameters(), lr=0.1) for k, m in models.items()}
    loss_fn = torch.nn.BCEWithLogitsLoss()
    times = {k: [] for k in CONFIGS}
    cpu_times = {k: [] for k in CONFIGS}
    same = True
    warmup = min(40, args.steps // 4)
    for i, batch in enumerate(w.batches()):
        inputs = D.to_inputs(torch, batch, "list")
        losses = {}
        for j in range(len(CONFIGS)):
            k = CONFIGS[(i + j) % len(CONFIGS)]
            hooks.clear()
            if k == "mtier":
                hooks.update(installed)
            t0, c0 = time.perf_counter(), time.thread_time()
            losses[k] = D.train_step(models[k], opts[k], loss_fn, inputs)
            if i >= warmup:
                times[k].append(time.perf_counter() - t0)
                cpu_times[k].append(time.thread_time() - c0)
        same = same and len(set(v.hex() for v in losses.values())) == 1
    hooks.clear()
    hooks.update(installed)
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in cpu_times.items()}
    print(json.dumps({
        "median_step_seconds": med,
        "total": med["mtier"] / med["dram"],
        "hook": med["mtier"] / med["mtier-nohook"],
        "memory": med["mtier-nohook"] / med["dram"],
        "total_cpu": cpu["mtier"] / cpu["dram"],
        "same_losses": same,
        "prefetch_useful": useful,
        "torch_integration": _boot.status(),
        "workload": w.describe(),
        "table_bytes": w.table_bytes,
        "torch": torch.__version__,
    }), flush=True)


def main():
    p = argparse.ArgumentParser(
        description="What mtier costs a PyTorch trainer whose tables fit in its DRAM budget: "
                    "the DLRM test trainer's model three times in one process (tables in "
                    "mtier with and without the torch integration's hook, tables in plain "
                    "anonymous memory), steps alternating; medians over several processes.",
        epilog="Goal: mtier at most 3%% slower than dram (median of the runs' ratios).")
    p.add_argument("--repeats", type=int, default=5, help="processes (default 5)")
    p.add_argument("--steps", type=int, default=1000, help="steps per model (default 1000)")
    p.add_argument("--preset", default="ci", help="the trainer's table preset (default ci)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--lib", help="libmtier.so (default: the build of this checkout)")
    p.add_argument("--store", default="/var/tmp", help="MTIER_STORE_PATH (default /var/tmp)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    import dlrm_train as D
    if args.preset not in D.PRESETS:
        p.error(f"--preset: one of {', '.join(sorted(D.PRESETS))}")
    if args.steps < 8 or args.repeats < 1:
        p.error("--steps wants at least 8 and --repeats at least 1")
    if args.child:
        return child(args)
    lib = find_lib(args.lib)
    if not lib or not os.path.isfile(lib):
        sys.exit("bench-overhead.py: no built libmtier.so found; give --lib")
    spec = D.parse_tables(D.PRESETS[args.preset]["tables"])
    table_bytes = sum(c * r * d * 4 for c, r, d in spec)
    budget = 2 * 3 * table_bytes  # twice the tables of the three models (all managed at first)
    smallest = min(r * d * 4 for _, r, d in spec)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MTIER_")}
    env.update(LD_PRELOAD=lib, MTIER_DRAM_BYTES=str(budget), MTIER_MIN_BYTES=str(smallest // 2),
               MTIER_STORE_PATH=args.store,
               PYTHONPATH=os.path.join(TOP, "python") + (
                   ":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--steps", str(args.steps),
           "--preset", args.preset, "--seed", str(args.seed)]
    print(f"bench-overhead: {args.repeats} processes, {args.steps} steps of each configuration; "
          f"library {lib}; budget {budget >> 20} MiB (twice the three models' tables)",
          flush=True)
    runs = []
    for n in range(1, args.repeats + 1):
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"bench-overhead.py: run {n} failed (exit {r.returncode})")
        res = json.loads(r.stdout.strip().splitlines()[-1])
        if n == 1:
            print(f"  workload: {res['workload']}; torch {res['torch']}")
            print(f"  torch integration: {res['torch_integration']}; a prefetch "
                  f"{'could' if res['prefetch_useful'] > 0 else 'could not'} bring pages in")
        m = {k: 1000 * v for k, v in res["median_step_seconds"].items()}
        print(f"  run {n}/{args.repeats}  median step ms: " +
              ", ".join(f"{k} {m[k]:.3f}" for k in CONFIGS) +
              f"; mtier/dram {res['total']:.4f} (hook {res['hook']:.4f}, memory "
              f"{res['memory']:.4f}; CPU clock {res['total_cpu']:.4f}); "
              f"losses {'identical' if res['same_losses'] else 'DIFFER'}",
              flush=True)
        runs.append(res)
    med = {k: statistics.median(r[k] for r in runs)
           for k in ("total", "hook", "memory", "total_cpu")}
    same = all(r["same_losses"] for r in runs)
    print(f"median of the runs: mtier/dram {med['total']:.4f}, of which the hook "
          f"{med['hook']:.4f} and managed memory {med['memory']:.4f}; on the CPU clock "
          f"{med['total_cpu']:.4f}")
    print(f"goal: mtier at most 3% slower than dram: {med['total']:.4f} -> "
          f"{'PASS' if med['total'] <= GOAL else 'MISS'}")
    if not same:
        print("losses differed between the configurations in at least one run")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
