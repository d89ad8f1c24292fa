/*
 * test_rowcache.c -- point reads through the row cache (rowcache.h) return what
 * reads without it return.
 *
 * test_differential: two reading handles of one store, one with a small row
 * cache, and a writer: random puts and deletes of versions, columns, families
 * and rows, committed or left in progress, flushes and compactions (so that
 * rows lie in several sorted files), and between them point reads of random
 * rows by both readers, with random families, time ranges, qualifiers and a
 * pending batch of the reader's own, compared.  The cache must have served
 * reads, been filled and evicted entries.  Run twice: every committed write
 * seen by every read, then with a horizon fifteen commits behind and each read
 * a snapshot between it and now (an entry keeps what a compaction would:
 * entries some snapshot may not see must decide nothing).
 *
 * test_pinned: an entry evicted while a scan reads it stays readable (AddressSanitizer
 * and valgrind see to the rest); test_limits: a row larger than an eighth of the
 * budget is not cached, nor is a reversed scan's row or a scan of two rows, and a
 * row read once is not (its second miss fills it); test_versions_raised: an
 * entry made under one max_versions is not used under a larger one.
 */
#include <inttypes.h>
#include <string.h>

#include "testutil.h"
#include "../db_internal.h"
#include "../rowcache.h"

static wc_family_opts fams[] = {
	{.name = "a", .max_versions = 3},
	{.name = "b", .max_versions = 1},
};

/* Tags: 0 and unknown ones committed; the test sets others. */
static wc_txn_state tag_state[64];

static int
resolve_tag(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	*state = tag < 64 ? tag_state[tag] : WC_TXN_COMMITTED;	/* 0: committed */
	return WC_OK;
}

/* The horizon (test_differential with snapshots): committed tags below it are
 * seen by every snapshot; 0: the store is opened without one. */
static uint64_t horizon;

static uint64_t
horizon_now(void *arg)
{
	return horizon;
}

/* A snapshot: it sees the committed tags below *xmin (and the small ones). */
static int
snap_visible(void *arg, uint64_t tag, bool committed, bool *visible, wc_err *err)
{
	*visible = committed && (tag < 64 || tag < *(const uint64_t *) arg);
	return WC_OK;
}

