# SPDX-License-Identifier: Apache-2.0
"""load_state_dict over parameters held in mtier tables (load_state.test).

Two 4 MiB embedding tables, seeded. Prints, one line per case, a hash of
every parameter after it; the same lines must come out with and without
mtier. Under mtier (libmtier.so preloaded, the torch integration on) it
also prints to stderr how many parameters the integration dropped before
load_state_dict overwrote them, and how many of their pages were read back
from a store during the plain load (case 1): none should be.

Cases: 1 a saved state loaded over trained weights; 2 the model's own
state_dict loaded into itself (shares the parameters' memory); 3 strict=False
with one table's key missing; 4 one table's shape wrong (an error, the other
table loaded); 5 a float64 state (copy_ converts)."""

import hashlib
import io
import sys

import torch

from table_counts import table_counts

ROWS, DIM = 16384, 64  # 4 MiB a table


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.t0 = torch.nn.EmbeddingBag(ROWS, DIM, mode="sum")
        self.t1 = torch.nn.EmbeddingBag(ROWS, DIM, mode="sum")


def digest(model):
    h = hashlib.sha256()
    for name, p in model.named_parameters():
        h.update(name.encode())
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()[:16]


def train(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            ids = torch.randint(0, ROWS, (2048,), generator=g)
            p[ids] += torch.randn(2048, DIM, generator=g)


def page_reads(model):
    """Pages of the model's tables read back from a store so far (fetches
    and read-ahead), by mtier_table_stats; None without mtier."""
    counts = table_counts(model.parameters())
    return None if counts is None else counts["fetches"] + counts["prefetches"]


def discards():
    m = sys.modules.get("mtier._torch")
    return m._S.counters.load_discards if m is not None and m._S is not None else None


def main():
    torch.manual_seed(7)
    model = Model()
    train(model, 1)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    print("saved", digest(model))

    # 1: over trained weights (their pages partly in the store under a small budget)
    train(model, 2)
    buf.seek(0)
    state = torch.load(buf)
    before = page_reads(model)
    model.load_state_dict(state)
    after = page_reads(model)
    print("case1", digest(model))
    if before is not None:
        print(f"# case1 pages read back during load_state_dict: {after - before}", file=sys.stderr)

    # 2: its own state: the same memory on both sides
    train(model, 3)
    d = digest(model)
    model.load_state_dict(model.state_dict())
    print("case2", digest(model), "unchanged" if digest(model) == d else "CHANGED")

    # 3: strict=False, t1 missing: t1 keeps its weights
    partial = {"t0.weight": state["t0.weight"]}
    model.load_state_dict(partial, strict=False)
    print("case3", digest(model))

    # 4: t0's shape wrong: an error; t0 keeps its weights, t1 is loaded
    train(model, 4)
    wrong = {"t0.weight": torch.zeros(ROWS // 2, DIM), "t1.weight": state["t1.weight"]}
    try:
        model.load_state_dict(wrong)
        print("case4 no error")
    except RuntimeError:
        print("case4", digest(model))

    # 5: float64: converted by copy_
    train(model, 5)
    model.load_state_dict({k: v.double() for k, v in state.items()})
    print("case5", digest(model))

    n = discards()
    if n is not None:
        print(f"# load_state_dict discards: {n}", file=sys.stderr)


if __name__ == "__main__":
    main()
