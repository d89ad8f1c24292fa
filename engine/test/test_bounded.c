/*
 * test_bounded.c -- bounded family deletes (cell.h, wc_batch_delete_family_upto):
 * a DEL_FAMILY carrying a bound B hides its row's entries in the family with seq
 * <= B and spares later ones, alone and beside plain markers, in a writer's
 * pending overlay, after a reopen (the log replayed), a flush (a version 4 file)
 * and a major compaction, in forward and reversed scans; the bound a scan gives
 * (wc_scan_visible_bound) stays below a write still in progress.  Bounded
 * column deletes (wc_batch_delete_column_upto) the same for one column (a
 * version 5 file), also where a marker with a lower seq hides more than the one
 * before it, across a memtable and a file, through the row cache, and a run of
 * them (a row deleted and written again) read in a few steps.
 */
#include <inttypes.h>
#include <string.h>

#include "testutil.h"
#include "../batch.h"
#include "../cell.h"
#include "../coding.h"
#include "../crc32c.h"
#include "../iter.h"
#include "../sst.h"

static wc_family_opts fams[] = {
	{"f", 0, 0, WC_COMPRESS_LZ4, 0},
	{"g", 0, 0, WC_COMPRESS_NONE, 0},
};

/* The row cache of the stores opened next (wc_open_opts.row_cache_bytes). */
static size_t open_row_cache;

/* Transaction states for the resolver: tag t is tag_state[t] (0 = committed). */
static wc_txn_state tag_state[16];

static int
resolve_tag(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	(void) arg;
	(void) err;
	*state = tag < 16 ? tag_state[tag] : WC_TXN_COMMITTED;
	return WC_OK;
}

static wc_db *
open_db_with(const char *dir, wc_family_opts *f, int nf)
{
	wc_open_opts o;
	wc_db	   *db = NULL;
	wc_err		err;
	int			rc;

	memset(&o, 0, sizeof(o));
	o.families = f;
	o.nfamilies = nf;
	o.create_if_missing = true;
	o.block_bytes = 256;
	o.resolve = resolve_tag;
	o.ingest_bytes = SIZE_MAX;
	o.row_cache_bytes = open_row_cache;
	wc_err_clear(&err);
	rc = wc_db_open(dir, &o, &db, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		exit(1);
	return db;
}

static wc_db *
open_db(const char *dir)
{
	return open_db_with(dir, fams, 2);
}

/* One put in a write of its own (tag 0: committed at once); returns its seq. */
static uint64_t
put1(wc_db *db, uint64_t tag, const char *fam, const char *row, const char *qual, int64_t ts,
	 const char *val)
{
	wc_batch   *b = wc_batch_new();
	wc_scan_opts so;
	wc_scan    *s = NULL;
	wc_err		err;
	uint64_t	seq;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_put(b, fam, strlen(fam), row, strlen(row), qual, strlen(qual), ts,
						  val, strlen(val), &err), &err);
	CHECK_OK(wc_db_write(db, &b, 1, tag, false, &err), &err);
	wc_batch_free(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	/* a write's seq is the highest the store holds right after it */
	wc_scan_opts_init(&so);
	CHECK_OK(wc_scan_open(db, &so, &s, &err), &err);
	seq = wc_scan_visible_bound(s);
	wc_scan_close(s);
	return seq;
}

/* The bound a scan of the whole store opened now gives. */
static uint64_t
bound_now(wc_db *db)
{
	wc_scan_opts so;
	wc_scan    *s = NULL;
	wc_err		err;
	uint64_t	bound = 0;

	wc_err_clear(&err);
	wc_scan_opts_init(&so);
	CHECK_OK(wc_scan_open(db, &so, &s, &err), &err);
	if (s)
		bound = wc_scan_visible_bound(s);
	wc_scan_close(s);
	return bound;
}

static void
del_family_upto(wc_db *db, const char *fam, const char *row, uint64_t bound)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_delete_family_upto(b, fam, strlen(fam), row, strlen(row), bound, &err), &err);
	CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
	wc_batch_free(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
}

static void
del_family(wc_db *db, const char *fam, const char *row)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_delete_family(b, fam, strlen(fam), row, strlen(row), &err), &err);
	CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
	wc_batch_free(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
}

static void
del_column_upto(wc_db *db, const char *fam, const char *row, const char *qual, uint64_t bound)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_delete_column_upto(b, fam, strlen(fam), row, strlen(row), qual,
										 strlen(qual), bound, &err), &err);
	CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
	wc_batch_free(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
}

static void
del_column(wc_db *db, const char *fam, const char *row, const char *qual)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_delete_column(b, fam, strlen(fam), row, strlen(row), qual, strlen(qual),
									&err), &err);
	CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
	wc_batch_free(b);
	CHECK_OK(wc_db_refresh(db, &err), &err);
}

static void render_row(wc_db *db, bool reverse, wc_batch **pending, int npending,
					   const char *row, char *out, size_t size, wc_scan_stats *st);

/* Scans (reversed or not, with pending batches) and renders "row/fam:qual@ts=val;". */
static void
render(wc_db *db, bool reverse, wc_batch **pending, int npending, char *out, size_t size)
{
	render_row(db, reverse, pending, npending, NULL, out, size, NULL);
}