static wc_db *
open_db(const char *dir, size_t cache_bytes)
{
	wc_open_opts o;
	wc_db	   *db = NULL;
	wc_err		err;
	int			rc;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 2;
	o.create_if_missing = true;
	o.block_bytes = 512;
	o.resolve = resolve_tag;
	o.ingest_bytes = SIZE_MAX;
	o.row_cache_bytes = cache_bytes;
	if (horizon != 0)
		o.horizon = horizon_now;
	wc_err_clear(&err);
	rc = wc_db_open(dir, &o, &db, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		exit(1);
	return db;
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Renders what a scan with o returns, as "fam:qual@ts=val;..." (stats into st). */
static void
render(wc_db *db, const wc_scan_opts *o, char *out, size_t size, wc_scan_stats *st)
{
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_err		err;
	size_t		used = 0;
	int			rc;

	wc_err_clear(&err);
	out[0] = '\0';
	CHECK_OK(wc_scan_open(db, o, &s, &err), &err);
	if (s == NULL)
		return;
	while ((rc = wc_scan_next(s, &c, &err)) == 1 && used + 64 + c.val_len < size)
		used += (size_t) snprintf(out + used, size - used, "%.*s/%.*s:%.*s@%" PRId64 "=%.*s;",
								  (int) c.row_len, c.row, (int) c.family_len, c.family,
								  (int) c.qual_len, c.qual, c.ts, (int) c.val_len, c.val);
	CHECK(rc == 0, "scan: %s", err.msg);
	if (st != NULL)
		wc_scan_get_stats(s, st);
	wc_scan_close(s);
}

static void
write_batch(wc_db *db, wc_batch *b, uint64_t tag)
{
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_db_write(db, &b, 1, tag, false, &err), &err);
	wc_batch_clear(b);
}

/* A random change of row r (one of the rows "r00".."r29") into b. */
static void
random_change(wc_batch *b, uint64_t *seed, int round, int i)
{
	char		row[8],
				qual[8],
				val[48];
	const char *fam = rnd(seed) % 3 == 0 ? "b" : "a";
	int			kind = (int) (rnd(seed) % 100);
	int64_t		ts = 1 + (int64_t) (rnd(seed) % 40);
	wc_err		err;

	snprintf(row, sizeof(row), "r%02d", (int) (rnd(seed) % 30));
	snprintf(qual, sizeof(qual), "q%d", (int) (rnd(seed) % 6));
	snprintf(val, sizeof(val), "v%d.%d%s", round, i, rnd(seed) % 4 == 0 ? "-a-longer-value" : "");
	wc_err_clear(&err);
	if (kind < 80)
		CHECK_OK(wc_batch_put(b, fam, 1, row, 3, qual, strlen(qual), ts, val, strlen(val), &err), &err);
	else if (kind < 88)
		CHECK_OK(wc_batch_delete_version(b, fam, 1, row, 3, qual, strlen(qual), ts, &err), &err);
	else if (kind < 95)
		CHECK_OK(wc_batch_delete_column(b, fam, 1, row, 3, qual, strlen(qual), &err), &err);
	else if (kind < 98)
		CHECK_OK(wc_batch_delete_family(b, fam, 1, row, 3, &err), &err);
	else
		CHECK_OK(wc_batch_delete_row(b, fams, 2, row, 3, &err), &err);
}

static void
test_differential(bool snapshots)
{
	char	   *dir = test_tmpdir(snapshots ? "rowcache-snap" : "rowcache-diff");
	wc_db	   *w;
	wc_db	   *plain;
	wc_db	   *cached;
	wc_batch   *b = wc_batch_new();
	wc_batch   *mine = wc_batch_new();
	uint64_t	seed = 20261126;
	uint64_t	cached_reads = 0;
	int			reads = 0,
				differ = 0;
	wc_rowcache_stats rs;
	wc_err		err;

	wc_err_clear(&err);
	memset(tag_state, 0, sizeof(tag_state));
	horizon = snapshots ? 1000 : 0;
	w = open_db(dir, 0);
	plain = open_db(dir, 0);
	cached = open_db(dir, 24 << 10);
	for (int round = 0; round < 300; round++)
	{
		/* a batch of changes: committed (with snapshots, tagged 1000 + round), or
		 * (tags 10-19) left in progress for a while */
		uint64_t	tag = round % 7 == 3 ? 10 + (uint64_t) (round % 10) :
			snapshots ? 1000 + (uint64_t) round : 0;
		bool		busy = false;

		/* snapshots as old as fifteen commits: the horizon lags behind */
		if (snapshots && round > 15)
			horizon = 1000 + (uint64_t) round - 15;

		if (tag != 0 && tag < 64)
			tag_state[tag] = WC_TXN_IN_PROGRESS;
		for (int i = 0; i < 12; i++)
			random_change(b, &seed, round, i);
		write_batch(w, b, tag);
		if (round % 7 == 5)
			for (int t = 10; t < 20; t++)
				if (tag_state[t] == WC_TXN_IN_PROGRESS)
					tag_state[t] = t % 3 == 0 ? WC_TXN_ABORTED : WC_TXN_COMMITTED;
		/* flushes and compactions while no transaction is in progress (a flush
		 * would wait for its end) */
		for (int t = 10; t < 20; t++)
			busy = busy || tag_state[t] == WC_TXN_IN_PROGRESS;
		if (round % 3 == 2 && !busy)
			CHECK_OK(wc_db_flush(w, &err), &err);
		if (round % 25 == 24 && !busy)
			CHECK_OK(wc_db_compact(w, &err), &err);
		CHECK_OK(wc_db_refresh(plain, &err), &err);
		CHECK_OK(wc_db_refresh(cached, &err), &err);

		/* the reader's own pending writes, now and then */
		wc_batch_clear(mine);
		if (round % 4 == 1)
			for (int i = 0; i < 3; i++)
				random_change(mine, &seed, 1000 + round, i);

		for (int q = 0; q < 40; q++)
		{
			char		row[8],
						qual[8],
						a[16384],
						c[16384];
			wc_key_range range;
			wc_slice	fam,
						qs;
			wc_scan_opts o;
			wc_scan_stats st;
			int			which = (int) (rnd(&seed) % 4);
			uint64_t	xmin = horizon + rnd(&seed) % (1000 + (uint64_t) round + 2 - horizon);

			/* popular rows more often, as YCSB's */
			snprintf(row, sizeof(row), "r%02d", (int) (rnd(&seed) % (rnd(&seed) % 2 ? 5 : 30)));
			snprintf(qual, sizeof(qual), "q%d", (int) (rnd(&seed) % 6));
			memset(&range, 0, sizeof(range));
			range.start = range.stop = (const uint8_t *) row;
			range.start_len = range.stop_len = 3;
			range.start_bound = range.stop_bound = WC_INCLUSIVE;
			wc_scan_opts_init(&o);
			o.ranges = &range;
			o.nranges = 1;
			if (which == 1 || which == 2)
			{
				fam.data = (const uint8_t *) (which == 1 ? "a" : "b");
				fam.len = 1;
				o.families = &fam;
				o.nfamilies = 1;
			}
			if (rnd(&seed) % 4 == 0)
			{
				o.ts_min = 10;
				o.ts_max = 30;
			}
			if (which == 3)
			{
				qs.data = (const uint8_t *) qual;
				qs.len = strlen(qual);
				o.quals = &qs;
				o.nquals = 1;
			}
			if (wc_batch_count(mine) > 0 && rnd(&seed) % 2)
			{
				o.pending = &mine;
				o.npending = 1;
			}
			if (snapshots)
			{
				/* a snapshot between the horizon and now, both readers */
				o.tag_visible = snap_visible;
				o.tag_visible_arg = &xmin;
				o.snapshot_min = horizon;
			}
			render(plain, &o, a, sizeof(a), NULL);
			/* read twice by the cached handle: the second may be a hit */
			for (int k = 0; k < 2; k++)
			{
				render(cached, &o, c, sizeof(c), &st);
				cached_reads += st.rows_cached;
				reads++;
				if (strcmp(a, c) != 0)
				{
					if (differ++ < 3)
						fprintf(stderr, "round %d, row %s, families %d: without the cache \"%s\", with it \"%s\"\n",
								round, row, which, a, c);
				}
			}
		}
	}
	wc_rowcache_get_stats(cached->rowcache, &rs);
	CHECK(differ == 0, "%d of %d reads through the row cache differ from reads without it",
		  differ, reads);
	CHECK(cached_reads > 0 && rs.hits == cached_reads && rs.fills > 0 && rs.evictions > 0 &&
		  rs.bytes <= (24 << 10),
		  "the cache served %" PRIu64 " reads (hits %" PRIu64 "), filled %" PRIu64
		  ", evicted %" PRIu64 ", holds %" PRIu64 " bytes", cached_reads, rs.hits, rs.fills,
		  rs.evictions, rs.bytes);
	wc_batch_free(b);
	wc_batch_free(mine);
	wc_db_close(w);
	wc_db_close(plain);
	wc_db_close(cached);
	horizon = 0;
}

/* Puts row's qualifiers q0..q{n-1} at ts with values of len bytes, then flushes: a file. */
static void
put_row_file(wc_db *db, const char *row, int n, int64_t ts, size_t len)
{
	wc_batch   *b = wc_batch_new();
	char		val[4096];
	wc_err		err;

	wc_err_clear(&err);
	memset(val, 'x', sizeof(val));
	for (int i = 0; i < n; i++)
	{
		char		qual[8];

		snprintf(qual, sizeof(qual), "q%d", i);
		val[0] = (char) ('0' + ts % 10);
		CHECK_OK(wc_batch_put(b, "a", 1, row, strlen(row), qual, strlen(qual), ts, val, len, &err), &err);
	}
	write_batch(db, b, 0);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);
	wc_batch_free(b);
}

