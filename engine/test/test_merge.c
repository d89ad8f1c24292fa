/*
 * test_merge.c -- the k-way merge iterator: union order, seeks, child errors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "err.h"
#include "memtable.h"
#include "testutil.h"

typedef struct tcell
{
	wc_cell		c;
	uint8_t		row[4];
	uint8_t		qual[4];
} tcell;

static uint64_t rnd = 7;

static int
cmp_tcell(const void *a, const void *b)
{
	return wc_cell_cmp(&((const tcell *) a)->c, &((const tcell *) b)->c);
}

static void
make_cell(tcell *t, uint64_t seq)
{
	uint64_t	r = test_rand(&rnd);
	int			row_len = 1 + (int) (r % 3);
	int			qual_len = (int) ((r >> 4) % 3);
	int			kind = (int) ((r >> 8) % 8);

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < row_len; i++)
		t->row[i] = (uint8_t) ('a' + test_rand(&rnd) % 4);
	for (int i = 0; i < qual_len; i++)
		t->qual[i] = (uint8_t) ('x' + test_rand(&rnd) % 3);
	t->c.row = t->row;
	t->c.row_len = (uint32_t) row_len;
	t->c.qual = t->qual;
	t->c.qual_len = (uint32_t) qual_len;
	t->c.seq = seq;
	t->c.ts = (int64_t) (test_rand(&rnd) % 4);
	t->c.type = WC_TYPE_PUT;
	if (kind == 6)
	{
		t->c.type = WC_TYPE_DEL_COLUMN;
		t->c.ts = INT64_MAX;
	}
	else if (kind == 7)
	{
		t->c.type = WC_TYPE_DEL_FAMILY;
		t->c.ts = INT64_MAX;
		t->c.qual_len = 0;
	}
}

static int
lower_bound(const tcell *ref, int n, const wc_cell *target)
{
	int			lo = 0,
				hi = n;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (wc_cell_cmp(&ref[mid].c, target) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Spreads n random entries over k memtables (some of them empty when k is
 * large) and checks the merge against the sorted union: full pass, seeks.
 */
static void
check_merge(int k, int n)
{
	tcell	   *cells = malloc(sizeof(tcell) * (n + 1));
	tcell	   *ref = malloc(sizeof(tcell) * (n + 1));
	wc_memtable **mts = calloc(k + 1, sizeof(wc_memtable *));
	wc_iter   **kids = calloc(k + 1, sizeof(wc_iter *));
	wc_iter    *m;
	wc_err		err;
	int			i = 0,
				bad = 0;

	wc_err_clear(&err);
	for (int j = 0; j < k; j++)
		mts[j] = wc_memtable_new();
	for (int j = 0; j < n; j++)
	{
		make_cell(&cells[j], (uint64_t) j + 1);
		/* skewed: low-numbered memtables get more, like a log and older files */
		if (k > 0)
		{
			int			t = (int) (test_rand(&rnd) % k);

			t = (int) (test_rand(&rnd) % (t + 1));
			CHECK(wc_memtable_add(mts[t], &cells[j].c, &err) == WC_OK, "add");
		}
	}
	if (k == 0)
		n = 0;
	memcpy(ref, cells, sizeof(tcell) * n);
	qsort(ref, n, sizeof(tcell), cmp_tcell);
	for (int j = 0; j < k; j++)
	{
		kids[j] = wc_memtable_iter_new(mts[j]);
		wc_memtable_unref(mts[j]);
	}
	m = wc_merge_iter_new(kids, k);
	CHECK(m != NULL, "merge of %d", k);

	for (wc_iter_seek_first(m); wc_iter_valid(m); wc_iter_next(m), i++)
		if (i >= n || wc_cell_cmp(wc_iter_cell(m), &ref[i].c) != 0 ||
			wc_iter_cell(m)->type != ref[i].c.type)
			bad++;
	CHECK(i == n && bad == 0, "merge of %d: %d of %d entries, %d wrong", k, i, n, bad);
	CHECK(wc_iter_status(m, &err) == WC_OK, "status");

	bad = 0;
	for (int s = 0; s < 300; s++)
	{
		tcell		t;
		int			pos;

		make_cell(&t, test_rand(&rnd) % (n + 2));
		pos = lower_bound(ref, n, &t.c);
		wc_iter_seek(m, &t.c);
		for (int j = 0; j < 4; j++, pos++)
		{
			if (pos >= n)
			{
				if (wc_iter_valid(m))
					bad++;
				break;
			}
			if (!wc_iter_valid(m) || wc_cell_cmp(wc_iter_cell(m), &ref[pos].c) != 0)
			{
				bad++;
				break;
			}
			wc_iter_next(m);
		}
	}
	CHECK(bad == 0, "merge of %d: %d seeks wrong", k, bad);
	/* seek_first again after seeks */
	i = 0;
	for (wc_iter_seek_first(m); wc_iter_valid(m); wc_iter_next(m))
		i++;
	CHECK(i == n, "second pass %d of %d", i, n);
	wc_iter_close(m);
	free(cells);
	free(ref);
	free(mts);
	free(kids);
}

