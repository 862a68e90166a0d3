#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A DLRM-style PyTorch trainer for mtier's tests and benchmark.

Run it with Debian's /usr/bin/python3 (python3-torch 1.13, numpy); under mtier:

    LD_PRELOAD=/path/to/libmtier.so MTIER_DRAM_BYTES=128M \\
    MTIER_STORE_PATH=/var/tmp /usr/bin/python3 dlrm_train.py --preset ci

The model follows facebookresearch/dlrm (dlrm_s_pytorch.py): one
nn.EmbeddingBag per sparse feature, initialised the way DLRM does it (a
float64 numpy array from np.random.uniform, cast to float32, copied into a
new torch tensor that replaces the weight); a bottom MLP over the dense
features; the dot interaction of the bottom MLP's output with every pooled
embedding; a top MLP; BCEWithLogits loss; plain SGD. Tables whose dim is
below the largest are projected to it by a bias-free linear layer, as in
DLRM's mixed-dimension variant (PrEmbeddingBag).

Stdout carries only what must match between runs:

    step N loss <float.hex()>        one line per step
    weights sha256 <hex>             all parameters' bytes, in a fixed order

Everything else (workload, table bytes, timings, steps/s) goes to stderr,
each line starting with '# '. '# steps_per_s X' counts the training steps
only (forward, backward, SGD), not the init and not the generation of the
next batch's ids (a real trainer's data loader runs beside the model).
"""

import argparse
import hashlib
import math
import os
import sys
import textwrap
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table_counts import table_counts  # noqa: E402
from workload import Table, Workload, parse_size  # noqa: E402

ZIPF_DEFAULT = "1.05,0.9,1.1,1.3,1.2,0.95"

# Presets: table spec (count x rows x dim), steps, batch. Options given on
# the command line override a preset's values.
PRESETS = {
    "small": dict(
        tables="2x65536x64,2x16384x32", steps=20, batch=64,
        doc="36 MiB in 4 tables; a smoke test that runs in seconds"),
    "ci": dict(
        tables="1x524288x64,2x262144x64,2x131072x32,2x65536x64,1x65536x32",
        steps=30, batch=128,
        doc="328 MiB in 8 tables of 8-128 MiB (dims 64 and 32); "
            "trainer_identical.test's run and the benchmark's default"),
    "cgroup": dict(
        tables="2x2097152x64,4x1048576x64,4x524288x64,2x262144x32", steps=10,
        batch=128,
        doc="2.56 GiB in 12 tables of 32-512 MiB; trainer_cgroup.test "
            "runs this mix (scaled by --table-bytes to 5/3 of its memory "
            "cgroup limit) under the limit"),
    "long": dict(
        tables="2x2097152x64,4x1048576x64,4x524288x64,2x262144x32",
        steps=5, batch=128, init="chunked", scale_to_ram=1.5,
        doc="the 'cgroup' mix scaled to 1.5x this machine's MemTotal "
            "(--table-bytes overrides), --init chunked; trainer_long.test "
            "(make check-long)"),
}


def parse_tables(spec):
    """'4x262144x64,2x65536x32' -> [(count, rows, dim), ...]; rows and dim
    take k/m suffixes (x1024, x1048576)."""
    out = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        fields = part.lower().split("x")
        if len(fields) == 2:
            fields.insert(0, "1")
        if len(fields) != 3:
            raise argparse.ArgumentTypeError(
                f"table spec {part!r}: want COUNTxROWSxDIM (e.g. 4x262144x64)")
        try:
            count, rows, dim = (parse_size(f) for f in fields)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"table spec {part!r}: {e}")
        if count < 1 or rows < 1 or dim < 1:
            raise argparse.ArgumentTypeError(f"table spec {part!r}: zero size")
        out.append((count, rows, dim))
    if not out:
        raise argparse.ArgumentTypeError("no tables")
    return out


def mem_total():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


def log(msg):
    print("# " + msg, file=sys.stderr, flush=True)


def proc_status(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def minor_faults():
    """The process's minor page faults so far (/proc/self/stat's minflt,
    every thread's; under mtier a fault its handler serves counts here too),
    or 0 where the file cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            # Field 10; the command name (field 2) may hold spaces, so count
            # from the ')' that ends it.
            return int(f.read().rpartition(")")[2].split()[7])
    except (OSError, ValueError, IndexError):
        return 0


