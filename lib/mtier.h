/* SPDX-License-Identifier: Apache-2.0 */
/* mtier: memory tiering for embedding tables larger than DRAM.
 *
 * The public C API of libmtier.so. A table is a page-aligned range of the
 * process's managed region: its pages stay in DRAM within the configured
 * budget and move to a PMem or file store when cold; any access brings them
 * back. Every function returns 0 (or a non-negative value where stated) on
 * success and a negative errno value on failure; none throws, none prints
 * except through the library's log (warnings by default).
 *
 * Configuration comes from SYSCONFDIR/mtier.conf (/etc/mtier.conf in the
 * packages; mtier.conf(5)), MTIER_CONF and MTIER_<NAME>
 * variables (mtier.conf(5)); mtier_init() can add option text of its own.
 * See libmtier(3).
 */
#ifndef MTIER_H
#define MTIER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API is the only thing libmtier.so exports (the library is built with
 * hidden visibility and a version script). */
#if defined(__GNUC__)
#define MTIER_API __attribute__((visibility("default")))
#else
#define MTIER_API
#endif

#define MTIER_VERSION_MAJOR 0
#define MTIER_VERSION_MINOR 1

/* Starts the engine with the configured options, then `options` applied on
 * top ("name=value,name=value", may be NULL). Called implicitly by the first
 * mtier_table_create(). Returns 0, -EALREADY if the engine already runs,
 * -EINVAL for a bad option (the reason is logged), or another -errno (for
 * example -EPERM when userfaultfd is not permitted). */
MTIER_API int mtier_init(const char *options);

/* Creates a table of `bytes` named `name` (NULL: "table<N>"); *addr receives
 * its page-aligned address. Its memory reads as zeros until written.
 * Returns the table id (> 0) or -errno (-ENOMEM: the region is full, or the
 * library could not allocate). If the engine was not running and could not
 * start, returns that start's error (as mtier_init() would), every time: the
 * start is not retried, unless it failed for want of memory (-ENOMEM,
 * -EAGAIN: the next call tries again). */
MTIER_API int mtier_table_create(const char *name, size_t bytes, void **addr);

/* Frees a table: its memory and store space go back at once. */
MTIER_API int mtier_table_free(int id);

/* The id of the table that contains `addr`, or -ENOENT. */
MTIER_API int mtier_table_find(const void *addr);

/* Writes back and evicts every resident page of the table now. Returns 0,
 * -ENOSPC when no store has room for a dirty page (it stays in DRAM), or
 * -EIO when a store write failed. */
MTIER_API int mtier_table_evict(int id);

/* Drops [addr, addr+len) of a table: it reads back as zeros, like
 * MADV_DONTNEED on private anonymous memory. Page-aligned. */
MTIER_API int mtier_discard(void *addr, size_t len);

struct mtier_table_stats {
  int id;
  char name[64];
  uint64_t bytes;           /* as requested */
  uint64_t resident_bytes;  /* in memory: DRAM and the slow memory tier */
  uint64_t stored_bytes;    /* holding a store slot (a copy or a reservation) */
  uint64_t missing_faults;  /* first touches and fetches */
  uint64_t minor_faults;    /* accesses seen by the sampler */
  uint64_t wp_faults;       /* first writes to clean pages */
  uint64_t zero_fills;      /* pages placed as zeros */
  uint64_t fetches;         /* pages read back from a store on a fault */
  uint64_t prefetches;      /* pages read back ahead of a fault */
  uint64_t evictions;       /* pages that left DRAM */
  uint64_t writebacks;      /* of which dirty, written to a store */
  uint64_t evict_cancels;   /* writes that raced an eviction and won */
  uint64_t errors;          /* store errors on this table's pages */
  uint64_t heat;            /* sum of decayed per-page access counts */
  uint64_t slow_bytes;      /* of resident_bytes, on the slow memory tier */
  uint64_t demotions;       /* pages moved from DRAM to the slow memory tier */
};

/* Fills *st for table `id`. */
MTIER_API int mtier_table_stats(int id, struct mtier_table_stats *st);

/* One extent of a table, for heat maps: `nr` equal extents cover the table. */
struct mtier_extent {
  uint64_t offset;          /* bytes from the table's start */
  uint64_t bytes;
  uint64_t resident_bytes;  /* in DRAM */
  uint64_t stored_bytes;    /* with a copy or reservation in a store */
  uint64_t heat;            /* sum of its pages' decayed access counts */
  uint64_t slow_bytes;      /* of resident_bytes, on the slow memory tier */
};

/* Splits table `id` into `nr` equal extents (the last takes the rest) and
 * fills out[0..nr). Returns the number filled (fewer when the table has
 * fewer pages than nr) or -errno. */
MTIER_API int mtier_table_map(int id, struct mtier_extent *out, size_t nr);

