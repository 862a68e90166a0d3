# SPDX-License-Identifier: Apache-2.0
"""The generated embedding workload of the DLRM test trainer (dlrm_train.py).

What it reproduces (docs/architecture.md, "The workload the benchmarks reproduce"):

- per-table power-law (Zipf) row popularity, P(rank k) ~ 1/(k+1)^s, with the
  exponent chosen per table (HugeCTR's generators use 0.9 / 1.1 / 1.3,
  FBGEMM's a Zipf with alpha > 1 and a random id permutation);
- popular ranks scattered over the table by a seeded pseudo-random
  permutation of the row ids (as hashed ids are in real models), so hot rows
  land on many different pages and page-level heat is flatter than row heat;
- pooling factors (lookups per bag) drawn around a mean: 1 + Poisson(mean - 1),
  so every bag has at least one row and the mean is exactly `mean`;
- dense features and labels for the MLPs.

Everything is generated batch by batch from numpy Generators seeded from one
integer; nothing of the size of a table is ever allocated (the sampler is
O(1) in the table size and the permutation is a Feistel network, not an
array), so the generator adds no big buffers of its own to the process.
The same seed gives the same trace on every run, with or without mtier.
"""

import math

import numpy as np

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix64(x):
    """splitmix64's finaliser on a uint64 array (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class RowPermutation:
    """A seeded bijection of [0, n): a 4-round Feistel network on the
    smallest even bit width that covers n, with cycle walking for values
    that fall outside [0, n). No memory in proportion to n."""

    ROUNDS = 4

    def __init__(self, n, seed):
        self.n = int(n)
        bits = max(2, (self.n - 1).bit_length())
        self.half = (bits + 1) // 2
        self.mask = np.uint64((1 << self.half) - 1)
        keys = np.random.Generator(np.random.PCG64(seed)).integers(
            0, 2**63, size=self.ROUNDS, dtype=np.uint64)
        self.keys = [np.uint64(k) for k in keys]

    def _once(self, x):
        h = np.uint64(self.half)
        left = x >> h
        right = x & self.mask
        for k in self.keys:
            left, right = right, left ^ (_mix64(right ^ k) & self.mask)
        return (left << h) | right

    def __call__(self, ranks):
        with np.errstate(over="ignore"):
            x = self._once(np.asarray(ranks, dtype=np.uint64))
            out = x >= np.uint64(self.n)
            while out.any():
                x[out] = self._once(x[out])
                out = x >= np.uint64(self.n)
        return x.astype(np.int64)


class ZipfSampler:
    """Ranks 0..n-1 with P(k) ~ 1/(k+1)^s, by rejection-inversion
    (Hoermann & Derflinger 1996, as in Apache Commons' sampler and in
    mtier's C++ sample trainer), vectorised: O(1) memory in n, any s > 0."""

    def __init__(self, n, s):
        self.n = float(n)
        self.s = float(s)
        self.hx1 = self._hint(1.5) - 1.0
        self.hn = self._hint(self.n + 0.5)
        self.sq = 2.0 - self._hint_inv(self._hint(2.5) - self._h(2.0))

    @staticmethod
    def _helper1(x):  # log1p(x) / x, continuous at 0
        x = np.asarray(x, dtype=np.float64)
        small = np.abs(x) <= 1e-8
        safe = np.where(small, 1.0, x)
        return np.where(small, 1.0 - x / 2.0, np.log1p(safe) / safe)

    @staticmethod
    def _helper2(x):  # expm1(x) / x, continuous at 0
        x = np.asarray(x, dtype=np.float64)
        small = np.abs(x) <= 1e-8
        safe = np.where(small, 1.0, x)
        return np.where(small, 1.0 + x / 2.0, np.expm1(safe) / safe)

    def _h(self, x):
        return np.exp(-self.s * np.log(x))

    def _hint(self, x):
        lx = np.log(x)
        return self._helper2((1.0 - self.s) * lx) * lx

    def _hint_inv(self, x):
        t = np.maximum(-1.0, x * (1.0 - self.s))
        return np.exp(self._helper1(t) * x)

    def sample(self, rng, size):
        out = np.empty(size, dtype=np.int64)
        todo = np.arange(size)
        while todo.size:
            u = self.hn + rng.random(todo.size) * (self.hx1 - self.hn)
            x = self._hint_inv(u)
            k = np.clip(np.floor(x + 0.5), 1.0, self.n)
            ok = (k - x <= self.sq) | (u >= self._hint(k + 0.5) - self._h(k))
            out[todo[ok]] = k[ok].astype(np.int64) - 1
            todo = todo[~ok]
        return out


class Table:
    """One embedding table's shape and access pattern."""

    def __init__(self, rows, dim, zipf):
        self.rows = int(rows)
        self.dim = int(dim)
        self.zipf = float(zipf)

    @property
    def bytes(self):
        return self.rows * self.dim * 4


class Workload:
    """The whole trace: tables, pooling, batch, steps, dense features, seed.

    step_batch(step) is step's (dense [B x n_dense] float32, [(indices int64,
    offsets int64) per table], labels [B x 1] float32), computed from the
    seed and the step alone (so a DataLoader's workers can make any step);
    batches() yields them in order. With fixed_pooling every bag takes
    exactly round(pooling) rows (the stacked [tables, B, P] layout).
    """

    def __init__(self, tables, batch, steps, pooling, n_dense, seed, fixed_pooling=False):
        self.tables = tables
        self.batch = int(batch)
        self.steps = int(steps)
        self.pooling = float(pooling)
        self.n_dense = int(n_dense)
        self.seed = int(seed)
        self.fixed_pooling = bool(fixed_pooling)
        self._setup = None

    @property
    def table_bytes(self):
        return sum(t.bytes for t in self.tables)

    def describe(self):
        groups = []
        for t in self.tables:
            key = (t.rows, t.dim)
            if groups and groups[-1][0] == key:
                groups[-1][1] += 1
            else:
                groups.append([key, 1])
        spec = ",".join(f"{c}x{r}x{d}" for (r, d), c in groups)
        zipf = " ".join(f"{t.zipf:.2f}" for t in self.tables)
        return (f"{len(self.tables)} tables ({spec}, count x rows x dim fp32), "
                f"{self.table_bytes / 2**20:.1f} MiB, "
                f"{sum(t.rows for t in self.tables)} rows; "
                + (f"pooling {round(self.pooling)} per bag; " if self.fixed_pooling else
                   f"pooling mean {self.pooling:g} (1 + Poisson); ")
                + f"batch {self.batch}; "
                f"{self.steps} steps; zipf {zipf}; ids scattered by a seeded "
                f"permutation; {self.n_dense} dense features; seed {self.seed}")

    def _prepare(self):
        """What every step shares: the samplers, permutations and the label
        function, made once from the seed."""
        if self._setup is None:
            ss = np.random.SeedSequence(self.seed)
            label_ss, perm_ss = ss.spawn(2)
            perm_seeds = perm_ss.generate_state(len(self.tables), dtype=np.uint64)
            samplers = [ZipfSampler(t.rows, t.zipf) for t in self.tables]
            perms = [RowPermutation(t.rows, int(perm_seeds[i]))
                     for i, t in enumerate(self.tables)]
            # Labels: a fixed logistic function of the dense features plus
            # noise, so that the model has something to learn and losses move.
            w_true = np.random.Generator(np.random.PCG64(label_ss)).standard_normal(self.n_dense)
            self._setup = (samplers, perms, w_true)
        return self._setup

    def step_batch(self, step):
        samplers, perms, w_true = self._prepare()
        ss = np.random.SeedSequence([self.seed, 1 + int(step)])
        dense_ss, label_ss, *table_ss = ss.spawn(2 + len(self.tables))
        dense_rng = np.random.Generator(np.random.PCG64(dense_ss))
        label_rng = np.random.Generator(np.random.PCG64(label_ss))
        dense = dense_rng.random((self.batch, self.n_dense), dtype=np.float32)
        logit = (dense - 0.5) @ w_true
        labels = (label_rng.random(self.batch) < 1.0 / (1.0 + np.exp(-2.0 * logit)))
        sparse = []
        for t_ss, sampler, perm in zip(table_ss, samplers, perms):
            rng = np.random.Generator(np.random.PCG64(t_ss))
            if self.fixed_pooling:
                lengths = np.full(self.batch, max(1, round(self.pooling)), dtype=np.int64)
            else:
                lengths = 1 + rng.poisson(max(self.pooling - 1.0, 0.0), self.batch)
            offsets = np.zeros(self.batch, dtype=np.int64)
            np.cumsum(lengths[:-1], out=offsets[1:])
            ids = perm(sampler.sample(rng, int(lengths.sum())))
            sparse.append((ids, offsets))
        return dense, sparse, labels.astype(np.float32).reshape(-1, 1)

    def batches(self):
        for step in range(self.steps):
            yield self.step_batch(step)


def parse_size(text):
    """'512M', '512MiB', '2.5G', '1048576' -> bytes (binary units)."""
    t = text.strip().lower()
    if t.endswith("ib"):
        t = t[:-2]
    elif t.endswith("b"):
        t = t[:-1]
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    mult = 1
    if t and t[-1] in units:
        mult = units[t[-1]]
        t = t[:-1]
    value = float(t)
    if value < 0 or not math.isfinite(value):
        raise ValueError(f"bad size {text!r}")
    return int(value * mult)
