/*
 * scan.c -- reading a version: row ranges, family streams, visibility.
 *
 * A scan has one stream per family it reads.  A stream merges that family's
 * sources (the caller's pending batches, the memtables of live logs, the sorted
 * files that can hold a match) and feeds the merged entries to the visibility step
 * (visible.h), which says which versions are visible.  The scan then merges the
 * streams by (rowkey, family) so rows come out in (rowkey, family, qualifier,
 * ts desc) order.
 *
 * A reversed scan (wc_scan_opts.reverse) takes rows from the last to the first.
 * The visibility step needs a column's entries newest first and a row's
 * family tombstone before its columns, which is the forward order, and the
 * sources can only decode forward, so each stream steps back a row at a time:
 * it puts every source on the first entry of its greatest row below the row
 * read last (wc_iter_seek_row_before), and reads the greatest of those rows
 * as a forward scan does.  Within a row the order is the forward one, as in
 * HBase's reversed scans; the scan merges the streams by rowkey descending,
 * families ascending.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "visible.h"

#define INTERRUPT_EVERY 4096
/*
 * Entries stepped over before seeking past a column.  One: most columns have
 * no other version (the step lands on the next column), and the seek is cheap
 * where they do: the merge moves only the sources still in the column, a
 * memtable in one step (its versions hang off the column, memtable.c), a
 * sorted file by stepping in its block (sst_reader.c).  Eight, as RocksDB's
 * max_sequential_skip_in_iterations, cost a row read of ten columns with 300
 * unflushed versions each 7.6 us, against 2.1 us (engine microbenchmark).
 * Once a column had more versions than the reader takes, the row's later
 * columns are sought past at once, right after their versions are returned
 * (fam_stream.seek_row): a popular row's columns all have versions in a
 * memtable, and two steps read two of them (cache misses) only to seek.
 */
#define SKIP_BY_NEXT	1

/* One source of a family: its iterator (opened lazily for sorted files). */
typedef struct source
{
	wc_sst	   *sst;			/* NULL for memtables */
	wc_batch   *batch;			/* a pending batch: its overlay, made when wanted */
	bool		empty;			/* the batch has nothing of this family */
	bool		wanted;			/* a sorted file that can matter (sst_wanted) */
	wc_iter    *iter;
} source;

typedef struct fam_stream
{
	char		name[WC_MAX_FAMILY + 1];
	size_t		name_len;

	int			nsrc;
	source	   *src;
	wc_iter    *merge;			/* over the sources (not owned); NULL = empty */
	wc_iter    *cached;			/* the sorted files' part of a point read, from
								 * the row cache (cached_row), or NULL */

	int			range_idx;
	bool		step_first;		/* the merge sits on the cell returned last */
	bool		skip_first;		/* ... and the rest of its column is unwanted */
	uint64_t	seek_row;		/* vis.rows of a row whose columns are sought
								 * past without a step first; 0: none */
	bool		done;

	/* reversed scans: the row being read, or the last one read */
	uint8_t    *row;
	size_t		row_len,
				row_cap;
	bool		have_row;		/* row bounds the next step back */
	bool		in_row;			/* the merge is inside row */

	wc_vis		vis;			/* the family's rules and where the merge is */

	bool		has_cell;
	bool		out_same_row;	/* out is in the row of the cell out held before */
	uint64_t	out_rows;		/* vis.rows when out was set */
	wc_cell_view out;
} fam_stream;

struct wc_scan
{
	wc_db	   *db;
	wc_version *v;
	const wc_scan_opts *opts;
	const wc_key_range *ranges;
	int			nranges;
	bool		points;			/* every range is a single rowkey */
	uint64_t	trunc;			/* committed entries below are gone */
	uint64_t	pend_trunc;		/* pending truncate: every committed entry and
								 * pending ones below are gone */
	uint64_t	pend_max;		/* pending entries above are not seen: written
								 * after open, or opts->pending_max */
	wc_seq_range *excl;			/* writes the snapshot does not see */
	int			nexcl;
	int			nexcl_committed;	/* of those, committed ones */
	int			nstreams;
	fam_stream *streams;
	bool		reverse;
	int			last;			/* stream that returned the last cell, or -1 */
	uint64_t	until_check;
	int			failed;			/* sticky error code */
	wc_err		err;
	wc_scan_stats stats;
	uint8_t    *keybuf;			/* a seek key built by row_after */
	size_t		keycap;
};

void
wc_scan_opts_init(wc_scan_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->ts_min = INT64_MIN;
	opts->ts_max = INT64_MAX;
}

/* ---------------------------------------------------------------- ranges */

static bool
range_contains_stop(const wc_key_range *r, const uint8_t *row, size_t len)
{
	int			c;

	if (r->stop_bound == WC_UNBOUNDED)
		return true;
	c = wc_row_cmp(row, len, r->stop, r->stop_len);
	return r->stop_bound == WC_INCLUSIVE ? c <= 0 : c < 0;
}

static bool
range_overlaps(const wc_key_range *r, const uint8_t *lo, size_t lo_len,
			   const uint8_t *hi, size_t hi_len)
{
	if (r->start_bound != WC_UNBOUNDED)
	{
		int			c = wc_row_cmp(hi, hi_len, r->start, r->start_len);

		if (c < 0 || (c == 0 && r->start_bound == WC_EXCLUSIVE))
			return false;
	}
	if (r->stop_bound != WC_UNBOUNDED)
	{
		int			c = wc_row_cmp(lo, lo_len, r->stop, r->stop_len);

		if (c > 0 || (c == 0 && r->stop_bound == WC_EXCLUSIVE))
			return false;
	}
	return true;
}

static bool
range_is_point(const wc_key_range *r)
{
	return r->start_bound == WC_INCLUSIVE && r->stop_bound == WC_INCLUSIVE &&
		wc_row_cmp(r->start, r->start_len, r->stop, r->stop_len) == 0;
}

static bool
range_empty(const wc_key_range *r)
{
	int			c;

	if (r->start_bound == WC_UNBOUNDED || r->stop_bound == WC_UNBOUNDED)
		return false;
	c = wc_row_cmp(r->start, r->start_len, r->stop, r->stop_len);
	if (c > 0)
		return true;
	return c == 0 && (r->start_bound == WC_EXCLUSIVE || r->stop_bound == WC_EXCLUSIVE);
}

/* ---------------------------------------------------------------- sources */

