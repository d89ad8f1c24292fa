/*
 * memtable.h -- the in-memory sorted table of one family (a skiplist in an arena).
 *
 * A process keeps memtables of the live logs, rebuilt from the shared logs
 * (DESIGN.md), either its own or, with a region of shared memtables (shmt.h),
 * handles on memtables in shared memory that every process reads and one at a
 * time adds to, under the log's lock; and a write batch keeps one per family for
 * its pending entries.  A handle is single-threaded.  Entries are never removed;
 * the memory is freed with the memtable (a shared one's with its log's slot).
 * Iterators stay valid while entries are added (they may or may not see them).
 */
#ifndef WC_MEMTABLE_H
#define WC_MEMTABLE_H

#include "env.h"
#include "iter.h"

typedef struct wc_memtable wc_memtable;
struct wc_shlog;

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
 * A shared memtable of family in shl's arena, published in shl, and this
 * process's handle on it, reading values in map (this process's mapping of the
 * log); caller holds shl's lock.  NULL with WC_NOMEM when there is no room.
 */
wc_memtable *wc_memtable_new_shared(struct wc_shlog *shl, const char *family, wc_mapping *map,
									wc_err *err);
/* A handle on core, a family's shared memtable of shl (wc_shlog_families); NULL
 * when out of memory. */
wc_memtable *wc_memtable_attach_shared(struct wc_shlog *shl, void *core, wc_mapping *map);
/* A private copy of src's entries (idempotent, same mapping); NULL with err set. */
wc_memtable *wc_memtable_copy(wc_memtable *src, wc_err *err);
/* From now on an entry equal to one already there (rowkey, qualifier, ts, seq,
 * type) is not added again: for entries a log's records may give twice. */
void		wc_memtable_set_idempotent(wc_memtable *mt);

/*
 * Adds c: its rowkey and qualifier copied in, its value too unless it lies in the
 * memtable's mapping (above).  WC_OK or WC_NOMEM (err filled).  To a shared
 * memtable only under its log's lock.
 */
int			wc_memtable_add(wc_memtable *mt, const wc_cell *c, wc_err *err);

uint64_t	wc_memtable_count(const wc_memtable *mt);
/* Bytes of this process's memory used (arena; values left in a mapping, and a
 * shared memtable's entries, are not counted). */
size_t		wc_memtable_bytes(const wc_memtable *mt);
/* Bytes it takes wherever it is: this process's arena, or its entries' in a
 * shared one (for estimates). */
size_t		wc_memtable_size(const wc_memtable *mt);
/* ts range of PUT and DEL_VERSION entries (INT64_MAX/INT64_MIN when none). */
int64_t		wc_memtable_ts_min(const wc_memtable *mt);
int64_t		wc_memtable_ts_max(const wc_memtable *mt);
/* True if it holds a DEL_COLUMN or DEL_FAMILY entry. */
bool		wc_memtable_has_range_tombstones(const wc_memtable *mt);

/* An iterator holding a reference on mt; NULL when out of memory. */
wc_iter    *wc_memtable_iter_new(wc_memtable *mt);

/*
 * Confines it, an iterator of wc_memtable_iter_new, to the entries of one row
 * (a point read): it then ends where the row ends, and a seek before the row
 * finds the row's first entry, without a search of the skiplist (the memtable's
 * row index).  False when mt holds nothing of row: the caller leaves the
 * memtable out (the iterator is then at its end, whatever the seek).  row NULL
 * frees it of that.  Unpositioned after either.
 */
bool		wc_memtable_iter_confine(wc_iter *it, const uint8_t *row, size_t row_len);

#endif
