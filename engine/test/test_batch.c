/*
 * test_batch.c -- write batches: encoding and decoding, limits, overlays,
 * pending seqs, append, truncate, and damaged payloads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "cell.h"
#include "coding.h"
#include "env.h"
#include "err.h"
#include "ingest.h"
#include "testutil.h"

static uint64_t rnd = 99;

/* What a test added, to compare with what comes back. */
typedef struct added
{
	uint8_t		type;
	char		fam[16];
	uint8_t		row[16];
	size_t		row_len;
	uint8_t		qual[16];
	size_t		qual_len;
	int64_t		ts;
	uint8_t		val[64];
	size_t		val_len;
} added;

/* Adds a random entry to b and records it in *a. */
static int
add_random(wc_batch *b, added *a, wc_err *err)
{
	static const char *fams[] = {"cf", "meta", "x"};
	int			kind = (int) (test_rand(&rnd) % 10);

	memset(a, 0, sizeof(*a));
	strcpy(a->fam, fams[test_rand(&rnd) % 3]);
	a->row_len = 1 + test_rand(&rnd) % 8;
	for (size_t i = 0; i < a->row_len; i++)
		a->row[i] = (uint8_t) ('a' + test_rand(&rnd) % 3);
	a->qual_len = test_rand(&rnd) % 4;
	for (size_t i = 0; i < a->qual_len; i++)
		a->qual[i] = (uint8_t) test_rand(&rnd);
	a->ts = (int64_t) (test_rand(&rnd) % 1000) - 500;
	if (kind < 6)
	{
		a->type = WC_TYPE_PUT;
		a->val_len = test_rand(&rnd) % 64;
		for (size_t i = 0; i < a->val_len; i++)
			a->val[i] = (uint8_t) test_rand(&rnd);
		return wc_batch_put(b, a->fam, strlen(a->fam), a->row, a->row_len, a->qual, a->qual_len,
							a->ts, a->val, a->val_len, err);
	}
	if (kind < 8)
	{
		a->type = WC_TYPE_DEL_VERSION;
		return wc_batch_delete_version(b, a->fam, strlen(a->fam), a->row, a->row_len,
									   a->qual, a->qual_len, a->ts, err);
	}
	a->ts = INT64_MAX;
	if (kind < 9)
	{
		a->type = WC_TYPE_DEL_COLUMN;
		return wc_batch_delete_column(b, a->fam, strlen(a->fam), a->row, a->row_len,
									  a->qual, a->qual_len, err);
	}
	a->type = WC_TYPE_DEL_FAMILY;
	a->qual_len = 0;
	return wc_batch_delete_family(b, a->fam, strlen(a->fam), a->row, a->row_len, err);
}

static bool
entry_matches(const wc_batch_entry *e, const added *a)
{
	const wc_cell *c = &e->cell;

	return e->type == a->type && c->type == a->type &&
		e->fam_len == strlen(a->fam) && memcmp(e->fam, a->fam, e->fam_len) == 0 &&
		c->row_len == a->row_len && memcmp(c->row, a->row, a->row_len) == 0 &&
		c->qual_len == a->qual_len && (a->qual_len == 0 || memcmp(c->qual, a->qual, a->qual_len) == 0) &&
		c->ts == a->ts && c->val_len == a->val_len &&
		(a->val_len == 0 || memcmp(c->val, a->val, a->val_len) == 0);
}

/* A malloc'd payload of exactly the right size (so ASan sees any overread). */
static uint8_t *
make_payload(wc_batch *const *batches, int n, uint64_t seq_base, uint64_t tag, size_t *len)
{
	uint64_t	count = 0;
	size_t		body = 0,
				off;
	uint8_t		hdr[WC_BATCH_HEADER_MAX];
	uint8_t    *p;

	for (int i = 0; i < n; i++)
	{
		count += wc_batch_count(batches[i]);
		body += wc_batch_bytes(batches[i]);
	}
	off = wc_batch_encode_header(hdr, seq_base, tag, (uint32_t) count);
	p = malloc(off + body + 1);
	memcpy(p, hdr, off);
	for (int i = 0; i < n; i++)
	{
		size_t		len1;
		const uint8_t *e = wc_batch_entries(batches[i], &len1);

		memcpy(p + off, e, len1);
		off += len1;
	}
	*len = off;
	return p;
}