/*
 * Seeks that mostly go forward from where the merge stands, as a scan skipping
 * the versions of a column does (the merge then seeks only the children below
 * the target, a memtable from its current node), mixed with nexts, seeks back,
 * seek_first and seek_row_before (after which a seek must reposition every
 * child), checked against the sorted union.  nested: the children are merges of
 * memtables themselves.
 */
static void
check_forward_seeks(int k, int n, bool nested)
{
	tcell	   *cells = malloc(sizeof(tcell) * (n + 1));
	tcell	   *ref = malloc(sizeof(tcell) * (n + 1));
	wc_memtable **mts = calloc(2 * k + 1, sizeof(wc_memtable *));
	wc_iter   **kids = calloc(k + 1, sizeof(wc_iter *));
	wc_iter    *m;
	wc_err		err;
	int			pos = -1,		/* where the model stands; -1: nowhere */
				bad = 0,
				forward = 0;

	wc_err_clear(&err);
	for (int j = 0; j < (nested ? 2 * k : k); j++)
		mts[j] = wc_memtable_new();
	for (int j = 0; j < n; j++)
	{
		make_cell(&cells[j], (uint64_t) j + 1);
		CHECK(wc_memtable_add(mts[test_rand(&rnd) % (nested ? 2 * k : k)], &cells[j].c, &err) == WC_OK,
			  "add");
	}
	memcpy(ref, cells, sizeof(tcell) * n);
	qsort(ref, n, sizeof(tcell), cmp_tcell);
	for (int j = 0; j < k; j++)
	{
		if (nested)
		{
			wc_iter    *two[2] = {wc_memtable_iter_new(mts[2 * j]), wc_memtable_iter_new(mts[2 * j + 1])};

			kids[j] = wc_merge_iter_new(two, 2);
			wc_memtable_unref(mts[2 * j + 1]);
		}
		else
			kids[j] = wc_memtable_iter_new(mts[j]);
		wc_memtable_unref(mts[j * (nested ? 2 : 1)]);
	}
	m = wc_merge_iter_new(kids, k);
	CHECK(m != NULL, "merge of %d", k);

	for (int s = 0; s < 4000 && m != NULL; s++)
	{
		int			op = (int) (test_rand(&rnd) % 20);
		tcell		t;

		if (op < 9 && pos >= 0 && pos < n)
		{
			/* forward: a target between here and a few hundred entries on */
			int			to = pos + (int) (test_rand(&rnd) % 300);

			t = ref[to < n ? to : n - 1];
			t.c.row = t.row;
			t.c.qual = t.qual;
			if (test_rand(&rnd) % 2)
				t.c.seq = 0;	/* past every version of that cell */
			else if (test_rand(&rnd) % 2)
				t.c.ts = INT64_MIN;	/* past the column */
			forward++;
			wc_iter_seek(m, &t.c);
			pos = lower_bound(ref, n, &t.c);
		}
		else if (op < 15)
		{
			if (pos < 0 || pos >= n)
				continue;
			wc_iter_next(m);
			pos++;
		}
		else if (op < 17)
		{
			make_cell(&t, test_rand(&rnd) % (n + 2));
			wc_iter_seek(m, &t.c);
			pos = lower_bound(ref, n, &t.c);
		}
		else if (op < 18)
		{
			wc_iter_seek_first(m);
			pos = 0;
		}
		else
		{
			/* the first entry of the greatest row below a row's start */
			wc_cell		start;
			int			at;

			make_cell(&t, 1);
			wc_cell_row_start(&start, t.c.row, t.c.row_len);
			wc_iter_seek_row_before(m, &start);
			at = lower_bound(ref, n, &start) - 1;
			if (at < 0)
			{
				if (wc_iter_valid(m))
					bad++;
				pos = -1;
				continue;
			}
			wc_cell_row_start(&start, ref[at].c.row, ref[at].c.row_len);
			at = lower_bound(ref, n, &start);
			if (!wc_iter_valid(m) || wc_cell_cmp(wc_iter_cell(m), &ref[at].c) != 0)
				bad++;
			pos = -1;			/* past the row the merge may stop: seek again */
			continue;
		}
		if (pos >= n ? wc_iter_valid(m) :
			!wc_iter_valid(m) || wc_cell_cmp(wc_iter_cell(m), &ref[pos].c) != 0 ||
			wc_iter_cell(m)->type != ref[pos].c.type)
		{
			bad++;
			/* on from where the model is */
			if (pos < n)
				wc_iter_seek(m, &ref[pos].c);
		}
	}
	CHECK(bad == 0, "forward seeks in a merge of %d%s: %d of 4000 steps wrong", k,
		  nested ? " (nested)" : "", bad);
	CHECK(forward > 600, "forward seeks made: %d", forward);
	CHECK(wc_iter_status(m, &err) == WC_OK, "status");
	wc_iter_close(m);
	free(cells);
	free(ref);
	free(mts);
	free(kids);
}