struct mtier_stats {
  uint64_t budget_bytes;        /* DRAM budget */
  uint64_t resident_bytes;      /* managed pages in DRAM now (not the slow tier) */
  uint64_t peak_resident_bytes;
  uint64_t tables;
  uint64_t store_capacity_bytes;
  uint64_t store_used_bytes;
  uint64_t store_full;          /* evictions refused: no store room */
  uint64_t store_errors;        /* failed store reads and writes */
  uint64_t budget_overruns;     /* faults placed over budget: eviction was stuck */
  uint64_t slow_budget_bytes;   /* the slow memory tier's budget (0: none) */
  uint64_t slow_resident_bytes; /* managed pages on the slow memory tier now */
  /* Lookahead (mtier_prefetch_*): */
  uint64_t prefetch_calls;      /* mtier_prefetch_rows/_ranges calls served */
  uint64_t prefetch_reads;      /* pages read from a store ahead of any access */
  uint64_t prefetch_hits;       /* pages named that were in memory already */
  uint64_t pinned_pages;        /* pages pinned by the window now */
  uint64_t window_overflows;    /* pages named but not pinned: the window was full */
  uint64_t prefetch_pages;      /* pages named (deduplicated within a call) */
  uint64_t prefetch_late;       /* pages read ahead that an access reached while
                                   their read was in flight (it waited for it) */
};

/* Fills *st with engine-wide figures. -ENODEV if the engine is not running. */
MTIER_API int mtier_stats(struct mtier_stats *st);


/* ---- Lookahead -------------------------------------------------------
 * A training loop knows the rows its next batches read long before it
 * touches them. Naming them lets mtier read the pages that are not in DRAM
 * at the store's queue depth (batched io_uring reads, no fault per page),
 * place them before the access, and keep them: the pages named for batch B
 * are pinned (never evicted) until mtier_prefetch_advance() passes B.
 *
 * Batches are numbered by the caller, increasing (a step counter works).
 * The window is every batch from the current one (the last advance) to the
 * newest named; its pages must fit in the DRAM budget's pin limit (3/4 of
 * the budget): pages beyond it are not pinned, which is said once in the log
 * and counted in mtier_stats.window_overflows. Those of the current batch
 * (the last advance; any batch before the first advance) are still read
 * while DRAM has room, but evictable; those of a later batch are not read
 * ahead (they would push out pages the current batch still uses): name
 * them again in their batch, or let them be demand-faulted.
 *
 * Any address works: memory outside managed tables is ignored (no-op), a
 * range is clipped to its table. Callable from any thread; calls are served
 * one at a time. Never blocks forever: a store read that fails leaves its
 * pages in the store (an access then faults and, if the store still fails,
 * gets SIGBUS with the reason logged). */

/* Return at once with a ticket (> 0) for mtier_prefetch_wait(). */
#define MTIER_PREFETCH_ASYNC 1u
/* The batch will write the pages it reads (a training step's update):
 * pages read from the store are placed writable (dirty) at once, so the
 * first write costs no write-protect fault. Without it they are placed
 * clean and write-protected (a write costs one fault; an untouched page is
 * dropped at eviction without a write-back). */
#define MTIER_PREFETCH_WRITE 2u

struct mtier_range {
  const void *addr;
  size_t len;
};

/* Rows ids[0..n) of the table at `table`: row r is the `row_bytes` bytes at
 * table + r * row_bytes. `id_bytes` is 4 (int32_t ids) or 8 (int64_t ids);
 * negative ids are ignored. Returns, synchronously, the number of pages read
 * from a store (>= 0); with MTIER_PREFETCH_ASYNC a ticket (> 0); or -EINVAL
 * (bad id_bytes or row_bytes 0), -ENOMEM. Returns 0 at once (no ticket, even
 * with MTIER_PREFETCH_ASYNC) while a prefetch can bring nothing in: every
 * table fits in the DRAM budget and no page is below DRAM. */
MTIER_API long mtier_prefetch_rows(const void *table, size_t row_bytes, const void *ids,
                                   size_t n, int id_bytes, uint64_t batch, unsigned flags);

/* The same for byte ranges. */
MTIER_API long mtier_prefetch_ranges(const struct mtier_range *ranges, size_t n,
                                     uint64_t batch, unsigned flags);

/* Waits for an asynchronous prefetch: its pages read (>= 0), -ETIMEDOUT
 * after timeout_ms (< 0: no limit; the prefetch itself always ends), or
 * -EINVAL for a ticket never issued. A ticket can be waited on any number of
 * times until 1024 later ones have completed (then -EINVAL). */
MTIER_API long mtier_prefetch_wait(long ticket, int timeout_ms);

/* The program now works on batch `batch`: the pins of earlier batches are
 * released (their pages become ordinary eviction candidates). 0, or -ENODEV
 * when the engine is not running. */
MTIER_API int mtier_prefetch_advance(uint64_t batch);

/* 1 while naming pages can do anything (a prefetch can bring pages in, or
 * pages are pinned); 0 while it cannot (every table fits in the DRAM budget,
 * no page is below DRAM, nothing is pinned), in a forked child, or when the
 * engine is not running. Cheap (a few counters read, no I/O): a caller whose
 * ids must be gathered or converted first checks it before it does. */
MTIER_API int mtier_prefetch_useful(void);

/* One line that says which tiers, stores and heat sources are active.
 * Returns the length written (truncated to len-1), or -ENODEV. */
MTIER_API int mtier_describe(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MTIER_H */
