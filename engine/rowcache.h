/*
 * rowcache.h -- a handle's cache of rows read from sorted files, for point reads.
 *
 * A point read of a row that lies in several sorted files (a popular row updated
 * since the last compaction lies in every file flushed since) merges the row's
 * entries from each: a bloom probe, an index search, a block seek and the
 * merge's comparisons per file.  engine/bench/hotrow: 1.0 us a read with the row
 * in one file, 1.9 us in two, 3.7 us in four.  Cassandra keeps whole merged
 * rows in its row cache for this; RocksDB's row cache keeps a key's entries per
 * file.  This one keeps, per handle (so per process), the entries of one family
 * of one row as the merge of a set of sorted files gives them, the set known by
 * the files' uids (wc_sst_uid, never reused in a process).  A sorted file never
 * changes, so an entry is right for as long as a scan would read the same set;
 * after a flush or a compaction scans read another set and no longer find it,
 * and the least recently used entries go once the cache holds more than its
 * budget.  Memtables and pending batches are merged on top as before, and
 * visibility is decided after the merge: a snapshot sees through the cache
 * exactly what it sees without it.
 *
 * Admission: a row is cached at its second miss while the first is remembered
 * (a table of 4,096 recent misses' hashes), so that reads of rows read once
 * (uniformly random reads of a large table) do not copy every row.
 *
 * Not thread-safe: a handle's scans run in one thread.
 */
#ifndef WC_ROWCACHE_H
#define WC_ROWCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iter.h"

typedef struct wc_rowcache wc_rowcache;

/* What a row cache holds and did (wc_rowcache_get_stats). */
typedef struct wc_rowcache_stats
{
	uint64_t	hits;
	uint64_t	misses;
	uint64_t	fills;			/* rows cached */
	uint64_t	evictions;
	uint64_t	entries;		/* cached now */
	uint64_t	bytes;			/* of those */
} wc_rowcache_stats;

/* A cache of at most budget bytes (budget > 0); NULL when out of memory. */
wc_rowcache *wc_rowcache_new(size_t budget);

/* Frees the cache; iterators still open keep their entries until closed. */
void		wc_rowcache_free(wc_rowcache *rc);

/*
 * The key of a lookup: family fam of row, merged from the sorted files whose
 * uids are uids[0..nuids-1] in ascending order.
 */
typedef struct wc_rowcache_key
{
	const uint8_t *fam;
	size_t		fam_len;
	const uint8_t *row;
	size_t		row_len;
	const uint64_t *uids;
	int			nuids;
	/* what an entry keeps depends on these too (scan.c, cache_rules): */
	uint32_t	versions;		/* the family's max_versions */
	uint64_t	trunc;			/* the reader's truncate point */
} wc_rowcache_key;

/*
 * An iterator over the cached entries of key (in wc_cell_cmp order, all of the
 * row), or NULL on a miss; then *admit tells whether the row should be cached
 * now (wc_rowcache_fill).  The iterator keeps its entry until it is closed.
 */
wc_iter    *wc_rowcache_get(wc_rowcache *rc, const wc_rowcache_key *key, bool *admit);

/*
 * Caches the entries of key read from from, an iterator over those files
 * positioned at the row's first entry, up to the row's end, and returns an
 * iterator over them; NULL when the row is too large to cache (more than an
 * eighth of the budget), memory runs out or from fails (its status tells),
 * with from left anywhere.  With keep, only the entries it emits (a
 * compaction's rules: what no reader can see is left out; visible.h).
 */
struct wc_vis;
wc_iter    *wc_rowcache_fill(wc_rowcache *rc, const wc_rowcache_key *key, wc_iter *from,
							 struct wc_vis *keep);

void		wc_rowcache_get_stats(const wc_rowcache *rc, wc_rowcache_stats *stats);

#endif