static void
point(wc_scan_opts *o, wc_key_range *r, const char *row)
{
	memset(r, 0, sizeof(*r));
	r->start = r->stop = (const uint8_t *) row;
	r->start_len = r->stop_len = strlen(row);
	r->start_bound = r->stop_bound = WC_INCLUSIVE;
	wc_scan_opts_init(o);
	o->ranges = r;
	o->nranges = 1;
}

static void
test_pinned(void)
{
	char	   *dir = test_tmpdir("rowcache-pinned");
	wc_db	   *db = open_db(dir, 16 << 10);
	wc_scan_opts o;
	wc_key_range r;
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_scan_stats st;
	wc_rowcache_stats rs;
	char		before[8192],
				after[8192];
	size_t		used = 0;
	int			n = 0,
				rc;
	wc_err		err;

	wc_err_clear(&err);
	/* rows x and r00..r19 in two files each */
	for (int ts = 1; ts <= 2; ts++)
	{
		put_row_file(db, "x", 5, ts, 100);
		for (int i = 0; i < 20; i++)
		{
			char		row[8];

			snprintf(row, sizeof(row), "r%02d", i);
			put_row_file(db, row, 5, ts, 100);
		}
	}
	point(&o, &r, "x");
	render(db, &o, before, sizeof(before), NULL);	/* a miss: the files */
	render(db, &o, after, sizeof(after), &st);	/* the second: filled */
	CHECK(strcmp(before, after) == 0, "the fill's read: \"%s\", the files' \"%s\"", after, before);
	CHECK(st.rows_cached == 0, "a fill reads the files: %" PRIu64 " rows from the cache", st.rows_cached);
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	wc_scan_get_stats(s, &st);
	CHECK(st.rows_cached == 1, "the third read comes from the cache: %" PRIu64, st.rows_cached);
	rc = wc_scan_next(s, &c, &err);
	CHECK(rc == 1, "the first cell of x: %d", rc);
	used += (size_t) snprintf(after, sizeof(after), "%.*s/%.*s:%.*s@%" PRId64 "=%.*s;",
							  (int) c.row_len, c.row, (int) c.family_len, c.family,
							  (int) c.qual_len, c.qual, c.ts, (int) c.val_len, c.val);

	/* other rows' fills push x's entry out while the scan reads it */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 20; i++)
		{
			char		row[8],
						out[8192];
			wc_key_range rr;
			wc_scan_opts oo;

			snprintf(row, sizeof(row), "r%02d", i);
			point(&oo, &rr, row);
			render(db, &oo, out, sizeof(out), NULL);
		}
	wc_rowcache_get_stats(db->rowcache, &rs);
	CHECK(rs.evictions > 0 && rs.bytes <= (16 << 10), "evictions %" PRIu64 ", %" PRIu64 " bytes held",
		  rs.evictions, rs.bytes);
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
	{
		used += (size_t) snprintf(after + used, sizeof(after) - used, "%.*s/%.*s:%.*s@%" PRId64 "=%.*s;",
								  (int) c.row_len, c.row, (int) c.family_len, c.family,
								  (int) c.qual_len, c.qual, c.ts, (int) c.val_len, c.val);
		n++;
	}
	CHECK(rc == 0, "scan: %s", err.msg);
	wc_scan_close(s);
	CHECK(strcmp(before, after) == 0 && n == 9,
		  "x read from an evicted entry: \"%s\", wanted \"%s\"", after, before);
	wc_db_close(db);
}

