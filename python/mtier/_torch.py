# SPDX-License-Identifier: Apache-2.0
"""The torch integration proper: the embedding ops' forward pre-hook, the
DataLoader lookahead and checkpoint loads that overwrite a table. Activated once, by mtier._boot, after torch's import.

Batches are numbered by one counter for the whole process (the numbers
handed to mtier_prefetch_rows and mtier_prefetch_advance): a batch pulled
ahead from a DataLoader gets its number when pulled, and the number becomes
the current one (advance) when the trainer receives the batch. A program
that runs embedding ops without a DataLoader gets a new number whenever an
op's module is called a second time (the next step has begun).

Nothing here may raise into the trainer: every entry catches its own errors,
says the first one once (stderr) and turns the integration off.
"""

import atexit
import collections
import errno
import functools
import os
import weakref

from mtier import _lib
from mtier._boot import _flag, say, verbose

MAX_LOOKAHEAD = 64
MAX_LEAVES = 1024  # tensors looked at in one batch when learning its routes
WAIT_MS = 2000     # the longest an op waits for its batch's reads (then it faults)


class _Counters:
    def __init__(self):
        self.prehook_calls = 0     # synchronous hints from the pre-hook
        self.covered = 0           # ops whose ids the lookahead had named already
        self.waited = 0            # of which found their batch's reads still running
        self.loader_calls = 0      # asynchronous hints of batches pulled ahead
        self.batches_ahead = 0     # batches pulled ahead and hinted
        self.routes = 0            # (loader, module) pairs learned
        self.loader_ks = set()     # the K of mtier.lookahead(loader, K) calls in use
        self.load_discards = 0     # parameters dropped before a load_state_dict overwrote them
        self.load_discarded = 0    # their bytes


class _State:
    def __init__(self, torch, lib, lookahead):
        self.torch = torch
        self.lib = lib
        self.k = lookahead
        self.on = True
        self.batch_no = 0          # the batch being computed now
        self._numbers = 0
        self.current = None        # the DataLoader batch being computed, if any
        self.seen = set()          # id() of the modules called in batch_no (no loader)
        self.counters = _Counters()

    def number(self):
        self._numbers += 1
        return self._numbers

    def enter(self, no):
        """Batch `no` is now computing: earlier batches' pins go."""
        self.batch_no = no
        self.seen.clear()
        self.lib.prefetch_advance(no)

    def fail(self, where, e):
        if self.on:
            self.on = False
            say(f"torch integration off after an error in {where}: {e!r}")


_S = None


def _writes(torch, module, weight):
    """Whether the op's step will write the rows it reads: a training
    update (grad on) or max_norm's in-place renormalisation."""
    return bool((weight.requires_grad and torch.is_grad_enabled())
                or getattr(module, "max_norm", None) is not None)


def _managed_weight(module):
    """(weight, row_bytes) if module's weight is a CPU matrix whose rows are
    contiguous and which lies in an mtier table, else (None, 0)."""
    w = module.weight
    if w.device.type != "cpu" or w.dim() != 2 or w.stride(1) != 1 or w.numel() == 0:
        return None, 0
    if _S.lib.table_find(w.data_ptr()) < 0:
        return None, 0
    return w, w.stride(0) * w.element_size()


def _usable_ids(torch, ids):
    return (isinstance(ids, torch.Tensor) and ids.layout == torch.strided
            and ids.device.type == "cpu" and ids.dtype in (torch.int32, torch.int64)
            and ids.numel() > 0)


def _prefetch(weight, row_bytes, ids, batch, flags):
    ids = ids.contiguous()
    return _S.lib.prefetch_rows(weight.data_ptr(), row_bytes, ids.data_ptr(), ids.numel(),
                                ids.element_size(), batch, flags)


# ---- Routes: which tensor of a loader's batch feeds which module ----------