def io_counts():
    """(bytes this process read and wrote on block devices, /proc/self/io's
    read_bytes and write_bytes: every thread's, mtier's store I/O included;
    pages swapped in and out machine-wide, /proc/vmstat's pswpin and
    pswpout: the kernel's swap I/O is not charged to the process's write_bytes).
    Zeros where a file cannot be read."""
    counts = {}
    for path, sep in (("/proc/self/io", ":"), ("/proc/vmstat", " ")):
        try:
            with open(path) as f:
                for line in f:
                    k, _, v = line.partition(sep)
                    counts[k.strip()] = int(v)
        except (OSError, ValueError):
            pass
    return [counts.get(k, 0) for k in ("read_bytes", "write_bytes", "pswpin", "pswpout")]


def children_private_bytes():
    """Private_Dirty of this process's children (the DataLoader's workers):
    what they wrote for themselves (their own heap, pages copied on write
    from this process), which a memory cgroup charges beside this process's
    RssAnon. Read before the first training step: after it, a worker's
    private pages also hold the old copies of the table pages this process
    writes (fork shares anonymous tables copy-on-write; mtier's region is
    shared memory and has no such copies)."""
    total = 0
    try:
        kids = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                kids += f.read().split()
        for pid in kids:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Private_Dirty:"):
                        total += int(line.split()[1]) * 1024
    except OSError:
        pass
    return total