static void
test_limits(void)
{
	char	   *dir = test_tmpdir("rowcache-limits");
	wc_db	   *db = open_db(dir, 16 << 10);
	wc_scan_opts o;
	wc_key_range r,
				two[2];
	wc_scan_stats st;
	wc_rowcache_stats rs;
	char		out[65536];
	uint64_t	served = 0;

	/* big: 10 cells of 300 bytes (more than 2 KiB); small: 2 cells; both in two files */
	for (int ts = 1; ts <= 2; ts++)
	{
		put_row_file(db, "big", 10, ts, 300);
		put_row_file(db, "small", 2, ts, 10);
	}
	point(&o, &r, "big");
	for (int k = 0; k < 4; k++)
	{
		render(db, &o, out, sizeof(out), &st);
		served += st.rows_cached;
	}
	wc_rowcache_get_stats(db->rowcache, &rs);
	CHECK(served == 0 && rs.fills == 0, "a row larger than an eighth of the budget is not cached: "
		  "%" PRIu64 " reads served, %" PRIu64 " fills", served, rs.fills);

	/* read once: a miss that fills nothing; twice: filled; then served */
	point(&o, &r, "small");
	render(db, &o, out, sizeof(out), &st);
	wc_rowcache_get_stats(db->rowcache, &rs);
	CHECK(rs.fills == 0 && st.rows_cached == 0, "one miss fills nothing: %" PRIu64, rs.fills);
	render(db, &o, out, sizeof(out), &st);
	render(db, &o, out, sizeof(out), &st);
	wc_rowcache_get_stats(db->rowcache, &rs);
	CHECK(rs.fills == 1 && st.rows_cached == 1, "the second miss fills (%" PRIu64
		  "), the third read is served (%" PRIu64 ")", rs.fills, st.rows_cached);

	/* reversed, and two rows: the files */
	o.reverse = true;
	render(db, &o, out, sizeof(out), &st);
	CHECK(st.rows_cached == 0, "a reversed scan reads the files: %" PRIu64, st.rows_cached);
	wc_scan_opts_init(&o);
	point(&o, &two[0], "big");
	point(&o, &two[1], "small");
	o.ranges = two;
	o.nranges = 2;
	render(db, &o, out, sizeof(out), &st);
	CHECK(st.rows_cached == 0 && strstr(out, "small/a:q1@2=2") != NULL,
		  "a scan of two rows reads the files: %" PRIu64 " (%s)", st.rows_cached, out);
	wc_db_close(db);
}