/* ---------------------------------------------------------------- a failing child */

/*
 * Yields cells rows "f0", "f1", ... (fail_at of them), then fails with
 * WC_IO; fail_at < 0 means it ends cleanly after -fail_at cells.
 */
typedef struct fake_iter
{
	wc_iter		base;
	int			pos;
	int			fail_at;
	int		   *closed;
	uint8_t		row[8];
	wc_cell		cell;
} fake_iter;

static int
fake_limit(const fake_iter *f)
{
	return f->fail_at < 0 ? -f->fail_at : f->fail_at;
}

static void
fake_load(fake_iter *f)
{
	if (f->pos < fake_limit(f))
	{
		f->row[0] = 'f';
		f->row[1] = (uint8_t) ('0' + f->pos);
		memset(&f->cell, 0, sizeof(f->cell));
		f->cell.row = f->row;
		f->cell.row_len = 2;
		f->cell.qual = f->row;
		f->cell.ts = 1;
		f->cell.seq = 1000 + f->pos;
		f->cell.type = WC_TYPE_PUT;
	}
}

static void
fake_seek_first(wc_iter *it)
{
	fake_iter  *f = (fake_iter *) it;

	f->pos = 0;
	fake_load(f);
}

static void
fake_seek(wc_iter *it, const wc_cell *target)
{
	fake_iter  *f = (fake_iter *) it;

	for (f->pos = 0; f->pos < fake_limit(f); f->pos++)
	{
		fake_load(f);
		if (wc_cell_cmp(&f->cell, target) >= 0)
			break;
	}
}

static void
fake_next(wc_iter *it)
{
	fake_iter  *f = (fake_iter *) it;

	f->pos++;
	fake_load(f);
}

static bool
fake_valid(const wc_iter *it)
{
	const fake_iter *f = (const fake_iter *) it;

	return f->pos < fake_limit(f);
}

static const wc_cell *
fake_cell(const wc_iter *it)
{
	return &((const fake_iter *) it)->cell;
}

static int
fake_status(const wc_iter *it, wc_err *err)
{
	const fake_iter *f = (const fake_iter *) it;

	if (f->fail_at >= 0 && f->pos >= f->fail_at)
		return wc_err_set(err, WC_IO, "fake read error after %d cells", f->fail_at);
	return WC_OK;
}

static void
fake_close(wc_iter *it)
{
	fake_iter  *f = (fake_iter *) it;

	(*f->closed)++;
	free(f);
}

static const wc_iter_ops fake_ops = {
	fake_seek_first, fake_seek, fake_next, fake_valid, fake_cell, fake_status, fake_close,
	NULL						/* seek_row_before: no reversed scan here */
};

static wc_iter *
fake_new(int fail_at, int *closed)
{
	fake_iter  *f = calloc(1, sizeof(fake_iter));

	f->base.ops = &fake_ops;
	f->fail_at = fail_at;
	f->closed = closed;
	return &f->base;
}

/* A memtable with rows "a0".."a9" and "z0".."z9" (around the fake's "f*"). */
static wc_iter *
mem_child(void)
{
	wc_memtable *mt = wc_memtable_new();
	wc_iter    *it;
	wc_err		err;

	wc_err_clear(&err);
	for (int i = 0; i < 20; i++)
	{
		uint8_t		row[2] = {(uint8_t) (i < 10 ? 'a' : 'z'), (uint8_t) ('0' + i % 10)};
		wc_cell		c = {row, 2, NULL, 0, 5, (uint64_t) i + 1, WC_TYPE_PUT, NULL, 0};

		CHECK(wc_memtable_add(mt, &c, &err) == WC_OK, "add");
	}
	it = wc_memtable_iter_new(mt);
	wc_memtable_unref(mt);
	return it;
}

