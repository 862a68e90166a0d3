#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A two-rank data-parallel DLRM-style trainer (torch.distributed, gloo) for
mtier's tests (tests/trainer/ddp_job.test).

Launch:

    ddp_train.py --out-dir DIR [...]          torch.multiprocessing.spawn
                                              starts --nprocs ranks (file://
                                              rendezvous in DIR)
    RANK=r WORLD_SIZE=n MASTER_ADDR=127.0.0.1 MASTER_PORT=p \\
    ddp_train.py --out-dir DIR [...]          one rank, env:// rendezvous (the
                                              caller starts every rank)

Each rank has its own embedding tables (nn.EmbeddingBag(sparse=True),
initialised from a seed of its own), its own skewed ids (tests/trainer/
workload.py: Zipf rows scattered by a seeded permutation, 1 + Poisson
pooling; seed + rank), and a dense part (bottom MLP over the dense
features, the pooled embeddings concatenated, top MLP, one logit)
wrapped in DistributedDataParallel, whose gradients gloo averages over the
ranks. Two optimizers: SGD over the tables (sparse gradients, applied in
place to the rows used) and SGD over the dense part.

A step: forward, backward (DDP's all-reduce of the dense gradients), an
all-reduce of the loss (the job's mean loss), then the two optimizers. Every
collective of a step comes before the step changes a table, so a failed
collective leaves the tables as the last completed step left them.

Output: rank R writes DIR/rankR.out, the lines that must match between runs:

    step N loss <float.hex()> mean <float.hex()>   one line per step
    tables sha256 <hex>                            this rank's final tables
    dense sha256 <hex>                             the DDP module's weights

and DIR/rankR.pid (its pid, written before it makes its tables). Everything
else goes to stderr as '# rank R: ...' lines.

--wait-rank R --wait-at S: rank R, at the start of step S, writes
DIR/rankR.waiting and waits (at most --wait-timeout s, then exits 3) - the
test kills it there. --guard: after every completed step each rank takes
the sha256 of its tables; when a collective fails (a peer died), the rank
reads every table back (through mtier: pages in the store are fetched),
compares with the digest of the last completed step, prints
'# rank R: survivor check OK ...' or '... FAIL ...' (also to DIR/rankR.out
as 'survivor OK|FAIL step N'), and exits 0 (OK) or 1 (FAIL).
"""

import argparse
import hashlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workload import Table, Workload, parse_size  # noqa: E402


def parse_tables(spec):
    """'3x98304x64' -> [(count, rows, dim)]; rows and dim take k/m suffixes."""
    out = []
    for part in spec.split(","):
        fields = part.strip().lower().split("x")
        if len(fields) == 2:
            fields.insert(0, "1")
        if len(fields) != 3:
            raise argparse.ArgumentTypeError(f"table spec {part!r}: want COUNTxROWSxDIM")
        out.append(tuple(parse_size(f) for f in fields))
    return out


def build_argparser():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out-dir", required=True, help="per-rank outputs (and the spawn rendezvous)")
    p.add_argument("--nprocs", type=int, default=2, help="ranks started by spawn (default 2)")
    p.add_argument("--start-method", choices=["spawn", "fork", "forkserver"], default="spawn",
                   help="how torch.multiprocessing starts the ranks: spawn (default: "
                   "torch.multiprocessing.spawn), or start_processes with fork or forkserver")
    p.add_argument("--tables", type=parse_tables, default=parse_tables("3x98304x64"),
                   metavar="SPEC", help="per rank, COUNTxROWSxDIM[,...] (default 3x98304x64: "
                   "72 MiB in three 24 MiB tables)")
    p.add_argument("--tables-of", action="append", default=[], metavar="RANK=SPEC",
                   help="rank RANK's tables instead of --tables (repeatable): rows may differ, "
                   "the count and dims must not (the DDP dense part is the same on every rank)")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--pooling", type=float, default=8.0, help="mean rows per bag")
    p.add_argument("--zipf", type=float, default=1.05, help="Zipf exponent of row popularity")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--wait-rank", type=int, default=-1)
    p.add_argument("--wait-at", type=int, default=-1)
    p.add_argument("--wait-timeout", type=float, default=60.0)
    p.add_argument("--guard", action="store_true",
                   help="digest the tables after every step; verify them when a collective fails")
    return p


def tables_of(args, rank):
    """This rank's table spec: its --tables-of, else --tables."""
    spec = args.tables
    for item in args.tables_of:
        r, sep, s = item.partition("=")
        if not sep or not r.isdigit():
            raise SystemExit(f"--tables-of {item!r}: want RANK=SPEC")
        if int(r) == rank:
            spec = parse_tables(s)
    shape = lambda sp: [d for c, _, d in sp for _ in range(c)]
    if shape(spec) != shape(args.tables):
        raise SystemExit(f"--tables-of: rank {rank}'s tables differ from --tables in count or dims")
    return spec


def log(rank, msg):
    print(f"# rank {rank}: {msg}", file=sys.stderr, flush=True)


def tables_sha256(tables, chunk=4 << 20):
    """sha256 over every table's shape and bytes, read in row chunks."""
    h = hashlib.sha256()
    for t in tables:
        a = t.weight.detach().numpy()
        h.update(f"{tuple(a.shape)} {a.dtype}\n".encode())
        rows = max(1, chunk // a[0].nbytes)
        for r0 in range(0, a.shape[0], rows):
            h.update(memoryview(np.ascontiguousarray(a[r0:r0 + rows])).cast("B"))
    return h.hexdigest()


def module_sha256(module):
    h = hashlib.sha256()
    for name, p in module.named_parameters():
        a = p.detach().contiguous().numpy()
        h.update(f"{name} {tuple(a.shape)} {a.dtype}\n".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def region_residency():
    """(resident, size) bytes of this process's mtier region memfd as the
    kernel counts them (fincore(1) on /proc/self/fd/N), or None when there
    is no region (no mtier) or no fincore."""
    import subprocess
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if not target.startswith("/memfd:mtier-region"):
            continue
        try:
            res = subprocess.run(["fincore", "-b", "-n", "--output", "RES,SIZE",
                                  f"/proc/self/fd/{fd}"], capture_output=True, text=True,
                                 pass_fds=(int(fd),), check=True).stdout.split()
            return (int(res[0]), int(res[1]))
        except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
            return None
    return None


def run(rank, world, args, init_method):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    out_path = os.path.join(args.out_dir, f"rank{rank}.out")
    out = open(out_path, "w")
    t0 = time.monotonic()
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world)
    log(rank, f"pid {os.getpid()}, world {world}, LOCAL_WORLD_SIZE "
        f"{os.environ.get('LOCAL_WORLD_SIZE')}, init {init_method}, torch {torch.__version__}")

    # The test samples this rank's residency from here on.
    with open(os.path.join(args.out_dir, f"rank{rank}.pid.tmp"), "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(os.path.join(args.out_dir, f"rank{rank}.pid.tmp"),
              os.path.join(args.out_dir, f"rank{rank}.pid"))

    tables = []
    for c, r, d in tables_of(args, rank):
        tables += [Table(r, d, args.zipf) for _ in range(c)]
    w = Workload(tables, args.batch, args.steps, args.pooling, 13, args.seed + 1000 * rank)
    dim = max(t.dim for t in tables)

    # This rank's tables: its own seed, filled in place (no table-sized temporary).
    g = torch.Generator().manual_seed(args.seed * 7919 + rank)
    emb = torch.nn.ModuleList()
    for t in tables:
        wt = torch.empty(t.rows, t.dim, dtype=torch.float32)
        bound = float(np.sqrt(1.0 / t.rows))
        wt.uniform_(-bound, bound, generator=g)
        emb.append(torch.nn.EmbeddingBag(t.rows, t.dim, mode="sum", sparse=True, _weight=wt))

    class Dense(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bot = torch.nn.Sequential(torch.nn.Linear(13, 64), torch.nn.ReLU(),
                                           torch.nn.Linear(64, dim), torch.nn.ReLU())
            self.proj = torch.nn.ModuleList(torch.nn.Linear(t.dim, dim, bias=False)
                                            for t in tables)
            self.top = torch.nn.Sequential(torch.nn.Linear(dim * (len(tables) + 1), 64),
                                           torch.nn.ReLU(), torch.nn.Linear(64, 1))

        def forward(self, dense, pooled):
            x = [self.bot(dense)] + [p(e) for p, e in zip(self.proj, pooled)]
            return self.top(torch.cat(x, dim=1))

    torch.manual_seed(args.seed)  # the same dense init on every rank (DDP also broadcasts rank 0's)
    dense = DDP(Dense())
    opt_sparse = torch.optim.SGD(emb.parameters(), lr=args.lr)
    opt_dense = torch.optim.SGD(dense.parameters(), lr=args.lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    log(rank, f"{len(tables)} tables, {w.table_bytes / 2**20:.1f} MiB; batch {args.batch}, "
        f"{args.steps} steps; init {time.monotonic() - t0:.2f} s")

    guard = tables_sha256(emb) if args.guard else None
    done = -1  # the last completed step
    t_train = time.monotonic()
    step = 0
    try:
        for step in range(args.steps):
            if rank == args.wait_rank and step == args.wait_at:
                flag = os.path.join(args.out_dir, f"rank{rank}.waiting")
                open(flag, "w").close()
                log(rank, f"waiting at step {step} (pid {os.getpid()})")
                time.sleep(args.wait_timeout)
                log(rank, f"not killed within {args.wait_timeout} s")
                out.close()
                os._exit(3)
            d, sparse, labels = w.step_batch(step)
            pooled = [e(torch.from_numpy(i), torch.from_numpy(o))
                      for e, (i, o) in zip(emb, sparse)]
            z = dense(torch.from_numpy(d), pooled)
            loss = loss_fn(z, torch.from_numpy(labels))
            opt_sparse.zero_grad(set_to_none=True)
            opt_dense.zero_grad(set_to_none=True)
            loss.backward()  # DDP: gloo all-reduce of the dense gradients
            mean = loss.detach().clone()
            dist.all_reduce(mean)  # the job's mean loss (a collective of its own)
            mean /= world
            opt_sparse.step()
            opt_dense.step()
            out.write(f"step {step} loss {loss.item().hex()} mean {mean.item().hex()}\n")
            out.flush()
            done = step
            if args.guard:
                guard = tables_sha256(emb)
    except RuntimeError as e:
        if not args.guard:
            raise
        # A collective failed: the peer is gone. Nothing of this step has
        # touched a table yet; read them all back and compare.
        log(rank, f"collective failed at step {step}: {str(e).splitlines()[0][:200]}")
        res = region_residency()
        where = ("no mtier region" if res is None else
                 f"{res[0] / 2**20:.1f} MiB of the {res[1] / 2**20:.1f} MiB region in DRAM "
                 f"before the check")
        t_check = time.monotonic()
        now = tables_sha256(emb)
        verdict = "OK" if now == guard else "FAIL"
        log(rank, f"survivor check {verdict}: tables sha256 {now[:16]}... against "
            f"{guard[:16]}... taken after step {done} ({where}; read back in "
            f"{time.monotonic() - t_check:.2f} s)")
        out.write(f"survivor {verdict} step {done}\n")
        out.close()
        sys.stderr.flush()
        os._exit(0 if verdict == "OK" else 1)

    train_s = time.monotonic() - t_train
    out.write(f"tables sha256 {tables_sha256(emb)}\n")
    out.write(f"dense sha256 {module_sha256(dense.module)}\n")
    out.close()
    res = region_residency()
    log(rank, f"trained {args.steps} steps in {train_s:.2f} s"
        + ("" if res is None else
           f"; region {res[0] / 2**20:.1f} of {res[1] / 2**20:.1f} MiB in DRAM at the end"))
    dist.barrier()
    dist.destroy_process_group()


def spawned(rank, world, args):
    run(rank, world, args, "file://" + os.path.join(os.path.abspath(args.out_dir), "rendezvous"))


def main():
    args = build_argparser().parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    # Gloo picks its interface from the hostname, which need not resolve here.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args, "env://")
        return
    import torch.multiprocessing as mp
    # mp.spawn does not set it; mtier's default DRAM budget divides by it.
    os.environ["LOCAL_WORLD_SIZE"] = str(args.nprocs)
    rdv = os.path.join(os.path.abspath(args.out_dir), "rendezvous")
    if os.path.exists(rdv):
        os.unlink(rdv)
    mp.start_processes(spawned, args=(args.nprocs, args), nprocs=args.nprocs, join=True,
                       start_method=args.start_method)  # mp.spawn when "spawn"


if __name__ == "__main__":
    main()