static void
test_roundtrip(void)
{
	enum
	{
		N = 500
	};
	wc_batch   *b1 = wc_batch_new(),
			   *b2 = wc_batch_new();
	added	   *a = malloc(sizeof(added) * N);
	wc_err		err;
	wc_batch_reader r;
	wc_batch_entry e;
	uint8_t    *payload;
	size_t		len;
	int			rc,
				i = 0,
				bad = 0;

	wc_err_clear(&err);
	for (int k = 0; k < N; k++)
		CHECK_OK(add_random(k < N / 2 ? b1 : b2, &a[k], &err), &err);
	CHECK(wc_batch_count(b1) == N / 2 && wc_batch_count(b2) == N - N / 2, "counts");

	/* two batches after one header, as db.c writes them */
	{
		wc_batch   *bs[2] = {b1, b2};

		payload = make_payload(bs, 2, 1000, 77, &len);
	}
	CHECK_OK(wc_batch_reader_init(&r, payload, len, &err), &err);
	CHECK(r.seq_base == 1000 && r.tag == 77 && r.count == N, "header");
	while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
	{
		if (i >= N || !entry_matches(&e, &a[i]) || e.cell.seq != 1000 + (uint64_t) i)
			bad++;
		i++;
	}
	CHECK(rc == 0 && i == N && bad == 0, "rc %d, %d entries, %d bad: %s", rc, i, bad, err.msg);
	CHECK(wc_batch_reader_next(&r, &e, &err) == 0, "end stays the end");
	free(payload);

	/* an empty batch and a header-only payload */
	{
		wc_batch   *empty = wc_batch_new();
		size_t		elen = 99;
		const uint8_t *ent = wc_batch_entries(empty, &elen);

		CHECK(ent != NULL && elen == 0 && wc_batch_bytes(empty) == 0 && wc_batch_count(empty) == 0,
			  "empty batch");
		payload = make_payload(&empty, 1, 5, 0, &len);
		CHECK_OK(wc_batch_reader_init(&r, payload, len, &err), &err);
		CHECK(wc_batch_reader_next(&r, &e, &err) == 0, "no entries");
		free(payload);
		wc_batch_free(empty);
	}

	/* a truncate entry */
	{
		wc_batch   *t = wc_batch_new();

		CHECK(wc_batch_truncate_seq(t) == 0, "no truncate");
		CHECK_OK(wc_batch_truncate(t, &err), &err);
		CHECK(wc_batch_truncate_seq(t) == wc_batch_pending_seq_now(), "truncate seq");
		payload = make_payload(&t, 1, 9, 0, &len);
		CHECK_OK(wc_batch_reader_init(&r, payload, len, &err), &err);
		CHECK(wc_batch_reader_next(&r, &e, &err) == 1 && e.type == WC_TYPE_DEL_ALL &&
			  e.fam_len == 0 && e.cell.row_len == 0 && e.cell.seq == 9, "DEL_ALL decoded");
		CHECK(wc_batch_reader_next(&r, &e, &err) == 0, "one entry");
		free(payload);
		wc_batch_free(t);
	}
	wc_batch_free(b1);
	wc_batch_free(b2);
	free(a);
}

static void
test_limits(void)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	uint8_t    *big = calloc(1, WC_MAX_QUALIFIER + 2);
	wc_family_opts fams[3] = {{.name = "a"}, {.name = ""}, {.name = "c"}};
	int			rc;

#define EXPECT_INVALID(call, text) do { \
	wc_err_clear(&err); \
	rc = (call); \
	CHECK(rc == WC_INVALID && err.code == WC_INVALID && strstr(err.msg, (text)) != NULL, \
		  "rc %d, message \"%s\", expected \"%s\"", rc, err.msg, (text)); \
} while (0)

	EXPECT_INVALID(wc_batch_put(b, "cf", 2, big, 70000, "q", 1, 1, "v", 1, &err),
				   "rowkey of 70000 bytes is longer than the limit of 65536 bytes");
	EXPECT_INVALID(wc_batch_put(b, "cf", 2, "", 0, "q", 1, 1, "v", 1, &err), "rowkey must not be empty");
	EXPECT_INVALID(wc_batch_put(b, "", 0, "r", 1, "q", 1, 1, "v", 1, &err), "family name must not be empty");
	EXPECT_INVALID(wc_batch_put(b, big, 256, "r", 1, "q", 1, 1, "v", 1, &err),
				   "family name of 256 bytes is longer than the limit of 255 bytes");
	EXPECT_INVALID(wc_batch_put(b, "c\0f", 3, "r", 1, "q", 1, 1, "v", 1, &err), "zero byte");
	EXPECT_INVALID(wc_batch_put(b, "cf", 2, "r", 1, big, WC_MAX_QUALIFIER + 1, 1, "v", 1, &err),
				   "qualifier of 1048577 bytes is longer than the limit of 1048576 bytes");
	/* the length is refused before anything is read */
	EXPECT_INVALID(wc_batch_put(b, "cf", 2, "r", 1, "q", 1, 1, "v", (size_t) WC_MAX_VALUE + 1, &err),
				   "value of 268435457 bytes is longer than the limit of 268435456 bytes");
	EXPECT_INVALID(wc_batch_put(b, "cf", 2, "r", 1, "q", 1, INT64_MAX, "v", 1, &err),
				   "timestamp 9223372036854775807 is reserved");
	EXPECT_INVALID(wc_batch_put(b, "cf", 2, NULL, 3, "q", 1, 1, "v", 1, &err), "null pointer");
	EXPECT_INVALID(wc_batch_delete_version(b, "cf", 2, "r", 1, "q", 1, INT64_MAX, &err), "reserved");
	EXPECT_INVALID(wc_batch_delete_version(b, "cf", 2, "", 0, "q", 1, 1, &err), "rowkey must not be empty");
	EXPECT_INVALID(wc_batch_delete_column(b, "cf", 2, big, 65537, "q", 1, &err),
				   "rowkey of 65537 bytes");
	EXPECT_INVALID(wc_batch_delete_column(b, "", 0, "r", 1, "q", 1, &err), "family name must not be empty");
	EXPECT_INVALID(wc_batch_delete_family(b, "cf", 2, "", 0, &err), "rowkey must not be empty");
	EXPECT_INVALID(wc_batch_delete_row(b, fams, 3, "r", 1, &err), "family name must not be empty");
	EXPECT_INVALID(wc_batch_delete_row(b, fams, 1, "", 0, &err), "rowkey must not be empty");
	EXPECT_INVALID(wc_batch_put(NULL, "cf", 2, "r", 1, "q", 1, 1, "v", 1, &err), "no batch");
	CHECK(wc_batch_count(b) == 0 && wc_batch_bytes(b) == 0, "nothing added by failed calls");

	/* the limits themselves are accepted */
	wc_err_clear(&err);
	memset(big, 'f', 255);
	CHECK_OK(wc_batch_put(b, big, 255, big, WC_MAX_ROWKEY, big, WC_MAX_QUALIFIER, INT64_MAX - 1,
						  NULL, 0, &err), &err);
	CHECK_OK(wc_batch_put(b, big, 255, big, WC_MAX_ROWKEY, big, WC_MAX_QUALIFIER, INT64_MIN,
						  "", 0, &err), &err);
	CHECK_OK(wc_batch_delete_column(b, "cf", 2, "r", 1, "", 0, &err), &err);
	CHECK(wc_batch_count(b) == 3, "count %llu", (unsigned long long) wc_batch_count(b));

	/* all the limit-sized entries decode */
	{
		size_t		len;
		uint8_t    *payload = make_payload(&b, 1, 1, 0, &len);
		wc_batch_reader r;
		wc_batch_entry e;
		int			n = 0;

		CHECK_OK(wc_batch_reader_init(&r, payload, len, &err), &err);
		while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
			n++;
		CHECK(rc == 0 && n == 3, "decoded %d: %s", n, err.msg);
		free(payload);
	}
	free(big);
	wc_batch_free(b);