/*
 * What an entry keeps depends on the family's max_versions: after it is raised
 * (ALTER FOREIGN TABLE ... max_versions), the versions the files still hold are
 * read again, not the entry made under the old limit.
 */
static void
test_versions_raised(void)
{
	char	   *dir = test_tmpdir("rowcache-versions");
	wc_db	   *plain = open_db(dir, 0);
	wc_db	   *cached = open_db(dir, 16 << 10);
	wc_family_opts more[] = {{.name = "a", .max_versions = 5}, {.name = "b", .max_versions = 1}};
	wc_scan_opts o;
	wc_key_range r;
	wc_scan_stats st;
	char		a[8192],
				c[8192];
	wc_err		err;

	wc_err_clear(&err);
	for (int ts = 1; ts <= 4; ts++)
		put_row_file(plain, "v", 2, ts, 10);
	CHECK_OK(wc_db_refresh(cached, &err), &err);
	point(&o, &r, "v");
	render(plain, &o, a, sizeof(a), NULL);
	for (int k = 0; k < 3; k++)
		render(cached, &o, c, sizeof(c), &st);
	CHECK(st.rows_cached == 1 && strcmp(a, c) == 0 && strstr(a, "q0@2") != NULL &&
		  strstr(a, "q0@1") == NULL,
		  "three versions of a column, from the cache (%" PRIu64 "): \"%s\", the files \"%s\"",
		  st.rows_cached, c, a);
	CHECK_OK(wc_db_set_families(plain, more, 2, &err), &err);
	CHECK_OK(wc_db_set_families(cached, more, 2, &err), &err);
	render(plain, &o, a, sizeof(a), NULL);
	render(cached, &o, c, sizeof(c), &st);
	CHECK(strcmp(a, c) == 0 && strstr(a, "q0@1") != NULL && st.rows_cached == 0,
		  "max_versions raised to 5: \"%s\" through the cache (%" PRIu64 " rows from it), the files \"%s\"",
		  c, st.rows_cached, a);
	wc_db_close(plain);
	wc_db_close(cached);
}

int
main(void)
{
	t_name = "test_rowcache";
	test_differential(false);
	test_differential(true);
	test_pinned();
	test_limits();
	test_versions_raised();
	TEST_DONE();
}
