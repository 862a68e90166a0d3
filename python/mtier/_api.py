# SPDX-License-Identifier: Apache-2.0
"""The public API of the mtier package (see mtier/__init__.py; mtier(1),
"PyTorch"; libmtier(3) for the C calls underneath)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar

from mtier import _boot, _lib

if TYPE_CHECKING:  # torch is not imported at run time until the trainer has
    import torch

L = TypeVar("L")


def active() -> bool:
    """Whether mtier's runtime, libmtier.so.0, is loaded in this process
    (started under `mtier run` or with LD_PRELOAD, mtier(1)): its
    allocations of at least min_bytes become managed tables (mtier.conf(5))."""
    return _lib.load() is not None


def status() -> str:
    """One line: whether the PyTorch integration is active in this process
    and, when it is not, why ("inactive: ...", "off (MTIER_TORCH=0)", or
    "waiting for torch to be imported")."""
    return _boot.status()


def _weight_of(weight: Any) -> "torch.Tensor":
    w = getattr(weight, "weight", weight)  # an nn.Embedding / nn.EmbeddingBag, or its weight
    if not hasattr(w, "data_ptr") or not hasattr(w, "stride"):
        raise TypeError(f"mtier.prefetch_rows: want a 2-D CPU tensor or an embedding module, "
                        f"not {type(weight).__name__}")
    if w.device.type != "cpu" or w.dim() != 2 or w.stride(1) != 1:
        raise ValueError("mtier.prefetch_rows: want a 2-D CPU tensor with contiguous rows")
    return w


def prefetch_rows(weight: Any, ids: "torch.Tensor", *, write: bool = False) -> int:
    """Brings rows `ids` of `weight` (a 2-D CPU tensor with contiguous rows,
    or an nn.Embedding / nn.EmbeddingBag) into DRAM before the program
    touches them and pins them for the current batch: mtier_prefetch_rows()
    of libmtier(3), synchronously, for the batch being computed. `ids` is
    an int32 or int64 CPU tensor (negative ids are ignored); write=True says
    the step will write those rows (a training update), so they come in
    writable. Returns the pages read from a store (0 when nothing had to
    be read, when `weight` is not in a managed table, or without mtier).
    Raises TypeError or ValueError for arguments it cannot take, and
    OSError for an error of the library (its errno)."""
    w = _weight_of(weight)
    if not (hasattr(ids, "dtype") and str(ids.dtype) in ("torch.int32", "torch.int64")
            and ids.device.type == "cpu"):
        raise TypeError("mtier.prefetch_rows: ids must be an int32 or int64 CPU tensor")
    lib = _lib.load()
    if lib is None or ids.numel() == 0 or lib.table_find(w.data_ptr()) < 0:
        return 0
    ids = ids.contiguous()
    batch = _boot.current_batch()
    rc = lib.prefetch_rows(w.data_ptr(), w.stride(0) * w.element_size(), ids.data_ptr(),
                           ids.numel(), ids.element_size(), batch,
                           _lib.PREFETCH_WRITE if write else 0)
    if rc < 0:
        raise OSError(-rc, f"mtier_prefetch_rows: {os.strerror(-rc)}")
    return int(rc)


def lookahead(loader: L, k: int = 1) -> L:
    """Keeps a torch DataLoader `k` batches (0 to 64) ahead of the trainer
    and names each batch's embedding rows to mtier's lookahead while the
    current one computes, as `mtier run --lookahead K` does for every
    DataLoader (mtier(1), "PyTorch"). Returns `loader` itself, so that

        for batch in mtier.lookahead(loader, 2): ...

    reads as it says. The batches, their order and the trainer's results
    are those of `loader` alone: batches are pulled ahead only from a
    loader with workers (num_workers > 0). Without mtier's library in the
    process, or with MTIER_TORCH=0, it changes nothing. Starts the
    PyTorch integration if mtier's sitecustomize has not (a program run
    with LD_PRELOAD alone). Raises TypeError when `loader` is not a
    DataLoader, ValueError for a `k` outside 0..64."""
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= 64:
        raise ValueError(f"mtier.lookahead: k must be a number of batches, 0 to 64, not {k!r}")
    import torch  # the caller has a DataLoader: torch is imported already

    if not isinstance(loader, torch.utils.data.DataLoader):
        raise TypeError(f"mtier.lookahead: want a torch.utils.data.DataLoader, "
                        f"not {type(loader).__name__}")
    if _boot.start_explicitly(torch):
        from mtier import _torch
        _torch.set_loader_lookahead(loader, k)
    return loader

