/*
 * test_memtable.c -- the skiplist memtable against a sorted reference array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "coding.h"
#include "memtable.h"
#include "testutil.h"

/* A test cell owning its bytes. */
typedef struct tcell
{
	wc_cell		c;
	uint8_t		row[8];
	uint8_t		qual[8];
	uint8_t    *val;
} tcell;

static uint64_t rnd = 42;

static int
cmp_tcell(const void *a, const void *b)
{
	return wc_cell_cmp(&((const tcell *) a)->c, &((const tcell *) b)->c);
}

/* Fills t with a random entry with a unique seq; small alphabets so rows,
 * qualifiers and timestamps collide often. */
static void
make_cell(tcell *t, uint64_t seq)
{
	uint64_t	r = test_rand(&rnd);
	int			row_len = 1 + (int) (r % 3);
	int			qual_len = (int) ((r >> 4) % 3);
	int			kind = (int) ((r >> 8) % 10);

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < row_len; i++)
		t->row[i] = (uint8_t) ('a' + test_rand(&rnd) % 3);
	for (int i = 0; i < qual_len; i++)
		t->qual[i] = (uint8_t) ('x' + test_rand(&rnd) % 3);
	t->c.row = t->row;
	t->c.row_len = (uint32_t) row_len;
	t->c.qual = t->qual;
	t->c.qual_len = (uint32_t) qual_len;
	t->c.seq = seq;
	t->c.ts = (int64_t) (test_rand(&rnd) % 5) - 2;
	if (kind < 6)
	{
		int			vlen = (int) (test_rand(&rnd) % 20);

		t->c.type = WC_TYPE_PUT;
		t->val = malloc(vlen + 1);
		for (int i = 0; i < vlen; i++)
			t->val[i] = (uint8_t) test_rand(&rnd);
		t->c.val = t->val;
		t->c.val_len = (uint32_t) vlen;
	}
	else if (kind < 8)
		t->c.type = WC_TYPE_DEL_VERSION;
	else if (kind < 9)
	{
		t->c.type = WC_TYPE_DEL_COLUMN;
		t->c.ts = INT64_MAX;
		/* half of them bounded: their bound lies after a run's end (memtable.c) */
		if (test_rand(&rnd) % 2 == 0)
		{
			t->val = malloc(WC_COLUMN_BOUND_LEN);
			wc_put_fixed64(t->val, test_rand(&rnd) % (seq + 1));
			t->c.val = t->val;
			t->c.val_len = WC_COLUMN_BOUND_LEN;
		}
	}
	else
	{
		t->c.type = WC_TYPE_DEL_FAMILY;
		t->c.ts = INT64_MAX;
		t->c.qual_len = 0;
	}
}

static bool
same_cell(const wc_cell *a, const wc_cell *b)
{
	return a->row_len == b->row_len && memcmp(a->row, b->row, a->row_len) == 0 &&
		a->qual_len == b->qual_len && (a->qual_len == 0 || memcmp(a->qual, b->qual, a->qual_len) == 0) &&
		a->ts == b->ts && a->seq == b->seq && a->type == b->type &&
		a->val_len == b->val_len && (a->val_len == 0 || memcmp(a->val, b->val, a->val_len) == 0);
}

/* Index of the first reference entry >= target. */
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

/* Full iteration of mt equals ref[0..n-1] (sorted). */
static bool
iter_equals(wc_memtable *mt, const tcell *ref, int n)
{
	wc_iter    *it = wc_memtable_iter_new(mt);
	int			i = 0;
	bool		ok = true;

	for (wc_iter_seek_first(it); wc_iter_valid(it); wc_iter_next(it), i++)
		if (i >= n || !same_cell(wc_iter_cell(it), &ref[i].c))
		{
			ok = false;
			break;
		}
	if (i != n)
		ok = false;
	CHECK(wc_iter_status(it, NULL) == WC_OK, "status");
	wc_iter_close(it);
	return ok;
}