#undef EXPECT_INVALID
}

/* Entries of an overlay, as (seq, type) pairs in memtable order. */
static int
overlay_entries(wc_memtable *mt, wc_cell *out, int max)
{
	wc_iter    *it = wc_memtable_iter_new(mt);
	int			n = 0;

	for (wc_iter_seek_first(it); wc_iter_valid(it); wc_iter_next(it))
		if (n < max)
			out[n++] = *wc_iter_cell(it);
	wc_iter_close(it);
	return n;
}

static void
test_overlay(void)
{
	wc_batch   *b1 = wc_batch_new(),
			   *b2 = wc_batch_new();
	wc_err		err;
	wc_memtable *mt,
			   *mt2;
	wc_cell		got[16];
	uint64_t	before = wc_batch_pending_seq_now();
	uint64_t	s[6];
	int			n;

	wc_err_clear(&err);
	CHECK(before >= WC_SEQ_PENDING_BASE - 1, "pending seq %llu", (unsigned long long) before);
	CHECK(wc_batch_overlay(b1, (const uint8_t *) "cf", 2, &err) == NULL && err.code == WC_OK,
		  "empty batch has no overlay");

	/* interleaved writes to two batches: seqs follow the order of the calls */
	CHECK_OK(wc_batch_put(b1, "cf", 2, "r1", 2, "q", 1, 10, "v1", 2, &err), &err);
	s[0] = wc_batch_pending_seq_now();
	CHECK_OK(wc_batch_put(b2, "cf", 2, "r1", 2, "q", 1, 10, "v2", 2, &err), &err);
	s[1] = wc_batch_pending_seq_now();
	CHECK_OK(wc_batch_put(b1, "cf", 2, "r1", 2, "q", 1, 10, "v3", 2, &err), &err);
	s[2] = wc_batch_pending_seq_now();
	CHECK_OK(wc_batch_put(b1, "other", 5, "r0", 2, "q", 1, 1, "w", 1, &err), &err);
	s[3] = wc_batch_pending_seq_now();
	CHECK(s[0] > before && s[1] > s[0] && s[2] > s[1] && s[3] > s[2], "pending seqs increase");

	mt = wc_batch_overlay(b1, (const uint8_t *) "cf", 2, &err);
	CHECK(mt != NULL, "overlay cf: %s", err.msg);
	n = overlay_entries(mt, got, 16);
	/* same (row, qual, ts): the later write (higher seq) first */
	CHECK(n == 2 && got[0].seq == s[2] && got[1].seq == s[0] &&
		  got[0].val_len == 2 && memcmp(got[0].val, "v3", 2) == 0, "overlay of b1/cf (%d)", n);
	mt2 = wc_batch_overlay(b2, (const uint8_t *) "cf", 2, &err);
	n = overlay_entries(mt2, got, 16);
	CHECK(n == 1 && got[0].seq == s[1], "overlay of b2/cf");
	mt2 = wc_batch_overlay(b1, (const uint8_t *) "other", 5, &err);
	n = overlay_entries(mt2, got, 16);
	CHECK(n == 1 && got[0].seq == s[3] && got[0].row_len == 2 && memcmp(got[0].row, "r0", 2) == 0,
		  "overlay of b1/other");
	CHECK(wc_batch_overlay(b1, (const uint8_t *) "nope", 4, &err) == NULL && err.code == WC_OK,
		  "no overlay for an absent family");

	/* incremental: later entries show up in the same memtable */
	{
		wc_family_opts fams[2] = {{.name = "cf"}, {.name = "third"}};
		wc_iter    *held = wc_memtable_iter_new(mt);	/* a scan still open */

		CHECK_OK(wc_batch_delete_column(b1, "cf", 2, "r1", 2, "q", 1, &err), &err);
		s[4] = wc_batch_pending_seq_now();
		CHECK_OK(wc_batch_truncate(b1, &err), &err);
		CHECK(wc_batch_truncate_seq(b1) == s[4] + 1, "truncate seq");
		CHECK_OK(wc_batch_delete_row(b1, fams, 2, "r2", 2, &err), &err);
		s[5] = wc_batch_pending_seq_now();
		CHECK(wc_batch_count(b1) == 7, "count %llu", (unsigned long long) wc_batch_count(b1));
		CHECK(wc_batch_overlay(b1, (const uint8_t *) "cf", 2, &err) == mt, "same memtable");
		n = overlay_entries(mt, got, 16);
		CHECK(n == 4, "cf overlay now has %d", n);
		CHECK(n == 4 && got[0].type == WC_TYPE_DEL_COLUMN && got[0].seq == s[4] &&
			  got[0].ts == INT64_MAX && got[1].seq == s[2] && got[2].seq == s[0] &&
			  got[3].type == WC_TYPE_DEL_FAMILY && got[3].seq == s[5] - 1 &&
			  got[3].qual_len == 0 && got[3].ts == INT64_MAX, "cf overlay order");
		mt2 = wc_batch_overlay(b1, (const uint8_t *) "third", 5, &err);
		n = overlay_entries(mt2, got, 16);
		CHECK(n == 1 && got[0].type == WC_TYPE_DEL_FAMILY && got[0].seq == s[5], "third overlay");

		/* clear drops the overlays, but an open iterator keeps its memtable */
		wc_batch_clear(b1);
		CHECK(wc_batch_count(b1) == 0 && wc_batch_bytes(b1) == 0 && wc_batch_truncate_seq(b1) == 0,
			  "cleared");
		CHECK(wc_batch_overlay(b1, (const uint8_t *) "cf", 2, &err) == NULL && err.code == WC_OK,
			  "no overlay after clear");
		n = 0;
		for (wc_iter_seek_first(held); wc_iter_valid(held); wc_iter_next(held))
			n++;
		CHECK(n == 4, "held iterator sees %d", n);
		wc_iter_close(held);
	}

	/* reuse after clear */
	CHECK_OK(wc_batch_put(b1, "cf", 2, "r9", 2, "q", 1, 10, "v", 1, &err), &err);
	mt = wc_batch_overlay(b1, (const uint8_t *) "cf", 2, &err);
	CHECK(mt != NULL && wc_memtable_count(mt) == 1, "overlay after reuse");
	wc_batch_free(b1);
	wc_batch_free(b2);
}

