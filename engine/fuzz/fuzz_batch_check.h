/*
 * fuzz_batch_check.h -- decoding a batch payload (the payload of a log record)
 * the way a reader does, for fuzz_batch.c and fuzz_log.c.
 *
 * When the reader accepts a whole payload, the entries are also added again with
 * the public writer (wc_batch_put, wc_batch_delete_*, wc_batch_truncate), which
 * must accept every one of them (the reader and the writer enforce the same
 * rules, FORMAT-batch.md), and the payload built from that batch the way db.c
 * builds it (wc_batch_encode_header + wc_batch_entries) must decode to the same
 * entries.
 */
#ifndef WC_FUZZ_BATCH_CHECK_H
#define WC_FUZZ_BATCH_CHECK_H

#include "batch.h"
#include "coding.h"
#include "fuzz_common.h"

static bool
entries_equal(const wc_batch_entry *a, const wc_batch_entry *b)
{
	const wc_cell *x = &a->cell;
	const wc_cell *y = &b->cell;

	if (a->type != b->type || a->fam_len != b->fam_len ||
		x->row_len != y->row_len || x->qual_len != y->qual_len ||
		x->type != y->type || x->seq != y->seq)
		return false;
	if (a->type != WC_TYPE_DEL_ALL && x->ts != y->ts)
		return false;
	if ((a->fam_len && memcmp(a->fam, b->fam, a->fam_len) != 0) ||
		(x->row_len && memcmp(x->row, y->row, x->row_len) != 0) ||
		(x->qual_len && memcmp(x->qual, y->qual, x->qual_len) != 0))
		return false;
	/* a bounded DEL_FAMILY or DEL_COLUMN carries its bound as the value */
	if ((a->type == WC_TYPE_PUT || a->type == WC_TYPE_DEL_FAMILY ||
		 a->type == WC_TYPE_DEL_COLUMN) &&
		(x->val_len != y->val_len || (x->val_len && memcmp(x->val, y->val, x->val_len) != 0)))
		return false;
	return true;
}

/* Adds e to b with the public writer. */
static int
add_again(wc_batch *b, const wc_batch_entry *e, wc_err *err)
{
	const wc_cell *c = &e->cell;

	switch (e->type)
	{
		case WC_TYPE_PUT:
			return wc_batch_put(b, e->fam, e->fam_len, c->row, c->row_len, c->qual,
								c->qual_len, c->ts, c->val, c->val_len, err);
		case WC_TYPE_DEL_VERSION:
			return wc_batch_delete_version(b, e->fam, e->fam_len, c->row, c->row_len,
										   c->qual, c->qual_len, c->ts, err);
		case WC_TYPE_DEL_COLUMN:
			if (c->val_len == WC_COLUMN_BOUND_LEN)
				return wc_batch_delete_column_upto(b, e->fam, e->fam_len, c->row, c->row_len,
												   c->qual, c->qual_len,
												   wc_get_fixed64(c->val), err);
			return wc_batch_delete_column(b, e->fam, e->fam_len, c->row, c->row_len,
										  c->qual, c->qual_len, err);
		case WC_TYPE_DEL_FAMILY:
			if (c->val_len == WC_FAMILY_BOUND_LEN)
				return wc_batch_delete_family_upto(b, e->fam, e->fam_len, c->row, c->row_len,
												   wc_get_fixed64(c->val), err);
			return wc_batch_delete_family(b, e->fam, e->fam_len, c->row, c->row_len, err);
		case WC_TYPE_DEL_ALL:
			return wc_batch_truncate(b, err);
	}
	FUZZ_ASSERT(false, "the reader returned an entry of type %u", e->type);
	return WC_INVALID;
}

/* Decodes payload[0..len-1]; returns the final status (0 = the whole payload
 * is valid, or a negative code). */
static int
fuzz_check_batch(const uint8_t *payload, size_t len)
{
	wc_batch_reader r;
	wc_batch_entry e;
	wc_batch   *b = NULL;
	wc_err		err;
	uint32_t	n = 0;
	int			rc;

	wc_err_clear(&err);
	rc = wc_batch_reader_init(&r, payload, len, &err);
	fuzz_check_err(rc, &err, "wc_batch_reader_init");
	if (rc != WC_OK)
		return rc;
	b = wc_batch_new();
	FUZZ_ASSERT(b != NULL, "out of memory");
	while ((rc = wc_batch_reader_next(&r, &e, &err)) == 1)
	{
		wc_err		werr;
		int			wrc;

		FUZZ_ASSERT(e.cell.seq == r.seq_base + n, "entry %u has seq %llu, base %llu",
					n, (unsigned long long) e.cell.seq, (unsigned long long) r.seq_base);
		FUZZ_ASSERT(e.cell.row + e.cell.row_len <= payload + len &&
					e.cell.qual + e.cell.qual_len <= payload + len &&
					(e.cell.val_len == 0 || e.cell.val + e.cell.val_len <= payload + len) &&
					(e.fam_len == 0 || e.fam + e.fam_len <= payload + len),
					"entry %u points outside the payload", n);
		wc_err_clear(&werr);
		wrc = add_again(b, &e, &werr);
		FUZZ_ASSERT(wrc == WC_OK, "the writer rejects entry %u (type %u) that the reader accepted: %s",
					n, e.type, werr.msg);
		n++;
	}
	fuzz_check_err(rc, &err, "wc_batch_reader_next");
	if (rc == 0)
	{
		wc_batch_reader r1,
					r2;
		wc_batch_entry e1,
					e2;
		size_t		elen;
		const uint8_t *entries = wc_batch_entries(b, &elen);
		uint8_t    *again;
		size_t		hdr;
		int			rc1,
					rc2;

		FUZZ_ASSERT(n == r.count, "read %u entries of %u", n, r.count);
		FUZZ_ASSERT(wc_batch_count(b) == n, "the batch holds %llu entries, not %u",
					(unsigned long long) wc_batch_count(b), n);
		again = malloc(WC_BATCH_HEADER_MAX + elen);
		FUZZ_ASSERT(again != NULL, "out of memory");
		hdr = wc_batch_encode_header(again, r.seq_base, r.tag, n);
		if (elen)
			memcpy(again + hdr, entries, elen);
		wc_err_clear(&err);
		FUZZ_ASSERT(wc_batch_reader_init(&r2, again, hdr + elen, &err) == WC_OK,
					"the re-encoded payload is rejected: %s", err.msg);
		FUZZ_ASSERT(wc_batch_reader_init(&r1, payload, len, &err) == WC_OK, "init twice");
		FUZZ_ASSERT(r1.seq_base == r2.seq_base && r1.tag == r2.tag && r1.count == r2.count,
					"re-encoded header differs");
		for (;;)
		{
			rc1 = wc_batch_reader_next(&r1, &e1, &err);
			rc2 = wc_batch_reader_next(&r2, &e2, &err);
			FUZZ_ASSERT(rc1 == rc2, "re-encoded payload decodes differently (%d vs %d): %s",
						rc1, rc2, err.msg);
			if (rc1 != 1)
				break;
			FUZZ_ASSERT(entries_equal(&e1, &e2), "entry %u differs after re-encoding",
						r1.index - 1);
		}
		FUZZ_ASSERT(rc1 == 0, "re-decoding fails: %s", err.msg);
		free(again);
	}
	wc_batch_free(b);
	return rc;
}

#endif