/* it is at ref[pos] (the end when pos is n), and the next two entries follow. */
static bool
iter_at(wc_iter *it, const tcell *ref, int n, int pos)
{
	for (int j = 0; j < 3; j++)
	{
		if (pos + j >= n)
			return !wc_iter_valid(it);
		if (!wc_iter_valid(it) || !same_cell(wc_iter_cell(it), &ref[pos + j].c))
			return false;
		wc_iter_next(it);
	}
	return true;
}

static void
check_seeks(wc_memtable *mt, const tcell *ref, int n, int nseeks)
{
	wc_iter    *it = wc_memtable_iter_new(mt);
	int			bad = 0;

	for (int k = 0; k < nseeks; k++)
	{
		tcell		target;
		wc_cell		t;
		int			pos;

		/* half the targets are existing entries, half are arbitrary */
		if (n > 0 && k % 2 == 0)
			t = ref[test_rand(&rnd) % n].c;
		else
		{
			make_cell(&target, test_rand(&rnd) % 5000);
			free(target.val);
			target.c.val = NULL;
			target.c.val_len = 0;
			t = target.c;
		}
		pos = lower_bound(ref, n, &t);
		wc_iter_seek(it, &t);
		bad += !iter_at(it, ref, n, pos);
	}
	CHECK(bad == 0, "%d of %d seeks went wrong", bad, nseeks);
	wc_iter_close(it);
}

static void
test_random(void)
{
	enum
	{
		N = 20000
	};
	tcell	   *cells = malloc(sizeof(tcell) * N);
	tcell	   *ref = malloc(sizeof(tcell) * N);
	wc_memtable *mt = wc_memtable_new();
	wc_err		err;
	int64_t		ts_min = INT64_MAX,
				ts_max = INT64_MIN;
	bool		range = false;
	int			failed_adds = 0;

	wc_err_clear(&err);
	CHECK(mt != NULL, "new");
	CHECK(wc_memtable_count(mt) == 0 && wc_memtable_ts_min(mt) == INT64_MAX &&
		  wc_memtable_ts_max(mt) == INT64_MIN && !wc_memtable_has_range_tombstones(mt),
		  "empty stats");
	CHECK(iter_equals(mt, NULL, 0), "empty iteration");
	check_seeks(mt, NULL, 0, 10);

	for (int i = 0; i < N; i++)
		make_cell(&cells[i], (uint64_t) i * 7 % N + 1);	/* seqs unique, not in order */
	for (int i = 0; i < N; i++)
	{
		if (wc_memtable_add(mt, &cells[i].c, &err) != WC_OK)
			failed_adds++;
		if (cells[i].c.type == WC_TYPE_PUT || cells[i].c.type == WC_TYPE_DEL_VERSION)
		{
			if (cells[i].c.ts < ts_min)
				ts_min = cells[i].c.ts;
			if (cells[i].c.ts > ts_max)
				ts_max = cells[i].c.ts;
		}
		else
			range = true;
		if (i + 1 == 10 || i + 1 == 1000 || i + 1 == N)
		{
			int			n = i + 1;

			memcpy(ref, cells, sizeof(tcell) * n);
			qsort(ref, n, sizeof(tcell), cmp_tcell);
			CHECK(iter_equals(mt, ref, n), "iteration after %d inserts", n);
			check_seeks(mt, ref, n, 2000);
			CHECK(wc_memtable_count(mt) == (uint64_t) n, "count %llu",
				  (unsigned long long) wc_memtable_count(mt));
			CHECK(wc_memtable_ts_min(mt) == ts_min && wc_memtable_ts_max(mt) == ts_max,
				  "ts range %lld..%lld", (long long) wc_memtable_ts_min(mt),
				  (long long) wc_memtable_ts_max(mt));
			CHECK(wc_memtable_has_range_tombstones(mt) == range, "range tombstones");
		}
	}
	CHECK(failed_adds == 0, "%d adds failed: %s", failed_adds, err.msg);
	{
		size_t		data = 0;

		for (int i = 0; i < N; i++)
			data += cells[i].c.row_len + cells[i].c.qual_len + cells[i].c.val_len;
		/* every byte copied plus a node header; not wildly more */
		CHECK(wc_memtable_bytes(mt) > data + (size_t) N * 32 &&
			  wc_memtable_bytes(mt) < 2 * (data + (size_t) N * 64),
			  "bytes %zu for %zu of data", wc_memtable_bytes(mt), data);
	}

	/* the memtable copied everything: scribble over the sources */
	for (int i = 0; i < N; i++)
	{
		memset(cells[i].row, '#', sizeof(cells[i].row));
		if (cells[i].val)
			memset(cells[i].val, '#', cells[i].c.val_len);
	}
	{
		wc_iter    *it = wc_memtable_iter_new(mt);
		int			hashes = 0;

		for (wc_iter_seek_first(it); wc_iter_valid(it); wc_iter_next(it))
			if (wc_iter_cell(it)->row[0] == '#')
				hashes++;
		CHECK(hashes == 0, "memtable bytes were not copied");
		wc_iter_close(it);
	}
	for (int i = 0; i < N; i++)
		free(cells[i].val);
	free(cells);
	free(ref);
	wc_memtable_unref(mt);
}