static void
test_append(void)
{
	wc_batch   *dst = wc_batch_new(),
			   *src = wc_batch_new();
	wc_err		err;
	added		a[40];
	size_t		dlen,
				slen;
	uint8_t    *expect;
	uint64_t	mark;
	wc_cell		got[64];
	int			n;

	wc_err_clear(&err);
	for (int i = 0; i < 20; i++)
		CHECK_OK(add_random(dst, &a[i], &err), &err);
	for (int i = 20; i < 40; i++)
		CHECK_OK(add_random(src, &a[i], &err), &err);
	CHECK_OK(wc_batch_truncate(src, &err), &err);
	CHECK_OK(wc_batch_put(src, "cf", 2, "after", 5, "q", 1, 3, "v", 1, &err), &err);
	CHECK(wc_batch_overlay(dst, (const uint8_t *) "cf", 2, &err) != NULL ||
		  wc_batch_overlay(dst, (const uint8_t *) "x", 1, &err) != NULL, "dst overlay built");

	{
		const uint8_t *d = wc_batch_entries(dst, &dlen);
		const uint8_t *s = wc_batch_entries(src, &slen);

		expect = malloc(dlen + slen);
		memcpy(expect, d, dlen);
		memcpy(expect + dlen, s, slen);
	}
	mark = wc_batch_pending_seq_now();
	CHECK_OK(wc_batch_append(dst, src, &err), &err);
	CHECK(wc_batch_count(dst) == 42 && wc_batch_count(src) == 22, "counts");
	{
		size_t		len;
		const uint8_t *d = wc_batch_entries(dst, &len);

		CHECK(len == dlen + slen && memcmp(d, expect, len) == 0, "appended bytes");
	}
	/* the truncate moved with new seqs: entry 40 of dst */
	CHECK(wc_batch_truncate_seq(dst) == mark + 21, "dst truncate seq %llu vs %llu",
		  (unsigned long long) wc_batch_truncate_seq(dst), (unsigned long long) mark + 21);
	CHECK(wc_batch_pending_seq_now() == mark + 22, "22 new seqs");
	/* the appended entries' seqs, and counting below a seq (src/store.c's fold) */
	CHECK(wc_batch_seq_at(dst, 20) == mark + 1 && wc_batch_seq_at(dst, 41) == mark + 22,
		  "seqs of the appended entries");
	CHECK(wc_batch_count_below(dst, mark + 1) == 20 && wc_batch_count_below(dst, mark + 5) == 24 &&
		  wc_batch_count_below(dst, mark + 23) == 42 && wc_batch_count_below(dst, 0) == 0 &&
		  wc_batch_count_below(NULL, mark) == 0, "count below");
	for (int i = 1; i < 42; i++)
		CHECK(wc_batch_seq_at(dst, i) > wc_batch_seq_at(dst, i - 1), "seqs increase at %d", i);
	/* the overlay catches up: the appended put comes with its new seq */
	n = overlay_entries(wc_batch_overlay(dst, (const uint8_t *) "cf", 2, &err), got, 64);
	{
		int			found = 0;

		for (int i = 0; i < n; i++)
			if (got[i].row_len == 5 && memcmp(got[i].row, "after", 5) == 0)
				found += got[i].seq == mark + 22;
		CHECK(found == 1, "appended entry in overlay");
	}

	/* appending a batch to itself doubles it */
	CHECK_OK(wc_batch_append(src, src, &err), &err);
	{
		size_t		len;
		const uint8_t *s = wc_batch_entries(src, &len);

		CHECK(wc_batch_count(src) == 44 && len == 2 * slen &&
			  memcmp(s, expect + dlen, slen) == 0 && memcmp(s + slen, expect + dlen, slen) == 0,
			  "self append");
		CHECK(wc_batch_truncate_seq(src) == wc_batch_pending_seq_now() - 1, "self append truncate");
	}
	/* appending an empty batch changes nothing */
	{
		wc_batch   *empty = wc_batch_new();
		uint64_t	now = wc_batch_pending_seq_now();

		CHECK_OK(wc_batch_append(dst, empty, &err), &err);
		CHECK(wc_batch_count(dst) == 42 && wc_batch_pending_seq_now() == now, "empty append");
		wc_batch_free(empty);
	}
	free(expect);
	wc_batch_free(dst);
	wc_batch_free(src);
}

