# SPDX-License-Identifier: Apache-2.0
"""mtier's Python side: an unmodified PyTorch trainer under mtier tells the
lookahead its next batches (mtier(1), "PyTorch"; libmtier(3), "Lookahead").

Loaded by mtier's sitecustomize when a program runs under `mtier run`
(which puts it on PYTHONPATH); importing it is then not needed. What it
does, once torch is imported in a process with libmtier.so.0 loaded:

- a global forward pre-hook on every nn.Embedding / nn.EmbeddingBag whose
  weight lies in a managed table hands the op's ids to mtier_prefetch_rows()
  before the lookup, so the batch's misses are read at the store's queue
  depth instead of one fault at a time;
- iterating a torch DataLoader keeps MTIER_LOOKAHEAD batches (default 1; 0:
  off) ahead of the trainer and names their rows asynchronously while the
  current batch computes; the pages stay pinned until their batch is done.

MTIER_TORCH=0 turns all of it off.

A trainer that wants to say it in code uses the public API below; each
call is a no-op (and returns what says so) in a process without mtier, so
the same program runs with and without it, computing the same:

    import mtier
    loader = mtier.lookahead(loader, 2)   # under mtier: 2 batches ahead
    print(mtier.active(), mtier.status())
"""

from mtier._api import active, lookahead, prefetch_rows, status
from mtier._version import __version__

__all__ = ["__version__", "active", "lookahead", "prefetch_rows", "status"]