/* Should sorted file s take part, given the ranges, time range and retention? */
static bool
sst_wanted(wc_scan *scan, const fam_stream *fs, wc_sst *s)
{
	const wc_sst_props *p = wc_sst_get_props(s);
	const wc_scan_opts *o = scan->opts;
	const wc_vis_rules *r = &fs->vis.rules;
	bool		any = false;

	if (p->cells == 0 || scan->pend_trunc != 0 || p->seq_max < scan->trunc)
		return false;
	if (scan->nranges > 0)
	{
		for (int i = 0; i < scan->nranges && !any; i++)
			any = range_overlaps(&scan->ranges[i], p->row_min, p->row_min_len,
								 p->row_max, p->row_max_len);
		if (!any)
		{
			scan->stats.files_skipped_key++;
			return false;
		}
	}
	if (p->range_tombstones == 0)
	{
		/* older versions never decide whether newer ones are visible */
		if (p->ts_max < o->ts_min || p->ts_max < r->ttl_cutoff ||
			(r->max_versions == 0 && p->ts_min > o->ts_max))
		{
			scan->stats.files_skipped_time++;
			return false;
		}
	}
	if (scan->points)
	{
		any = false;
		for (int i = 0; i < scan->nranges && !any; i++)
			any = wc_sst_may_contain_row(s, scan->ranges[i].start, scan->ranges[i].start_len);
		if (!any)
		{
			scan->stats.files_skipped_bloom++;
			return false;
		}
	}
	return true;
}

/*
 * Should pending batch b take part, given the ranges?  A transaction of many
 * writing statements has a batch for each (the caller's pending writes,
 * src/store.c), and a scan that read every one of them, an overlay seek and a
 * merge child each, cost in proportion to their number: a PL/pgSQL loop of
 * INSERT then SELECT by rowkey slowed down quadratically.  A batch whose rows
 * lie outside every range is left out, as a sorted file is.
 */
static bool
batch_wanted(const wc_scan *scan, const wc_batch *b)
{
	const uint8_t *lo,
			   *hi;
	size_t		lo_len,
				hi_len;

	if (scan->nranges == 0 || !wc_batch_row_bounds(b, &lo, &lo_len, &hi, &hi_len))
		return true;
	for (int i = 0; i < scan->nranges; i++)
		if (range_overlaps(&scan->ranges[i], lo, lo_len, hi, hi_len))
			return true;
	return false;
}

/* Opens s's iterator for the scan unless it is open; false when out of memory. */
static bool
sst_iter_open(wc_scan *scan, source *s)
{
	/*
	 * A scan of row ranges (point reads, joins, short scans) uses the block
	 * cache; a scan of every row or a bulk one does not: it would push the
	 * others' blocks out, and reading on from block to block it decompresses
	 * them faster than it finds them there (the cache's blocks lie apart in
	 * memory, a cache and TLB miss each; the file's are in a row)
	 */
	if (s->iter == NULL &&
		(s->iter = wc_sst_iter_new_cached(s->sst, &scan->stats,
										  scan->nranges > 0 && !scan->opts->bulk ?
										  WC_SST_CACHE_FILL : WC_SST_CACHE_OFF)) == NULL)
		return false;
	return true;
}

/*
 * What of a row's entries in the sorted files the row cache keeps: what a
 * compaction of those files would write, tombstones kept as a compaction of some
 * of a row's files keeps them (rules.partial; the readers of these files would
 * not miss them, but they are few and it is the rule whose proof is written
 * down, visible.h).  So a column updated in every file since the last
 * compaction is one entry there, not one per file, and a hit costs what a read
 * of one file does.  What is dropped, no reader of these files sees: entries of
 * other sources (files left out by sst_wanted, which hold nothing of the row the
 * reader can see; memtables; pending writes) can only mask more and take more
 * places among max_versions (visible.h).  The entries written by transactions
 * some snapshot may not see (above keep_above: the version's remembered
 * records) are kept and decide nothing, as in a compaction; the rest are seen by
 * every snapshot there is or will be.  The family's max_versions and the
 * truncate point decide what is dropped: both are in the entry's key.  Expired
 * versions are kept: a scan that began earlier may still see them (they are
 * older than those kept in their place, so nothing is dropped for them).
 */
static void
cache_rules(const wc_scan *scan, const fam_stream *fs, wc_vis_rules *rules)
{
	uint64_t	min_seq;

	wc_vis_rules_init(rules);
	rules->mode = WC_VIS_COMPACT;
	rules->partial = true;
	rules->trunc = scan->trunc;
	rules->max_versions = fs->vis.rules.max_versions;
	/*
	 * The handle's lists as they are now, not as they were at open: what was
	 * added since only lowers the minimum, and what was pruned, below the
	 * horizon, every snapshot sees.
	 */
	if (scan->db->opts.horizon != NULL)
	{
		min_seq = UINT64_MAX;
		for (int i = 0; i <= scan->db->nlogs; i++)
		{
			uint64_t	m = wc_recent_min_seq(wc_db_recent_list(scan->db, i));

			if (m < min_seq)
				min_seq = m;
		}
		if (min_seq != UINT64_MAX)
			rules->keep_above = min_seq - 1;
	}
}

/*
 * A forward point read of one row whose family lies in nfiles >= 2 of the
 * sorted files: the entries the files hold of the row, from the row cache
 * (rowcache.h), which a second miss fills with one read of the files; NULL to
 * read the files as usual (a miss, a row too large to cache, no memory, or an
 * error of the files, which that read reports).
 */
static wc_iter *
cached_row(wc_scan *scan, fam_stream *fs, int nfiles)
{
	const wc_key_range *r = &scan->ranges[0];
	uint64_t	small[8];
	uint64_t   *uids = nfiles <= 8 ? small : malloc(sizeof(uint64_t) * (size_t) nfiles);
	wc_iter   **kids = NULL;
	wc_iter    *merge,
			   *it = NULL;
	wc_rowcache_key key;
	wc_cell		target;
	bool		admit;
	int			n = 0;

	if (uids == NULL)
		return NULL;
	for (int i = 0; i < fs->nsrc; i++)
		if (fs->src[i].sst != NULL && fs->src[i].wanted)
		{
			uint64_t	u = wc_sst_uid(fs->src[i].sst);
			int			j = n++;

			for (; j > 0 && uids[j - 1] > u; j--)
				uids[j] = uids[j - 1];
			uids[j] = u;
		}
	key.fam = (const uint8_t *) fs->name;
	key.fam_len = fs->name_len;
	key.row = r->start;
	key.row_len = r->start_len;
	key.uids = uids;
	key.nuids = n;
	key.versions = fs->vis.rules.max_versions;
	key.trunc = scan->trunc;
	if ((it = wc_rowcache_get(scan->db->rowcache, &key, &admit)) != NULL)
		scan->stats.rows_cached++;
	else if (admit && (kids = calloc((size_t) n, sizeof(wc_iter *))) != NULL)
	{
		/* its second miss: the files' entries of the row, merged, into the cache */
		int			k = 0;

		for (int i = 0; i < fs->nsrc && k < n; i++)
		{
			source	   *s = &fs->src[i];

			if (s->sst == NULL || !s->wanted)
				continue;
			if (!sst_iter_open(scan, s))
				break;
			kids[k++] = s->iter;
		}
		if (k == n && (merge = wc_merge_iter_new_borrowing(kids, k)) != NULL)
		{
			wc_vis		keep;

			cache_rules(scan, fs, &keep.rules);
			wc_vis_init(&keep, &keep.rules);
			wc_cell_row_start(&target, r->start, r->start_len);
			wc_iter_seek(merge, &target);
			it = wc_rowcache_fill(scan->db->rowcache, &key, merge, &keep);
			wc_iter_close(merge);
			wc_vis_free(&keep);
		}
		free(kids);
	}
	if (uids != small)
		free(uids);
	return it;
}