/* Inserting in ascending and descending key order (the last-insert hint). */
static void
test_ordered_inserts(void)
{
	enum
	{
		N = 5000
	};
	tcell	   *cells = malloc(sizeof(tcell) * N);
	tcell	   *ref = malloc(sizeof(tcell) * N);
	int			order[N / 50];
	wc_err		err;

	wc_err_clear(&err);
	for (int pass = 0; pass < 3; pass++)
	{
		wc_memtable *mt = wc_memtable_new();
		int			ok = 0;

		for (int i = 0; i < N; i++)
		{
			make_cell(&cells[i], (uint64_t) i + 1);
			free(cells[i].val);
			cells[i].val = NULL;
			cells[i].c.val = NULL;
			cells[i].c.val_len = 0;
		}
		/* ref's cells point into cells[], which stays put */
		memcpy(ref, cells, sizeof(tcell) * N);
		qsort(ref, N, sizeof(tcell), cmp_tcell);
		/* pass 0 ascending, 1 descending, 2 ascending runs of 50 in random order */
		for (int k = 0; k < N / 50; k++)
			order[k] = k;
		for (int k = N / 50 - 1; k > 0; k--)
		{
			int			j = (int) (test_rand(&rnd) % (k + 1)),
						x = order[k];

			order[k] = order[j];
			order[j] = x;
		}
		for (int k = 0; k < N; k++)
		{
			int			i = pass == 0 ? k : pass == 1 ? N - 1 - k : order[k / 50] * 50 + k % 50;

			if (wc_memtable_add(mt, &ref[i].c, &err) == WC_OK)
				ok++;
		}
		CHECK(ok == N, "adds %d", ok);
		CHECK(iter_equals(mt, ref, N), "iteration, pass %d", pass);
		check_seeks(mt, ref, N, 500);
		wc_memtable_unref(mt);
	}
	free(cells);
	free(ref);
}