def build_argparser():
    presets = "\n".join(
        f"  {k:7s} {v['tables']}, {v['steps']} steps, batch {v['batch']}:\n"
        + textwrap.fill(v["doc"], width=78, initial_indent=" " * 10,
                        subsequent_indent=" " * 10, break_on_hyphens=False)
        for k, v in PRESETS.items())
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="presets (--preset NAME; explicit options override it):\n"
        + presets + "\n\n"
        "Gradients are sparse (EmbeddingBag(sparse=True)) and torch.optim.SGD\n"
        "applies them in place to the rows used. With sparse=False every\n"
        "backward would allocate, zero-fill and free a dense gradient of each\n"
        "table's full size, touching every page of every table every step.\n\n"
        "Results are deterministic for a seed with --threads 1 (the default).")
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="a named workload (see below)")
    p.add_argument("--tables", type=parse_tables, metavar="SPEC",
                   help="embedding tables, COUNTxROWSxDIM[,...], e.g. "
                        "4x262144x64,2x65536x32 (rows, dim: k/m suffixes); "
                        "default: the preset's, else the 'ci' preset's")
    p.add_argument("--table-bytes", type=parse_size, metavar="SIZE",
                   help="scale every table's rows so that the tables total "
                        "about SIZE bytes (suffixes K M G T), keeping the "
                        "mix's proportions")
    p.add_argument("--steps", type=int,
                   help="training steps (default: the preset's, else 40)")
    p.add_argument("--batch", type=int,
                   help="samples per step (default: the preset's, else 128)")
    p.add_argument("--pooling", type=float, default=16.0, metavar="MEAN",
                   help="mean lookups per bag; each bag takes 1 + "
                        "Poisson(MEAN - 1) rows (default 16)")
    p.add_argument("--zipf", default=ZIPF_DEFAULT, metavar="S[,S...]",
                   help="Zipf exponent(s) of row popularity, cycled over the "
                        f"tables (default {ZIPF_DEFAULT})")
    p.add_argument("--seed", type=int, default=42,
                   help="seeds the init (numpy, torch) and the workload "
                        "(default 42)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch.set_num_threads (default 1; only 1 is "
                        "guaranteed bit-reproducible)")
    p.add_argument("--dense-features", type=int, default=13,
                   help="dense features per sample (default 13, as Criteo)")
    p.add_argument("--dense-mlp", default="64", metavar="H[-H...]",
                   help="bottom MLP hidden layer sizes; its input is the "
                        "dense features and its output the largest table "
                        "dim (default 64)")
    p.add_argument("--top-mlp", default="64-32", metavar="H[-H...]",
                   help="top MLP hidden layer sizes; the output is 1 logit "
                        "(default 64-32)")
    p.add_argument("--lr", type=float, default=0.1,
                   help="SGD learning rate (default 0.1)")
    p.add_argument("--init", choices=["dlrm", "chunked"],
                   help="'dlrm' (default): per table, the EmbeddingBag's own "
                        "weight, then a float64 numpy array of the whole "
                        "table, its float32 copy and a torch tensor copied "
                        "from it that replaces the weight: short-lived "
                        "buffers of 1x, 2x, 1x, 1x the table's size, as "
                        "facebookresearch/dlrm does. 'chunked': one torch "
                        "tensor per table filled in row chunks of "
                        "--init-chunk bytes of float64 and given to the "
                        "EmbeddingBag as its weight; the same values from "
                        "the same numpy stream, without the huge temporaries "
                        "(for tables larger than RAM). Default: the preset's, "
                        "else dlrm")
    p.add_argument("--loader", action="store_true",
                   help="feed the steps through a torch.utils.data.DataLoader "
                        "(a map-style dataset of whole batches, batch_size=None, "
                        "in order) instead of a plain loop; the batches are the "
                        "same")
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="the DataLoader's num_workers (with --loader; default 0)")
    p.add_argument("--dataset-bytes", type=parse_size, default=0, metavar="SIZE",
                   help="with --loader: the steps' samples come from an "
                        "in-memory dataset of about SIZE bytes (dense "
                        "features, ids with round(--pooling) rows a bag, "
                        "labels), made before the first step as a trainer "
                        "that loads its data into memory does; step i takes "
                        "the samples of a seeded permutation's slice i, and "
                        "the DataLoader's workers (forked after the tables "
                        "and the dataset exist) read them. Default 0: each "
                        "step's batch generated on its own")
    p.add_argument("--mtier-lookahead", type=int, default=None, metavar="K",
                   help="import mtier and hand the DataLoader to "
                        "mtier.lookahead(loader, K) (with --loader): the "
                        "explicit API; without mtier's library in the process "
                        "it changes nothing")
    p.add_argument("--layout", choices=["list", "stacked"], default="list",
                   help="'list' (default): per table a 1-D ids tensor with "
                        "offsets, EmbeddingBag(ids, offsets); 'stacked': one "
                        "[tables, batch, P] ids tensor, each table's bags "
                        "exactly P = round(--pooling) rows, EmbeddingBag(ids[t])")
    p.add_argument("--describe", action="store_true",
                   help="print the workload ('# workload', '# table_bytes', "
                        "'# tables' lines on stderr) and exit without "
                        "importing torch")
    p.add_argument("--no-hash", action="store_true",
                   help="do not print the weights' sha256 (it reads every "
                        "table back: slow for tables far larger than DRAM)")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="save and load a checkpoint in the run: before step "
                        "--checkpoint-at, torch.save(model.state_dict()) to a "
                        "new file in DIR (flushed with fsync, removed at the "
                        "end); --checkpoint-steps steps later, torch.load of "
                        "that file and model.load_state_dict (the model goes "
                        "back to the saved state), then the saved step's "
                        "first 3 steps again, whose losses must equal the "
                        "ones before (printed as 'replay' lines), and the "
                        "remaining steps. Reports '# checkpoint ...' on "
                        "stderr: save and load seconds, steps/s over the 10 "
                        "steps before the save, the 10 after it and the 10 "
                        "after the load")
    p.add_argument("--checkpoint-at", type=int, metavar="STEP",
                   help="the step before which the checkpoint is saved "
                        "(default: half the steps; at least 10)")
    p.add_argument("--checkpoint-steps", type=int, default=10, metavar="N",
                   help="steps between the save and the load (default 10)")
    p.add_argument("--init-chunk", type=parse_size, default=32 << 20,
                   metavar="SIZE",
                   help="float64 bytes per chunk with --init chunked "
                        "(default 32M)")
    return p