/* (Re)builds the merge of fs over the sources that can matter for the ranges. */
static int
stream_build(wc_scan *scan, fam_stream *fs)
{
	wc_iter    *small[16];
	wc_iter   **children = small;
	int			n = 0,
				nfiles = 0;
	bool		confine;		/* a forward read of one rowkey */

	wc_iter_close(fs->merge);
	fs->merge = NULL;
	wc_iter_close(fs->cached);
	fs->cached = NULL;
	if (fs->nsrc + 1 > (int) (sizeof(small) / sizeof(small[0])) &&
		(children = malloc(sizeof(wc_iter *) * (size_t) (fs->nsrc + 1))) == NULL)
		return wc_err_set(&scan->err, WC_NOMEM, "out of memory");
	for (int i = 0; i < fs->nsrc; i++)
	{
		source	   *s = &fs->src[i];

		if (s->sst == NULL)
			continue;
		scan->stats.files_total++;
		if ((s->wanted = sst_wanted(scan, fs, s->sst)))
		{
			scan->stats.files_read++;
			nfiles++;
		}
	}
	confine = scan->points && scan->nranges == 1 && !scan->reverse;
	if (nfiles >= 2 && scan->db->rowcache != NULL && confine && !scan->opts->bulk)
		fs->cached = cached_row(scan, fs, nfiles);
	for (int i = 0; i < fs->nsrc; i++)
	{
		source	   *s = &fs->src[i];

		if (s->batch)
		{
			wc_memtable *mt;

			if (s->empty || !batch_wanted(scan, s->batch))
				continue;
			if (s->iter == NULL)
			{
				if ((mt = wc_batch_overlay(s->batch, (const uint8_t *) fs->name, fs->name_len,
										   &scan->err)) == NULL)
				{
					if (scan->err.code != WC_OK)
						goto fail;
					s->empty = true;
					continue;
				}
				if ((s->iter = wc_memtable_iter_new(mt)) == NULL)
					goto oom;
			}
		}
		else if (s->sst)
		{
			if (!s->wanted || fs->cached != NULL)
				continue;
			if (!sst_iter_open(scan, s))
				goto oom;
		}
		/* a memtable (a log's, or a batch's overlay): a point read asks its row
		 * index, and leaves it out when the row is not there */
		if (s->sst == NULL &&
			!wc_memtable_iter_confine(s->iter, confine ? scan->ranges[0].start : NULL,
									  confine ? scan->ranges[0].start_len : 0))
			continue;
		children[n++] = s->iter;
	}
	if (fs->cached != NULL)
		children[n++] = fs->cached;
	/* the sources stay theirs: a rescan merges them again */
	if (n > 0 && (fs->merge = wc_merge_iter_new_borrowing(children, n)) == NULL)
		goto oom;
	if (children != small)
		free(children);
	return WC_OK;

oom:
	wc_err_set(&scan->err, WC_NOMEM, "out of memory");
fail:
	if (children != small)
		free(children);
	return scan->err.code;
}

static int
stream_init(wc_scan *scan, fam_stream *fs, const wc_family *f, int64_t now)
{
	wc_version *v = scan->v;
	int			cap = scan->opts->npending + v->nmems + v->nssts;
	wc_vis_rules rules;

	memcpy(fs->name, f->name, f->name_len);
	fs->name_len = f->name_len;
	fs->out_rows = 0;			/* vis.rows is 1 or more once a cell is out */
	wc_vis_rules_init(&rules);
	rules.mode = WC_VIS_READ;
	rules.trunc = scan->trunc;
	rules.snapshot = v->snapshot_seq;
	rules.pend_trunc = scan->pend_trunc;
	rules.pend_max = scan->pend_max;
	rules.excl = scan->excl;
	rules.nexcl = scan->nexcl;
	rules.max_versions = scan->opts->every_version ? 0 : f->max_versions;
	rules.ttl_cutoff = wc_vis_ttl_cutoff(now, f->ttl_ms);
	rules.ts_min = scan->opts->ts_min;
	rules.ts_max = scan->opts->ts_max;
	rules.quals = scan->opts->quals;
	rules.nquals = scan->opts->nquals;
	rules.qual_prefixes = scan->opts->qual_prefixes;
	rules.nqual_prefixes = scan->opts->nqual_prefixes;
	rules.qual_range = scan->opts->qual_range;
	wc_vis_init(&fs->vis, &rules);
	fs->src = calloc(cap > 0 ? cap : 1, sizeof(source));
	if (fs->src == NULL)
		return wc_err_set(&scan->err, WC_NOMEM, "out of memory");

	/* overlays made when wanted (batch_wanted) */
	for (int i = 0; i < scan->opts->npending; i++)
		fs->src[fs->nsrc++].batch = scan->opts->pending[i];
	for (int i = 0; i < v->nmems; i++)
	{
		if (strlen(v->mems[i].family) != f->name_len ||
			memcmp(v->mems[i].family, f->name, f->name_len) != 0 || scan->pend_trunc != 0)
			continue;
		if ((fs->src[fs->nsrc].iter = wc_memtable_iter_new(v->mems[i].mt)) == NULL)
			return wc_err_set(&scan->err, WC_NOMEM, "out of memory");
		fs->nsrc++;
	}
	for (int i = 0; i < v->nssts; i++)
	{
		const wc_sst_props *p = wc_sst_get_props(v->ssts[i]);

		if (strlen(p->family) != f->name_len || memcmp(p->family, f->name, f->name_len) != 0)
			continue;
		fs->src[fs->nsrc++].sst = v->ssts[i];	/* iterator opened when wanted */
	}
	return stream_build(scan, fs);
}

