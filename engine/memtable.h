/*
 * memtable.h -- the in-memory sorted table of one family (a skiplist in an arena).
 *
 * Each process keeps its own memtables, rebuilt from the shared log (DESIGN.md),
 * and a write batch keeps one per family for its pending entries.  Single-threaded:
 * no locks.  Entries are never removed; the memory is freed with the memtable.
 * Iterators stay valid while entries are added (they may or may not see them).
 */
#ifndef WC_MEMTABLE_H
#define WC_MEMTABLE_H

#include "env.h"
#include "iter.h"

typedef struct wc_memtable wc_memtable;

/* A new empty memtable with one reference; NULL when out of memory. */
wc_memtable *wc_memtable_new(void);
void		wc_memtable_ref(wc_memtable *mt);
/* Drops a reference; frees at zero. */
void		wc_memtable_unref(wc_memtable *mt);

/*
 * Lets entries added from now on keep their values in m (referenced until the
 * memtable is freed) instead of copying them: a value of at least
 * WC_MEMTABLE_SHARED_MIN bytes that lies within m is pointed to.  m is a log's
 * mapping, so its pages are the page cache's, one copy for every process.
 */
#define WC_MEMTABLE_SHARED_MIN	16
void		wc_memtable_set_mapping(wc_memtable *mt, wc_mapping *m);

/*
 * Adds c: its rowkey and qualifier copied in, its value too unless it lies in the
 * memtable's mapping (above).  WC_OK or WC_NOMEM (err filled).
 */
int			wc_memtable_add(wc_memtable *mt, const wc_cell *c, wc_err *err);

uint64_t	wc_memtable_count(const wc_memtable *mt);
/* Bytes of this process's memory used (arena; values left in a mapping are not counted). */
size_t		wc_memtable_bytes(const wc_memtable *mt);
/* ts range of PUT and DEL_VERSION entries (INT64_MAX/INT64_MIN when none). */
int64_t		wc_memtable_ts_min(const wc_memtable *mt);
int64_t		wc_memtable_ts_max(const wc_memtable *mt);
/* True if it holds a DEL_COLUMN or DEL_FAMILY entry. */
bool		wc_memtable_has_range_tombstones(const wc_memtable *mt);

/* An iterator holding a reference on mt; NULL when out of memory. */
wc_iter    *wc_memtable_iter_new(wc_memtable *mt);

#endif