class _Route:
    """Where a module's ids sit in a batch: the leaf at `path` (keys and
    indexes from the batch's top), whole or as a fixed view of it."""
    __slots__ = ("path", "whole", "offset", "size", "stride", "leaf_shape", "dtype", "write")

    def ids_in(self, torch, batch):
        leaf = batch
        try:
            for key in self.path:
                if isinstance(leaf, dict) and key not in leaf:
                    return None  # (a defaultdict must not grow)
                leaf = leaf[key]
        except (KeyError, IndexError, TypeError):
            return None
        if not _usable_ids(torch, leaf) or leaf.dtype != self.dtype:
            return None
        if self.whole:
            return leaf
        if tuple(leaf.shape) != self.leaf_shape or not leaf.is_contiguous():
            return None
        return leaf.as_strided(self.size, self.stride, leaf.storage_offset() + self.offset)


def _leaves(torch, data, path=(), out=None, depth=0):
    """(path, tensor) of every tensor in a batch of tuples, lists and dicts."""
    if out is None:
        out = []
    if len(out) >= MAX_LEAVES or depth > 6:
        return out
    if isinstance(data, torch.Tensor):
        if data.layout == torch.strided:
            out.append((path, data))
    elif isinstance(data, (tuple, list)):
        for i, x in enumerate(data):
            _leaves(torch, x, path + (i,), out, depth + 1)
    elif isinstance(data, dict):
        for key, x in data.items():
            _leaves(torch, x, path + (key,), out, depth + 1)
    return out


def _learn(torch, batch, module, ids, weight):
    """The route of module's ids in `batch` (by address: the ids are one of
    its tensors or a view of one), or None when they are not in it (made
    by the trainer from the batch: they are then named by the pre-hook
    only)."""
    esz = ids.element_size()
    base = ids.data_ptr()
    span = sum((s - 1) * st for s, st in zip(ids.shape, ids.stride()))
    for path, leaf in batch.leaves(torch):
        if leaf.dtype != ids.dtype or leaf.device.type != "cpu" or not leaf.is_contiguous():
            continue
        start = leaf.data_ptr()
        end = start + leaf.numel() * esz
        if not start <= base < end:
            continue
        r = _Route()
        r.path, r.dtype = path, ids.dtype
        r.write = _writes(torch, module, weight)
        r.whole = base == start and ids.shape == leaf.shape
        if not r.whole:
            if (base - start) % esz or min(ids.stride()) < 0 or base + span * esz >= end:
                return None
            r.offset = (base - start) // esz
            r.size, r.stride = tuple(ids.shape), tuple(ids.stride())
            r.leaf_shape = tuple(leaf.shape)
        return r
    return None


class _Plan:
    """A DataLoader's routes, learned at its first batches: module -> route
    (None: the module's ids are not in the batch); `k` its own lookahead
    (mtier.lookahead), None: the process's (MTIER_LOOKAHEAD)."""

    def __init__(self):
        self.routes = weakref.WeakKeyDictionary()
        self.k = None

    def lookahead(self):
        return _S.k if self.k is None else self.k


class _Batch:
    __slots__ = ("no", "data", "plan", "hinted", "named", "_leaves")

    def __init__(self, no, data, plan):
        self.no, self.data, self.plan = no, data, plan
        self.hinted = {}      # id() of the modules whose ids were named ahead -> ticket
        self.named = False
        self._leaves = None

    def leaves(self, torch):
        if self._leaves is None:
            self._leaves = _leaves(torch, self.data)
        return self._leaves