static void
stream_free(fam_stream *fs)
{
	wc_iter_close(fs->merge);
	wc_iter_close(fs->cached);
	for (int i = 0; i < fs->nsrc; i++)
		wc_iter_close(fs->src[i].iter);
	free(fs->src);
	free(fs->row);
	wc_vis_free(&fs->vis);
}

/* ---------------------------------------------------------------- reading */

/*
 * Sets target to the start of the first row after row, row || 0x00 (built in
 * scan->keybuf); false when out of memory.
 */
static bool
row_after(wc_scan *scan, const uint8_t *row, size_t len, wc_cell *target)
{
	if (!wc_buf_reserve(&scan->keybuf, &scan->keycap, len + 1))
		return false;
	memcpy(scan->keybuf, row, len);
	scan->keybuf[len] = 0;
	wc_cell_row_start(target, scan->keybuf, len + 1);
	return true;
}

/* Positions fs at the start of range fs->range_idx; done when none is left. */
static void
stream_seek_range(wc_scan *scan, fam_stream *fs)
{
	const wc_key_range *r;
	wc_cell		target;

	wc_vis_reset(&fs->vis);
	fs->step_first = false;
	while (scan->nranges > 0 && fs->range_idx < scan->nranges &&
		   range_empty(&scan->ranges[fs->range_idx]))
		fs->range_idx++;
	if (fs->merge == NULL || (scan->nranges > 0 && fs->range_idx >= scan->nranges) ||
		(scan->nranges == 0 && fs->range_idx > 0))
	{
		fs->done = true;
		return;
	}
	scan->stats.seeks++;
	if (scan->nranges == 0 || scan->ranges[fs->range_idx].start_bound == WC_UNBOUNDED)
	{
		wc_iter_seek_first(fs->merge);
		return;
	}
	r = &scan->ranges[fs->range_idx];
	if (r->start_bound == WC_INCLUSIVE)
		wc_cell_row_start(&target, r->start, r->start_len);
	else if (!row_after(scan, r->start, r->start_len, &target))
	{
		wc_err_set(&scan->err, WC_NOMEM, "out of memory");
		scan->failed = WC_NOMEM;
		fs->done = true;
		return;
	}
	wc_iter_seek(fs->merge, &target);
}

/* Is c an entry of the current column (the last one fed to vis)? */
static inline bool
in_vis_column(const wc_vis *vis, const wc_cell *c)
{
	return wc_bytes_eq(c->qual, c->qual_len, vis->qual, vis->qual_len) &&
		wc_bytes_eq(c->row, c->row_len, vis->row, vis->row_len);
}

/*
 * Seeks fs's merge to the version (ts, seq) of the current column (the last
 * one fed to vis): a position, not an entry; (INT64_MIN, 0) is past every
 * version (seq 0 is never given out), (INT64_MAX, WC_SEQ_MAX) before every
 * one, after the column's DEL_COLUMN entries.
 */
static void
stream_seek_in_column(fam_stream *fs, int64_t ts, uint64_t seq)
{
	const wc_vis *vis = &fs->vis;
	wc_cell		target;

	memset(&target, 0, sizeof(target));
	target.row = vis->row;
	target.row_len = (uint32_t) vis->row_len;
	target.qual = vis->qual;
	target.qual_len = (uint32_t) vis->qual_len;
	target.type = WC_TYPE_PUT;
	target.ts = ts;
	target.seq = seq;
	wc_iter_seek(fs->merge, &target);
}

/* Moves past every remaining entry of the current column (the last one fed to vis). */
static void
stream_skip_column(fam_stream *fs)
{
	const wc_vis *vis = &fs->vis;

	/* a column with more versions than the reader takes: so may the row's next */
	if (vis->rules.max_versions != 0 && vis->slots > vis->rules.max_versions)
		fs->seek_row = vis->rows;
	for (int i = 0; i < SKIP_BY_NEXT && fs->seek_row != vis->rows; i++)
	{
		const wc_cell *c;

		wc_iter_next(fs->merge);
		if (!wc_iter_valid(fs->merge))
			return;
		c = wc_iter_cell(fs->merge);
		if (c->type == WC_TYPE_DEL_FAMILY || !in_vis_column(vis, c))
			return;
	}
	stream_seek_in_column(fs, INT64_MIN, 0);
}

/*
 * Moves past the current column (the last one fed to vis), which vis refused:
 * when it lies outside the reader's qualifier range, by one seek to where the
 * range starts in the row or to the next row, else as stream_skip_column.
 * The row's DEL_FAMILY entries, which sort before its columns, have been fed
 * by then, so a seek within the row misses nothing that masks.
 */
static void
stream_skip_unwanted(wc_scan *scan, fam_stream *fs)
{
	const wc_key_range *qr = scan->opts->qual_range;
	const wc_vis *vis = &fs->vis;
	wc_cell		target;
	int			where;

	if (qr == NULL || (where = wc_vis_qual_in_range(qr, vis->qual, vis->qual_len)) == 0 ||
		(where < 0 && wc_row_cmp(vis->qual, vis->qual_len, qr->start, qr->start_len) >= 0))
	{
		/* wanted by the range, or at an exclusive start: the next column */
		stream_skip_column(fs);
		return;
	}
	if (where < 0)
		wc_cell_column_start(&target, vis->row, vis->row_len, qr->start, qr->start_len);
	else if (!row_after(scan, vis->row, vis->row_len, &target))
	{
		stream_skip_column(fs);
		return;
	}
	scan->stats.seeks++;
	wc_iter_seek(fs->merge, &target);
}

/*
 * After a DEL_COLUMN of the current column (the last one fed to vis): the
 * column's other DEL_COLUMN entries follow it with lower seqs, and each hides
 * at most its own seq (cell.h).  So once the next one's seq is at or below
 * what the column's and the row's tombstones hide already, it and every one
 * after it decide nothing, and the stream moves on to the column's versions.
 * (Not at once after any one the reader sees: a bounded one may hide less
 * than the one after it, written earlier with a later bound.)  One step
 * first, as most columns hold one tombstone; then, on a run of them (a row
 * deleted and written again many times: plain ones, or bounded ones whose
 * bounds reach the delete before), a seek, which a memtable answers in a step
 * (memtable.c, "run") and a sorted file by its index.
 */
static void
stream_skip_tombstones(fam_stream *fs)
{
	const wc_vis *vis = &fs->vis;
	const wc_cell *n;
	uint64_t	hidden = vis->col_tomb > vis->fam_tomb ? vis->col_tomb : vis->fam_tomb;

	wc_iter_next(fs->merge);
	if (!wc_iter_valid(fs->merge))
		return;
	n = wc_iter_cell(fs->merge);
	if (n->type != WC_TYPE_DEL_COLUMN || n->seq > hidden || !in_vis_column(vis, n))
		return;
	stream_seek_in_column(fs, INT64_MAX, WC_SEQ_MAX);
}