/* The orderings cell.h promises, on hand-made entries. */
static void
test_cell_order(void)
{
	wc_memtable *mt = wc_memtable_new();
	wc_err		err;
	wc_iter    *it;
	wc_cell		in[10];
	int			n = 0,
				i = 0;

	wc_err_clear(&err);
	memset(in, 0, sizeof(in));
	/* expected order */
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "", 0, INT64_MAX, 5, WC_TYPE_DEL_FAMILY, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "", 0, INT64_MAX, 9, WC_TYPE_DEL_COLUMN, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "", 0, 100, 3, WC_TYPE_PUT, (const uint8_t *) "v", 1};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "a", 1, INT64_MAX, 1, WC_TYPE_DEL_COLUMN, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "a", 1, 7, 2, WC_TYPE_PUT, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "a", 1, 5, 8, WC_TYPE_DEL_VERSION, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "a", 1, 5, 4, WC_TYPE_PUT, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "a", 1, -3, 6, WC_TYPE_PUT, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r", 1, (const uint8_t *) "b", 1, 1, 7, WC_TYPE_PUT, NULL, 0};
	in[n++] = (wc_cell) {(const uint8_t *) "r\0", 2, (const uint8_t *) "", 0, INT64_MAX, 10, WC_TYPE_DEL_FAMILY, NULL, 0};
	/* add in a scrambled order */
	for (int k = 0; k < n; k++)
		CHECK_OK(wc_memtable_add(mt, &in[(k * 3) % n], &err), &err);
	it = wc_memtable_iter_new(mt);
	for (wc_iter_seek_first(it); wc_iter_valid(it); wc_iter_next(it), i++)
		CHECK(i < n && wc_iter_cell(it)->seq == in[i].seq, "position %d holds seq %llu", i,
			  (unsigned long long) wc_iter_cell(it)->seq);
	CHECK(i == n, "entries %d", i);

	/* seek to the start of a row and of a column */
	{
		wc_cell		t;

		wc_cell_row_start(&t, (const uint8_t *) "r", 1);
		wc_iter_seek(it, &t);
		CHECK(wc_iter_valid(it) && wc_iter_cell(it)->seq == 5, "row start");
		wc_cell_column_start(&t, (const uint8_t *) "r", 1, (const uint8_t *) "a", 1);
		wc_iter_seek(it, &t);
		CHECK(wc_iter_valid(it) && wc_iter_cell(it)->seq == 1, "column start");
		wc_cell_column_start(&t, (const uint8_t *) "r", 1, (const uint8_t *) "aa", 2);
		wc_iter_seek(it, &t);
		CHECK(wc_iter_valid(it) && wc_iter_cell(it)->seq == 7, "column after a");
		wc_cell_row_start(&t, (const uint8_t *) "s", 1);
		wc_iter_seek(it, &t);
		CHECK(!wc_iter_valid(it), "past the end");
	}
	CHECK(wc_memtable_ts_min(mt) == -3 && wc_memtable_ts_max(mt) == 100, "ts range");
	CHECK(wc_memtable_has_range_tombstones(mt), "range tombstones");
	wc_iter_close(it);
	wc_memtable_unref(mt);
}

/* Iterators keep working while entries are added, and keep the table alive. */
static void
test_iter_across_inserts(void)
{
	enum
	{
		N = 3000
	};
	tcell	   *cells = malloc(sizeof(tcell) * N);
	wc_memtable *mt = wc_memtable_new();
	wc_err		err;
	wc_iter    *it;
	tcell		prev;
	bool		have_prev = false;
	int			seen = 0,
				unordered = 0;

	wc_err_clear(&err);
	for (int i = 0; i < N; i++)
		make_cell(&cells[i], (uint64_t) i + 1);
	for (int i = 0; i < N / 2; i++)
		CHECK(wc_memtable_add(mt, &cells[i].c, &err) == WC_OK, "add");
	it = wc_memtable_iter_new(mt);
	wc_memtable_unref(mt);		/* the iterator's reference keeps it */
	wc_iter_seek_first(it);
	for (int i = N / 2; wc_iter_valid(it); i++)
	{
		const wc_cell *c = wc_iter_cell(it);

		if (have_prev && wc_cell_cmp(&prev.c, c) >= 0)
			unordered++;
		/* a copy: the entry must outlive the iterator's next call */
		prev.c = *c;
		memcpy(prev.row, c->row, c->row_len);
		memcpy(prev.qual, c->qual, c->qual_len);
		prev.c.row = prev.row;
		prev.c.qual = prev.qual;
		prev.c.val = NULL;
		prev.c.val_len = 0;
		have_prev = true;
		seen++;
		/* add an entry between every step; the current node stays where it is */
		if (i < N)
			CHECK(wc_memtable_add(mt, &cells[i].c, &err) == WC_OK, "add");
		CHECK(wc_cell_cmp(&prev.c, wc_iter_cell(it)) == 0, "current entry changed");
		wc_iter_next(it);
	}
	CHECK(unordered == 0, "%d out of order", unordered);
	CHECK(seen >= N / 2 && seen <= N, "seen %d", seen);
	wc_iter_seek_first(it);
	seen = 0;
	for (; wc_iter_valid(it); wc_iter_next(it))
		seen++;
	CHECK(seen == N, "second pass saw %d", seen);
	wc_iter_close(it);
	for (int i = 0; i < N; i++)
		free(cells[i].val);
	free(cells);
}

