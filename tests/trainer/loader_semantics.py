#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The DataLoader lookahead must not change what a trainer sees: run under
`mtier run --lookahead K` with K as the argument (the integration active),
each case iterates a
DataLoader and compares every batch with the plain dataset's, in order.
Prints one "ok: ..." line a case; exits 1 at the first difference."""

import sys

import torch
from torch.utils.data import DataLoader, Dataset

import mtier


class Numbers(Dataset):
    """Item i is {"i": tensor([i]), "pair": (tensor, [tensor])}; item
    `bad` raises ValueError."""

    def __init__(self, n, bad=-1):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"item {i} is bad")
        return {"i": torch.tensor([i]), "pair": (torch.tensor([i, -i]), [torch.tensor([2 * i])])}


def values(batch):
    return (batch["i"].tolist(), batch["pair"][0].tolist(), batch["pair"][1][0].tolist())


def expect(what, got, want):
    if got != want:
        print(f"FAIL: {what}: got {got!r}, want {want!r}")
        sys.exit(1)
    print(f"ok: {what}")


def want(n, bs):
    return [values({"i": torch.tensor([[j] for j in range(a, min(a + bs, n))]),
                    "pair": (torch.tensor([[j, -j] for j in range(a, min(a + bs, n))]),
                             [torch.tensor([[2 * j] for j in range(a, min(a + bs, n))])])})
            for a in range(0, n, bs)]


def main():
    status = mtier.status()
    expect("integration active", status.startswith("active"), True)
    for workers in (0, 2):
        for persistent in ((False, True) if workers else (False,)):
            loader = DataLoader(Numbers(23), batch_size=4, num_workers=workers,
                                persistent_workers=persistent)
            tag = f"workers {workers}, persistent {persistent}"
            for epoch in range(3):
                expect(f"{tag}, epoch {epoch}: every batch in order",
                       [values(b) for b in loader], want(23, 4))
            # Abandoned after 2 batches, then a full epoch.
            it = iter(loader)
            first = [values(next(it)), values(next(it))]
            expect(f"{tag}: abandoned epoch's first batches", first, want(23, 4)[:2])
            del it
            expect(f"{tag}: the epoch after an abandoned one",
                   [values(b) for b in loader], want(23, 4))
            expect(f"{tag}: len", len(loader), 6)
    # The lookahead really runs: once an embedding op on a managed table
    # (4 MiB: run with --min-bytes 2M, and a budget below it, --dram 2M,
    # else a prefetch could bring nothing in and nothing is pulled ahead)
    # has used batch 1's ids, the next batch pulls K more from a loader
    # with workers; not from one without.
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    emb = torch.nn.EmbeddingBag(16384, 64, mode="sum")
    for workers, more in ((1, k), (0, 0)):
        it = iter(DataLoader(Numbers(23), batch_size=4, num_workers=workers))
        emb(next(it)["i"].view(-1, 1))
        emb(next(it)["i"].view(-1, 1))
        expect(f"workers {workers}: {more} batches pulled ahead of the trainer",
               it._num_yielded, 2 + more)
        expect(f"workers {workers}: the rest in order", [values(b) for b in it],
               want(23, 4)[2:])
    # An exception comes in its turn: batches before it, then it, once.
    loader = DataLoader(Numbers(12, bad=9), batch_size=4)
    it = iter(loader)
    got = [values(next(it)), values(next(it))]
    try:
        next(it)
        raised = None
    except ValueError as e:
        raised = str(e)
    expect("batches before the failing one", got, want(12, 4)[:2])
    expect("the dataset's error in its turn", raised, "item 9 is bad")
    # After StopIteration, next() keeps raising it.
    it = iter(DataLoader(Numbers(3), batch_size=2))
    expect("short epoch", [values(b) for b in it], want(3, 2))
    try:
        next(it)
        again = False
    except StopIteration:
        again = True
    expect("StopIteration again after the end", again, True)
    print("PASS: loader semantics")


if __name__ == "__main__":
    main()