static int
stream_fail(wc_scan *scan, fam_stream *fs, int code)
{
	fs->done = true;
	scan->failed = code;
	return code;
}

/* The merge's current entry, counted; NULL when an interrupt failed the stream. */
static inline const wc_cell *
stream_cell(wc_scan *scan, fam_stream *fs)
{
	if (--scan->until_check == 0)
	{
		scan->until_check = INTERRUPT_EVERY;
		if (wc_db_interrupted(scan->db))
		{
			stream_fail(scan, fs, wc_err_set(&scan->err, WC_ABORTED, "scan interrupted"));
			return NULL;
		}
	}
	scan->stats.cells_scanned++;
	return wc_iter_cell(fs->merge);
}

/*
 * Feeds c, the merge's current entry, to the visibility step and moves on: 1
 * with fs->out filled when c is a visible put (the merge stays on it), 0 when
 * it is not, or a negative code (the stream failed).
 */
static int
stream_consider(wc_scan *scan, fam_stream *fs, const wc_cell *c)
{
	int			rc = wc_vis_step(&fs->vis, c);

	if (rc != WC_VIS_EMIT)
	{
		if (rc < 0)
			return stream_fail(scan, fs, wc_err_set(&scan->err, rc, "out of memory"));
		if (rc == WC_VIS_SKIP_COLUMN)
			stream_skip_unwanted(scan, fs);
		else if (c->type == WC_TYPE_DEL_COLUMN && fs->vis.rules.mode == WC_VIS_READ &&
				 fs->vis.have_col && in_vis_column(&fs->vis, c))
			stream_skip_tombstones(fs);
		else if ((c->type == WC_TYPE_PUT || c->type == WC_TYPE_DEL_VERSION) &&
				 wc_vis_column_full(&fs->vis) && in_vis_column(&fs->vis, c))
		{
			/*
			 * A version of a column that has what the reader takes, refused
			 * (masked: a row deleted and written again leaves its old versions
			 * behind its tombstones): so is the rest of the column, and
			 * likely of the row's next ones.  (An entry the reader does not
			 * see at all may be of another column: vis stays where it was.)
			 */
			fs->seek_row = fs->vis.rows;
			stream_skip_column(fs);
		}
		else
			wc_iter_next(fs->merge);
		return 0;
	}
	fs->out.row = c->row;
	fs->out.row_len = c->row_len;
	fs->out.family = fs->name;
	fs->out.family_len = fs->name_len;
	fs->out.qual = c->qual;
	fs->out.qual_len = c->qual_len;
	fs->out.ts = c->ts;
	fs->out.val = c->val;
	fs->out.val_len = c->val_len;
	fs->out.seq = c->seq;
	fs->out_same_row = fs->out_rows == fs->vis.rows;	/* never for the first: rows 0 */
	fs->out_rows = fs->vis.rows;
	fs->has_cell = true;
	fs->step_first = true;
	fs->skip_first = wc_vis_column_full(&fs->vis);
	return 1;
}

static int	stream_advance_back(wc_scan *scan, fam_stream *fs);

/* Finds the next visible cell of fs: has_cell, or done (error in scan->failed). */
static int
stream_advance(wc_scan *scan, fam_stream *fs)
{
	if (scan->reverse)
		return stream_advance_back(scan, fs);
	fs->has_cell = false;
	if (fs->step_first)
	{
		/*
		 * Past the cell returned last; when its column holds what the reader
		 * wants and the row's columns have more versions than that, past the
		 * column: a popular row's column has many versions in a memtable, and
		 * the next would be read to be refused.
		 */
		fs->step_first = false;
		if (fs->skip_first && fs->seek_row == fs->vis.rows)
			stream_skip_column(fs);
		else
			wc_iter_next(fs->merge);
	}
	while (!fs->done)
	{
		const wc_cell *c;
		int			rc;

		if (!wc_iter_valid(fs->merge))
		{
			if ((rc = wc_iter_status(fs->merge, &scan->err)) != WC_OK)
				return stream_fail(scan, fs, rc);
			fs->done = true;
			break;
		}
		if ((c = stream_cell(scan, fs)) == NULL)
			return scan->failed;

		if (scan->nranges > 0 &&
			!range_contains_stop(&scan->ranges[fs->range_idx], c->row, c->row_len))
		{
			fs->range_idx++;
			stream_seek_range(scan, fs);
			continue;
		}
		if ((rc = stream_consider(scan, fs, c)) < 0)
			return rc;
		if (rc > 0)
			return WC_OK;
	}
	return scan->failed;
}

/*
 * Reversed scans: positions fs at the first entry of the greatest row below
 * the row read last (or below the stop of range range_idx, at its start),
 * moving to earlier ranges as they run out; done when none is left.  The
 * merge then holds only the sources with entries of that row: the row's end
 * is where the stream steps back again.
 */
static int
stream_step_back(wc_scan *scan, fam_stream *fs)
{
	for (;;)
	{
		const wc_key_range *r;
		const wc_cell *c;
		wc_cell		target;
		const wc_cell *before = &target;
		int			rc;

		if (fs->merge == NULL || fs->range_idx < 0)
		{
			fs->done = true;
			return WC_OK;
		}
		r = scan->nranges > 0 ? &scan->ranges[fs->range_idx] : NULL;
		if (fs->have_row)
			wc_cell_row_start(&target, fs->row, fs->row_len);
		else if (r == NULL || r->stop_bound == WC_UNBOUNDED)
			before = NULL;
		else if (r->stop_bound == WC_EXCLUSIVE)
			wc_cell_row_start(&target, r->stop, r->stop_len);
		else if (!row_after(scan, r->stop, r->stop_len, &target))	/* below the row after stop */
			return stream_fail(scan, fs, wc_err_set(&scan->err, WC_NOMEM, "out of memory"));
		scan->stats.seeks++;
		wc_iter_seek_row_before(fs->merge, before);
		if (!wc_iter_valid(fs->merge))
		{
			if ((rc = wc_iter_status(fs->merge, &scan->err)) != WC_OK)
				return stream_fail(scan, fs, rc);
			fs->range_idx--;
			fs->have_row = false;
			continue;
		}
		c = wc_iter_cell(fs->merge);
		if (r != NULL && r->start_bound != WC_UNBOUNDED)
		{
			int			cmp = wc_row_cmp(c->row, c->row_len, r->start, r->start_len);

			if (cmp < 0 || (cmp == 0 && r->start_bound == WC_EXCLUSIVE))
			{
				fs->range_idx--;
				fs->have_row = false;
				continue;
			}
		}
		if (!wc_buf_reserve(&fs->row, &fs->row_cap, c->row_len + 1))
			return stream_fail(scan, fs, wc_err_set(&scan->err, WC_NOMEM, "out of memory"));
		memcpy(fs->row, c->row, c->row_len);
		fs->row_len = c->row_len;
		fs->have_row = true;
		fs->in_row = true;
		wc_vis_reset(&fs->vis);
		return WC_OK;
	}
}

