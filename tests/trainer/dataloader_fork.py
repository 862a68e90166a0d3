# SPDX-License-Identifier: Apache-2.0
"""An in-memory dataset read by forked DataLoader workers (run by
dataloader_fork.test, with and without mtier).

The dataset - features (ROWS x DIM float32) and labels - is made in this
process before any worker forks, as a trainer that loads its data into
memory does; with MTIER_MIN_BYTES at or below its size it is a managed
table, so the workers read the parent's table. For each configuration
(workers 2 and 4, persistent_workers off and on, fork start method) a
DataLoader with a seeded shuffle runs EPOCHS epochs and a small model
trains on every batch. One line per configuration: its name, the sha256 of
every batch in order, and the final loss as float.hex(); a run under mtier
must print the same lines as a run without it.

With --fincore-max BYTES, a thread reads the residency of mtier's region
(fincore on its memfd, the kernel's count) every 100 ms and the run fails
when it ever exceeds BYTES; the peak is printed on stderr.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

CONFIGS = [(2, False), (2, True), (4, False), (4, True)]


class InMemory(Dataset):
    def __init__(self, rows, dim, seed):
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((rows, dim), dtype=np.float32)
        self.y = (self.x[:, 0] + self.x[:, 1] > 0).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), torch.tensor(self.y[i])


def region_fd():
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "mtier-region" in os.readlink("/proc/self/fd/" + fd):
                return fd
        except OSError:
            pass
    return None


class Residency(threading.Thread):
    """Samples the region memfd's resident bytes (fincore) until stopped."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.path = "/proc/%d/fd/%s" % (os.getpid(), fd)
        self.peak = 0
        self.samples = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            r = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", self.path],
                               capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip():
                self.peak = max(self.peak, int(r.stdout.split()[0]))
                self.samples += 1
            self.stop.wait(0.1)


def run(ds, workers, persistent, epochs, dim):
    torch.manual_seed(0)
    g = torch.Generator()
    g.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(dim, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    dl = DataLoader(ds, batch_size=256, shuffle=True, num_workers=workers,
                    persistent_workers=persistent, generator=g,
                    multiprocessing_context="fork")
    h = hashlib.sha256()
    loss = torch.tensor(0.0)
    for _ in range(epochs):
        for xb, yb in dl:
            h.update(xb.numpy().tobytes())
            h.update(yb.numpy().tobytes())
            opt.zero_grad()
            loss = loss_fn(model(xb).squeeze(1), yb)
            loss.backward()
            opt.step()
    return h.hexdigest(), float(loss.item()).hex()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--fincore-max", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    ds = InMemory(a.rows, a.dim, 7)
    mon = None
    if a.fincore_max:
        fd = region_fd()
        if fd is None:
            print("FAIL: --fincore-max given but no mtier region in this process", file=sys.stderr)
            sys.exit(1)
        mon = Residency(fd)
        mon.start()
    t0 = time.time()
    for workers, persistent in CONFIGS:
        digest, loss = run(ds, workers, persistent, a.epochs, a.dim)
        print("workers=%d persistent=%d batches=%s loss=%s" % (workers, persistent, digest, loss),
              flush=True)
    print("# %.1f s" % (time.time() - t0), file=sys.stderr)
    if mon:
        mon.stop.set()
        mon.join()
        print("# region resident peak %d bytes (fincore, %d samples), limit %d"
              % (mon.peak, mon.samples, a.fincore_max), file=sys.stderr)
        if mon.samples == 0:
            print("FAIL: fincore gave no reading", file=sys.stderr)
            sys.exit(1)
        if mon.peak > a.fincore_max:
            print("FAIL: the region held %d bytes, over the budget %d" % (mon.peak, a.fincore_max),
                  file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
