/*
 * test_reverse.c -- reversed scans (wc_scan_opts.reverse) and the seek_row_before
 * of every iterator under them.
 *
 * The iterators: seek_row_before on a memtable, a sorted file of many small
 * blocks and a merge of both, against the brute-force answer (the first entry of
 * the row of the last entry below the target, and the rest of that row), for
 * every row start.
 *
 * The scans: random stores of three families with different retention, built
 * from puts and every kind of delete over many flushes (so many overlapping
 * sorted files, plus logs and a memtable), transactions aborted and still in
 * progress, committed ones a snapshot does not see, and a pending batch.  Every
 * random scan (ranges of each bound kind, points, families, time ranges,
 * qualifiers) run reversed must return the forward scan's rows in the opposite
 * order, each row's cells in the forward order.  And a reversed scan that stops
 * after ten rows of a large store reads a few blocks, not the store.
 */
#include <inttypes.h>

#include "cell.h"
#include "memtable.h"
#include "sst.h"
#include "testutil.h"

static uint64_t rng = 0x2545f4914f6cdd1d;

static uint64_t
rnd(uint64_t n)
{
	return test_rand(&rng) % n;
}

/* ---------------------------------------------------------------- iterators */

typedef struct tcell
{
	uint8_t		row[8];
	uint32_t	row_len;
	uint8_t		qual[4];
	uint32_t	qual_len;
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
} tcell;

static void
tcell_view(const tcell *t, wc_cell *c)
{
	memset(c, 0, sizeof(*c));
	c->row = t->row;
	c->row_len = t->row_len;
	c->qual = t->qual;
	c->qual_len = t->qual_len;
	c->ts = t->ts;
	c->seq = t->seq;
	c->type = t->type;
	c->val = (const uint8_t *) "v";
	c->val_len = 1;
}

static int
tcell_cmp(const void *a, const void *b)
{
	wc_cell		x,
				y;

	tcell_view(a, &x);
	tcell_view(b, &y);
	return wc_cell_cmp(&x, &y);
}

/* Rowkeys of 1-3 bytes from {0x00, 'a', 'b', 0xff}: prefixes of one another and
 * the bytes at both ends, where "the row after" and "the row before" are subtle. */
static void
random_row(uint8_t *row, uint32_t *len)
{
	static const uint8_t alphabet[] = {0x00, 'a', 'b', 0xff};

	*len = 1 + (uint32_t) rnd(3);
	for (uint32_t i = 0; i < *len; i++)
		row[i] = alphabet[rnd(4)];
}

/* The index of the first entry of cells[i]'s row. */
static int
row_first(const tcell *cells, int i)
{
	while (i > 0 && cells[i - 1].row_len == cells[i].row_len &&
		   memcmp(cells[i - 1].row, cells[i].row, cells[i].row_len) == 0)
		i--;
	return i;
}

/*
 * it positioned by seek_row_before(target) is at cells[want] (-1: invalid), and
 * next walks the rest of that row from there.
 */
static void
check_before(wc_iter *it, const wc_cell *target, const tcell *cells, int n, int want,
			 const char *what)
{
	wc_err		err;

	wc_err_clear(&err);
	wc_iter_seek_row_before(it, target);
	if (want < 0)
	{
		CHECK(!wc_iter_valid(it), "%s: seek_row_before found a row where none is below", what);
		CHECK(wc_iter_status(it, &err) == WC_OK, "%s: %s", what, err.msg);
		return;
	}
	for (int i = want; i < n && cells[i].row_len == cells[want].row_len &&
		 memcmp(cells[i].row, cells[want].row, cells[want].row_len) == 0; i++)
	{
		wc_cell		w;

		tcell_view(&cells[i], &w);
		CHECK(wc_iter_valid(it) && wc_cell_cmp(wc_iter_cell(it), &w) == 0,
			  "%s: entry %d of the row below the target (first %d)", what, i - want, want);
		if (!wc_iter_valid(it))
			return;
		wc_iter_next(it);
	}
}