/* The same for one row (NULL: every row), with the scan's statistics in *st. */
static void
render_row(wc_db *db, bool reverse, wc_batch **pending, int npending, const char *row,
		   char *out, size_t size, wc_scan_stats *st)
{
	wc_scan_opts so;
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_key_range range;
	wc_err		err;
	size_t		used = 0;
	int			rc;

	out[0] = '\0';
	wc_err_clear(&err);
	wc_scan_opts_init(&so);
	so.reverse = reverse;
	so.pending = pending;
	so.npending = npending;
	if (row != NULL)
	{
		range.start = range.stop = (const uint8_t *) row;
		range.start_len = range.stop_len = strlen(row);
		range.start_bound = range.stop_bound = WC_INCLUSIVE;
		so.ranges = &range;
		so.nranges = 1;
	}
	rc = wc_scan_open(db, &so, &s, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		return;
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
		used += snprintf(out + used, size > used ? size - used : 0, "%.*s/%.*s:%.*s@%" PRId64 "=%.*s;",
						 (int) c.row_len, c.row, (int) c.family_len, c.family,
						 (int) c.qual_len, c.qual, c.ts, (int) c.val_len, c.val);
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	if (st != NULL)
		wc_scan_get_stats(s, st);
	wc_scan_close(s);
}

/* The rows of a rendering in reversed rowkey order (cells of a row keep theirs). */
static void
reverse_rows(const char *in, char *out, size_t size)
{
	const char *starts[64];
	size_t		lens[64];
	int			n = 0;
	const char *p = in;
	size_t		used = 0;

	while (*p && n < 64)
	{
		const char *slash = strchr(p, '/');
		size_t		rlen = (size_t) (slash - p);
		const char *q = p;

		/* the run of cells of this row */
		while (*q && strncmp(q, p, rlen) == 0 && q[rlen] == '/')
			q = strchr(q, ';') + 1;
		starts[n] = p;
		lens[n++] = (size_t) (q - p);
		p = q;
	}
	out[0] = '\0';
	for (int i = n - 1; i >= 0; i--)
		used += snprintf(out + used, size > used ? size - used : 0, "%.*s", (int) lens[i], starts[i]);
}

#define EXPECT(db, pending, npending, want, what) do { \
	char got_[8192], rev_[8192], want_rev_[8192]; \
	render((db), false, (pending), (npending), got_, sizeof(got_)); \
	CHECK(strcmp(got_, (want)) == 0, "%s:\n  got:  %s\n  want: %s", (what), got_, (want)); \
	render((db), true, (pending), (npending), rev_, sizeof(rev_)); \
	reverse_rows((want), want_rev_, sizeof(want_rev_)); \
	CHECK(strcmp(rev_, want_rev_) == 0, "%s, reversed:\n  got:  %s\n  want: %s", (what), rev_, want_rev_); \
} while (0)

/* The format version in the footer of the sorted file of family fam. */
static int
file_version(wc_db *db, const char *dir, const char *fam)
{
	wc_file_info *files = NULL;
	int			nfiles = 0;
	int			version = -1;
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_db_files(db, &files, &nfiles, &err), &err);
	for (int i = 0; i < nfiles; i++)
	{
		char		path[4200];
		FILE	   *f;
		uint8_t		footer[WC_SST_FOOTER_SIZE];

		if (strcmp(files[i].family, fam) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if ((f = fopen(path, "rb")) != NULL && fseek(f, -WC_SST_FOOTER_SIZE, SEEK_END) == 0 &&
			fread(footer, 1, sizeof(footer), f) == sizeof(footer))
			version = (int) wc_get_fixed32(footer + 48);
		if (f)
			fclose(f);
	}
	wc_file_info_free(files, nfiles);
	return version;
}

/*
 * The store the tests share: rows a (bound between versions), b (bound at, below
 * and above entries), c (plain and bounded markers), d (in family g only: a
 * bounded marker of f leaves it).
 */
#define WANT_ALL \
	"a/f:q@3=late;a/g:q@1=ga;" \
	"b/f:x@3=b3;" \
	"c/f:q@4=c4;" \
	"d/g:q@1=d1;"

static void
fill(wc_db *db)
{
	uint64_t	b, b2;

	put1(db, 0, "f", "a", "q", 1, "a1");
	put1(db, 0, "f", "a", "q", 2, "a2");
	put1(db, 0, "f", "a", "p", 1, "ap");
	put1(db, 0, "g", "a", "q", 1, "ga");
	b = bound_now(db);
	put1(db, 0, "f", "a", "q", 3, "late");	/* committed after the "snapshot" */
	del_family_upto(db, "f", "a", b);

	/* b: bound exactly at the second of three entries */
	put1(db, 0, "f", "b", "x", 1, "b1");
	b2 = put1(db, 0, "f", "b", "x", 2, "b2");
	put1(db, 0, "f", "b", "x", 3, "b3");
	del_family_upto(db, "f", "b", b2);

	/* c: bounded, then a plain marker hides everything before it, then a put */
	put1(db, 0, "f", "c", "q", 1, "c1");
	b = bound_now(db);
	put1(db, 0, "f", "c", "q", 2, "c2");
	del_family_upto(db, "f", "c", b);
	put1(db, 0, "f", "c", "q", 3, "c3");
	del_family(db, "f", "c");
	put1(db, 0, "f", "c", "q", 4, "c4");
	/* a bounded marker written later with an older bound changes nothing */
	del_family_upto(db, "f", "c", b);

	/* d: a marker of f where only g has cells */
	put1(db, 0, "g", "d", "q", 1, "d1");
	del_family_upto(db, "f", "d", bound_now(db));
}