/* stream_advance of a reversed scan: the rest of the row, else the row before. */
static int
stream_advance_back(wc_scan *scan, fam_stream *fs)
{
	fs->has_cell = false;
	if (fs->step_first)
	{
		fs->step_first = false;
		wc_iter_next(fs->merge);
	}
	while (!fs->done)
	{
		const wc_cell *c;
		int			rc;

		if (!fs->in_row)
		{
			if ((rc = stream_step_back(scan, fs)) != WC_OK)
				return rc;
			continue;
		}
		if (!wc_iter_valid(fs->merge))
		{
			if ((rc = wc_iter_status(fs->merge, &scan->err)) != WC_OK)
				return stream_fail(scan, fs, rc);
			fs->in_row = false;
			continue;
		}
		if ((c = stream_cell(scan, fs)) == NULL)
			return scan->failed;
		if (wc_row_cmp(c->row, c->row_len, fs->row, fs->row_len) != 0)
		{
			fs->in_row = false;
			continue;
		}
		if ((rc = stream_consider(scan, fs, c)) < 0)
			return rc;
		if (rc > 0)
			return WC_OK;
	}
	return scan->failed;
}

/* ---------------------------------------------------------------- the scan */

static int
set_ranges(wc_scan *scan, const wc_key_range *ranges, int nranges)
{
	int			nempty = 0;

	scan->ranges = ranges;
	scan->nranges = nranges;
	scan->points = nranges > 0;
	for (int i = 0; i < nranges; i++)
	{
		/* an empty range among others is passed over (stream_seek_range) */
		if (range_empty(&ranges[i]))
			nempty++;
		else if (!range_is_point(&ranges[i]))
			scan->points = false;
		if (i > 0 && ranges[i - 1].stop_bound != WC_UNBOUNDED && ranges[i].start_bound != WC_UNBOUNDED &&
			wc_row_cmp(ranges[i - 1].stop, ranges[i - 1].stop_len,
					   ranges[i].start, ranges[i].start_len) > 0)
			return -1;
	}
	return nranges > 0 && nempty == nranges ? 1 : 0;
}

static int
start_streams(wc_scan *scan)
{
	int			rc;

	scan->last = -1;
	for (int i = 0; i < scan->nstreams; i++)
	{
		fam_stream *fs = &scan->streams[i];

		fs->done = false;
		fs->has_cell = false;
		if (scan->reverse)
		{
			/* the last range first; with no ranges, range 0 is every row */
			fs->range_idx = scan->nranges > 0 ? scan->nranges - 1 : 0;
			fs->have_row = false;
			fs->in_row = false;
			fs->step_first = false;
		}
		else
		{
			fs->range_idx = 0;
			stream_seek_range(scan, fs);
		}
		if ((rc = stream_advance(scan, fs)) != WC_OK)
			return rc;
	}
	return WC_OK;
}