/* memcmp's order, then the shorter first: what wc_row_cmp must give. */
static int
ref_row_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	int			r = n ? memcmp(a, b, n) : 0;

	if (r != 0)
		return r < 0 ? -1 : 1;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/*
 * wc_row_cmp compares keys of 8-16 bytes by words: against memcmp over random
 * keys of 0-24 bytes of few symbols (0x00, 0x7f, 0x80, 0xff among them), so
 * that most pairs share a prefix and differ anywhere in the words.
 */
static void
test_row_cmp(void)
{
	static const uint8_t sym[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
	uint64_t	x = 88172645463325252ull;
	int			bad = 0;

	for (int i = 0; i < 200000; i++)
	{
		uint8_t		a[24],
					b[24];
		size_t		alen,
					blen;
		int			want,
					got;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		alen = x % 25;
		blen = (x >> 8) % 4 == 0 ? alen : (x >> 10) % 25;
		for (size_t k = 0; k < 24; k++)
		{
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			a[k] = sym[x % 6];
			b[k] = (x >> 16) % 8 == 0 ? sym[(x >> 20) % 6] : a[k];
		}
		want = ref_row_cmp(a, alen, b, blen);
		got = wc_row_cmp(a, alen, b, blen);
		if ((got > 0) - (got < 0) != want && bad++ < 5)
			CHECK(false, "wc_row_cmp of %zu and %zu bytes: %d, memcmp says %d", alen, blen, got, want);
	}
	CHECK(bad == 0, "wc_row_cmp agrees with memcmp on 200,000 pairs (%d wrong)", bad);
}

static void
test_big_values(void)
{
	wc_memtable *mt = wc_memtable_new();
	wc_err		err;
	size_t		sizes[] = {0, 1, 1000, 64 * 1024, 64 * 1024 + 1, 300 * 1024, 4 << 20, 17};
	int			n = (int) (sizeof(sizes) / sizeof(sizes[0]));
	size_t		total = 0;
	wc_iter    *it;
	int			i = 0,
				bad = 0;

	wc_err_clear(&err);
	for (int k = 0; k < n; k++)
	{
		uint8_t    *v = malloc(sizes[k] + 1);
		uint8_t		row[4] = {'k', (uint8_t) k, 0, 0};
		wc_cell		c = {row, 2, (const uint8_t *) "q", 1, 1, (uint64_t) k + 1, WC_TYPE_PUT, v, (uint32_t) sizes[k]};

		for (size_t j = 0; j < sizes[k]; j++)
			v[j] = (uint8_t) (j * 31 + k);
		CHECK_OK(wc_memtable_add(mt, &c, &err), &err);
		total += sizes[k];
		free(v);
	}
	CHECK(wc_memtable_bytes(mt) >= total && wc_memtable_bytes(mt) < total + 2 * 1024 * 1024,
		  "bytes %zu for %zu of values", wc_memtable_bytes(mt), total);
	it = wc_memtable_iter_new(mt);
	for (wc_iter_seek_first(it); wc_iter_valid(it); wc_iter_next(it), i++)
	{
		const wc_cell *c = wc_iter_cell(it);

		if (c->val_len != sizes[i])
			bad++;
		for (size_t j = 0; j < c->val_len; j++)
			if (c->val[j] != (uint8_t) (j * 31 + i))
			{
				bad++;
				break;
			}
	}
	CHECK(i == n && bad == 0, "%d entries, %d bad", i, bad);
	wc_iter_close(it);
	wc_memtable_unref(mt);
}

/*
 * A seek target made from entry c: itself (how 0), a later version of its
 * column (1), past the column (2 and 3: ts INT64_MIN and seq 0, as a scan
 * leaves a column), or the column's first version, past its DEL_COLUMN entries
 * (4: ts INT64_MAX and the highest seq, as a scan leaves its tombstones);
 * anything else, c itself.
 */
static wc_cell
target_from(const wc_cell *c, int how)
{
	wc_cell		t = *c;

	t.val = NULL;
	t.val_len = 0;
	if (how == 1 && t.type != WC_TYPE_DEL_COLUMN)
		t.ts -= (int64_t) (test_rand(&rnd) % 5);
	else if (how == 2 || how == 3)
	{
		t.type = WC_TYPE_PUT;
		t.ts = INT64_MIN;
		t.seq = 0;
	}
	else if (how == 4 && t.type != WC_TYPE_DEL_FAMILY)
	{
		t.type = WC_TYPE_PUT;
		t.ts = INT64_MAX;
		t.seq = WC_SEQ_MAX;
	}
	return t;
}

/*
 * Many versions of few columns (a column's entries are a list hanging off its
 * node, its DEL_COLUMN entries first, in runs: memtable.c): random inserts,
 * idempotent and not, in seq order and not (a DEL_COLUMN may then land
 * anywhere in a run), then every kind of seek, forward
 * from where the iterator stands (within the column, past it: ts INT64_MIN
 * and seq 0, as a scan leaves a column; to a later column) and from anywhere,
 * and seek_row_before, against a sorted reference.
 */
static void
test_versions(void)
{
	enum
	{
		N = 4000
	};
	tcell	   *cells = malloc(sizeof(tcell) * N);
	tcell	   *ref = malloc(sizeof(tcell) * N);
	wc_err		err;

	wc_err_clear(&err);
	for (int pass = 0; pass < 4; pass++)
	{
		wc_memtable *mt = wc_memtable_new();
		wc_iter    *it;
		int			n = 0,
					bad = 0,
					badrb = 0;

		if (pass % 2 == 1)
			wc_memtable_set_idempotent(mt);
		for (int i = 0; i < N; i++)
		{
			tcell	   *t = &cells[i];

			make_cell(t, pass < 2 ? (uint64_t) i + 1 : (uint64_t) i * 7 % N + 1);
			/* two rows of two qualifiers (and their DEL_FAMILY): long lists */
			t->c.row_len = 1;
			if (t->c.type != WC_TYPE_DEL_FAMILY)
				t->c.qual_len = 1;
			t->row[0] = (uint8_t) ('a' + t->row[0] % 2);
			t->qual[0] = (uint8_t) ('x' + t->qual[0] % 2);
			if (t->c.type == WC_TYPE_PUT)
				t->c.ts = (int64_t) (test_rand(&rnd) % 50) - 10;
			if (wc_memtable_add(mt, &t->c, &err) != WC_OK)
				bad++;
			/* the idempotent one is given a tenth of them twice */
			if (pass % 2 == 1 && i % 10 == 3 && wc_memtable_add(mt, &cells[i / 2].c, &err) != WC_OK)
				bad++;
			n++;
			if (i == N / 2 || i == N - 1)
			{
				memcpy(ref, cells, sizeof(tcell) * n);
				qsort(ref, n, sizeof(tcell), cmp_tcell);
				CHECK(iter_equals(mt, ref, n), "iteration of %d entries, pass %d", n, pass);
				CHECK(wc_memtable_count(mt) == (uint64_t) n, "count %llu of %d",
					  (unsigned long long) wc_memtable_count(mt), n);
			}
		}
		CHECK(bad == 0, "%d adds failed: %s", bad, err.msg);

		it = wc_memtable_iter_new(mt);
		for (int k = 0; k < 3000; k++)
		{
			wc_cell		t;
			int			pos,
						how = (int) (test_rand(&rnd) % 5);

			/* from an entry: itself, a later version, its column's end, the next
			 * column, the column's first version */
			pos = (int) (test_rand(&rnd) % N);
			t = target_from(&ref[pos].c, how);
			if (how == 3)
				t.qual_len = 2;	/* between x and y, or after y */
			pos = lower_bound(ref, N, &t);
			/* half the seeks from a position before the target, half after */
			if (k % 2 == 0 && pos > 0)
			{
				wc_iter_seek(it, &ref[pos - 1 - (int) (test_rand(&rnd) % (pos < 20 ? pos : 20))].c);
				wc_iter_next(it);
			}
			wc_iter_seek(it, &t);
			bad += !iter_at(it, ref, N, pos);

			/* seek_row_before(t): the first entry of the row of the last entry < t */
			wc_iter_seek_row_before(it, &t);
			if (pos == 0)
				badrb += wc_iter_valid(it);
			else
			{
				int			first = pos - 1;

				while (first > 0 && ref[first - 1].c.row[0] == ref[pos - 1].c.row[0])
					first--;
				badrb += !wc_iter_valid(it) || !same_cell(wc_iter_cell(it), &ref[first].c);
			}
		}
		wc_iter_close(it);
		CHECK(bad == 0, "%d seeks went wrong, pass %d", bad, pass);
		CHECK(badrb == 0, "%d seek_row_befores went wrong, pass %d", badrb, pass);
		for (int i = 0; i < N; i++)
			free(cells[i].val);
		wc_memtable_unref(mt);
	}
	free(cells);
	free(ref);
}

/*
 * it is at the entry of row ref[pos] confined to row (the end when pos is n or
 * ref[pos] is in another row), and so are the next two steps.
 */
static bool
confined_at(wc_iter *it, const tcell *ref, int n, int pos, const uint8_t *row, size_t len)
{
	for (int j = 0; j < 3; j++, pos++)
	{
		if (pos >= n || ref[pos].c.row_len != len || memcmp(ref[pos].c.row, row, len) != 0)
			return !wc_iter_valid(it);
		if (!wc_iter_valid(it) || !same_cell(wc_iter_cell(it), &ref[pos].c))
			return false;
		wc_iter_next(it);
	}
	return true;
}

/*
 * Iterators confined to a row (point reads, by the row index): thousands of rows
 * added in random order (a row's first node changes as columns that sort first
 * arrive, the index grows from 64 buckets to 4,096), and at five points on the
 * way every row and rows that are not there: the row's entries, nothing more,
 * seeks from anywhere to anywhere (before the row, in it, after it), seek_first,
 * seek_row_before, and the same iterator confined again and freed of it.
 */
static void
test_confined(void)
{
	enum
	{
		N = 30000,
		ROWS = 3000
	};
	tcell	   *cells = malloc(sizeof(tcell) * N);
	tcell	   *ref = malloc(sizeof(tcell) * N);
	wc_memtable *mt = wc_memtable_new();
	wc_iter    *it = wc_memtable_iter_new(mt);
	wc_err		err;
	int			bad_add = 0,
				bad_rows = 0,
				bad_seeks = 0,
				bad_absent = 0,
				bad_other = 0,
				checked = 0;

	wc_err_clear(&err);
	for (int i = 0; i < N; i++)
	{
		uint32_t	r = (uint32_t) (test_rand(&rnd) % ROWS);

		make_cell(&cells[i], (uint64_t) i + 1);
		/* rows "r" + two bytes, of which some end in a zero byte; odd ones absent */
		cells[i].row[0] = 'r';
		cells[i].row[1] = (uint8_t) (r / 64);
		cells[i].row[2] = (uint8_t) ((r % 64) * 2);
		cells[i].c.row_len = 3;
		if (wc_memtable_add(mt, &cells[i].c, &err) != WC_OK)
			bad_add++;
		if (i + 1 == 100 || i + 1 == 1000 || i + 1 == 5000 || i + 1 == 12000 || i + 1 == N)
		{
			int			n = i + 1;

			memcpy(ref, cells, sizeof(tcell) * n);
			qsort(ref, n, sizeof(tcell), cmp_tcell);
			for (uint32_t r = 0; r < ROWS; r++)
			{
				uint8_t		row[3] = {'r', (uint8_t) (r / 64), (uint8_t) ((r % 64) * 2)};
				uint8_t		odd[3] = {'r', (uint8_t) (r / 64), (uint8_t) ((r % 64) * 2 + 1)};
				wc_cell		start;
				int			lo;

				wc_cell_row_start(&start, row, 3);
				lo = lower_bound(ref, n, &start);
				if (lo == n || ref[lo].c.row_len != 3 || memcmp(ref[lo].c.row, row, 3) != 0)
				{
					bad_absent += wc_memtable_iter_confine(it, row, 3);
					wc_iter_seek_first(it);
					bad_absent += wc_iter_valid(it);
					wc_iter_seek(it, &start);
					bad_absent += wc_iter_valid(it);
					continue;
				}
				bad_absent += wc_memtable_iter_confine(it, odd, 3);
				if (!wc_memtable_iter_confine(it, row, 3))
				{
					bad_rows++;
					continue;
				}
				checked++;
				/* the whole row from its start, and nothing after it */
				wc_iter_seek(it, &start);
				for (int p = lo;; p++)
				{
					bool		in = p < n && ref[p].c.row_len == 3 && memcmp(ref[p].c.row, row, 3) == 0;

					if (!in)
					{
						bad_rows += wc_iter_valid(it);
						break;
					}
					if (!wc_iter_valid(it) || !same_cell(wc_iter_cell(it), &ref[p].c))
					{
						bad_rows++;
						break;
					}
					wc_iter_next(it);
				}
				wc_iter_seek_first(it);
				bad_other += !confined_at(it, ref, n, lo, row, 3);

				/* seeks: an entry of the row or near it, a later version, a column's
				 * end, any entry at all; from where the last one left it */
				for (int k = 0; k < (r % 10 == 0 ? 40 : 4); k++)
				{
					int			how = (int) (test_rand(&rnd) % 5),
								pos = lo + (int) (test_rand(&rnd) % 12) - 4;
					wc_cell		t;

					if (how == 4 || pos < 0 || pos >= n)
						pos = (int) (test_rand(&rnd) % n);
					t = target_from(&ref[pos].c, how);
					/* before the row: the row's first entry */
					pos = lower_bound(ref, n, &t);
					wc_iter_seek(it, &t);
					bad_seeks += !confined_at(it, ref, n, pos > lo ? pos : lo, row, 3);
				}

				/* seek_row_before past the row's end: the row's first entry */
				{
					uint8_t		after[4] = {'r', row[1], row[2], 0};
					wc_cell		t;

					wc_cell_row_start(&t, after, 4);
					wc_iter_seek_row_before(it, &t);
					bad_other += !confined_at(it, ref, n, lo, row, 3);
				}
			}
			/* freed of it: every entry again */
			wc_memtable_iter_confine(it, NULL, 0);
			{
				int			p = 0;

				for (wc_iter_seek_first(it); wc_iter_valid(it) && p < n; wc_iter_next(it), p++)
					bad_other += !same_cell(wc_iter_cell(it), &ref[p].c);
				bad_other += p != n || wc_iter_valid(it);
			}
		}
	}
	CHECK(bad_add == 0, "%d adds failed: %s", bad_add, err.msg);
	CHECK(checked > ROWS, "%d rows checked", checked);
	CHECK(bad_rows == 0, "%d confined rows read wrong", bad_rows);
	CHECK(bad_seeks == 0, "%d confined seeks went wrong", bad_seeks);
	CHECK(bad_absent == 0, "%d absent rows were found", bad_absent);
	CHECK(bad_other == 0, "%d confined seek_first, seek_row_before or full reads went wrong",
		  bad_other);
	wc_iter_close(it);
	for (int i = 0; i < N; i++)
		free(cells[i].val);
	free(cells);
	free(ref);
	wc_memtable_unref(mt);
}

int
main(void)
{
	t_name = "test_memtable";
	test_cell_order();
	test_random();
	test_ordered_inserts();
	test_versions();
	test_confined();
	test_iter_across_inserts();
	test_big_values();
	test_row_cmp();
	TEST_DONE();
}