static void
test_masking_through_flush_and_compaction(void)
{
	char	   *dir = test_tmpdir("bounded");
	wc_db	   *db = open_db(dir);
	wc_err		err;

	fill(db);
	EXPECT(db, NULL, 0, WANT_ALL, "memtable");

	wc_db_close(db);
	db = open_db(dir);
	EXPECT(db, NULL, 0, WANT_ALL, "after a reopen (log replayed)");

	wc_err_clear(&err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	EXPECT(db, NULL, 0, WANT_ALL, "after a flush");
	CHECK(file_version(db, dir, "f") == WC_SST_VERSION_BOUNDED,
		  "family f's file is version %d", file_version(db, dir, "f"));
	CHECK(file_version(db, dir, "g") == WC_SST_VERSION_NO_ZSTD,
		  "family g's file (no bounded marker) is version %d", file_version(db, dir, "g"));

	/* a marker in the logs over entries in a file */
	{
		uint64_t	b;

		put1(db, 0, "g", "a", "z", 1, "gz");
		b = bound_now(db);
		put1(db, 0, "g", "a", "z", 2, "gz2");
		del_family_upto(db, "g", "a", b);
		EXPECT(db, NULL, 0, "a/f:q@3=late;a/g:z@2=gz2;b/f:x@3=b3;c/f:q@4=c4;d/g:q@1=d1;",
			   "a marker in the log, entries in files");
		CHECK_OK(wc_db_flush(db, &err), &err);
		EXPECT(db, NULL, 0, "a/f:q@3=late;a/g:z@2=gz2;b/f:x@3=b3;c/f:q@4=c4;d/g:q@1=d1;",
			   "two flushes");
	}

	wc_err_clear(&err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT(db, NULL, 0, "a/f:q@3=late;a/g:z@2=gz2;b/f:x@3=b3;c/f:q@4=c4;d/g:q@1=d1;",
		   "after a major compaction");
	wc_db_close(db);
	db = open_db(dir);
	EXPECT(db, NULL, 0, "a/f:q@3=late;a/g:z@2=gz2;b/f:x@3=b3;c/f:q@4=c4;d/g:q@1=d1;",
		   "compacted, reopened");
	wc_db_close(db);
	test_rmdir(dir);
}

/* A writer's own batch: its bounded marker hides committed entries up to the
 * bound, never its own pending puts; committed, the same. */
static void
test_pending(void)
{
	char	   *dir = test_tmpdir("bounded-pending");
	wc_db	   *db = open_db(dir);
	wc_batch   *p = wc_batch_new();
	wc_err		err;
	uint64_t	b;

	put1(db, 0, "f", "r", "q", 1, "old1");
	put1(db, 0, "f", "r", "q", 2, "old2");
	put1(db, 0, "g", "r", "q", 1, "gold");
	b = bound_now(db);
	wc_err_clear(&err);
	CHECK_OK(wc_batch_put(p, "f", 1, "r", 1, "m", 1, 5, "mine", 4, &err), &err);
	CHECK_OK(wc_batch_delete_row_upto(p, fams, 2, "r", 1, b, &err), &err);
	CHECK_OK(wc_batch_put(p, "g", 1, "r", 1, "m", 1, 6, "mine2", 5, &err), &err);
	/* another writer commits meanwhile: spared */
	put1(db, 0, "f", "r", "q", 3, "theirs");
	EXPECT(db, &p, 1, "r/f:m@5=mine;r/f:q@3=theirs;r/g:m@6=mine2;", "pending overlay");
	EXPECT(db, NULL, 0, "r/f:q@3=theirs;r/f:q@2=old2;r/f:q@1=old1;r/g:q@1=gold;",
		   "others do not see the pending batch");
	CHECK_OK(wc_db_write(db, &p, 1, 0, false, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	EXPECT(db, NULL, 0, "r/f:m@5=mine;r/f:q@3=theirs;r/g:m@6=mine2;", "committed");
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT(db, NULL, 0, "r/f:m@5=mine;r/f:q@3=theirs;r/g:m@6=mine2;", "flushed and compacted");

	/* bad bounds */
	wc_batch_clear(p);
	wc_err_clear(&err);
	CHECK(wc_batch_delete_family_upto(p, "f", 1, "r", 1, WC_SEQ_PENDING_BASE, &err) == WC_INVALID,
		  "a pending seq as a bound");
	CHECK(wc_batch_delete_row_upto(p, fams, 2, "r", 1, WC_SEQ_PENDING_BASE + 5, &err) == WC_INVALID,
		  "a pending seq as a row bound");
	CHECK(wc_batch_count(p) == 0, "nothing added");
	CHECK(wc_batch_delete_row_upto(p, fams, 2, "r", 1, WC_SEQ_MAX, &err) == WC_OK &&
		  wc_batch_count(p) == 2, "WC_SEQ_MAX: plain markers");
	wc_batch_free(p);
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * A write in progress when the scan opens (it commits later, after the deleter's
 * snapshot) lies above the scan's bound, so a delete with that bound spares it,
 * also when entries the scan sees have higher seqs.
 */
static void
test_bound_below_in_progress(void)
{
	char	   *dir = test_tmpdir("bounded-held");
	wc_db	   *db = open_db(dir);
	uint64_t	s0,
				s1,
				s2,
				b;
	wc_err		err;

	s0 = put1(db, 0, "f", "r", "a", 1, "seen");
	tag_state[7] = WC_TXN_IN_PROGRESS;
	put1(db, 7, "f", "r", "a", 2, "inflight");
	s1 = put1(db, 0, "f", "r", "a", 3, "seen-later");
	(void) s1;
	b = bound_now(db);
	CHECK(b == s0, "bound %" PRIu64 " is below the write in progress (seen: %" PRIu64 ")", b, s0);
	s2 = put1(db, 0, "f", "r", "b", 1, "x");
	(void) s2;
	del_family_upto(db, "f", "r", b);
	EXPECT(db, NULL, 0, "r/f:a@3=seen-later;r/f:b@1=x;", "before the commit");
	tag_state[7] = WC_TXN_COMMITTED;
	wc_err_clear(&err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	EXPECT(db, NULL, 0, "r/f:a@3=seen-later;r/f:a@2=inflight;r/f:b@1=x;", "after its commit");
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT(db, NULL, 0, "r/f:a@3=seen-later;r/f:a@2=inflight;r/f:b@1=x;", "flushed and compacted");
	wc_db_close(db);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- columns */

/*
 * The column store: rows a (a bound between versions of q; column p spared), b
 * (a bound at an entry of x, just below y's), c (plain and bounded markers in
 * either order), d (the marker written first, with the lower seq, hides more
 * than the one after it; across files and the memtable), e (a marker of f where
 * only g has the column).
 */
#define WANT_COLS \
	"a/f:p@1=ap;a/f:q@3=late;a/g:q@1=ga;" \
	"b/f:x@3=b3;b/f:y@1=y1;" \
	"c/f:q@4=c4;c/f:r@3=r3;" \
	"d/f:q@3=d3;" \
	"e/g:q@1=e1;"

static void
fill_columns(wc_db *db)
{
	wc_err		err;
	uint64_t	b,
				s;

	wc_err_clear(&err);
	put1(db, 0, "f", "a", "q", 1, "a1");
	put1(db, 0, "f", "a", "q", 2, "a2");
	put1(db, 0, "f", "a", "p", 1, "ap");
	put1(db, 0, "g", "a", "q", 1, "ga");
	b = bound_now(db);
	put1(db, 0, "f", "a", "q", 3, "late");	/* committed after the "snapshot" */
	del_column_upto(db, "f", "a", "q", b);

	put1(db, 0, "f", "b", "x", 1, "b1");
	b = put1(db, 0, "f", "b", "x", 2, "b2");
	put1(db, 0, "f", "b", "x", 3, "b3");
	del_column_upto(db, "f", "b", "x", b);
	s = put1(db, 0, "f", "b", "y", 1, "y1");
	del_column_upto(db, "f", "b", "y", s - 1);

	/* c/q: bounded, then a plain one hides all before it, then a stale bound */
	put1(db, 0, "f", "c", "q", 1, "c1");
	b = bound_now(db);
	put1(db, 0, "f", "c", "q", 2, "c2");
	del_column_upto(db, "f", "c", "q", b);
	put1(db, 0, "f", "c", "q", 3, "c3");
	del_column(db, "f", "c", "q");
	put1(db, 0, "f", "c", "q", 4, "c4");
	del_column_upto(db, "f", "c", "q", b);
	/* c/r: plain, then a bounded one hides what came after it */
	put1(db, 0, "f", "c", "r", 1, "r1");
	del_column(db, "f", "c", "r");
	put1(db, 0, "f", "c", "r", 2, "r2");
	b = bound_now(db);
	put1(db, 0, "f", "c", "r", 3, "r3");
	del_column_upto(db, "f", "c", "r", b);

	/*
	 * d: d1 and d2 in a file; a marker hiding both in a file of its own; d3
	 * and a marker of a transaction whose snapshot saw only d1 in the log.
	 * Read in cell order the later marker, which hides only d1, comes first.
	 */
	s = put1(db, 0, "f", "d", "q", 1, "d1");
	put1(db, 0, "f", "d", "q", 2, "d2");
	CHECK_OK(wc_db_flush(db, &err), &err);
	del_column_upto(db, "f", "d", "q", bound_now(db));
	CHECK_OK(wc_db_flush(db, &err), &err);
	put1(db, 0, "f", "d", "q", 3, "d3");
	del_column_upto(db, "f", "d", "q", s);

	put1(db, 0, "g", "e", "q", 1, "e1");
	del_column_upto(db, "f", "e", "q", bound_now(db));
}

/* Three point reads of row: the files (the row cache's miss), its fill, its hit
 * (when the row lies in two files or more: cached). */
static void
expect_cached_row(wc_db *db, const char *row, const char *want, bool cached)
{
	char		got[4096];
	wc_scan_stats st;

	for (int i = 0; i < 3; i++)
	{
		render_row(db, false, NULL, 0, row, got, sizeof(got), &st);
		CHECK(strcmp(got, want) == 0, "point read %d of %s:\n  got:  %s\n  want: %s",
			  i, row, got, want);
	}
	CHECK(st.rows_cached >= (cached ? 1 : 0), "the third read of %s from the row cache: %" PRIu64,
		  row, st.rows_cached);
}

static void
test_column_masking(void)
{
	char	   *dir = test_tmpdir("bounded-col");
	wc_db	   *db = open_db(dir);
	wc_err		err;

	fill_columns(db);
	EXPECT(db, NULL, 0, WANT_COLS, "columns: files and memtable");
	CHECK(file_version(db, dir, "f") == WC_SST_VERSION_BOUNDED_COLUMN,
		  "family f's newest file is version %d", file_version(db, dir, "f"));

	wc_db_close(db);
	db = open_db(dir);
	EXPECT(db, NULL, 0, WANT_COLS, "columns: after a reopen (log replayed)");

	wc_err_clear(&err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	EXPECT(db, NULL, 0, WANT_COLS, "columns: after a flush");
	CHECK(file_version(db, dir, "f") == WC_SST_VERSION_BOUNDED_COLUMN,
		  "family f's file is version %d", file_version(db, dir, "f"));
	CHECK(file_version(db, dir, "g") == WC_SST_VERSION_NO_ZSTD,
		  "family g's file (no bounded marker) is version %d", file_version(db, dir, "g"));
	wc_db_close(db);

	/* row d's family f lies in three files: the row cache merges them */
	open_row_cache = 1 << 20;
	db = open_db(dir);
	expect_cached_row(db, "d", "d/f:q@3=d3;", true);
	expect_cached_row(db, "c", "c/f:q@4=c4;c/f:r@3=r3;", false);

	wc_err_clear(&err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT(db, NULL, 0, WANT_COLS, "columns: after a major compaction");
	/* the markers went with what they hid */
	CHECK(file_version(db, dir, "f") == WC_SST_VERSION_NO_ZSTD,
		  "compacted file of version %d", file_version(db, dir, "f"));
	wc_db_close(db);
	open_row_cache = 0;
	db = open_db(dir);
	EXPECT(db, NULL, 0, WANT_COLS, "columns: compacted, reopened");
	wc_db_close(db);
	test_rmdir(dir);
}

/* A writer's own batch: its bounded column marker hides committed entries up to
 * the bound, never its own pending puts, nor another writer's later commit. */
static void
test_column_pending(void)
{
	char	   *dir = test_tmpdir("bounded-col-pending");
	wc_db	   *db = open_db(dir);
	wc_batch   *p = wc_batch_new();
	const char *want = "r/f:q@6=mine2;r/f:q@5=mine;r/f:q@3=theirs;r/f:z@1=z1;";
	wc_err		err;
	uint64_t	b;

	put1(db, 0, "f", "r", "q", 1, "old1");
	put1(db, 0, "f", "r", "q", 2, "old2");
	put1(db, 0, "f", "r", "z", 1, "z1");
	b = bound_now(db);
	wc_err_clear(&err);
	CHECK_OK(wc_batch_put(p, "f", 1, "r", 1, "q", 1, 5, "mine", 4, &err), &err);
	CHECK_OK(wc_batch_delete_column_upto(p, "f", 1, "r", 1, "q", 1, b, &err), &err);
	CHECK_OK(wc_batch_put(p, "f", 1, "r", 1, "q", 1, 6, "mine2", 5, &err), &err);
	put1(db, 0, "f", "r", "q", 3, "theirs");
	EXPECT(db, &p, 1, want, "column: pending overlay");
	EXPECT(db, NULL, 0, "r/f:q@3=theirs;r/f:q@2=old2;r/f:q@1=old1;r/f:z@1=z1;",
		   "column: others do not see the pending batch");
	CHECK_OK(wc_db_write(db, &p, 1, 0, false, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	EXPECT(db, NULL, 0, want, "column: committed");
	CHECK_OK(wc_db_flush(db, &err), &err);
	EXPECT(db, NULL, 0, want, "column: flushed");
	CHECK_OK(wc_db_compact(db, &err), &err);
	EXPECT(db, NULL, 0, want, "column: flushed and compacted");

	/* bad bounds and entries: nothing added */
	wc_batch_clear(p);
	wc_err_clear(&err);
	CHECK(wc_batch_delete_column_upto(p, "f", 1, "r", 1, "q", 1, WC_SEQ_PENDING_BASE, &err) ==
		  WC_INVALID && strstr(err.msg, "column delete bound"), "a pending seq as a bound: %s",
		  err.msg);
	CHECK(wc_batch_delete_column_upto(p, "", 0, "r", 1, "q", 1, 5, &err) == WC_INVALID,
		  "no family");
	CHECK(wc_batch_delete_column_upto(p, "f", 1, "", 0, "q", 1, 5, &err) == WC_INVALID,
		  "no rowkey");
	CHECK(wc_batch_delete_column_upto(NULL, "f", 1, "r", 1, "q", 1, 5, &err) == WC_INVALID,
		  "no batch");
	CHECK(wc_batch_count(p) == 0, "nothing added");
	CHECK(wc_batch_delete_column_upto(p, "f", 1, "r", 1, "", 0, 0, &err) == WC_OK &&
		  wc_batch_count(p) == 1, "the empty qualifier, bound 0: %s", err.msg);
	wc_batch_free(p);
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * A column deleted and written again many times, each delete by a transaction
 * whose snapshot saw the delete before (its bound reaches that marker's seq):
 * a reader honours the newest marker and jumps the rest of the run in a seek,
 * as for plain markers, instead of stepping over them one by one.
 */
static void
test_column_runs(void)
{
	enum
	{
		ROUNDS = 200
	};
	char	   *dir = test_tmpdir("bounded-col-runs");
	wc_family_opts fo[] = {{"h", 1, 0, WC_COMPRESS_NONE, 0}};
	wc_db	   *db = open_db_with(dir, fo, 1);
	char		want[2][64],
				got[4096];
	wc_err		err;

	for (int i = 1; i <= ROUNDS; i++)
	{
		char		v[16];

		snprintf(v, sizeof(v), "v%d", i);
		put1(db, 0, "h", "b", "q", i, v);
		del_column_upto(db, "h", "b", "q", bound_now(db));
		put1(db, 0, "h", "p", "q", i, v);
		del_column(db, "h", "p", "q");
	}
	put1(db, 0, "h", "b", "q", ROUNDS + 1, "last");
	put1(db, 0, "h", "p", "q", ROUNDS + 1, "last");
	snprintf(want[0], sizeof(want[0]), "b/h:q@%d=last;", ROUNDS + 1);
	snprintf(want[1], sizeof(want[1]), "p/h:q@%d=last;", ROUNDS + 1);
	for (int pass = 0; pass < 2; pass++)
	{
		for (int k = 0; k < 2; k++)
		{
			wc_scan_stats st;

			for (int reverse = 0; reverse < 2; reverse++)
			{
				render_row(db, reverse, NULL, 0, k == 0 ? "b" : "p", got, sizeof(got), &st);
				CHECK(strcmp(got, want[k]) == 0, "run %s%s:\n  got:  %s\n  want: %s",
					  k == 0 ? "of bounded markers" : "of plain markers",
					  pass ? ", flushed" : "", got, want[k]);
				CHECK(st.cells_scanned < 10, "run %s%s%s read in %" PRIu64 " steps",
					  k == 0 ? "of bounded markers" : "of plain markers",
					  pass ? ", flushed" : "", reverse ? ", reversed" : "", st.cells_scanned);
			}
		}
		wc_err_clear(&err);
		CHECK_OK(wc_db_flush(db, &err), &err);
	}
	wc_db_close(db);
	test_rmdir(dir);
}

/*
 * Sorted files: a bounded DEL_COLUMN makes the file version 5 (beside a bounded
 * DEL_FAMILY too); a builder held to an older version, or a value that is not a
 * bound, is refused; a version 4 file holding one fails verification, a file of
 * version 6 is refused at open.
 */
static void
test_column_sorted_file(void)
{
	char	   *dir = test_tmpdir("bounded-col-sst");
	uint8_t		b4[8],
				b2[8],
				odd[3] = {1, 2, 3};
	wc_cell		cells[4];
	wc_sst_build_opts o;
	wc_sst_props props;
	wc_sst_builder *b;
	wc_sst	   *s = NULL;
	wc_err		err;
	int			rc;

	wc_put_fixed64(b4, 4);
	wc_put_fixed64(b2, 2);
	memset(cells, 0, sizeof(cells));
	/* r: DEL_FAMILY seq 10 bound 2; q: DEL_COLUMN seq 9 bound 4, seq 7 plain; a put */
	cells[0] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "", 0, INT64_MAX, 10,
		WC_TYPE_DEL_FAMILY, b2, 8};
	cells[1] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "q", 1, INT64_MAX, 9,
		WC_TYPE_DEL_COLUMN, b4, 8};
	cells[2] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "q", 1, INT64_MAX, 7,
		WC_TYPE_DEL_COLUMN, NULL, 0};
	cells[3] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "q", 1, 5, 5,
		WC_TYPE_PUT, (const uint8_t *) "v", 1};

	for (int variant = 0; variant < 4; variant++)
	{
		char		name[32];
		int			first = variant == 1 ? 1 : 0;	/* 1: no DEL_FAMILY */

		snprintf(name, sizeof(name), "v%d.sst", variant);
		memset(&o, 0, sizeof(o));
		o.family = "f";
		o.compression = variant == 3 ? WC_COMPRESS_ZSTD : WC_COMPRESS_NONE;
		wc_err_clear(&err);
		b = wc_sst_builder_new(dir, name, &o, &err);
		CHECK(b != NULL, "builder: %s", err.msg);
		if (b == NULL)
			continue;
		for (int i = first; i < 4; i++)
		{
			wc_cell		c = cells[i];

			if (variant == 2 && c.type == WC_TYPE_DEL_COLUMN)
			{
				c.val = NULL;	/* plain markers only: an older version */
				c.val_len = 0;
			}
			CHECK_OK(wc_sst_builder_add(b, &c), &err);
		}
		wc_sst_props_clear(&props);
		CHECK_OK(wc_sst_builder_finish(b, &props, &err), &err);
		wc_sst_props_clear(&props);
		{
			char		path[4200];
			FILE	   *f;
			uint8_t		footer[WC_SST_FOOTER_SIZE];
			int			want = variant == 2 ? WC_SST_VERSION_BOUNDED : WC_SST_VERSION_BOUNDED_COLUMN;

			snprintf(path, sizeof(path), "%s/%s", dir, name);
			f = fopen(path, "rb");
			CHECK(f != NULL && fseek(f, -WC_SST_FOOTER_SIZE, SEEK_END) == 0 &&
				  fread(footer, 1, sizeof(footer), f) == sizeof(footer) &&
				  wc_get_fixed32(footer + 48) == (uint32_t) want,
				  "variant %d: version %u, want %d", variant, wc_get_fixed32(footer + 48), want);
			if (f)
				fclose(f);
		}
		/* read back: the bound is the value */
		rc = wc_sst_open(dir, name, &s, &err);
		CHECK_OK(rc, &err);
		if (rc == WC_OK)
		{
			wc_iter    *it = wc_sst_iter_new(s, NULL);
			int			i = first;

			CHECK_OK(wc_sst_verify(s, &err), &err);
			for (wc_iter_seek_first(it); wc_iter_valid(it); wc_iter_next(it), i++)
			{
				const wc_cell *c = wc_iter_cell(it);
				uint32_t	vlen = variant == 2 && c->type == WC_TYPE_DEL_COLUMN ? 0 :
					cells[i].val_len;

				CHECK(i < 4 && c->seq == cells[i].seq && c->type == cells[i].type &&
					  c->val_len == vlen &&
					  (vlen == 0 || memcmp(c->val, cells[i].val, vlen) == 0),
					  "variant %d entry %d", variant, i);
			}
			CHECK(i == 4, "variant %d: %d entries", variant, i);
			wc_iter_close(it);
			wc_sst_unref(s);
		}
	}

	/* a builder held to version 4, a value of 3 bytes */
	for (int k = 0; k < 2; k++)
	{
		wc_cell		c = cells[1];

		memset(&o, 0, sizeof(o));
		o.family = "f";
		o.version = k == 0 ? WC_SST_VERSION_BOUNDED : 0;
		if (k == 1)
		{
			c.val = odd;
			c.val_len = sizeof(odd);
		}
		wc_err_clear(&err);
		b = wc_sst_builder_new(dir, k == 0 ? "held.sst" : "odd.sst", &o, &err);
		CHECK(b != NULL, "builder: %s", err.msg);
		if (b == NULL)
			continue;
		rc = wc_sst_builder_add(b, &c);
		CHECK(rc == WC_INVALID, "%s: %d", k == 0 ? "version 4 held" : "a 3-byte value", rc);
		wc_sst_builder_abandon(b);
	}

	/* v1.sst (bounded DEL_COLUMN, version 5) patched to claim 4, then 6 */
	for (int k = 0; k < 2; k++)
	{
		char		path[4200];
		FILE	   *f;
		uint8_t		buf[1 << 16];
		size_t		len;
		uint8_t    *foot;

		snprintf(path, sizeof(path), "%s/v1.sst", dir);
		f = fopen(path, "rb");
		len = f ? fread(buf, 1, sizeof(buf), f) : 0;
		if (f)
			fclose(f);
		CHECK(len > WC_SST_FOOTER_SIZE, "read v1.sst");
		if (len <= WC_SST_FOOTER_SIZE)
			break;
		foot = buf + len - WC_SST_FOOTER_SIZE;
		wc_put_fixed32(foot + 48, k == 0 ? WC_SST_VERSION_BOUNDED : WC_SST_VERSION_NEWEST + 1);
		wc_put_fixed32(foot + 52, wc_crc32c(foot, 52));
		snprintf(path, sizeof(path), "%s/patched%d.sst", dir, k);
		f = fopen(path, "wb");
		CHECK(f != NULL && fwrite(buf, 1, len, f) == len, "write %s", path);
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "patched%d.sst", k);
		wc_err_clear(&err);
		rc = wc_sst_open(dir, path, &s, &err);
		if (k == 0)
		{
			CHECK_OK(rc, &err);
			if (rc == WC_OK)
			{
				wc_err_clear(&err);
				rc = wc_sst_verify(s, &err);
				CHECK(rc == WC_CORRUPT && strstr(err.msg, "DEL_COLUMN"),
					  "a bounded DEL_COLUMN in a version 4 file: %d %s", rc, err.msg);
				wc_sst_unref(s);
			}
		}
		else
			CHECK(rc == WC_CORRUPT && strstr(err.msg, "unsupported format version 6") &&
				  strstr(err.msg, "reads 1 to 5"), "version 6: %d %s", rc, err.msg);
	}
	test_rmdir(dir);
}

/* The encoding: a DEL_FAMILY_UPTO entry decodes as a DEL_FAMILY with the bound as
 * its value; a bound of the wrong size or in the pending range is corrupt. */
static void
test_encoding(void)
{
	wc_batch   *b = wc_batch_new();
	wc_batch_reader r;
	wc_batch_entry e;
	wc_err		err;
	const uint8_t *entries;
	size_t		len;
	uint8_t		payload[256];
	size_t		hlen;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_delete_family_upto(b, "f", 1, "row", 3, 4242, &err), &err);
	CHECK_OK(wc_batch_delete_family(b, "f", 1, "row", 3, &err), &err);
	wc_batch_reader_of(&r, b, 100);
	CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && e.type == WC_TYPE_DEL_FAMILY &&
		  e.cell.type == WC_TYPE_DEL_FAMILY && e.cell.val_len == WC_FAMILY_BOUND_LEN &&
		  wc_get_fixed64(e.cell.val) == 4242 && e.cell.ts == INT64_MAX &&
		  wc_cell_family_mask(&e.cell) == 100, "bounded entry decoded: %s", err.msg);
	CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && e.type == WC_TYPE_DEL_FAMILY &&
		  e.cell.val_len == 0 && wc_cell_family_mask(&e.cell) == 101, "plain entry decoded");
	CHECK(wc_batch_reader_next(&r, &e, &err) == 0, "two entries");

	/* damaged copies of the first entry in a payload */
	entries = wc_batch_entries(b, &len);
	hlen = wc_batch_encode_header(payload, 5000, 0, 1);
	{
		/* type | fam 1 "f" | row 3 "row" | qual 0 | ts 8 | bound len 8 | bound */
		size_t		elen = 1 + 2 + 4 + 1 + 8 + 1 + 8;
		uint8_t		bad[64];
		int			rc;

		CHECK(entries[0] == WC_TYPE_DEL_FAMILY_UPTO && entries[elen - 9] == 8,
			  "encoded as DEL_FAMILY_UPTO with an 8-byte value");
		memcpy(payload + hlen, entries, elen);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen, &err), &err);
		CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && wc_cell_family_mask(&e.cell) == 4242,
			  "a bound below the entry's seq counts: %s", err.msg);

		/* a bound of 7 bytes */
		memcpy(bad, entries, elen);
		bad[elen - 9] = 7;
		memcpy(payload + hlen, bad, elen - 1);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen - 1, &err), &err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "DEL_FAMILY_UPTO"), "7-byte bound: %d %s", rc, err.msg);

		/* a pending seq as the bound */
		memcpy(bad, entries, elen);
		wc_put_fixed64(bad + elen - 8, WC_SEQ_PENDING_BASE);
		memcpy(payload + hlen, bad, elen);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen, &err), &err);
		wc_err_clear(&err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "committed"), "pending bound: %d %s", rc, err.msg);

		/* an unknown type after them */
		bad[0] = WC_TYPE_DEL_COLUMN_UPTO + 1;
		memcpy(payload + hlen, bad, elen);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen, &err), &err);
		wc_err_clear(&err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "unknown entry type"), "type 8: %d %s", rc, err.msg);
	}
	wc_batch_free(b);
}