/* For each row start as target, and NULL: the brute-force answer. */
static void
check_iter(wc_iter *it, const tcell *cells, int n, const char *what)
{
	check_before(it, NULL, cells, n, n > 0 ? row_first(cells, n - 1) : -1, what);
	for (int i = 0; i < n; i++)
	{
		wc_cell		t;
		int			first = row_first(cells, i);

		if (first != i)
			continue;
		wc_cell_row_start(&t, cells[i].row, cells[i].row_len);
		check_before(it, &t, cells, n, first > 0 ? row_first(cells, first - 1) : -1, what);
		/* and seek still works after it */
		wc_iter_seek(it, &t);
		CHECK(wc_iter_valid(it) && wc_row_cmp(wc_iter_cell(it)->row, wc_iter_cell(it)->row_len,
											  cells[i].row, cells[i].row_len) == 0,
			  "%s: seek after seek_row_before", what);
	}
}

static void
test_iterators(void)
{
	const char *dir = test_tmpdir("rev-iter");
	int			n = 600;
	tcell	   *cells = calloc((size_t) n, sizeof(tcell));
	wc_memtable *mt = wc_memtable_new();
	wc_memtable *half = wc_memtable_new();
	wc_sst_build_opts bo;
	wc_sst_builder *b;
	wc_sst_props props;
	wc_sst	   *sst = NULL;
	wc_iter    *it;
	wc_iter    *kids[2];
	wc_err		err;
	int			rc;

	t_name = "test_reverse";
	wc_err_clear(&err);
	for (int i = 0; i < n; i++)
	{
		random_row(cells[i].row, &cells[i].row_len);
		cells[i].qual_len = (uint32_t) rnd(3);
		memset(cells[i].qual, 'q' + (int) rnd(2), cells[i].qual_len);
		cells[i].ts = (int64_t) rnd(5);
		cells[i].seq = (uint64_t) i + 1;
		cells[i].type = WC_TYPE_PUT;
	}
	qsort(cells, (size_t) n, sizeof(tcell), tcell_cmp);

	/* an empty memtable has nothing below anything */
	it = wc_memtable_iter_new(mt);
	check_iter(it, cells, 0, "empty memtable");
	wc_iter_close(it);

	memset(&bo, 0, sizeof(bo));
	bo.family = "f";
	bo.block_bytes = 128;		/* a few entries a block: many block boundaries */
	b = wc_sst_builder_new(dir, "000001.sst", &bo, &err);
	CHECK(b != NULL, "builder: %s", err.msg);
	for (int i = 0; i < n; i++)
	{
		wc_cell		c;

		tcell_view(&cells[i], &c);
		CHECK_OK(wc_memtable_add(mt, &c, &err), &err);
		if (i % 2 == 0)
			CHECK_OK(wc_memtable_add(half, &c, &err), &err);
		else
			CHECK_OK(wc_sst_builder_add(b, &c), &err);
	}
	rc = wc_sst_builder_finish(b, &props, &err);
	CHECK_OK(rc, &err);
	CHECK(props.blocks > 20, "want many blocks, got %" PRIu64, props.blocks);
	wc_sst_props_clear(&props);
	CHECK_OK(wc_sst_open(dir, "000001.sst", &sst, &err), &err);

	it = wc_memtable_iter_new(mt);
	check_iter(it, cells, n, "memtable");
	wc_iter_close(it);

	/* the sorted file alone holds the odd entries */
	{
		tcell	   *odd = calloc((size_t) n / 2, sizeof(tcell));

		for (int i = 1; i < n; i += 2)
			odd[i / 2] = cells[i];
		it = wc_sst_iter_new(sst, NULL);
		check_iter(it, odd, n / 2, "sorted file");
		wc_iter_close(it);
		free(odd);
	}

	kids[0] = wc_memtable_iter_new(half);
	kids[1] = wc_sst_iter_new(sst, NULL);
	it = wc_merge_iter_new(kids, 2);
	check_iter(it, cells, n, "merge");
	wc_iter_close(it);

	wc_sst_unref(sst);
	wc_memtable_unref(mt);
	wc_memtable_unref(half);
	free(cells);
	test_rmdir(dir);
}

/* ---------------------------------------------------------------- scans */

static wc_family_opts fams[] = {
	{"a", 2, 0, WC_COMPRESS_LZ4, 0},
	{"b", 0, 0, WC_COMPRESS_NONE, 0},
	{"c", 1, 50000, WC_COMPRESS_LZ4, 0},	/* ttl: with now_ms 100000, ts < 50000 gone */
};

/* Tags 1..63: [t] says how the resolver sees them (0 = committed). */
static wc_txn_state tag_state[64];

static int
resolve_tag(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	*state = tag < 64 ? tag_state[tag] : WC_TXN_COMMITTED;
	return WC_OK;
}

static uint64_t
horizon_zero(void *arg)
{
	return 0;					/* every committed tag is remembered */
}