/* The entries of row r in the overlay of family "cf" that are not dead (the
 * last one's seq in *seq), as a scan sees them. */
static int
overlay_count_row(wc_batch *b, const char *r, uint64_t *seq)
{
	wc_err		err;
	wc_cell		got[128];
	const wc_seq_range *dead;
	int			n,
				ndead,
				found = 0;

	wc_err_clear(&err);
	n = overlay_entries(wc_batch_overlay(b, (const uint8_t *) "cf", 2, &err), got, 128);
	ndead = wc_batch_dead(b, &dead);
	for (int i = 0; i < n; i++)
	{
		bool		is_dead = false;

		for (int j = 0; j < ndead; j++)
			is_dead |= got[i].seq >= dead[j].lo && got[i].seq <= dead[j].hi;
		if (!is_dead && got[i].row_len == strlen(r) && memcmp(got[i].row, r, got[i].row_len) == 0)
		{
			found++;
			if (seq)
				*seq = got[i].seq;
		}
	}
	return found;
}

static void
put_row(wc_batch *b, const char *r)
{
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_batch_put(b, "cf", 2, r, strlen(r), "q", 1, 1, "v", 1, &err), &err);
}

/* A savepoint's rollback: marks, rewinds, and the dead entries of the overlays. */
static void
test_rewind(void)
{
	wc_batch   *b = wc_batch_new(),
			   *other = wc_batch_new();
	wc_batch_mark m0,
				m1,
				m2;
	wc_err		err;
	const wc_seq_range *dead;
	const uint8_t *lo,
			   *hi;
	size_t		lo_len,
				hi_len,
				len0,
				len;
	uint8_t    *bytes0;
	uint64_t	s0,
				seq;
	int			ndead;

	wc_err_clear(&err);
	put_row(b, "m");
	put_row(b, "n");
	wc_batch_get_mark(b, &m0);
	{
		const uint8_t *e = wc_batch_entries(b, &len0);

		bytes0 = malloc(len0);
		memcpy(bytes0, e, len0);
	}

	/* entries after the mark, never indexed: the rewind forgets them, no dead range */
	put_row(b, "a");
	put_row(b, "z");
	CHECK_OK(wc_batch_truncate(b, &err), &err);
	CHECK(wc_batch_truncate_seq(b) != 0 && !wc_batch_row_bounds(b, &lo, &lo_len, &hi, &hi_len),
		  "truncate after the mark");
	s0 = wc_batch_pending_seq_now();
	wc_batch_rewind(b, &m0);
	CHECK(wc_batch_count(b) == 2 && wc_batch_truncate_seq(b) == 0, "rewound: count, truncate");
	{
		const uint8_t *e = wc_batch_entries(b, &len);

		CHECK(len == len0 && memcmp(e, bytes0, len0) == 0, "rewound: bytes");
	}
	CHECK(wc_batch_row_bounds(b, &lo, &lo_len, &hi, &hi_len) &&
		  lo_len == 1 && lo[0] == 'm' && hi_len == 1 && hi[0] == 'n', "rewound: row bounds");
	CHECK(wc_batch_dead(b, &dead) == 0, "nothing indexed: nothing dead");
	put_row(b, "o");
	CHECK(wc_batch_seq_at(b, 2) == s0 + 1, "seqs are not given out again");
	CHECK(overlay_count_row(b, "a", NULL) == 0 && overlay_count_row(b, "o", NULL) == 1 &&
		  overlay_count_row(b, "m", NULL) == 1, "overlay of the live entries");

	/* indexed after the mark: the overlay keeps them, their seqs are dead */
	wc_batch_get_mark(b, &m1);
	put_row(b, "d1");
	put_row(b, "d2");
	CHECK(overlay_count_row(b, "d2", &seq) == 1, "d2 indexed");
	put_row(b, "d3");			/* not indexed */
	wc_batch_rewind(b, &m1);
	CHECK(wc_batch_dead(b, &dead) == 1 && dead[0].lo == seq - 1 && dead[0].hi == seq + 1,
		  "one dead range: the indexed entries and d3, which follows them");
	CHECK(overlay_count_row(b, "d1", NULL) == 0 && overlay_count_row(b, "d2", NULL) == 0,
		  "d1, d2 dead");
	CHECK(overlay_count_row(b, "d3", NULL) == 0, "d3 never indexed");
	/* a second rollback right after: the ranges touch and join */
	put_row(b, "e1");
	CHECK(overlay_count_row(b, "e1", &seq) == 1, "e1 indexed");
	wc_batch_rewind(b, &m1);
	CHECK(wc_batch_dead(b, &dead) == 1 && dead[0].hi == seq, "joined dead range %d",
		  wc_batch_dead(b, &dead));
	CHECK(seq == dead[0].lo + 3, "d1 d2 d3 e1 in the range (d3's seq too, never seen)");
	/* a live entry between: a range of its own */
	put_row(b, "p");
	wc_batch_get_mark(b, &m2);
	put_row(b, "f1");
	CHECK(overlay_count_row(b, "f1", NULL) == 1, "f1 indexed");
	wc_batch_rewind(b, &m2);
	CHECK(wc_batch_dead(b, &dead) == 2 && dead[1].lo > dead[0].hi + 1, "second range");
	CHECK(overlay_count_row(b, "p", NULL) == 1 && wc_batch_count(b) == 4, "p lives");
	/* the entries of another batch between: two runs of seqs, and the other
	 * batch's seq in neither (g1's run joins f1's range) */
	wc_batch_get_mark(b, &m2);
	put_row(b, "g1");
	put_row(other, "x");
	put_row(b, "g2");
	CHECK(overlay_count_row(b, "g2", NULL) == 1, "g2 indexed");
	wc_batch_rewind(b, &m2);
	CHECK(wc_batch_dead(b, &dead) == 3 && dead[1].hi + 2 == dead[2].lo &&
		  dead[1].hi + 1 == wc_batch_seq_at(other, 0), "runs around the other batch's seq");
	/* too many ranges: the overlays are dropped and rebuilt from the live entries;
	 * each rollback here adds two (the first run joins the last range) */
	ndead = wc_batch_dead(b, &dead);
	for (int i = 0; i < 3; i++)
	{
		wc_batch_get_mark(b, &m2);
		put_row(b, "k1");
		put_row(other, "y");
		put_row(b, "k2");
		put_row(other, "y");
		put_row(b, "k3");
		CHECK(overlay_count_row(b, "k3", NULL) == 1, "k3 indexed");
		wc_batch_rewind(b, &m2);
	}
	CHECK(wc_batch_dead(b, &dead) == ndead + 6, "%d ranges after %d", wc_batch_dead(b, &dead), ndead);
	wc_batch_get_mark(b, &m2);
	for (int i = 0; i < 16; i++)
	{
		put_row(b, "k");
		put_row(other, "y");
	}
	CHECK(overlay_count_row(b, "k", NULL) == 16, "k indexed");
	wc_batch_rewind(b, &m2);
	CHECK(wc_batch_dead(b, &dead) == 0, "overlays dropped");
	CHECK(overlay_count_row(b, "g1", NULL) == 0 && overlay_count_row(b, "k", NULL) == 0 &&
		  overlay_count_row(b, "d1", NULL) == 0 && overlay_count_row(b, "p", NULL) == 1 &&
		  overlay_count_row(b, "m", NULL) == 1, "rebuilt overlay: only live entries");
	/* rollbacks one after the other with live writes between: a range each */
	for (int i = 0; i < 40; i++)
	{
		wc_batch_mark m;
		char		r[8];

		snprintf(r, sizeof(r), "h%d", i);
		put_row(b, "live");
		wc_batch_get_mark(b, &m);
		put_row(b, r);
		CHECK(overlay_count_row(b, r, NULL) == 1, "h indexed");
		wc_batch_rewind(b, &m);
		CHECK(wc_batch_dead(b, &dead) <= 16, "at most 16 ranges");
	}
	CHECK(overlay_count_row(b, "live", NULL) == 40 && wc_batch_count(b) == 44, "live entries");
	CHECK(wc_batch_dead(b, &dead) == 40 % 17, "dropped on the way: %d ranges",
		  wc_batch_dead(b, &dead));
	/* rewinding to where it is, or past its end, changes nothing */
	wc_batch_get_mark(b, &m2);
	wc_batch_rewind(b, &m2);
	CHECK(wc_batch_count(b) == 44, "rewind to now");
	free(bytes0);
	wc_batch_free(b);
	wc_batch_free(other);
}