static int
range_cmp(const void *a, const void *b)
{
	const wc_seq_range *x = a,
			   *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Committed record r is one the scan's snapshot does not see (by the sets):
 * excluded, after the snapshot was asked (ask_unseen), which has the last word.
 */
static int
exclude_unseen(wc_scan *scan, const wc_recent *r, wc_err *err)
{
	const wc_scan_opts *opts = scan->opts;
	bool		visible = false;
	int			rc;

	if (opts->ask_unseen &&
		(rc = opts->tag_visible(opts->tag_visible_arg, r->tag, true, &visible, err)) != WC_OK)
		return rc;
	if (visible)
		return WC_OK;
	scan->nexcl_committed++;
	scan->excl[scan->nexcl].lo = r->seq_lo;
	scan->excl[scan->nexcl++].hi = r->seq_hi;
	return WC_OK;
}

/*
 * Does the scan's snapshot see every forgotten record (tags up to forgotten,
 * committed when they were forgotten)?  Known only for a snapshot given as
 * sets: it does when it sees all tags up to forgotten but its running ones,
 * and each of those in that span has not committed yet, so that none of its
 * writes can have been remembered, let alone forgotten.  While a long
 * transaction runs, every snapshot has its xid as xmin and among the running
 * ones: without this, every read of a busy store would fail once it forgot a
 * record.  1 or 0; an error code, with err set, if a state could not be learnt.
 */
static int
forgotten_seen(wc_scan *scan, uint64_t forgotten, wc_err *err)
{
	const wc_scan_opts *opts = scan->opts;

	if (!opts->snapshot_sets || forgotten >= opts->snapshot_max)
		return 0;
	for (int k = 0; k < opts->nrunning; k++)
	{
		wc_txn_state state;
		int			rc;

		if (opts->running[k] < opts->snapshot_min || opts->running[k] > forgotten)
			continue;
		if ((rc = wc_db_resolve(scan->db, opts->running[k], &state, err)) != WC_OK)
			return rc < 0 ? rc : WC_CALLBACK;
		if (state == WC_TXN_COMMITTED)
			return 0;
	}
	return 1;
}

/*
 * The seqs the scan must not see (DESIGN.md, "Snapshots"): records still in
 * progress when the version was built, and committed ones the reader's snapshot
 * says it does not see.
 */
static int
exclusions(wc_scan *scan, wc_err *err)
{
	const wc_version *v = scan->v;
	const wc_scan_opts *opts = scan->opts;
	wc_db	   *db = scan->db;
	int			cap = v->held.n + opts->npending_excl;
	uint64_t	forgotten = 0;
	const wc_seq_range *dead;

	for (int i = 0; i < opts->npending; i++)
		cap += wc_batch_dead(opts->pending[i], &dead);
	/*
	 * The remembered records are the handle's lists: v is its current
	 * version, built from them (a record applied since would have made it
	 * stale), or pruned since, of records every snapshot sees.
	 */
	for (int l = 0; opts->tag_visible && l <= db->nlogs; l++)
	{
		const wc_recent_list *rl = wc_db_recent_list(db, l);

		if (rl->forgotten > forgotten)
			forgotten = rl->forgotten;
		if (!opts->snapshot_sets)
		{
			cap += rl->n;
			continue;
		}
		/* as many as it can exclude below, not the thousands it will not */
		cap += rl->n - wc_recent_lower_bound(rl, 0, opts->snapshot_max);
		for (int k = 0; k < opts->nrunning; k++)
			for (int i = wc_recent_lower_bound(rl, 0, opts->running[k]);
				 i < rl->n && rl->items[i].tag == opts->running[k]; i++)
				cap++;
	}

	/* a record it may not see was forgotten: the versions it needs may be gone */
	if (opts->tag_visible && forgotten != 0 && forgotten >= opts->snapshot_min &&
		forgotten >= wc_db_horizon(db))
	{
		int			seen = forgotten_seen(scan, forgotten, err);

		if (seen < 0)
			return seen;
		if (!seen)
			return wc_err_set(err, WC_TOO_OLD,
							  "the store no longer remembers which writes the snapshot saw (it kept the newest %u committed transactions)",
							  scan->db->opts.recent_max);
	}
	if (cap == 0)
		return WC_OK;
	if ((scan->excl = malloc(sizeof(wc_seq_range) * (size_t) cap)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (int i = 0; i < v->held.n; i++)
	{
		const wc_recent *r = &v->held.items[i];
		bool		ignored;
		int			rc;

		if (opts->tag_visible && (!opts->snapshot_sets || opts->ask_unseen) &&
			(rc = opts->tag_visible(opts->tag_visible_arg, r->tag, false, &ignored, err)) != WC_OK)
			return rc;
		scan->excl[scan->nexcl].lo = r->seq_lo;
		scan->excl[scan->nexcl++].hi = r->seq_hi;
	}
	for (int l = 0; opts->tag_visible && l <= db->nlogs; l++)
	{
		const wc_recent_list *rl = wc_db_recent_list(db, l);
		int			rc;

		if (opts->snapshot_sets)
		{
			/*
			 * In tag order (manifest.c): below snapshot_min every record is
			 * seen, from snapshot_max on none, and between them only the
			 * running transactions' are not: binary searches, not a look at
			 * each of the thousands a long transaction keeps remembered.
			 */
			int			lo = wc_recent_lower_bound(rl, 0, opts->snapshot_min),
						hi = wc_recent_lower_bound(rl, lo, opts->snapshot_max);

			for (int k = 0; k < opts->nrunning; k++)
			{
				uint64_t	t = opts->running[k];

				if (t < opts->snapshot_min || t >= opts->snapshot_max)
					continue;
				for (int i = wc_recent_lower_bound(rl, lo, t); i < hi && rl->items[i].tag == t; i++)
					if ((rc = exclude_unseen(scan, &rl->items[i], err)) != WC_OK)
						return rc;
			}
			for (int i = hi; i < rl->n; i++)
				if ((rc = exclude_unseen(scan, &rl->items[i], err)) != WC_OK)
					return rc;
			continue;
		}
		for (int i = 0; i < rl->n; i++)
		{
			const wc_recent *r = &rl->items[i];
			bool		visible = true;

			if ((rc = opts->tag_visible(opts->tag_visible_arg, r->tag, true, &visible,
										err)) != WC_OK)
				return rc;
			if (visible)
				continue;
			scan->nexcl_committed++;
			scan->excl[scan->nexcl].lo = r->seq_lo;
			scan->excl[scan->nexcl++].hi = r->seq_hi;
		}
	}
	for (int i = 0; i < opts->npending_excl; i++)
		scan->excl[scan->nexcl++] = opts->pending_excl[i];
	/* entries a batch's overlays still hold after a rewind */
	for (int i = 0; i < opts->npending; i++)
	{
		int			n = wc_batch_dead(opts->pending[i], &dead);

		for (int j = 0; j < n; j++)
			scan->excl[scan->nexcl++] = dead[j];
	}
	if (scan->nexcl > 1)
	{
		int			n = 1;

		qsort(scan->excl, (size_t) scan->nexcl, sizeof(wc_seq_range), range_cmp);
		/* disjoint for the binary search: a dead range may lie within a pending
		 * one (the entries of a command the scan does not see anyway) */
		for (int i = 1; i < scan->nexcl; i++)
		{
			if (scan->excl[i].lo <= scan->excl[n - 1].hi)
			{
				if (scan->excl[i].hi > scan->excl[n - 1].hi)
					scan->excl[n - 1].hi = scan->excl[i].hi;
			}
			else
				scan->excl[n++] = scan->excl[i];
		}
		scan->nexcl = n;
	}
	return WC_OK;
}

int
wc_scan_open(wc_db *db, const wc_scan_opts *opts, wc_scan **out, wc_err *err)
{
	wc_scan    *scan;
	int64_t		now;
	bool		empty;
	int			rc;

	*out = NULL;
	scan = calloc(1, sizeof(wc_scan));
	if (scan == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	wc_err_clear(&scan->err);
	scan->db = db;
	scan->opts = opts;
	scan->reverse = opts->reverse;
	scan->until_check = INTERRUPT_EVERY;
	scan->last = -1;
	if ((scan->v = wc_db_version(db, err)) == NULL)
	{
		free(scan);
		return err->code;
	}
	scan->trunc = scan->v->truncate_seq;
	scan->pend_max = opts->pending_max != 0 ? opts->pending_max : wc_batch_pending_seq_now();
	if ((rc = exclusions(scan, err)) != WC_OK)
	{
		wc_scan_close(scan);
		return rc;
	}
	for (int i = 0; i < opts->npending; i++)
	{
		uint64_t	t = wc_batch_truncate_seq(opts->pending[i]);

		if (t > scan->pend_trunc)
			scan->pend_trunc = t;
	}
	rc = set_ranges(scan, opts->ranges, opts->nranges);
	if (rc < 0)
	{
		wc_scan_close(scan);
		return wc_err_set(err, WC_INVALID, "scan ranges must be sorted and disjoint");
	}
	if (opts->ts_min > opts->ts_max)
	{
		*out = scan;			/* an empty time range: a scan with no streams */
		return WC_OK;
	}
	empty = rc > 0;
	now = opts->now_ms ? opts->now_ms : wc_env_now_ms();

	scan->streams = calloc(db->nfams > 0 ? db->nfams : 1, sizeof(fam_stream));
	if (scan->streams == NULL)
	{
		wc_scan_close(scan);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	/* db->fams is in name order, so streams are too */
	for (int i = 0; i < db->nfams; i++)
	{
		const wc_family *f = &db->fams[i];
		bool		wanted = opts->nfamilies == 0;

		for (int j = 0; j < opts->nfamilies && !wanted; j++)
			wanted = opts->families[j].len == f->name_len &&
				memcmp(opts->families[j].data, f->name, f->name_len) == 0;
		if (!wanted)
			continue;
		rc = stream_init(scan, &scan->streams[scan->nstreams++], f, now);
		if (rc != WC_OK)
			break;
	}
	if (rc == WC_OK && empty)
	{
		/* an empty range: streams that yield nothing until a reset */
		for (int i = 0; i < scan->nstreams; i++)
			scan->streams[i].done = true;
	}
	else if (rc == WC_OK)
		rc = start_streams(scan);
	if (rc != WC_OK)
	{
		*err = scan->err;
		wc_scan_close(scan);
		return rc;
	}
	*out = scan;
	return WC_OK;
}

int
wc_scan_next(wc_scan *scan, wc_cell_view *cell, wc_err *err)
{
	int			best = -1;
	bool		kept = false;	/* the last stream stays best */

	if (scan->failed)
	{
		*err = scan->err;
		return scan->failed;
	}
	if (scan->last >= 0)
	{
		if (stream_advance(scan, &scan->streams[scan->last]) != WC_OK)
		{
			*err = scan->err;
			return scan->failed;
		}

		/*
		 * Still in the row it was the first (or last) of, and first among equal
		 * rows: the stream that was best stays best, no comparison needed.
		 */
		if (scan->streams[scan->last].has_cell && scan->streams[scan->last].out_same_row)
		{
			best = scan->last;
			kept = true;
		}
	}
	for (int i = 0; !kept && i < scan->nstreams; i++)
	{
		const fam_stream *fs = &scan->streams[i];

		int			c;

		if (!fs->has_cell)
			continue;
		if (best < 0)
		{
			best = i;
			continue;
		}
		/* equal rows: the earlier stream has the smaller family name */
		c = wc_row_cmp(fs->out.row, fs->out.row_len,
					   scan->streams[best].out.row, scan->streams[best].out.row_len);
		if (scan->reverse ? c > 0 : c < 0)
			best = i;
	}
	scan->last = best;
	if (best < 0)
		return 0;
	*cell = scan->streams[best].out;
	scan->stats.cells_returned++;
	return 1;
}

int
wc_scan_reset(wc_scan *scan, const wc_key_range *ranges, int nranges, wc_err *err)
{
	int			rc;

	if (scan->failed)
	{
		*err = scan->err;
		return scan->failed;
	}
	rc = set_ranges(scan, ranges, nranges);
	if (rc < 0)
		return wc_err_set(err, WC_INVALID, "scan ranges must be sorted and disjoint");
	if (rc > 0)
	{
		/* empty: no stream yields anything */
		for (int i = 0; i < scan->nstreams; i++)
		{
			scan->streams[i].done = true;
			scan->streams[i].has_cell = false;
		}
		scan->last = -1;
		return WC_OK;
	}
	for (int i = 0; i < scan->nstreams; i++)
		if ((rc = stream_build(scan, &scan->streams[i])) != WC_OK)
		{
			scan->failed = rc;
			*err = scan->err;
			return rc;
		}
	if ((rc = start_streams(scan)) != WC_OK)
	{
		*err = scan->err;
		return rc;
	}
	return WC_OK;
}

bool
wc_scan_sees_latest(const wc_scan *scan)
{
	return scan->nexcl_committed == 0 && scan->db->current == scan->v && !scan->db->dirty;
}

uint64_t
wc_scan_visible_bound(const wc_scan *scan)
{
	uint64_t	bound = scan->v->snapshot_seq;

	/* excl is sorted by its ranges' starts */
	if (scan->nexcl > 0 && scan->excl[0].lo <= bound)
		bound = scan->excl[0].lo > 0 ? scan->excl[0].lo - 1 : 0;
	return bound;
}

void
wc_scan_get_stats(const wc_scan *scan, wc_scan_stats *stats)
{
	*stats = scan->stats;
}

void
wc_scan_close(wc_scan *scan)
{
	if (scan == NULL)
		return;
	for (int i = 0; i < scan->nstreams; i++)
		stream_free(&scan->streams[i]);
	free(scan->streams);
	free(scan->keybuf);
	free(scan->excl);
	wc_version_unref(scan->v);
	free(scan);
}

/* ---------------------------------------------------------------- sampling */

static int
slice_cmp(const void *a, const void *b)
{
	const wc_slice *x = a,
			   *y = b;

	return wc_row_cmp(x->data, x->len, y->data, y->len);
}

int
wc_db_block_bounds(wc_db *db, const wc_slice *families, int nfamilies,
				   wc_slice **out, int *n, wc_err *err)
{
	wc_version *v;
	size_t		count = 0,
				bytes = 0;
	wc_slice   *sl = NULL;
	uint8_t    *p = NULL;
	size_t		k = 0;
	int			rc = WC_OK;

	*out = NULL;
	*n = 0;
	if ((v = wc_db_version(db, err)) == NULL)
		return err->code;

	/* two passes over the indexes: the sizes, then the copies */
	for (int pass = 0; pass < 2 && rc == WC_OK; pass++)
	{
		for (int i = 0; i < v->nssts && rc == WC_OK; i++)
		{
			const wc_sst_props *pr = wc_sst_get_props(v->ssts[i]);
			bool		wanted = nfamilies == 0;
			uint32_t	nb = wc_sst_nblocks(v->ssts[i]);

			for (int j = 0; j < nfamilies && !wanted; j++)
				wanted = families[j].len == strlen(pr->family) &&
					memcmp(families[j].data, pr->family, families[j].len) == 0;
			if (!wanted || pr->cells == 0)
				continue;
			for (uint32_t b = 0; b < nb; b++)
			{
				const uint8_t *row;
				size_t		len;

				if ((rc = wc_sst_block_last_row(v->ssts[i], b, &row, &len, err)) != WC_OK)
					break;
				if (pass == 0)
				{
					count++;
					bytes += len;
					continue;
				}
				sl[k].data = p;
				sl[k].len = len;
				if (len)
					memcpy(p, row, len);
				p += len;
				k++;
			}
		}
		if (pass == 0 && rc == WC_OK)
		{
			if (count > (size_t) INT32_MAX)
				rc = wc_err_set(err, WC_INVALID, "too many blocks to sample: %zu", count);
			else if ((sl = malloc(sizeof(wc_slice) * (count ? count : 1) + bytes)) == NULL)
				rc = wc_err_set(err, WC_NOMEM, "out of memory");
			else
				p = (uint8_t *) (sl + (count ? count : 1));
		}
	}
	wc_version_unref(v);
	if (rc != WC_OK)
	{
		free(sl);
		return rc;
	}
	if (k > 1)
	{
		size_t		j = 0;

		qsort(sl, k, sizeof(wc_slice), slice_cmp);
		for (size_t i = 1; i < k; i++)
			if (slice_cmp(&sl[j], &sl[i]) != 0)
				sl[++j] = sl[i];
		k = j + 1;
	}
	*out = sl;
	*n = (int) k;
	return WC_OK;
}