/* A DEL_COLUMN_UPTO entry decodes as a DEL_COLUMN with its bound as the value; a
 * bound of the wrong size or in the pending range is corrupt. */
static void
test_column_encoding(void)
{
	wc_batch   *b = wc_batch_new();
	wc_batch_reader r;
	wc_batch_entry e;
	wc_err		err;
	const uint8_t *entries;
	size_t		len;
	uint8_t		payload[256];
	size_t		hlen;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_delete_column_upto(b, "f", 1, "row", 3, "q", 1, 4242, &err), &err);
	CHECK_OK(wc_batch_delete_column(b, "f", 1, "row", 3, "q", 1, &err), &err);
	wc_batch_reader_of(&r, b, 100);
	CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && e.type == WC_TYPE_DEL_COLUMN &&
		  e.cell.type == WC_TYPE_DEL_COLUMN && e.cell.val_len == WC_COLUMN_BOUND_LEN &&
		  wc_get_fixed64(e.cell.val) == 4242 && e.cell.ts == INT64_MAX &&
		  e.cell.qual_len == 1 && e.cell.qual[0] == 'q' &&
		  wc_cell_column_mask(&e.cell) == 100, "bounded column entry decoded: %s", err.msg);
	CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && e.type == WC_TYPE_DEL_COLUMN &&
		  e.cell.val_len == 0 && wc_cell_column_mask(&e.cell) == 101, "plain column entry decoded");
	CHECK(wc_batch_reader_next(&r, &e, &err) == 0, "two entries");

	entries = wc_batch_entries(b, &len);
	hlen = wc_batch_encode_header(payload, 5000, 0, 1);
	{
		/* type | fam 1 "f" | row 3 "row" | qual 1 "q" | ts 8 | bound len 8 | bound */
		size_t		elen = 1 + 2 + 4 + 2 + 8 + 1 + 8;
		uint8_t		bad[64];
		int			rc;

		CHECK(entries[0] == WC_TYPE_DEL_COLUMN_UPTO && entries[elen - 9] == 8,
			  "encoded as DEL_COLUMN_UPTO with an 8-byte value");
		memcpy(payload + hlen, entries, elen);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen, &err), &err);
		CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && wc_cell_column_mask(&e.cell) == 4242 &&
			  e.type == WC_TYPE_DEL_COLUMN, "a bound below the entry's seq counts: %s", err.msg);

		/* a bound of 7 bytes, of none */
		for (int k = 0; k < 2; k++)
		{
			memcpy(bad, entries, elen);
			bad[elen - 9] = k == 0 ? 7 : 0;
			memcpy(payload + hlen, bad, elen - 8 + (k == 0 ? 7 : 0));
			CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen - 8 + (k == 0 ? 7 : 0), &err), &err);
			wc_err_clear(&err);
			rc = wc_batch_reader_next(&r, &e, &err);
			CHECK(rc == WC_CORRUPT && strstr(err.msg, "DEL_COLUMN_UPTO"), "%d-byte bound: %d %s",
				  k == 0 ? 7 : 0, rc, err.msg);
		}

		/* a pending seq as the bound */
		memcpy(bad, entries, elen);
		wc_put_fixed64(bad + elen - 8, WC_SEQ_PENDING_BASE);
		memcpy(payload + hlen, bad, elen);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen, &err), &err);
		wc_err_clear(&err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "committed"), "pending bound: %d %s", rc, err.msg);

		/* a plain DEL_COLUMN (type 3) never carries a value: the bytes after its ts
		 * are not an entry */
		memcpy(bad, entries, elen);
		bad[0] = WC_TYPE_DEL_COLUMN;
		memcpy(payload + hlen, bad, elen);
		CHECK_OK(wc_batch_reader_init(&r, payload, hlen + elen, &err), &err);
		wc_err_clear(&err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == 1 && e.cell.val_len == 0, "type 3 read without a value: %d", rc);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc <= 0, "and its bound is not read as one: %d", rc);
	}
	wc_batch_free(b);
}

