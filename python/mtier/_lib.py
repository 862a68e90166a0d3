# SPDX-License-Identifier: Apache-2.0
"""ctypes bindings to the libmtier.so.0 already loaded in this process
(LD_PRELOAD): mtier_table_find, mtier_discard and the lookahead calls of
libmtier(3).

load() returns None when the library is not loaded; nothing here loads it
(a process that was not started under mtier stays without it)."""

import ctypes

PREFETCH_ASYNC = 1
PREFETCH_WRITE = 2


class Lib:
    """The functions used, typed. Every call returns the C result (-errno on
    failure); none raises."""

    def __init__(self, dll):
        c = ctypes
        self.table_find = dll.mtier_table_find
        self.table_find.argtypes = [c.c_void_p]
        self.table_find.restype = c.c_int
        self.prefetch_rows = dll.mtier_prefetch_rows
        self.prefetch_rows.argtypes = [c.c_void_p, c.c_size_t, c.c_void_p, c.c_size_t,
                                       c.c_int, c.c_uint64, c.c_uint]
        self.prefetch_rows.restype = c.c_long
        self.prefetch_wait = dll.mtier_prefetch_wait
        self.prefetch_wait.argtypes = [c.c_long, c.c_int]
        self.prefetch_wait.restype = c.c_long
        self.prefetch_advance = dll.mtier_prefetch_advance
        self.prefetch_advance.argtypes = [c.c_uint64]
        self.prefetch_advance.restype = c.c_int
        self.prefetch_useful = dll.mtier_prefetch_useful
        self.prefetch_useful.argtypes = []
        self.prefetch_useful.restype = c.c_int
        self.discard = dll.mtier_discard
        self.discard.argtypes = [c.c_void_p, c.c_size_t]
        self.discard.restype = c.c_int


_LOADED = []  # [Lib or None] once looked up: the process's libraries do not change


def load():
    """The bindings, or None when libmtier.so.0 is not in this process."""
    if not _LOADED:
        try:
            dll = ctypes.CDLL(None)
            dll.mtier_prefetch_rows  # noqa: B018 - raises AttributeError if absent
            _LOADED.append(Lib(dll))
        except (OSError, AttributeError):
            _LOADED.append(None)
    return _LOADED[0]
