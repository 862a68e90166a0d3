# SPDX-License-Identifier: Apache-2.0
"""What mtier did to a model's tables: the sums of mtier_table_stats(3) over
the tables that hold the given tensors, read through the preloaded library
(ctypes, no import of mtier's Python package: the trainers stay
unmodified). Tensors in no table are left out; None where libmtier is not
loaded or none of them is in a table."""
import ctypes
import os

FIELDS = ("bytes", "resident_bytes", "stored_bytes", "missing_faults", "minor_faults",
          "wp_faults", "zero_fills", "fetches", "prefetches", "evictions", "writebacks",
          "evict_cancels", "errors", "heat", "slow_bytes", "demotions")


class _TableStats(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("name", ctypes.c_char * 64)] + \
        [(f, ctypes.c_uint64) for f in FIELDS]


def table_counts(tensors):
    """{field: sum over the tables of `tensors`} (each table once), or None."""
    try:
        lib = ctypes.CDLL("libmtier.so.0", mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    seen = set()
    total = dict.fromkeys(FIELDS, 0)
    for t in tensors:
        tid = lib.mtier_table_find(ctypes.c_void_p(t.data_ptr()))
        if tid < 0 or tid in seen:
            continue
        seen.add(tid)
        st = _TableStats()
        if lib.mtier_table_stats(tid, ctypes.byref(st)) != 0:
            return None
        for f in FIELDS:
            total[f] += getattr(st, f)
    return total if seen else None
