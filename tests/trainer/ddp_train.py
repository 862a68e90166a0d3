#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A two-rank data-parallel (or --model-parallel, any world) DLRM-style
trainer (torch.distributed, gloo) for mtier's tests (tests/trainer/
ddp_job.test, model_parallel.test, tests/daemon/multinode.test).

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

--model-parallel: the standard DLRM layout instead. --tables are the job's
tables, table T on rank T % world (initialised from a seed of its own, so
the same wherever it lives); --batch is the job's batch, split into world
slices in rank order. A step: every rank makes the job's batch; each table's
owner pools the whole batch; one all_to_all_single gives rank j slice j of
every table's pooled embeddings; rank j runs the dense part (bottom MLP, a
projection per table, top MLP: replicated, data parallel) on its slice,
backward of its loss / world; a second all_to_all_single sends each table's
slice gradients back to its owner, who takes them through the table in rank
order; the dense gradients are all-gathered and summed in rank order on
every rank (an all-reduce whose summation order is fixed: gloo's ring
all-reduce adds in an order of its own), the slices' losses likewise; then
the two SGDs. --single-process W trains the same model in one process,
playing W ranks' slices in rank order with the same arithmetic: its
DIR/single.out is what every rank's lines must match (bit for bit).
Output per rank: the step lines (the job's loss), 'table T sha256 <hex>'
for each table it holds, 'dense sha256 <hex>'.

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


def survivor_exit(rank, out, err, step, emb, guard, done):
    """After a collective failed at `step` (a peer is gone): reads every
    table of emb back, compares it with `guard` (their sha256 after step
    `done`), says so and exits 0 if intact, 1 if not."""
    log(rank, f"collective failed at step {step}: {str(err).splitlines()[0][:200]}")
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


def log_trained(rank, steps, train_s):
    res = region_residency()
    log(rank, f"trained {steps} steps in {train_s:.2f} s"
        + ("" if res is None else
           f"; region {res[0] / 2**20:.1f} of {res[1] / 2**20:.1f} MiB in DRAM at the end"))


def embedding_bag(torch, t, g):
    """Table t as an EmbeddingBag (sum pooling, sparse gradients), its
    weights uniform in +-sqrt(1/rows) drawn from generator g."""
    wt = torch.empty(t.rows, t.dim, dtype=torch.float32)
    bound = float(np.sqrt(1.0 / t.rows))
    wt.uniform_(-bound, bound, generator=g)
    return torch.nn.EmbeddingBag(t.rows, t.dim, mode="sum", sparse=True, _weight=wt)


def dense_model(torch, tables, dim):
    """The dense layers: a bottom MLP over the 13 dense features, one
    projection per table to `dim`, and a top MLP over their concatenation."""

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

    return Dense()


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
    p.add_argument("--hold-at", type=int, default=-1, metavar="S",
                   help="with --model-parallel: every rank, at the start of step S, writes "
                   "DIR/rankR.held and waits (at most --wait-timeout s) until --hold-file exists")
    p.add_argument("--hold-file", default="", metavar="PATH")
    p.add_argument("--guard", action="store_true",
                   help="digest the tables after every step; verify them when a collective fails")
    p.add_argument("--model-parallel", action="store_true",
                   help="the DLRM model-parallel layout: --tables are the job's, table T on rank "
                   "T %% world; pooled embeddings exchanged by all_to_all; --batch is the job's "
                   "batch, each rank's dense part trains on its slice (see the module's text)")
    p.add_argument("--single-process", type=int, default=0, metavar="W",
                   help="with --model-parallel: train the same model in this one process, "
                   "W ranks' slices in rank order (the reference; writes DIR/single.out)")
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
        emb.append(embedding_bag(torch, t, g))

    torch.manual_seed(args.seed)  # the same dense init on every rank (DDP also broadcasts rank 0's)
    dense = DDP(dense_model(torch, tables, dim))
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
        survivor_exit(rank, out, e, step, emb, guard, done)

    train_s = time.monotonic() - t_train
    out.write(f"tables sha256 {tables_sha256(emb)}\n")
    out.write(f"dense sha256 {module_sha256(dense.module)}\n")
    out.close()
    log_trained(rank, args.steps, train_s)
    dist.barrier()
    dist.destroy_process_group()


def write_pid(args, rank):
    tmp = os.path.join(args.out_dir, f"rank{rank}.pid.tmp")
    with open(tmp, "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(tmp, os.path.join(args.out_dir, f"rank{rank}.pid"))


def run_model_parallel(rank, world, args, init_method):
    """The model-parallel layout (--model-parallel). init_method None: the
    single-process reference, one process playing every rank in order."""
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    single = init_method is None
    name = "single" if single else f"rank{rank}"
    out = open(os.path.join(args.out_dir, f"{name}.out"), "w")
    t0 = time.monotonic()
    if args.batch % world:
        raise SystemExit(f"--model-parallel: --batch {args.batch} is not a multiple of {world} ranks")
    if not single:
        dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world)
        log(rank, f"pid {os.getpid()}, world {world}, LOCAL_WORLD_SIZE "
            f"{os.environ.get('LOCAL_WORLD_SIZE')}, init {init_method}, model parallel, "
            f"torch {torch.__version__}")
        write_pid(args, rank)
    tables = []
    for c, r, d in args.tables:
        tables += [Table(r, d, args.zipf) for _ in range(c)]
    if len(tables) < world:
        raise SystemExit(f"--model-parallel: {len(tables)} tables for {world} ranks")
    # The job's workload: every rank makes the same batches (the ids of its
    # own tables for the whole batch, its slice of the dense features).
    w = Workload(tables, args.batch, args.steps, args.pooling, 13, args.seed)
    dim = max(t.dim for t in tables)
    owner = [t % world for t in range(len(tables))]
    mine = [t for t in range(len(tables)) if single or owner[t] == rank]
    emb = {}
    for t in mine:  # each table from a seed of its own: the same wherever it lives
        g = torch.Generator().manual_seed(args.seed * 7919 + t)
        emb[t] = embedding_bag(torch, tables[t], g)
    emb_list = torch.nn.ModuleList(emb[t] for t in mine)

    torch.manual_seed(args.seed)  # the same dense init on every rank
    dense = dense_model(torch, tables, dim)
    params = list(dense.parameters())
    opt_sparse = torch.optim.SGD(emb_list.parameters(), lr=args.lr)
    opt_dense = torch.optim.SGD(params, lr=args.lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    b = args.batch // world
    log(rank, f"model parallel: tables {mine} of {len(tables)} here, "
        f"{sum(tables[t].bytes for t in mine) / 2**20:.1f} MiB; job batch {args.batch}, "
        f"{b} a rank; {args.steps} steps; init {time.monotonic() - t0:.2f} s")

    def micro(d, labels, pooled_slices, j):
        """Rank j's dense part on its slice: (loss, flat dense grads, the
        pooled slices' grads). The loss is scaled by 1/world before the
        backward, so the grads only need summing."""
        leaves = [p.detach().requires_grad_() for p in pooled_slices]
        z = dense(torch.from_numpy(d[j * b:(j + 1) * b]), leaves)
        loss = loss_fn(z, torch.from_numpy(labels[j * b:(j + 1) * b]))
        for p in params:
            p.grad = None
        (loss / world).backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        return loss.detach(), flat, [x.grad for x in leaves]

    def apply(flats, pooled, grads_of):
        """The dense grads summed in rank order, the tables' pooled grads
        (each table's slices in rank order) back through the tables, SGD."""
        acc = flats[0].clone()
        for f in flats[1:]:
            acc += f
        off = 0
        for p in params:
            p.grad = acc[off:off + p.numel()].view_as(p).clone()
            off += p.numel()
        opt_sparse.zero_grad(set_to_none=True)
        torch.autograd.backward([pooled[t] for t in mine],
                                [torch.cat(grads_of[t]) for t in mine])
        opt_sparse.step()
        opt_dense.step()

    def job_loss(losses):
        acc = losses[0].clone()
        for x in losses[1:]:
            acc += x
        return (acc / world).item()

    # Per destination j, this rank's tables' slices for j; per source r, r's.
    send_elems = sum(b * tables[t].dim for t in mine)
    recv_elems = [sum(b * tables[t].dim for t in range(len(tables)) if owner[t] == r)
                  for r in range(world)]
    guard = tables_sha256(emb_list) if args.guard else None
    done = -1
    t_train = time.monotonic()
    step = 0
    try:
        for step in range(args.steps):
            if rank == args.wait_rank and step == args.wait_at and not single:
                open(os.path.join(args.out_dir, f"rank{rank}.waiting"), "w").close()
                log(rank, f"waiting at step {step} (pid {os.getpid()})")
                time.sleep(args.wait_timeout)
                log(rank, f"not killed within {args.wait_timeout} s")
                out.close()
                os._exit(3)
            if step == args.hold_at and not single:
                open(os.path.join(args.out_dir, f"rank{rank}.held"), "w").close()
                t_hold = time.monotonic()
                while not os.path.exists(args.hold_file):
                    if time.monotonic() - t_hold > args.wait_timeout:
                        log(rank, f"{args.hold_file} not made within {args.wait_timeout} s")
                        out.close()
                        os._exit(3)
                    time.sleep(0.05)
            d, sparse, labels = w.step_batch(step)
            pooled = {t: emb[t](torch.from_numpy(sparse[t][0]), torch.from_numpy(sparse[t][1]))
                      for t in mine}
            if single:
                losses, flats = [], []
                grads_of = {t: [] for t in mine}
                for j in range(world):
                    loss, flat, g = micro(d, labels, [pooled[t][j * b:(j + 1) * b]
                                                      for t in range(len(tables))], j)
                    losses.append(loss)
                    flats.append(flat)
                    for t, gt in zip(range(len(tables)), g):
                        grads_of[t].append(gt)
            else:
                # Forward exchange: to rank j the slice j of every table here.
                send = torch.cat([pooled[t][j * b:(j + 1) * b].detach().reshape(-1)
                                  for j in range(world) for t in mine])
                recv = torch.empty(sum(recv_elems))
                dist.all_to_all_single(recv, send, recv_elems, [send_elems] * world)
                pieces = {}
                off = 0
                for r in range(world):
                    for t in range(len(tables)):
                        if owner[t] == r:
                            n = b * tables[t].dim
                            pieces[t] = recv[off:off + n].view(b, tables[t].dim)
                            off += n
                loss, flat, g = micro(d, labels, [pieces[t] for t in range(len(tables))], rank)
                # Backward exchange: each table's slice grads to its owner.
                gsend = torch.cat([g[t].reshape(-1) for r in range(world)
                                   for t in range(len(tables)) if owner[t] == r])
                grecv = torch.empty(world * send_elems)
                dist.all_to_all_single(grecv, gsend, [send_elems] * world, recv_elems)
                grads_of = {t: [] for t in mine}
                off = 0
                for j in range(world):
                    for t in mine:
                        n = b * tables[t].dim
                        grads_of[t].append(grecv[off:off + n].view(b, tables[t].dim))
                        off += n
                # The dense grads, gathered whole and summed in rank order
                # on every rank (an all-reduce whose sum order is fixed).
                flats = [torch.empty_like(flat) for _ in range(world)]
                dist.all_gather(flats, flat)
                losses = [torch.empty_like(loss) for _ in range(world)]
                dist.all_gather(losses, loss)
            apply(flats, pooled, grads_of)
            out.write(f"step {step} loss {job_loss(losses).hex()}\n")
            out.flush()
            done = step
            if args.guard:
                guard = tables_sha256(emb_list)
    except RuntimeError as e:
        if not args.guard or single:
            raise
        survivor_exit(rank, out, e, step, emb_list, guard, done)
    train_s = time.monotonic() - t_train
    for t in mine:
        out.write(f"table {t} sha256 {tables_sha256([emb[t]])}\n")
    out.write(f"dense sha256 {module_sha256(dense)}\n")
    out.close()
    log_trained(rank, args.steps, train_s)
    if not single:
        dist.barrier()
        dist.destroy_process_group()


def spawned(rank, world, args):
    init = "file://" + os.path.join(os.path.abspath(args.out_dir), "rendezvous")
    (run_model_parallel if args.model_parallel else run)(rank, world, args, init)


def main():
    args = build_argparser().parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    # Gloo picks its interface from the hostname, which need not resolve here.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    if args.single_process:
        if not args.model_parallel:
            raise SystemExit("--single-process wants --model-parallel")
        run_model_parallel(0, args.single_process, args, None)
        return
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        (run_model_parallel if args.model_parallel else run)(
            int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args, "env://")
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