/* Decodes payload[0..len-1]; returns entries read, or -1 if rejected. */
static int
decode_all(const uint8_t *payload, size_t len, int *bad_reject)
{
	wc_batch_reader r;
	wc_batch_entry e;
	wc_err		err;
	int			n = 0,
				rc;

	wc_err_clear(&err);
	if ((rc = wc_batch_reader_init(&r, payload, len, &err)) != WC_OK)
	{
		if (rc != WC_CORRUPT || err.code != WC_CORRUPT || err.msg[0] == '\0')
			(*bad_reject)++;
		return -1;
	}
	while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
	{
		const wc_cell *c = &e.cell;

		/* what is accepted points inside the payload and keeps the invariants */
		if (e.fam < payload || e.fam + e.fam_len > payload + len ||
			c->row < payload || c->row + c->row_len > payload + len ||
			c->qual < payload || c->qual + c->qual_len > payload + len ||
			(c->val_len > 0 && (c->val < payload || c->val + c->val_len > payload + len)) ||
			e.type < WC_TYPE_PUT || e.type > WC_TYPE_DEL_ALL || e.fam_len > WC_MAX_FAMILY ||
			(e.type != WC_TYPE_DEL_ALL && (c->row_len == 0 || e.fam_len == 0)))
			(*bad_reject)++;
		n++;
	}
	if (rc != 0)
	{
		if (rc != WC_CORRUPT || err.code != WC_CORRUPT || err.msg[0] == '\0')
			(*bad_reject)++;
		return -1;
	}
	return n;
}

