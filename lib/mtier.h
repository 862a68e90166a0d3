/* mtier: memory tiering for embedding tables larger than DRAM.
 *
 * The public C API of libmtier.so. A table is a page-aligned range of the
 * process's managed region: its pages stay in DRAM within the configured
 * budget and move to a PMem or file store when cold; any access brings them
 * back. Every function returns 0 (or a non-negative value where stated) on
 * success and a negative errno value on failure; none throws, none prints
 * except through the library's log (warnings by default).
 *
 * Configuration comes from /etc/mtier.conf, MTIER_CONF and MTIER_<NAME>
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
};

/* Fills *st with engine-wide figures. -ENODEV if the engine is not running. */
MTIER_API int mtier_stats(struct mtier_stats *st);

/* One line that says which tiers, stores and heat sources are active.
 * Returns the length written (truncated to len-1), or -ENODEV. */
MTIER_API int mtier_describe(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MTIER_H */