/*
 * A golden store (test/golden/NAME: a sorted file of the given version and a log
 * with bounded markers, written once by make_golden), copied and opened: what the
 * markers leave, before and after a major compaction.
 */
static void
golden_store(const char *name, int version, const char *want)
{
	char	   *dir = test_tmpdir("bounded-golden");
	char		cmd[8400];
	wc_family_opts fo[] = {{"data", 0, 0, WC_COMPRESS_LZ4, 0}};

	snprintf(cmd, sizeof(cmd), "cp '%s'/%s/* '%s'/", WC_GOLDEN_DIR, name, dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	for (int round = 0; round < 2; round++)
	{
		wc_db	   *db = open_db_with(dir, fo, 1);
		wc_err		err;

		EXPECT(db, NULL, 0, want, round == 0 ? "golden store" : "golden store, compacted");
		if (round == 0)
		{
			CHECK(file_version(db, dir, "data") == version, "%s: a file of version %d", name,
				  file_version(db, dir, "data"));
			wc_err_clear(&err);
			CHECK_OK(wc_db_compact(db, &err), &err);
			EXPECT(db, NULL, 0, want, "golden store, compacted, same handle");
			/* the markers went with what they hid: no bound left in the file */
			CHECK(file_version(db, dir, "data") == WC_SST_VERSION_NO_ZSTD,
				  "compacted file of version %d", file_version(db, dir, "data"));
		}
		wc_db_close(db);
	}
	test_rmdir(dir);
}

/* store-bounded: a version 4 sorted file and a log with bounded DEL_FAMILY entries */
static void
test_golden_store(void)
{
	golden_store("store-bounded", WC_SST_VERSION_BOUNDED, "user:0001/data:a@5=new;user:0003/data:d@1=after;");
}

/*
 * The golden store store-bounded-column (a version 5 sorted file and a log with
 * bounded DEL_COLUMN entries beside plain ones): user:0003's column d keeps what
 * neither the log's marker nor the file's first spares, and 960, which only the
 * file's second marker (the one with the lower seq) hides, stays hidden.
 */
static void
test_golden_store_column(void)
{
	golden_store("store-bounded-column", WC_SST_VERSION_BOUNDED_COLUMN,
				 "user:0001/data:a@5=new;user:0001/data:b@1=other;"
				 "user:0003/data:d@3=log;user:0003/data:d@2=both;user:0003/data:f@1=after;");
}

int
main(void)
{
	test_encoding();
	test_column_encoding();
	test_golden_store();
	test_golden_store_column();
	t_name = "test_bounded";
	test_masking_through_flush_and_compaction();
	test_pending();
	test_bound_below_in_progress();
	test_column_masking();
	test_column_pending();
	test_column_runs();
	test_column_sorted_file();
	TEST_DONE();
}