def _hint_ahead(torch, b):
    """Names batch b's rows for every routed module, asynchronously."""
    b.named = True
    if _S.lib.prefetch_useful() <= 0:
        return
    flags = _lib.PREFETCH_ASYNC
    for module, route in list(b.plan.routes.items()):
        if route is None:
            continue
        ids = route.ids_in(torch, b.data)
        if ids is None:
            continue
        weight, row_bytes = _managed_weight(module)
        if weight is None:
            continue
        ticket = _prefetch(weight, row_bytes, ids, b.no,
                           flags | (_lib.PREFETCH_WRITE if route.write else 0))
        if ticket > 0:
            b.hinted[id(module)] = (ticket, ids.data_ptr(), tuple(ids.shape))
        _S.counters.loader_calls += 1
    if b.hinted:
        _S.counters.batches_ahead += 1


# ---- The forward pre-hook ---------------------------------------------------

def _on_lookup(module, args):
    torch = _S.torch
    if not args or not _usable_ids(torch, args[0]):
        return
    weight, row_bytes = _managed_weight(module)
    if weight is None:
        return
    ids = args[0]
    cur = _S.current
    if cur is not None:
        named = cur.hinted.get(id(module))
        if named is not None and named[1] == ids.data_ptr() and named[2] == tuple(ids.shape):
            # Named ahead (these very ids: not an op of another loader's
            # batch, nor the module's second call): if the reads still run,
            # wait for them (batched at the store's queue depth) rather than
            # fault the rest one at a time.
            del cur.hinted[id(module)]
            _S.counters.covered += 1
            if _S.lib.prefetch_wait(named[0], 0) == -errno.ETIMEDOUT:
                _S.counters.waited += 1
                _S.lib.prefetch_wait(named[0], WAIT_MS)
            return
        if module not in cur.plan.routes:
            route = _learn(torch, cur, module, ids, weight)
            cur.plan.routes[module] = route
            if route is not None:
                _S.counters.routes += 1
    else:
        if id(module) in _S.seen:
            _S.enter(_S.number())
        _S.seen.add(id(module))
    _prefetch(weight, row_bytes, ids, _S.batch_no,
              _lib.PREFETCH_WRITE if _writes(torch, module, weight) else 0)
    _S.counters.prehook_calls += 1


def _make_pre_hook(torch):
    kinds = (torch.nn.Embedding, torch.nn.EmbeddingBag)

    def mtier_embedding_pre_hook(module, args):
        # prefetch_useful first: while every table fits in the DRAM budget
        # nothing is read ahead, and the checks below, gathered for 8
        # tables, cost the trainer 2-4% of its step (measured).
        if _S.on and isinstance(module, kinds) and _S.lib.prefetch_useful() > 0:
            try:
                _on_lookup(module, args)
            except Exception as e:  # noqa: BLE001 - never into the trainer
                _S.fail("the embedding pre-hook", e)
        return None

    return mtier_embedding_pre_hook


# ---- The DataLoader lookahead ---------------------------------------------

class _Ahead:
    """One DataLoader iterator's batches: `buf` holds those pulled from it
    and not yet handed to the trainer, in order; `end` the exception
    (StopIteration included) it raised when pulled past them, raised in its
    turn. Batches are pulled ahead only from a loader with workers (a
    single-process loader runs the dataset in the trainer's process: pulled
    early, its random draws would interleave differently with the model's)
    and only once the plan knows which tensors feed the embedding ops."""

    def __init__(self, plan, workers):
        self.plan = plan
        self.workers = workers
        self.buf = collections.deque()
        self.end = None
        self.owned = None  # this iterator's batch that is the current one

    def next(self, it, pull):
        ahead = self.plan.lookahead() if (_S.on and self.workers > 0 and self.plan.routes) else 0
        while self.end is None and len(self.buf) <= ahead:
            try:
                data = pull(it)
            except Exception as e:  # noqa: BLE001 - the loader's, raised in its turn
                self.end = e
            else:
                self.buf.append(_Batch(_S.number(), data, self.plan))
        if not self.buf:
            end, self.end = self.end, None
            if isinstance(end, StopIteration):
                self.release()
            raise end
        b = self.buf[0]
        try:
            _S.current = self.owned = b
            _S.enter(b.no)
            if _S.on and self.plan.routes:
                for i in range(1, len(self.buf)):
                    if not self.buf[i].named:
                        _hint_ahead(_S.torch, self.buf[i])
        except Exception as e:  # noqa: BLE001
            _S.fail("the DataLoader lookahead", e)
        self.buf.popleft()  # only now: an interrupt above leaves b to come next
        return b.data

    def release(self):
        """This iterator is done (its end, or dropped): its batch is no
        longer the current one, and the pins of the batches it named go."""
        try:
            if self.owned is not None and _S.current is self.owned:
                _S.current = None
                _S.enter(_S.number())
            self.owned = None
            self.buf.clear()
        except Exception as e:  # noqa: BLE001 - also runs from a finalizer
            _S.fail("the DataLoader lookahead's release", e)