static void
test_damage(void)
{
	wc_batch   *b = wc_batch_new();
	wc_err		err;
	added		a;
	uint8_t    *payload;
	size_t		len;
	int			bad = 0,
				accepted = 0,
				rejected = 0;

	wc_err_clear(&err);
	for (int i = 0; i < 12; i++)
		CHECK_OK(add_random(b, &a, &err), &err);
	CHECK_OK(wc_batch_truncate(b, &err), &err);
	CHECK_OK(wc_batch_put(b, "cf", 2, "last", 4, "", 0, 0, "", 0, &err), &err);
	payload = make_payload(&b, 1, 100, 5, &len);
	CHECK(decode_all(payload, len, &bad) == 14, "intact payload");

	/* every truncation is rejected */
	for (size_t cut = 0; cut < len; cut++)
	{
		uint8_t    *p = malloc(cut ? cut : 1);

		memcpy(p, payload, cut);
		if (decode_all(p, cut, &bad) >= 0)
			accepted++;
		free(p);
	}
	CHECK(accepted == 0 && bad == 0, "%d truncations accepted, %d bad rejections", accepted, bad);

	/* byte flips: rejected, or decoded to sane entries, never a crash */
	accepted = 0;
	for (size_t pos = 0; pos < len; pos++)
		for (int v = 0; v < 8; v++)
		{
			uint8_t    *p = malloc(len);
			uint8_t		x = v < 7 ? (uint8_t) (1u << v) : 0xff;

			memcpy(p, payload, len);
			p[pos] ^= x;
			if (decode_all(p, len, &bad) >= 0)
				accepted++;
			else
				rejected++;
			free(p);
		}
	CHECK(bad == 0, "%d bad decodes of flipped payloads", bad);
	CHECK(rejected > 0 && accepted > 0, "flips: %d rejected, %d accepted", rejected, accepted);

	/* random garbage */
	bad = 0;
	for (int k = 0; k < 20000; k++)
	{
		size_t		n = 17 + test_rand(&rnd) % 64;
		uint8_t    *p = malloc(n);

		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t) test_rand(&rnd);
		/* a plausible header: small count, low seq base */
		wc_put_fixed64(p, 1);
		p[16] = (uint8_t) (test_rand(&rnd) % 4);
		(void) decode_all(p, n, &bad);
		free(p);
	}
	CHECK(bad == 0, "%d bad decodes of garbage", bad);

	/* specific damage, specific messages */
	{
		uint8_t    *p = malloc(len + 1);
		wc_batch_reader r;
		wc_batch_entry e;
		int			rc;

		/* trailing byte */
		memcpy(p, payload, len);
		p[len] = 0;
		wc_err_clear(&err);
		CHECK_OK(wc_batch_reader_init(&r, p, len + 1, &err), &err);
		while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
			;
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "1 trailing bytes after its 14 entries"), "%s", err.msg);

		/* count one higher than the entries */
		memcpy(p, payload, len);
		p[16]++;
		wc_err_clear(&err);
		CHECK_OK(wc_batch_reader_init(&r, p, len, &err), &err);
		while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
			;
		CHECK(rc == WC_CORRUPT && strstr(err.msg, "ends after 14 of its 15 entries"), "%s", err.msg);

		/* unknown type in the first entry */
		memcpy(p, payload, len);
		p[17] = 9;
		wc_err_clear(&err);
		CHECK_OK(wc_batch_reader_init(&r, p, len, &err), &err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == WC_CORRUPT && strcmp(err.msg, "batch record entry 1 of 14: unknown entry type 9") == 0,
			  "%s", err.msg);

		/* a family length over the limit */
		memcpy(p, payload, len);
		p[18] = 0x80;
		p[19] = 0x02;
		wc_err_clear(&err);
		CHECK_OK(wc_batch_reader_init(&r, p, len, &err), &err);
		rc = wc_batch_reader_next(&r, &e, &err);
		CHECK(rc == WC_CORRUPT &&
			  strcmp(err.msg, "batch record entry 1 of 14: family length 256 exceeds the limit of 255 bytes") == 0,
			  "%s", err.msg);

		/* a value running past the end: the last entry is a PUT with val_len 0 */
		memcpy(p, payload, len);
		p[len - 1] = 5;
		wc_err_clear(&err);
		CHECK_OK(wc_batch_reader_init(&r, p, len, &err), &err);
		while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
			;
		CHECK(rc == WC_CORRUPT &&
			  strcmp(err.msg, "batch record entry 14 of 14: value of 5 bytes runs past the end of the payload (0 bytes left)") == 0,
			  "%s", err.msg);

		/* a count the bytes cannot hold */
		memcpy(p, payload, len);
		p[16] = 0x7f;
		wc_err_clear(&err);
		CHECK(wc_batch_reader_init(&r, p, len, &err) == WC_CORRUPT &&
			  strstr(err.msg, "declares 127 entries"), "%s", err.msg);

		/* seq base in the pending range */
		memcpy(p, payload, len);
		wc_put_fixed64(p, WC_SEQ_PENDING_BASE - 5);
		wc_err_clear(&err);
		CHECK(wc_batch_reader_init(&r, p, len, &err) == WC_CORRUPT &&
			  strstr(err.msg, "pending range"), "%s", err.msg);

		/* short header */
		wc_err_clear(&err);
		CHECK(wc_batch_reader_init(&r, p, 16, &err) == WC_CORRUPT &&
			  strstr(err.msg, "16 bytes is shorter"), "%s", err.msg);
		free(p);
	}
	free(payload);
	wc_batch_free(b);
}