def numpy_linear(torch, n_in, n_out, bias=True):
    """nn.Linear initialised as DLRM's create_mlp does (numpy normal)."""
    layer = torch.nn.Linear(n_in, n_out, bias=bias)
    std = np.sqrt(2.0 / (n_out + n_in))
    W = np.random.normal(0.0, std, size=(n_out, n_in)).astype(np.float32)
    layer.weight.data = torch.tensor(W, requires_grad=True)
    if bias:
        bt = np.random.normal(0.0, np.sqrt(1.0 / n_out), size=n_out).astype(np.float32)
        layer.bias.data = torch.tensor(bt, requires_grad=True)
    return layer


def create_mlp(torch, sizes, last_activation):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(numpy_linear(torch, sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_activation:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def create_emb(torch, tables, init, chunk_bytes):
    """The embedding tables, created and initialised one by one as in
    facebookresearch/dlrm's create_emb (or in chunks; see --init)."""
    emb_l = torch.nn.ModuleList()
    for t in tables:
        n, m = t.rows, t.dim
        if init == "dlrm":
            EE = torch.nn.EmbeddingBag(n, m, mode="sum", sparse=True)
            # initialize embeddings (as DLRM does)
            W = np.random.uniform(
                low=-np.sqrt(1 / n), high=np.sqrt(1 / n), size=(n, m)
            ).astype(np.float32)
            # approach 1: copy into a new tensor that replaces the weight
            EE.weight.data = torch.tensor(W, requires_grad=True)
        else:
            Wt = torch.empty(n, m, dtype=torch.float32)
            rows = max(1, chunk_bytes // (8 * m))
            for r0 in range(0, n, rows):
                r1 = min(n, r0 + rows)
                chunk = np.random.uniform(
                    low=-np.sqrt(1 / n), high=np.sqrt(1 / n), size=(r1 - r0, m)
                ).astype(np.float32)
                Wt[r0:r1] = torch.from_numpy(chunk)
                del chunk
            EE = torch.nn.EmbeddingBag(n, m, mode="sum", sparse=True, _weight=Wt)
            del Wt
        emb_l.append(EE)
    return emb_l


def build_model(torch, w, dense_mlp, top_mlp, init, chunk_bytes):
    nn = torch.nn
    base = max(t.dim for t in w.tables)

    class DLRM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb_l = create_emb(torch, w.tables, init, chunk_bytes)
            # Mixed dimensions: project small tables to the common dim.
            self.proj_l = nn.ModuleList(
                numpy_linear(torch, t.dim, base, bias=False) if t.dim != base
                else nn.Identity() for t in w.tables)
            self.bot_l = create_mlp(
                torch, [w.n_dense] + dense_mlp + [base], last_activation=True)
            nf = len(w.tables) + 1
            self.top_l = create_mlp(
                torch, [base + nf * (nf - 1) // 2] + top_mlp + [1],
                last_activation=False)
            li, lj = torch.tril_indices(nf, nf, offset=-1)
            self.register_buffer("li", li, persistent=False)
            self.register_buffer("lj", lj, persistent=False)

        def forward(self, dense, sparse):
            x = self.bot_l(dense)
            if isinstance(sparse, torch.Tensor):  # stacked [tables, batch, P]
                ly = [proj(emb(sparse[t]))
                      for t, (emb, proj) in enumerate(zip(self.emb_l, self.proj_l))]
            else:
                ly = [proj(emb(idx, off))
                      for emb, proj, (idx, off) in zip(self.emb_l, self.proj_l, sparse)]
            T = torch.cat([x] + ly, dim=1).view(x.shape[0], -1, base)
            Z = torch.bmm(T, torch.transpose(T, 1, 2))
            Zflat = Z[:, self.li, self.lj]
            return self.top_l(torch.cat([x, Zflat], dim=1))

    return DLRM()


def make_tables(spec, zipf):
    """The Table of every table of spec [(count, rows, dim), ...], the Zipf
    exponents cycled over them in order."""
    tables = []
    for c, r, d in spec:
        for _ in range(c):
            tables.append(Table(r, d, zipf[len(tables) % len(zipf)]))
    return tables


def train_step(model, opt, loss_fn, inputs):
    """One step on inputs (dense, ids, labels): forward, loss, backward,
    SGD; returns the loss as a float."""
    z = model(inputs[0], inputs[1])
    loss = loss_fn(z, inputs[2])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


def weights_sha256(model, chunk=64 << 20):
    """sha256 over every parameter in named_parameters() order: its name,
    shape and dtype, then its bytes, read in row chunks (no full copy)."""
    h = hashlib.sha256()
    for name, p in model.named_parameters():
        a = p.detach().contiguous().numpy()
        h.update(f"{name} {tuple(a.shape)} {a.dtype}\n".encode())
        if a.ndim == 0 or a.size == 0:
            h.update(a.tobytes())
            continue
        rows = max(1, chunk // max(1, a[0].nbytes))
        for r0 in range(0, a.shape[0], rows):
            h.update(memoryview(np.ascontiguousarray(a[r0:r0 + rows])).cast("B"))
    return h.hexdigest()


def to_inputs(torch, batch, layout):
    """One step's numpy batch as the model's tensors."""
    dense, sparse, labels = batch
    if layout == "stacked":
        ids = np.stack([i.reshape(dense.shape[0], -1) for i, _ in sparse])
        ids_t = torch.from_numpy(ids)
    else:
        ids_t = [(torch.from_numpy(i), torch.from_numpy(o)) for i, o in sparse]
    return torch.from_numpy(dense), ids_t, torch.from_numpy(labels)


class InMemoryDataset:
    """About `size` bytes of samples - dense features [R, n_dense] float32,
    ids [R, tables, P] int64, labels [R, 1] float32 - made from the
    workload's own batches (fixed pooling P), and a seeded permutation:
    step i's batch is the samples perm[i*B:(i+1)*B], gathered from the
    arrays (random reads all over them)."""

    def __init__(self, w, size):
        bag = max(1, round(w.pooling))
        per = w.n_dense * 4 + len(w.tables) * bag * 8 + 4
        rows = max(w.batch * w.steps, size // per) // w.batch * w.batch
        self.dense = np.empty((rows, w.n_dense), dtype=np.float32)
        self.ids = np.empty((rows, len(w.tables), bag), dtype=np.int64)
        self.labels = np.empty((rows, 1), dtype=np.float32)
        fixed = Workload(w.tables, w.batch, rows // w.batch, w.pooling, w.n_dense, w.seed,
                         fixed_pooling=True)
        for j in range(rows // w.batch):
            dense, sparse, labels = fixed.step_batch(j)
            lo = j * w.batch
            self.dense[lo:lo + w.batch] = dense
            for t, (ids, _) in enumerate(sparse):
                self.ids[lo:lo + w.batch, t] = ids.reshape(w.batch, bag)
            self.labels[lo:lo + w.batch] = labels
        self.perm = np.random.default_rng(w.seed).permutation(rows)
        self.batch = w.batch
        self.bytes = self.dense.nbytes + self.ids.nbytes + self.labels.nbytes

    def step_batch(self, i):
        idx = np.sort(self.perm[i * self.batch:(i + 1) * self.batch])
        ids = self.ids[idx]  # [B, tables, P]
        b, tables, bag = ids.shape
        offsets = np.arange(b, dtype=np.int64) * bag
        sparse = [(np.ascontiguousarray(ids[:, t]).reshape(-1), offsets) for t in range(tables)]
        return self.dense[idx], sparse, self.labels[idx]


REPLAY_STEPS = 3


class Counts:
    """At one moment: bytes the process read from block devices or swapped
    in (io_counts), its minor faults, and mtier's counts over the model's
    tables (table_counts; None without mtier)."""

    def __init__(self, model):
        c = io_counts()
        self.read = c[0] + c[2] * 4096
        self.minflt = minor_faults()
        self.mtier = table_counts(model.parameters())


class Checkpoint:
    """The --checkpoint exercise: save before step `at`, load before step
    `at + n`, then the first REPLAY_STEPS of step `at`'s inputs again."""

    def __init__(self, directory, at, n):
        self.path = os.path.join(directory, f"dlrm-checkpoint-{os.getpid()}.pt")
        self.at, self.n = at, n
        self.save_s = self.load_s = None
        self.saved_losses = []
        self.replay_same = None
        self.after_load_times = []
        self.bytes = 0
        # What the process had read and faulted, and what mtier had done to
        # the model's tables, at the start of each step and right after the
        # save (Counts): the steps before and after the save, and the save
        # itself, are differences of two of them.
        self.at_step = {}
        self.after_save = None

    def mark_io(self, step, model):
        self.at_step[step] = Counts(model)

    def save(self, torch, model):
        t = time.monotonic()
        with open(self.path, "wb") as f:
            torch.save(model.state_dict(), f)
            f.flush()
            os.fsync(f.fileno())
        end = time.monotonic()
        self.save_s = end - t
        self.bytes = os.path.getsize(self.path)
        self.after_save = Counts(model)
        # The CLOCK_MONOTONIC span, for a profiler's time filter (perf -k mono).
        log(f"checkpoint_saved {self.bytes} bytes in {self.save_s:.3f} s to {self.path} "
            f"(monotonic {t:.6f}-{end:.6f})")

    def load(self, torch, model):
        t = time.monotonic()
        state = torch.load(self.path, map_location="cpu")
        model.load_state_dict(state)
        del state
        self.load_s = time.monotonic() - t
        log(f"checkpoint_loaded in {self.load_s:.3f} s")

    def replay(self, torch, model, opt, loss_fn, inputs_of, out):
        """The saved step's first steps again from the loaded state: the
        same losses, bit for bit, or the load did not restore the model."""
        same = True
        for k in range(min(REPLAY_STEPS, len(self.saved_losses))):
            c0 = time.perf_counter()
            value = train_step(model, opt, loss_fn, inputs_of(self.at + k))
            self.after_load_times.append(time.perf_counter() - c0)
            out.write(f"replay step {self.at + k} loss {value.hex()}\n")
            same &= value.hex() == self.saved_losses[k]
        out.flush()
        self.replay_same = same

    def report(self, step_times):
        def sps(times):
            return len(times) / sum(times) if times and sum(times) > 0 else float("nan")
        before = sps(step_times[max(0, self.at - 10):self.at])
        after = sps(step_times[self.at:self.at + min(10, self.n)])
        after_load = sps(self.after_load_times[:10])
        n_after = min(10, self.n)
        mib = 1 << 20
        first, last = self.at_step[max(0, self.at - 10)], self.at_step[self.at]
        saved, end = self.after_save, self.at_step[self.at + n_after]
        log(f"checkpoint_reads before_mib {(last.read - first.read) / mib:.1f} "
            f"after_save_mib {(end.read - saved.read) / mib:.1f} "
            f"minflt_before {last.minflt - first.minflt} "
            f"minflt_after_save {end.minflt - saved.minflt} "
            f"(read from block devices or swapped in, and minor faults, during the 10 "
            f"steps before the save and the first {n_after} after it)")
        if first.mtier and last.mtier and saved.mtier and end.mtier:
            def moved(a, b):
                return " ".join(f"{k} {b[k] - a[k]}" for k in (
                    "evictions", "writebacks", "fetches", "prefetches", "missing_faults",
                    "minor_faults", "wp_faults"))
            log(f"checkpoint_mtier before: {moved(first.mtier, last.mtier)}; "
                f"save: {moved(last.mtier, saved.mtier)}; "
                f"after_save: {moved(saved.mtier, end.mtier)} (pages of the model's "
                f"tables, mtier_table_stats, over the 10 steps before the save, the save, "
                f"and the steps after it)")
        log(f"checkpoint save_s {self.save_s:.6f} load_s {self.load_s:.6f} "
            f"before_sps {before:.3f} after_save_sps {after:.3f} "
            f"after_load_sps {after_load:.3f} bytes {self.bytes} "
            f"replay {'identical' if self.replay_same else 'DIFFERENT'} "
            f"(steps/s over the 10 steps before the save, the first "
            f"{min(10, self.n)} after it, the first 10 after the load)")
        try:
            os.unlink(self.path)
        except OSError:
            pass


def step_inputs(torch, w, layout, loader, workers, dataset=None, mtier_k=None):
    """The steps' inputs: a plain generator, or a DataLoader over a
    map-style dataset whose item i is step i's whole batch (generated, or
    gathered from the in-memory dataset; given to mtier.lookahead(loader,
    mtier_k) when mtier_k is not None)."""
    if not loader:
        return (to_inputs(torch, b, layout) for b in w.batches())
    source = dataset or w

    class Steps(torch.utils.data.Dataset):
        def __len__(self):
            return w.steps

        def __getitem__(self, i):
            return to_inputs(torch, source.step_batch(i), layout)

    dl = torch.utils.data.DataLoader(Steps(), batch_size=None, shuffle=False,
                                     num_workers=workers)
    if mtier_k is None:
        return dl
    import mtier
    dl = mtier.lookahead(dl, mtier_k)
    log(f"mtier {mtier.__version__} from {os.path.dirname(mtier.__file__)}: "
        f"active {mtier.active()}, {mtier.status()}")
    return dl


def main():
    args = build_argparser().parse_args()
    preset = PRESETS.get(args.preset, {})
    spec = args.tables or parse_tables(preset.get("tables", PRESETS["ci"]["tables"]))
    steps = args.steps if args.steps is not None else preset.get("steps", 40)
    batch = args.batch if args.batch is not None else preset.get("batch", 128)
    init = args.init or preset.get("init", "dlrm")
    target = args.table_bytes
    if target is None and args.tables is None and "scale_to_ram" in preset:
        target = int(preset["scale_to_ram"] * mem_total())
    if target is not None:
        cur = sum(c * r * d * 4 for c, r, d in spec)
        spec = [(c, max(1, round(r * target / cur)), d) for c, r, d in spec]
    zipf = [float(z) for z in args.zipf.split(",") if z.strip()]
    if not zipf or min(zipf) <= 0:
        sys.exit("dlrm_train.py: --zipf wants positive exponents")
    tables = make_tables(spec, zipf)
    dense_mlp = [int(x) for x in args.dense_mlp.replace(",", "-").split("-") if x]
    top_mlp = [int(x) for x in args.top_mlp.replace(",", "-").split("-") if x]
    if steps < 1 or batch < 1 or args.pooling < 1:
        sys.exit("dlrm_train.py: --steps, --batch and --pooling must be >= 1")
    if args.workers < 0 or (args.workers and not args.loader):
        sys.exit("dlrm_train.py: --workers wants --loader and a count >= 0")
    if args.dataset_bytes and not args.loader:
        sys.exit("dlrm_train.py: --dataset-bytes wants --loader")
    if args.mtier_lookahead is not None and not args.loader:
        sys.exit("dlrm_train.py: --mtier-lookahead wants --loader")
    w = Workload(tables, batch, steps, args.pooling, args.dense_features, args.seed,
                 fixed_pooling=args.layout == "stacked")
    ckpt = None
    if args.checkpoint:
        at = args.checkpoint_at if args.checkpoint_at is not None else steps // 2
        if at < 10 or args.checkpoint_steps < 1 or at + args.checkpoint_steps >= steps:
            sys.exit("dlrm_train.py: --checkpoint wants --checkpoint-at >= 10, "
                     "--checkpoint-steps >= 1 and a step after the load "
                     "(--steps > at + N)")
        if not os.path.isdir(args.checkpoint):
            sys.exit(f"dlrm_train.py: --checkpoint: {args.checkpoint}: not a directory")
        ckpt = Checkpoint(args.checkpoint, at, args.checkpoint_steps)

    t0 = time.monotonic()
    log(f"workload: {w.describe()}")
    log(f"table_bytes {w.table_bytes}")
    log(f"tables {' '.join(str(t.bytes) for t in tables)}")
    if args.describe:
        return
    import torch
    torch.set_num_threads(args.threads)
    log(f"model: bottom MLP {[w.n_dense] + dense_mlp + [max(t.dim for t in tables)]}, "
        f"dot interaction, top MLP {top_mlp + [1]}, BCEWithLogits, SGD lr {args.lr}, "
        f"sparse gradients, init {init}, ids {args.layout}"
        f"{', DataLoader with %d workers' % args.workers if args.loader else ''}, "
        f"torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s)")

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = build_model(torch, w, dense_mlp, top_mlp, init, args.init_chunk)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    t_init = time.monotonic() - t0
    log(f"init_s {t_init:.3f}")
    dataset = None
    if args.dataset_bytes:
        t_d = time.monotonic()
        dataset = InMemoryDataset(w, args.dataset_bytes)
        log(f"dataset_bytes {dataset.bytes} ({len(dataset.perm)} samples in memory, "
            f"made in {time.monotonic() - t_d:.3f} s)")
    log(f"rss_after_init_bytes {proc_status('VmRSS')}")
    log(f"rss_anon_after_init_bytes {proc_status('RssAnon')}")

    compute = 0.0
    half_compute = 0.0
    step_times = []
    t_start = time.monotonic()
    io_start = io_counts()
    out = sys.stdout
    for step, inputs in enumerate(step_inputs(torch, w, args.layout, args.loader,
                                              args.workers, dataset, args.mtier_lookahead)):
        if step == 0 and args.loader and args.workers > 0:
            # Before the first update: from then on a forked worker also
            # keeps the old copy of every table page this process writes.
            log(f"workers_private_bytes {children_private_bytes()}")
        if ckpt:
            ckpt.mark_io(step, model)
        if ckpt and step == ckpt.at:
            ckpt.save(torch, model)
        if ckpt and step == ckpt.at + ckpt.n:
            ckpt.load(torch, model)
            source = dataset or w
            ckpt.replay(torch, model, opt, loss_fn,
                        lambda i: to_inputs(torch, source.step_batch(i), args.layout), out)
        c0 = time.perf_counter()
        value = train_step(model, opt, loss_fn, inputs)
        dt = time.perf_counter() - c0
        step_times.append(dt)
        if ckpt and step >= ckpt.at + ckpt.n:
            ckpt.after_load_times.append(dt)
        if ckpt and ckpt.at <= step < ckpt.at + REPLAY_STEPS:
            ckpt.saved_losses.append(value.hex())
        compute += dt
        if step >= steps // 2:
            half_compute += dt
        out.write(f"step {step} loss {value.hex()}\n")
        out.flush()
        if not math.isfinite(value):
            log(f"loss not finite at step {step}")
    wall = time.monotonic() - t_start
    if ckpt:
        ckpt.report(step_times)
    io = [b - a for a, b in zip(io_start, io_counts())]
    log(f"steps_io {io[0]} {io[1]} {io[2]} {io[3]} (during the steps: bytes this process read "
        "and wrote on block devices; pages swapped in and out machine-wide)")
    log(f"train_s {compute:.3f} (forward, backward, SGD; {wall:.3f} s with "
        "the workload generator)")
    log(f"steps_per_s {steps / compute:.3f}")
    log(f"steady_steps_per_s {(steps - steps // 2) / half_compute:.3f} "
        "(second half of the steps)")
    log(f"wall_steps_per_s {steps / wall:.3f} (including id generation)")
    log(f"median_step_ms {1000 * float(np.median(step_times)):.3f} "
        f"(min {1000 * min(step_times):.3f}, max {1000 * max(step_times):.3f})")
    if not args.no_hash:
        t_h = time.monotonic()
        digest = weights_sha256(model)
        out.write(f"weights sha256 {digest}\n")
        out.flush()
        log(f"hash_s {time.monotonic() - t_h:.3f}")
    log(f"vmhwm_bytes {proc_status('VmHWM')}")


if __name__ == "__main__":
    main()