static void
test_errors(void)
{
	int			closed = 0;
	wc_err		err;
	int			n;

	/* a child failing midway: the merge stops there and says why */
	for (int nmem = 1; nmem <= 5; nmem += 4)
	{
		wc_iter    *kids[6];
		wc_iter    *m;

		kids[0] = fake_new(3, &closed);
		for (int i = 1; i <= nmem; i++)
			kids[i] = mem_child();
		m = wc_merge_iter_new(kids, nmem + 1);
		n = 0;
		for (wc_iter_seek_first(m); wc_iter_valid(m); wc_iter_next(m))
			n++;
		/* the a* rows of every memtable and f0..f2; never a z* row */
		CHECK(n == 10 * nmem + 3, "stopped after %d entries", n);
		wc_err_clear(&err);
		CHECK(wc_iter_status(m, &err) == WC_IO && err.code == WC_IO &&
			  strcmp(err.msg, "fake read error after 3 cells") == 0,
			  "status %d: %s", err.code, err.msg);
		/* sticky: a seek does not bring the merge back */
		wc_iter_seek_first(m);
		CHECK(!wc_iter_valid(m), "valid again after an error");
		wc_iter_close(m);
	}
	CHECK(closed == 2, "children closed %d", closed);

	/* a child failing at once, at seek */
	{
		wc_iter    *kids[3] = {mem_child(), fake_new(0, &closed), mem_child()};
		wc_iter    *m = wc_merge_iter_new(kids, 3);
		wc_cell		t;

		wc_cell_row_start(&t, (const uint8_t *) "b", 1);
		wc_iter_seek(m, &t);
		CHECK(!wc_iter_valid(m), "valid despite a failed child");
		wc_err_clear(&err);
		CHECK(wc_iter_status(m, &err) == WC_IO, "status %s", err.msg);
		/* an error already in err is kept (first error wins) */
		wc_err_clear(&err);
		wc_err_set(&err, WC_CORRUPT, "earlier");
		CHECK(wc_iter_status(m, &err) == WC_IO && err.code == WC_CORRUPT, "first error kept");
		wc_iter_close(m);
	}

	/* a child ending cleanly is no error */
	{
		wc_iter    *kids[2] = {fake_new(-4, &closed), mem_child()};
		wc_iter    *m = wc_merge_iter_new(kids, 2);

		n = 0;
		for (wc_iter_seek_first(m); wc_iter_valid(m); wc_iter_next(m))
			n++;
		CHECK(n == 24, "entries %d", n);
		CHECK(wc_iter_status(m, NULL) == WC_OK, "status");
		wc_iter_close(m);
	}

	/* one child: handed back as is, errors included */
	{
		wc_iter    *kids[1] = {fake_new(2, &closed)};
		wc_iter    *m = wc_merge_iter_new(kids, 1);

		n = 0;
		for (wc_iter_seek_first(m); wc_iter_valid(m); wc_iter_next(m))
			n++;
		wc_err_clear(&err);
		CHECK(n == 2 && wc_iter_status(m, &err) == WC_IO, "single child");
		wc_iter_close(m);
	}
	CHECK(closed == 5, "children closed %d", closed);
}

/*
 * wc_bytes_eq, which the scan and the merge's callers use to compare names and
 * rowkeys (a path per length range: bytewise below 4, two loads to 16, memcmp
 * above): equal exactly when memcmp says so, for every length to 40 and a
 * difference at every position, and never for different lengths.
 */
static void
test_bytes_eq(void)
{
	uint8_t		a[48],
				b[48];

	for (size_t len = 0; len <= 40; len++)
	{
		for (size_t i = 0; i < len; i++)
			a[i] = (uint8_t) test_rand(&rnd);
		memcpy(b, a, len);
		CHECK(wc_bytes_eq(a, len, b, len), "equal bytes of length %zu", len);
		CHECK(!wc_bytes_eq(a, len, b, len + 1), "lengths %zu and %zu", len, len + 1);
		for (size_t pos = 0; pos < len; pos++)
		{
			b[pos] ^= (uint8_t) (1 + test_rand(&rnd) % 255);
			CHECK(!wc_bytes_eq(a, len, b, len) && memcmp(a, b, len) != 0,
				  "length %zu differing at %zu", len, pos);
			b[pos] = a[pos];
		}
	}
}

int
main(void)
{
	t_name = "test_merge";
	test_bytes_eq();
	check_merge(0, 100);
	check_merge(1, 500);
	check_merge(2, 2000);
	check_merge(7, 5000);
	check_merge(40, 8000);
	check_merge(40, 10);		/* mostly empty children */
	check_forward_seeks(1, 3000, false);	/* one child: the memtable itself, no merge */
	check_forward_seeks(3, 3000, false);
	check_forward_seeks(9, 6000, false);
	check_forward_seeks(4, 6000, true);
	test_errors();
	TEST_DONE();
}