_PLANS = weakref.WeakKeyDictionary()  # DataLoader -> _Plan (not on the loader: it pickles)


def _patch_loader(torch):
    from torch.utils.data import dataloader as dl
    base = dl._BaseDataLoaderIter
    pull = base.__next__

    @functools.wraps(pull)
    def __next__(self):
        d = self.__dict__
        ahead = d.get("_mtier_ahead")
        if ahead is None:
            plan = d.get("_mtier_plan") or _Plan()
            if not _S.on or plan.lookahead() <= 0:
                return pull(self)
            ahead = _Ahead(plan, getattr(self, "_num_workers", 0))
            if plan.k is not None:
                _S.counters.loader_ks.add(plan.k)
            d["_mtier_ahead"] = ahead
            weakref.finalize(self, ahead.release)
        return ahead.next(self, pull)

    base.__next__ = __next__
    loader_iter = dl.DataLoader.__iter__

    @functools.wraps(loader_iter)
    def __iter__(self):
        it = loader_iter(self)
        try:
            d = it.__dict__
            old = d.pop("_mtier_ahead", None)  # a persistent-workers iterator, reset
            if old is not None:
                old.release()
            plan = _PLANS.get(self)
            if plan is None:
                plan = _PLANS[self] = _Plan()
            d["_mtier_plan"] = plan
        except (AttributeError, TypeError):
            pass
        return it

    dl.DataLoader.__iter__ = __iter__


# ---- Checkpoint loads -----------------------------------------------------
#
# load_state_dict copies each saved tensor over its parameter (param.copy_).
# A parameter in a table whose pages are in a store would be read back page
# by page only to be overwritten: a 160 MiB model at a 25% budget spent
# most of its load_state_dict reading its own old weights. Dropped first
# (mtier_discard), its pages are placed as zeros on the copy's writes, with
# nothing read. Only where the copy surely overwrites every byte, and never
# where the saved tensor's memory could be the parameter's own.

LOAD_DISCARD_MIN = 1 << 20  # smaller parameters: not worth a call
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _storage_span(t):
    """(first byte, end) of the memory behind tensor t's storage."""
    st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    nbytes = st.nbytes() if hasattr(st, "nbytes") else st.size() * t.element_size()
    return st.data_ptr(), st.data_ptr() + nbytes