/* The snapshot: sees every committed tag but those with hidden[tag]. */
static bool hidden[64];

static int
snap_visible(void *arg, uint64_t tag, bool committed, bool *visible, wc_err *err)
{
	if (committed)
		*visible = !(tag < 64 && hidden[tag]);
	return WC_OK;
}

static wc_db *
open_store(const char *dir)
{
	wc_open_opts o;
	wc_db	   *db = NULL;
	wc_err		err;
	int			rc;

	memset(&o, 0, sizeof(o));
	o.families = fams;
	o.nfamilies = 3;
	o.create_if_missing = true;
	o.log_switch_bytes = 2048;
	o.block_bytes = 256;
	o.l0_compaction_trigger = 1000;
	o.ingest_bytes = SIZE_MAX;
	o.resolve = resolve_tag;
	o.horizon = horizon_zero;
	wc_err_clear(&err);
	rc = wc_db_open(dir, &o, &db, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		exit(1);
	return db;
}

/* A random write of any kind into b. */
static void
random_entry(wc_batch *b)
{
	const char *fam = fams[rnd(3)].name;
	uint8_t		row[8];
	uint32_t	row_len;
	char		qual[2] = {(char) ('p' + rnd(3)), 0};
	size_t		qual_len = rnd(4) == 0 ? 0 : 1;
	int64_t		ts = 40000 + (int64_t) rnd(6) * 5000;
	char		val[16];
	uint64_t	k = rnd(100);
	wc_err		err;

	wc_err_clear(&err);
	random_row(row, &row_len);
	snprintf(val, sizeof(val), "v%" PRIu64, rnd(1000));
	if (k < 75)
		CHECK_OK(wc_batch_put(b, fam, 1, row, row_len, qual, qual_len, ts, val, strlen(val), &err), &err);
	else if (k < 85)
		CHECK_OK(wc_batch_delete_version(b, fam, 1, row, row_len, qual, qual_len, ts, &err), &err);
	else if (k < 93)
		CHECK_OK(wc_batch_delete_column(b, fam, 1, row, row_len, qual, qual_len, &err), &err);
	else if (k < 98)
		CHECK_OK(wc_batch_delete_family(b, fam, 1, row, row_len, &err), &err);
	else
		CHECK_OK(wc_batch_delete_row(b, fams, 3, row, row_len, &err), &err);
}

/* Scans with opts into a string, one line per cell; the row of each cell into rows. */
static char *
scan_lines(wc_db *db, const wc_scan_opts *opts, size_t *nlines, size_t **starts)
{
	wc_scan    *s = NULL;
	wc_cell_view c;
	wc_err		err;
	size_t		cap = 4096,
				used = 0,
				n = 0,
				scap = 64;
	char	   *out = malloc(cap);
	int			rc;

	*starts = malloc(scap * sizeof(size_t));
	out[0] = '\0';
	wc_err_clear(&err);
	rc = wc_scan_open(db, opts, &s, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
	{
		*nlines = 0;
		return out;
	}
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
	{
		char		line[256];
		int			len = 0;

		for (size_t i = 0; i < c.row_len; i++)
			len += snprintf(line + len, sizeof(line) - len, "%02x", c.row[i]);
		len += snprintf(line + len, sizeof(line) - len, " %.*s:%.*s@%" PRId64 "=%.*s\n",
						(int) c.family_len, c.family, (int) c.qual_len, c.qual, c.ts,
						(int) c.val_len, c.val);
		while (used + (size_t) len + 1 > cap)
			out = realloc(out, cap *= 2);
		if (n == scap)
			*starts = realloc(*starts, (scap *= 2) * sizeof(size_t));
		(*starts)[n++] = used;
		memcpy(out + used, line, (size_t) len + 1);
		used += (size_t) len;
	}
	CHECK(rc == 0, "scan ended with %d: %s", rc, err.msg);
	wc_scan_close(s);
	*nlines = n;
	return out;
}

/* The forward lines regrouped: rows in the opposite order, each row's lines as they were. */
static char *
reverse_rows(const char *fwd, size_t n, const size_t *starts)
{
	size_t		len = strlen(fwd);
	char	   *out = malloc(len + 1);
	size_t		used = 0;
	size_t		end = n;		/* rows are [first, end) */

	while (end > 0)
	{
		size_t		first = end - 1;
		size_t		rowlen = strcspn(fwd + starts[first], " ");
		size_t		from,
					to;

		while (first > 0 &&
			   strcspn(fwd + starts[first - 1], " ") == rowlen &&
			   memcmp(fwd + starts[first - 1], fwd + starts[first], rowlen) == 0)
			first--;
		from = starts[first];
		to = end < n ? starts[end] : len;
		memcpy(out + used, fwd + from, to - from);
		used += to - from;
		end = first;
	}
	out[used] = '\0';
	return out;
}

/* A random row bound: a 1-3 byte key as random_row makes them, in buf. */
static void
random_bound(uint8_t *buf, const uint8_t **key, size_t *len, int *bound)
{
	uint32_t	l;

	*bound = (int) rnd(3);		/* WC_UNBOUNDED, WC_INCLUSIVE, WC_EXCLUSIVE */
	random_row(buf, &l);
	*key = buf;
	*len = l;
}

/* Sorted disjoint random ranges: nr of them (0 = every row). */
static int
random_ranges(wc_key_range *r, uint8_t (*bufs)[8], int max)
{
	int			nr = (int) rnd((uint64_t) max + 1);
	int			kept = 0;

	if (nr == 0)
		return 0;
	if (rnd(4) == 0)
	{
		/* points: rows of the alphabet, sorted and distinct */
		for (int i = 0; i < nr; i++)
		{
			uint32_t	l;

			random_row(bufs[2 * i], &l);
			r[i].start = r[i].stop = bufs[2 * i];
			r[i].start_len = r[i].stop_len = l;
			r[i].start_bound = r[i].stop_bound = WC_INCLUSIVE;
		}
	}
	else
	{
		for (int i = 0; i < nr; i++)
		{
			random_bound(bufs[2 * i], &r[i].start, &r[i].start_len, &r[i].start_bound);
			random_bound(bufs[2 * i + 1], &r[i].stop, &r[i].stop_len, &r[i].stop_bound);
			if (r[i].start_bound != WC_UNBOUNDED && r[i].stop_bound != WC_UNBOUNDED &&
				wc_row_cmp(r[i].start, r[i].start_len, r[i].stop, r[i].stop_len) > 0)
			{
				const uint8_t *k = r[i].start;
				size_t		l = r[i].start_len;

				r[i].start = r[i].stop;
				r[i].start_len = r[i].stop_len;
				r[i].stop = k;
				r[i].stop_len = l;
			}
		}
	}
	/* sort by start and keep those disjoint from the one before: an unbounded
	 * start sorts first, and only the first range may have one */
	for (int i = 1; i < nr; i++)
		for (int j = i; j > 0; j--)
		{
			const wc_key_range *x = &r[j - 1],
					   *y = &r[j];
			bool		swap = y->start_bound == WC_UNBOUNDED ||
				(x->start_bound != WC_UNBOUNDED &&
				 wc_row_cmp(x->start, x->start_len, y->start, y->start_len) > 0);
			wc_key_range t;

			if (!swap)
				break;
			t = r[j - 1];
			r[j - 1] = r[j];
			r[j] = t;
		}
	for (int i = 0; i < nr; i++)
	{
		if (kept > 0)
		{
			const wc_key_range *p = &r[kept - 1];

			if (p->stop_bound == WC_UNBOUNDED || r[i].start_bound == WC_UNBOUNDED ||
				wc_row_cmp(p->stop, p->stop_len, r[i].start, r[i].start_len) >= 0)
				continue;
		}
		r[kept++] = r[i];
	}
	return kept;
}

/* One random scan, forward and reversed; the reversed one also reset to other ranges. */
static void
compare_scan(wc_db *db, wc_batch *pending, bool snapshot)
{
	wc_key_range ranges[4];
	uint8_t		bufs[8][8];
	wc_slice	famsel[2];
	wc_slice	quals[1];
	wc_key_range qrange;
	wc_scan_opts o;
	size_t		nf,
				nr;
	size_t	   *sf,
			   *sr;
	char	   *fwd,
			   *rev,
			   *want;

	wc_scan_opts_init(&o);
	o.now_ms = 100000;
	o.nranges = random_ranges(ranges, bufs, 3);
	o.ranges = ranges;
	if (rnd(3) == 0)
	{
		famsel[0].data = (const uint8_t *) fams[rnd(3)].name;
		famsel[0].len = 1;
		famsel[1].data = (const uint8_t *) fams[rnd(3)].name;
		famsel[1].len = 1;
		o.families = famsel;
		o.nfamilies = famsel[0].data[0] < famsel[1].data[0] ? 2 : 1;
	}
	if (rnd(4) == 0)
	{
		o.ts_min = 40000 + (int64_t) rnd(3) * 5000;
		o.ts_max = o.ts_min + (int64_t) rnd(3) * 5000;
	}
	if (rnd(5) == 0)
	{
		quals[0].data = (const uint8_t *) "q";
		quals[0].len = 1;
		o.quals = quals;
		o.nquals = 1;
	}
	if (rnd(4) == 0)
	{
		/* a qualifier range (pushed ranges and prefixes on qualifier): [q, r) or (p, ...) */
		memset(&qrange, 0, sizeof(qrange));
		if (rnd(2) == 0)
		{
			qrange.start = (const uint8_t *) "q";
			qrange.start_len = 1;
			qrange.start_bound = WC_INCLUSIVE;
			qrange.stop = (const uint8_t *) "r";
			qrange.stop_len = 1;
			qrange.stop_bound = WC_EXCLUSIVE;
		}
		else
		{
			qrange.start = (const uint8_t *) "p";
			qrange.start_len = 1;
			qrange.start_bound = WC_EXCLUSIVE;
			qrange.stop_bound = WC_UNBOUNDED;
		}
		o.qual_range = &qrange;
	}
	if (pending != NULL && rnd(2) == 0)
	{
		o.pending = &pending;
		o.npending = 1;
	}
	if (snapshot)
	{
		o.tag_visible = snap_visible;
		o.snapshot_min = 1;
	}

	fwd = scan_lines(db, &o, &nf, &sf);
	o.reverse = true;
	rev = scan_lines(db, &o, &nr, &sr);
	want = reverse_rows(fwd, nf, sf);
	CHECK(strcmp(rev, want) == 0, "reversed scan differs from the forward one reversed (%d ranges)\n"
		  "--- forward:\n%s--- reversed:\n%s--- want:\n%s", o.nranges, fwd, rev, want);
	free(fwd);
	free(rev);
	free(want);
	free(sf);
	free(sr);
}

/* wc_scan_reset of a reversed scan: the same as a new reversed scan of the ranges. */
static void
compare_reset(wc_db *db)
{
	wc_key_range r1[4],
				r2[4];
	uint8_t		b1[8][8],
				b2[8][8];
	wc_scan_opts o;
	wc_scan    *s = NULL;
	wc_err		err;
	size_t		n;
	size_t	   *st;
	char	   *want;
	char		got[8192];
	size_t		used = 0;
	wc_cell_view c;
	int			rc;

	wc_scan_opts_init(&o);
	o.now_ms = 100000;
	o.reverse = true;
	o.ranges = r1;
	o.nranges = random_ranges(r1, b1, 3);
	wc_err_clear(&err);
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	if (s == NULL)
		return;
	(void) wc_scan_next(s, &c, &err);
	o.nranges = random_ranges(r2, b2, 3);
	o.ranges = r2;
	CHECK_OK(wc_scan_reset(s, r2, o.nranges, &err), &err);
	got[0] = '\0';
	while ((rc = wc_scan_next(s, &c, &err)) == 1)
	{
		for (size_t i = 0; i < c.row_len; i++)
			used += snprintf(got + used, sizeof(got) - used, "%02x", c.row[i]);
		used += snprintf(got + used, sizeof(got) - used, " %.*s:%.*s@%" PRId64 "=%.*s\n",
						 (int) c.family_len, c.family, (int) c.qual_len, c.qual, c.ts,
						 (int) c.val_len, c.val);
		if (used >= sizeof(got))
			break;
	}
	CHECK(rc >= 0, "reset scan: %s", err.msg);
	wc_scan_close(s);
	if (used >= sizeof(got))
		return;					/* too long to compare here */
	want = scan_lines(db, &o, &n, &st);
	CHECK(strcmp(got, want) == 0, "reset reversed scan\n--- got:\n%s--- want:\n%s", got, want);
	free(want);
	free(st);
}

static void
test_random_scans(void)
{
	for (int round = 0; round < 6; round++)
	{
		const char *dir = test_tmpdir("rev-scan");
		wc_db	   *db = open_store(dir);
		wc_batch   *b = wc_batch_new();
		wc_batch   *pending = wc_batch_new();
		wc_err		err;
		uint64_t	tag = 1;

		wc_err_clear(&err);
		memset(tag_state, 0, sizeof(tag_state));
		memset(hidden, 0, sizeof(hidden));
		for (int w = 0; w < 40; w++)
		{
			int			n = 1 + (int) rnd(12);
			uint64_t	t = 0;

			for (int i = 0; i < n; i++)
				random_entry(b);
			/* some writes are transactions: aborted, or committed and unseen */
			if (rnd(3) == 0 && tag < 40)
			{
				t = tag++;
				if (rnd(4) == 0)
					tag_state[t] = WC_TXN_ABORTED;
				else if (rnd(3) == 0)
					hidden[t] = true;
			}
			CHECK_OK(wc_db_write(db, &b, 1, t, false, &err), &err);
			wc_batch_clear(b);
			if (rnd(4) == 0)
				CHECK_OK(wc_db_flush(db, &err), &err);
			if (w == 20 && round % 2 == 0)
				CHECK_OK(wc_db_compact(db, &err), &err);
		}
		/* transactions still in progress stay in the logs, and are never seen */
		for (int i = 0; i < 3; i++)
		{
			uint64_t	t = tag++;

			tag_state[t] = WC_TXN_IN_PROGRESS;
			for (int j = 0; j < 5; j++)
				random_entry(b);
			CHECK_OK(wc_db_write(db, &b, 1, t, false, &err), &err);
			wc_batch_clear(b);
		}
		for (int i = 0; i < 20; i++)
			random_entry(pending);
		CHECK_OK(wc_db_refresh(db, &err), &err);

		for (int q = 0; q < 150; q++)
			compare_scan(db, pending, q % 2 == 0);
		for (int q = 0; q < 30; q++)
			compare_reset(db);

		wc_batch_free(b);
		wc_batch_free(pending);
		wc_db_close(db);
		test_rmdir(dir);
	}
}

/* ---------------------------------------------------------------- stopping early */

/*
 * The point of a reversed scan: ORDER BY rowkey DESC LIMIT 10 reads the last
 * rows of the range, a few blocks, not the range.
 */
static void
test_early_stop(void)
{
	const char *dir = test_tmpdir("rev-stop");
	wc_db	   *db = open_store(dir);
	wc_batch   *b = wc_batch_new();
	wc_scan_opts o;
	wc_scan    *s = NULL;
	wc_scan_stats st;
	wc_cell_view c;
	wc_key_range r;
	wc_err		err;
	char		row[16];
	int			got = 0;

	wc_err_clear(&err);
	for (int i = 0; i < 20000; i++)
	{
		snprintf(row, sizeof(row), "row%06d", i);
		CHECK_OK(wc_batch_put(b, "b", 1, row, strlen(row), "q", 1, 1, "value", 5, &err), &err);
	}
	CHECK_OK(wc_db_write(db, &b, 1, 0, false, &err), &err);
	CHECK_OK(wc_db_flush(db, &err), &err);
	CHECK_OK(wc_db_compact(db, &err), &err);
	CHECK_OK(wc_db_refresh(db, &err), &err);

	/* rows below row015000, newest first: row014999 ... row014990 */
	wc_scan_opts_init(&o);
	o.reverse = true;
	memset(&r, 0, sizeof(r));
	r.start = (const uint8_t *) "row0";
	r.start_len = 4;
	r.start_bound = WC_INCLUSIVE;
	r.stop = (const uint8_t *) "row015000";
	r.stop_len = 9;
	r.stop_bound = WC_EXCLUSIVE;
	o.ranges = &r;
	o.nranges = 1;
	CHECK_OK(wc_scan_open(db, &o, &s, &err), &err);
	while (got < 10 && wc_scan_next(s, &c, &err) == 1)
	{
		snprintf(row, sizeof(row), "row%06d", 14999 - got);
		CHECK(c.row_len == strlen(row) && memcmp(c.row, row, c.row_len) == 0,
			  "row %d: got %.*s, want %s", got, (int) c.row_len, c.row, row);
		got++;
	}
	CHECK(got == 10, "got %d rows", got);
	wc_scan_get_stats(s, &st);
	CHECK(st.blocks_read <= 2 && st.cells_scanned <= 30,
		  "ten rows read %" PRIu64 " blocks, scanned %" PRIu64 " cells", st.blocks_read,
		  st.cells_scanned);
	wc_scan_close(s);
	wc_batch_free(b);
	wc_db_close(db);
	test_rmdir(dir);
}

int
main(void)
{
	test_iterators();
	test_random_scans();
	test_early_stop();
	TEST_DONE();
}