/* Ingest record payloads (ingest.h, FORMAT.md "Ingest records"). */
static void
test_ingest_payload(void)
{
	wc_ingest_file files[3] = {{12, "anchor"}, {13, "contents"}, {14, "people"}};
	wc_ingest_record r = {1000, 733, 50, 3, files},
				got;
	uint8_t    *buf;
	size_t		len;
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_ingest_encode(&r, &buf, &len, &err), &err);
	CHECK(wc_ingest_is_record(buf, len), "flagged");
	CHECK(len == 8 + 8 + 1 + 1 + 3 * 9 + 6 + 8 + 6, "%zu bytes", len);
	CHECK_OK(wc_ingest_decode(buf, len, &got, &err), &err);
	CHECK(got.seq_base == 1000 && got.tag == 733 && got.count == 50 && got.nfiles == 3 &&
		  got.files[1].number == 13 && strcmp(got.files[2].family, "people") == 0, "round trip");
	wc_ingest_record_clear(&got);
	{
		wc_batch_reader br;

		/* a batch reader refuses it: the flag puts seq_base above the pending range */
		CHECK(wc_batch_reader_init(&br, buf, len, &err) == WC_CORRUPT, "batch reader: %s", err.msg);
	}
	/* every truncation is refused, with nothing left allocated */
	for (size_t cut = 0; cut < len; cut++)
	{
		wc_err_clear(&err);
		CHECK(wc_ingest_decode(buf, cut, &got, &err) == WC_CORRUPT && got.files == NULL &&
			  err.msg[0] != '\0', "cut at %zu: %s", cut, err.msg);
	}
	free(buf);

	/* a repeated file number or family, and sequence ranges out of bounds */
	{
		struct
		{
			uint64_t	seq_base;
			uint32_t	count;
			uint64_t	n1;
			const char *f1;
		}			bad[] = {
			{1000, 50, 12, "other"},		/* number of file 0 again */
			{1000, 50, 99, "anchor"},		/* family of file 0 again */
			{0, 50, 13, "contents"},		/* seq_base 0 */
			{WC_SEQ_PENDING_BASE - 10, 50, 13, "contents"},	/* reaches the pending range */
			{1000, 1, 13, "contents"},		/* two files for one entry */
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			wc_ingest_file f2[2] = {{12, "anchor"}, {bad[i].n1, ""}};
			wc_ingest_record b2 = {bad[i].seq_base, 1, bad[i].count, 2, f2};

			snprintf(f2[1].family, sizeof(f2[1].family), "%s", bad[i].f1);
			wc_err_clear(&err);
			CHECK_OK(wc_ingest_encode(&b2, &buf, &len, &err), &err);
			CHECK(wc_ingest_decode(buf, len, &got, &err) == WC_CORRUPT && got.files == NULL,
				  "bad record %zu refused: %s", i, err.msg);
			free(buf);
		}
	}
}

/*
 * A batch past WC_BIG_BUF_MIN grows in a mapping of its own (mremap, no copy): its
 * entries and their pending seqs read back whole across the growth, a clear gives the
 * big buffers back, and the batch is used again, small then big, then bigger (~110
 * MB: its pages made resident ahead of it by helper threads, batch.c's
 * populate_ahead, across several growths).  Freed while one may still run.
 */
static void
test_big(void)
{
	wc_batch   *b = wc_batch_new();
	char		row[32],
				val[200];
	wc_err		err;

	for (int round = 0; round < 4; round++)
	{
		/* ~26 MB of entries; 10; ~110 MB */
		int			n = round == 1 ? 10 : round == 3 ? 500000 : 120000;
		wc_batch_reader r;
		wc_batch_entry e;
		int			got = 0,
					bad = 0,
					rc;

		for (int i = 0; i < n; i++)
		{
			snprintf(row, sizeof(row), "row%09d", i);
			memset(val, 'a' + i % 26, sizeof(val));
			wc_err_clear(&err);
			if (wc_batch_put(b, "f", 1, row, strlen(row), "q", 1, i, val, sizeof(val), &err) != WC_OK)
			{
				CHECK(false, "put %d: %s", i, err.msg);
				break;
			}
		}
		CHECK(wc_batch_count(b) == (uint64_t) n, "%d entries", n);
		wc_batch_reader_of(&r, b, 1);
		while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
		{
			snprintf(row, sizeof(row), "row%09d", got);
			if (e.cell.row_len != strlen(row) || memcmp(e.cell.row, row, e.cell.row_len) != 0 ||
				e.cell.ts != got || e.cell.val_len != sizeof(val) ||
				e.cell.val[0] != 'a' + got % 26 || e.cell.val[sizeof(val) - 1] != 'a' + got % 26 ||
				e.cell.seq != (uint64_t) got + 1)
				bad++;
			got++;
		}
		CHECK(rc == 0 && got == n && bad == 0, "round %d: read %d of %d, %d bad (rc %d %s)", round,
			  got, n, bad, rc, err.msg);
		CHECK(wc_batch_bytes(b) > (round == 1 ? 0 : WC_BIG_BUF_MIN), "round %d: %zu bytes", round,
			  wc_batch_bytes(b));
		wc_batch_clear(b);
		CHECK(wc_batch_count(b) == 0 && wc_batch_bytes(b) == 0, "cleared");
	}
	for (int i = 0; i < 200000; i++)
	{
		snprintf(row, sizeof(row), "row%09d", i);
		wc_err_clear(&err);
		if (wc_batch_put(b, "f", 1, row, strlen(row), "q", 1, i, val, sizeof(val), &err) != WC_OK)
		{
			CHECK(false, "put %d: %s", i, err.msg);
			break;
		}
	}
	wc_batch_free(b);
}

int
main(void)
{
	t_name = "test_batch";
	test_roundtrip();
	test_limits();
	test_overlay();
	test_append();
	test_rewind();
	test_damage();
	test_ingest_payload();
	test_big();
	TEST_DONE();
}