def _discard_before_copy(torch, param, src):
    """Drops param's whole pages when load_state_dict is about to copy src
    over all of it. Returns the bytes dropped (0: left as it is)."""
    # Plain tensors only: a subclass's copy_ may do anything.
    plain = (torch.Tensor, torch.nn.Parameter)
    if param is None or type(src) not in plain or type(param) not in plain:
        return 0
    if (src.layout != torch.strided or param.layout != torch.strided
            or src.device.type != "cpu" or param.device.type != "cpu"
            or src.dtype != param.dtype or src.shape != param.shape
            or not param.is_contiguous() or src.is_meta or param.is_meta):
        return 0
    start = param.data_ptr()
    end = start + param.numel() * param.element_size()
    if end - start < LOAD_DISCARD_MIN:
        return 0
    s0, s1 = _storage_span(src)
    if s0 < end and start < s1:  # the saved tensor shares the parameter's memory
        return 0
    if _S.lib.table_find(start) < 0:
        return 0
    lo = -(-start // _PAGE) * _PAGE
    hi = end // _PAGE * _PAGE
    if hi - lo < _PAGE or _S.lib.discard(lo, hi - lo) != 0:
        return 0
    return hi - lo


def _patch_state_loads(torch):
    base = torch.nn.Module
    load = base._load_from_state_dict

    @functools.wraps(load)
    def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args, **kwargs):
        # A module with load pre-hooks may rewrite the entries it reads, and
        # assign=True replaces parameters rather than copying into them.
        if (_S.on and not getattr(self, "_load_state_dict_pre_hooks", None)
                and not (local_metadata or {}).get("assign_to_params_buffers", False)):
            try:
                for name, param in self._parameters.items():
                    key = prefix + name
                    if key in state_dict:
                        n = _discard_before_copy(torch, param, state_dict[key])
                        if n:
                            _S.counters.load_discards += 1
                            _S.counters.load_discarded += n
            except Exception as e:  # noqa: BLE001 - never into the trainer
                _S.fail("load_state_dict", e)
        return load(self, state_dict, prefix, local_metadata, *args, **kwargs)

    base._load_from_state_dict = _load_from_state_dict


# ---- Start and exit -------------------------------------------------------

def set_loader_lookahead(loader, k):
    """mtier.lookahead(loader, k): this loader's batches are kept k ahead
    (its iterators made from now on)."""
    plan = _PLANS.get(loader)
    if plan is None:
        plan = _PLANS[loader] = _Plan()
    plan.k = k


def current_batch():
    """The batch being computed (0 before the integration started)."""
    return _S.batch_no if _S is not None else 0


def _lookahead_option():
    text = os.environ.get("MTIER_LOOKAHEAD", "1").strip() or "1"
    try:
        k = int(text)
        if 0 <= k <= MAX_LOOKAHEAD:
            return k, None
    except ValueError:
        pass
    return 1, f"MTIER_LOOKAHEAD={text!r} is not a number of batches 0..{MAX_LOOKAHEAD}; using 1"


def _summary():
    c = _S.counters
    own = f", mtier.lookahead K={','.join(map(str, sorted(c.loader_ks)))}" if c.loader_ks else ""
    say(f"torch (pid {os.getpid()}): lookahead K={_S.k}{own}: {c.batches_ahead} batches named ahead "
        f"({c.loader_calls} calls), {c.covered} embedding ops found their rows named "
        f"already ({c.waited} waited for the reads), {c.prehook_calls} named by the pre-hook, "
        f"{c.routes} loader routes learned, {c.load_discards} parameters "
        f"({c.load_discarded >> 20} MiB) dropped before load_state_dict overwrote them")


def activate(torch):
    """Starts the integration; returns the status line."""
    global _S
    if _S is not None:
        return "active"
    lib = _lib.load()
    if lib is None:
        return "inactive: libmtier.so.0 is not loaded in this process"
    if not hasattr(torch.nn.modules.module, "register_module_forward_pre_hook"):
        return f"inactive: torch {torch.__version__} has no global module pre-hooks"
    k, warning = _lookahead_option()
    if warning:
        say(warning)
    _S = _State(torch, lib, k)
    torch.nn.modules.module.register_module_forward_pre_hook(_make_pre_hook(torch))
    _patch_loader(torch)
    _patch_state_loads(torch)
    if _flag("MTIER_STATS", "0") or verbose():
        atexit.register(_summary)
    ahead = f"DataLoader lookahead {k} batch{'es' if k != 1 else ''}" if k else \
        "DataLoader lookahead off (MTIER_LOOKAHEAD=0)"
    return f"active: nn.Embedding/nn.EmbeddingBag ids named before each lookup; {ahead}"
