"""mtier's Python side: an unmodified PyTorch trainer under mtier tells the
lookahead its next batches (mtier-run(1), "PyTorch").

Loaded by mtier's sitecustomize (`mtier run` sets PYTHONPATH); importing it
yourself is not needed. What it does, once torch is imported in a process
with libmtier.so loaded:

- a global forward pre-hook on every nn.Embedding / nn.EmbeddingBag whose
  weight lies in a managed table hands the op's ids to mtier_prefetch_rows()
  before the lookup, so the batch's misses are read at the store's queue
  depth instead of one fault at a time;
- iterating a torch DataLoader keeps MTIER_LOOKAHEAD batches (default 1; 0:
  off) ahead of the trainer and names their rows asynchronously while the
  current batch computes; the pages stay pinned until their batch is done.

MTIER_TORCH=0 turns all of it off.
"""

from mtier._boot import status  # noqa: F401

__all__ = ["status"]
