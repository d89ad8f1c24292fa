/*
 * batch.c -- write batches: the encoded entries of a log record payload, and
 * the per-family overlay memtables that let a writer read its own writes.
 *
 * Payload layout (batch.h, FORMAT.md "Batch records"):
 *   payload := seq_base: fixed64 | tag: fixed64 | count: varint32 | entry{count}
 *   entry   := type: u8 | fam_len: varint32 | fam | row_len: varint32 | row
 *              | qual_len: varint32 | qual | ts: fixed64 (two's complement)
 *              | val_len: varint32 | val          (val_len and val only for PUT,
 *                                                  DEL_FAMILY_UPTO and
 *                                                  DEL_COLUMN_UPTO)
 * A DEL_FAMILY_UPTO entry (a bounded DEL_FAMILY, cell.h) has an 8-byte value,
 * its bound; decoded, it is a DEL_FAMILY with that value.  A DEL_COLUMN_UPTO
 * entry likewise decodes as a DEL_COLUMN with its bound as the value.
 *
 * A batch holds only the entries, in insertion order, so db.c can write the
 * entries of several batches after one header as they are.  Each entry also
 * gets a pending sequence number from a process-wide counter, kept in a
 * parallel array: entries of several batches (a transaction and its
 * subtransactions) then overlay in the order they were added.  The overlays
 * are built on the first wc_batch_overlay and afterwards only index what was
 * added since the last call, so a statement loop that writes and reads costs
 * O(new entries) per read, and a batch that is only written never builds them.
 *
 * The decoder checks every length against the end of the buffer and every
 * field against the limits the encoder enforces: a payload comes from a log
 * file, which may be damaged, and db.c copies family names into fixed buffers.
 */
#include "batch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "coding.h"
#include "env.h"
#include "err.h"

/* The smallest entry: a DEL_ALL (type, three empty lengths, ts). */
#define MIN_ENTRY_SIZE		(1 + 1 + 1 + 1 + 8)

/* count is a varint32 in the payload header */
#define MAX_BATCH_ENTRIES	UINT32_MAX

/* A buffer bigger than this is freed by wc_batch_clear rather than kept for reuse. */
#define KEEP_BUFFER_MAX		(1024 * 1024)

/* How far ahead of a big batch's end its fresh pages are made resident. */
#define POPULATE_AHEAD		((size_t) 32 << 20)

/*
 * Dead ranges a batch keeps before a rewind drops its overlays (to be rebuilt
 * from the live entries on the next wc_batch_overlay): a scan's exclusions
 * take them all, so they stay few.
 */
#define WC_BATCH_DEAD_MAX	16

typedef struct batch_fam
{
	wc_memtable *mt;
	uint32_t	len;
	uint8_t		name[WC_MAX_FAMILY];
} batch_fam;

struct wc_batch
{
	uint8_t    *buf;			/* encoded entries (wc_big_buf_grow) */
	size_t		len;
	size_t		cap;
	bool		buf_mapped;

	/*
	 * A mapped buf's fresh pages are made resident ahead of len by a helper
	 * thread (populate_ahead): [0, populated) is, or is being.  The thread
	 * reads pop_addr and pop_len and sets pop_done; buf is neither moved nor
	 * unmapped while it runs.
	 */
	size_t		populated;
	wc_helper	pop;
	bool		pop_done;
	uint8_t    *pop_addr;
	size_t		pop_len;

	uint64_t   *seqs;			/* pending seq of entry i (wc_big_buf_grow) */
	uint64_t	count;
	size_t		seqs_cap;		/* in entries */
	bool		seqs_mapped;
	wc_batch_summary sum;		/* truncate point and row bounds (wc.h) */

	/* overlays: they hold entries [0, indexed_count), bytes [0, indexed_off) */
	size_t		indexed_off;
	uint64_t	indexed_count;
	batch_fam  *fams;
	int			nfams;
	size_t		fams_cap;

	/* seqs of entries the overlays hold but the batch no longer has (rewound) */
	wc_seq_range dead[WC_BATCH_DEAD_MAX];
	int			ndead;
};

/* The next pending seq to give out; process-wide. */
static uint64_t pending_next = WC_SEQ_PENDING_BASE;

static const uint8_t empty_bytes[1];

/* Takes n consecutive pending seqs and returns the first.  Atomic because a
 * multithreaded program (the benchmark) may fill batches in several threads. */
static uint64_t
take_pending_seqs(uint64_t n)
{
	return __atomic_fetch_add(&pending_next, n, __ATOMIC_RELAXED);
}

uint64_t
wc_batch_pending_seq_now(void)
{
	return __atomic_load_n(&pending_next, __ATOMIC_RELAXED) - 1;
}

static const char *
type_name(uint8_t type)
{
	switch (type)
	{
		case WC_TYPE_PUT:
			return "PUT";
		case WC_TYPE_DEL_VERSION:
			return "DEL_VERSION";
		case WC_TYPE_DEL_COLUMN:
			return "DEL_COLUMN";
		case WC_TYPE_DEL_FAMILY:
			return "DEL_FAMILY";
		case WC_TYPE_DEL_ALL:
			return "DEL_ALL";
		case WC_TYPE_DEL_FAMILY_UPTO:
			return "DEL_FAMILY_UPTO";
		case WC_TYPE_DEL_COLUMN_UPTO:
			return "DEL_COLUMN_UPTO";
	}
	return "unknown";
}

/* ---------------------------------------------------------------- building */

/*
 * A big batch's pages made resident ahead of its writer.  On a virtual machine
 * the first touch of a fresh page is the cost of a bulk load's statement (the
 * kernel zeroing pages, clear_page_erms: 23% of a COPY's samples); a helper
 * thread populates the next POPULATE_AHEAD bytes of the mapping (without
 * writing to them: MADV_POPULATE_WRITE) on the second core while the writer
 * fills the pages before them.  At most one such thread runs per batch, and
 * it is joined before the mapping moves or goes.
 */
static void *
populate_run(void *arg)
{
	wc_batch   *b = arg;

	wc_populate_write(b->pop_addr, b->pop_len);
	__atomic_store_n(&b->pop_done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void
populate_ahead(wc_batch *b)
{
	size_t		end;

	if (!b->buf_mapped || b->populated >= b->cap ||
		b->populated > b->len + POPULATE_AHEAD / 2)
		return;
	if (b->pop.running)
	{
		/* still at it: the writer faults in its own pages meanwhile */
		if (!__atomic_load_n(&b->pop_done, __ATOMIC_ACQUIRE))
			return;
		wc_helper_join(&b->pop);
	}
	if (b->populated < b->len)
		b->populated = b->len;
	end = b->cap - b->populated > POPULATE_AHEAD ? b->populated + POPULATE_AHEAD : b->cap;
	b->pop_addr = b->buf + b->populated;
	b->pop_len = end - b->populated;
	b->pop_done = false;
	wc_helper_start(&b->pop, populate_run, b);
	b->populated = end;
}

wc_batch *
wc_batch_new(void)
{
	return calloc(1, sizeof(wc_batch));
}

static void
drop_overlays(wc_batch *b)
{
	for (int i = 0; i < b->nfams; i++)
		wc_memtable_unref(b->fams[i].mt);
	free(b->fams);
	b->fams = NULL;
	b->nfams = 0;
	b->fams_cap = 0;
	b->indexed_off = 0;
	b->indexed_count = 0;
	b->ndead = 0;				/* no overlay holds a dead entry now */
}

void
wc_batch_free(wc_batch *b)
{
	if (b == NULL)
		return;
	wc_helper_join(&b->pop);
	drop_overlays(b);
	wc_big_buf_free(b->buf, b->cap, b->buf_mapped);
	wc_big_buf_free(b->seqs, b->seqs_cap * sizeof(*b->seqs), b->seqs_mapped);
	free(b);
}

/* Frees buffer p of *cap elements of elem bytes (wc_big_buf_grow's) if it takes
 * more than KEEP_BUFFER_MAX bytes (returns NULL, *cap 0); else returns p. */
static void *
free_if_big(void *p, size_t *cap, bool *mapped, size_t elem)
{
	if (*cap <= KEEP_BUFFER_MAX / elem)
		return p;
	wc_big_buf_free(p, *cap * elem, *mapped);
	*cap = 0;
	*mapped = false;
	return NULL;
}

void
wc_batch_clear(wc_batch *b)
{
	if (b == NULL)
		return;
	drop_overlays(b);
	/* a batch is reused per transaction: keep small buffers, return big ones */
	wc_helper_join(&b->pop);
	b->buf = free_if_big(b->buf, &b->cap, &b->buf_mapped, 1);
	if (b->buf == NULL)
		b->populated = 0;
	b->seqs = free_if_big(b->seqs, &b->seqs_cap, &b->seqs_mapped, sizeof(*b->seqs));
	b->len = 0;
	b->count = 0;
	b->sum.truncate_seq = 0;
	b->sum.truncate_index = 0;
	b->sum.rows_any = false;
	b->sum.rows_all = false;
}

/* Widens b's row bounds to the row at buf + off (an entry's, already in buf). */
static void
note_row(wc_batch *b, size_t off, uint32_t len)
{
	const uint8_t *r = b->buf + off;

	if (!b->sum.rows_any)
	{
		b->sum.rmin_off = b->sum.rmax_off = off;
		b->sum.rmin_len = b->sum.rmax_len = len;
		b->sum.rows_any = true;
	}
	else if (wc_row_cmp(r, len, b->buf + b->sum.rmin_off, b->sum.rmin_len) < 0)
	{
		b->sum.rmin_off = off;
		b->sum.rmin_len = len;
	}
	else if (wc_row_cmp(r, len, b->buf + b->sum.rmax_off, b->sum.rmax_len) > 0)
	{
		b->sum.rmax_off = off;
		b->sum.rmax_len = len;
	}
}

bool
wc_batch_row_bounds(const wc_batch *b, const uint8_t **min, size_t *min_len,
					const uint8_t **max, size_t *max_len)
{
	if (b == NULL || !b->sum.rows_any || b->sum.rows_all)
		return false;
	*min = b->buf + b->sum.rmin_off;
	*min_len = b->sum.rmin_len;
	*max = b->buf + b->sum.rmax_off;
	*max_len = b->sum.rmax_len;
	return true;
}

uint64_t
wc_batch_count(const wc_batch *b)
{
	return b != NULL ? b->count : 0;
}

size_t
wc_batch_bytes(const wc_batch *b)
{
	return b != NULL ? b->len : 0;
}

const uint8_t *
wc_batch_entries(const wc_batch *b, size_t *len)
{
	*len = b != NULL ? b->len : 0;
	/* never NULL: callers memcpy from it, even zero bytes */
	return b != NULL && b->buf != NULL ? b->buf : empty_bytes;
}

uint64_t
wc_batch_truncate_seq(const wc_batch *b)
{
	return b != NULL ? b->sum.truncate_seq : 0;
}

/* Room for more bytes and nentries more entries, or WC_NOMEM; changes nothing else. */
static int
reserve(wc_batch *b, size_t more, uint64_t nentries, wc_err *err)
{
	if (more > SIZE_MAX - b->len)
		return wc_err_set(err, WC_NOMEM, "a write batch of %zu bytes cannot grow by %zu bytes",
						  b->len, more);
	if (b->len + more > b->cap)
	{
		wc_helper_join(&b->pop);
		if (!wc_big_buf_grow(&b->buf, &b->cap, &b->buf_mapped, b->len + more))
			return wc_err_set(err, WC_NOMEM, "out of memory for a write batch of %zu bytes",
							  b->len + more);
	}
	populate_ahead(b);
	if (b->count + nentries > b->seqs_cap)
	{
		size_t		bytes = b->seqs_cap * sizeof(*b->seqs);

		if (b->count + nentries > SIZE_MAX / sizeof(*b->seqs) ||
			!wc_big_buf_grow(&b->seqs, &bytes, &b->seqs_mapped,
							 (size_t) (b->count + nentries) * sizeof(*b->seqs)))
			return wc_err_set(err, WC_NOMEM, "out of memory for a write batch of %llu entries",
							  (unsigned long long) (b->count + nentries));
		b->seqs_cap = bytes / sizeof(*b->seqs);
	}
	return WC_OK;
}

static int
check_bytes(const void *p, size_t len, const char *what, wc_err *err)
{
	if (p == NULL && len > 0)
		return wc_err_set(err, WC_INVALID, "%s of %zu bytes is a null pointer", what, len);
	return WC_OK;
}

static int
check_limit(size_t len, size_t limit, const char *what, wc_err *err)
{
	if (len > limit)
		return wc_err_set(err, WC_INVALID, "%s of %zu bytes is longer than the limit of %zu bytes",
						  what, len, limit);
	return WC_OK;
}

static int
check_family(const void *fam, size_t fam_len, wc_err *err)
{
	int			rc;

	if (fam == NULL || fam_len == 0)
		return wc_err_set(err, WC_INVALID, "a family name must not be empty");
	if ((rc = check_limit(fam_len, WC_MAX_FAMILY, "family name", err)) != WC_OK)
		return rc;
	/* family names are C strings everywhere else (wc_family_opts, MANIFEST) */
	if (memchr(fam, 0, fam_len) != NULL)
		return wc_err_set(err, WC_INVALID, "a family name must not contain a zero byte");
	return WC_OK;
}

static int
check_row(const void *row, size_t row_len, wc_err *err)
{
	int			rc;

	if (row_len == 0)
		return wc_err_set(err, WC_INVALID, "a rowkey must not be empty");
	if ((rc = check_limit(row_len, WC_MAX_ROWKEY, "rowkey", err)) != WC_OK)
		return rc;
	return check_bytes(row, row_len, "rowkey", err);
}

static int
check_qual(const void *qual, size_t qual_len, wc_err *err)
{
	int			rc;

	if ((rc = check_limit(qual_len, WC_MAX_QUALIFIER, "qualifier", err)) != WC_OK)
		return rc;
	return check_bytes(qual, qual_len, "qualifier", err);
}

/* The checks every entry with a column passes (a DEL_FAMILY has no qualifier). */
static int
check_entry(const wc_batch *b, const void *fam, size_t fam_len, const void *row, size_t row_len,
			const void *qual, size_t qual_len, wc_err *err)
{
	int			rc;

	if (b == NULL)
		return wc_err_set(err, WC_INVALID, "no batch given");
	if ((rc = check_family(fam, fam_len, err)) != WC_OK ||
		(rc = check_row(row, row_len, err)) != WC_OK)
		return rc;
	return check_qual(qual, qual_len, err);
}

static int
check_ts(int64_t ts, wc_err *err)
{
	if (ts == INT64_MAX)
		return wc_err_set(err, WC_INVALID,
						  "timestamp %lld is reserved for tombstones; the largest valid timestamp is %lld",
						  (long long) INT64_MAX, (long long) (INT64_MAX - 1));
	return WC_OK;
}

static int
check_count(const wc_batch *b, uint64_t more, wc_err *err)
{
	if (b->count + more > MAX_BATCH_ENTRIES)
		return wc_err_set(err, WC_INVALID,
						  "a write batch holds at most %u entries; it has %llu and %llu more were added",
						  MAX_BATCH_ENTRIES, (unsigned long long) b->count,
						  (unsigned long long) more);
	return WC_OK;
}

/* Appends one entry whose fields have been checked. */
static int
add_entry(wc_batch *b, uint8_t type, const void *fam, size_t fam_len,
		  const void *row, size_t row_len, const void *qual, size_t qual_len,
		  int64_t ts, const void *val, size_t val_len, wc_err *err)
{
	size_t		size,
				row_off;
	uint8_t    *p;
	int			rc;

	if ((rc = check_count(b, 1, err)) != WC_OK)
		return rc;
	size = 1 + wc_varint_len(fam_len) + fam_len + wc_varint_len(row_len) + row_len +
		wc_varint_len(qual_len) + qual_len + 8;
	if (type == WC_TYPE_PUT || type == WC_TYPE_DEL_FAMILY_UPTO ||
		type == WC_TYPE_DEL_COLUMN_UPTO)
		size += wc_varint_len(val_len) + val_len;
	if ((rc = reserve(b, size, 1, err)) != WC_OK)
		return rc;

	p = b->buf + b->len;
	*p++ = type;
	p = wc_put_bytes(p, fam, fam_len);
	row_off = (size_t) (p - b->buf) + wc_varint_len(row_len);
	p = wc_put_bytes(p, row, row_len);
	p = wc_put_bytes(p, qual, qual_len);
	wc_put_fixed64(p, (uint64_t) ts);
	p += 8;
	if (type == WC_TYPE_PUT || type == WC_TYPE_DEL_FAMILY_UPTO ||
		type == WC_TYPE_DEL_COLUMN_UPTO)
		p = wc_put_bytes(p, val, val_len);
	b->len += size;

	b->seqs[b->count] = take_pending_seqs(1);
	if (type == WC_TYPE_DEL_ALL)
	{
		b->sum.truncate_seq = b->seqs[b->count];
		b->sum.truncate_index = b->count;
		b->sum.rows_all = true;
	}
	else
		note_row(b, row_off, (uint32_t) row_len);
	b->count++;
	return WC_OK;
}

int
wc_batch_put(wc_batch *b, const void *fam, size_t fam_len,
			 const void *row, size_t row_len,
			 const void *qual, size_t qual_len, int64_t ts,
			 const void *val, size_t val_len, wc_err *err)
{
	int			rc;

	if ((rc = check_entry(b, fam, fam_len, row, row_len, qual, qual_len, err)) != WC_OK ||
		(rc = check_ts(ts, err)) != WC_OK)
		return rc;
	if ((rc = check_limit(val_len, WC_MAX_VALUE, "value", err)) != WC_OK ||
		(rc = check_bytes(val, val_len, "value", err)) != WC_OK)
		return rc;
	return add_entry(b, WC_TYPE_PUT, fam, fam_len, row, row_len, qual, qual_len, ts,
					 val, val_len, err);
}

int
wc_batch_delete_version(wc_batch *b, const void *fam, size_t fam_len,
						const void *row, size_t row_len,
						const void *qual, size_t qual_len, int64_t ts,
						wc_err *err)
{
	int			rc;

	if ((rc = check_entry(b, fam, fam_len, row, row_len, qual, qual_len, err)) != WC_OK ||
		(rc = check_ts(ts, err)) != WC_OK)
		return rc;
	return add_entry(b, WC_TYPE_DEL_VERSION, fam, fam_len, row, row_len, qual, qual_len, ts,
					 NULL, 0, err);
}

int
wc_batch_delete_column(wc_batch *b, const void *fam, size_t fam_len,
					   const void *row, size_t row_len,
					   const void *qual, size_t qual_len, wc_err *err)
{
	int			rc;

	if ((rc = check_entry(b, fam, fam_len, row, row_len, qual, qual_len, err)) != WC_OK)
		return rc;
	return add_entry(b, WC_TYPE_DEL_COLUMN, fam, fam_len, row, row_len, qual, qual_len,
					 INT64_MAX, NULL, 0, err);
}

int
wc_batch_delete_family(wc_batch *b, const void *fam, size_t fam_len,
					   const void *row, size_t row_len, wc_err *err)
{
	int			rc;

	if ((rc = check_entry(b, fam, fam_len, row, row_len, NULL, 0, err)) != WC_OK)
		return rc;
	return add_entry(b, WC_TYPE_DEL_FAMILY, fam, fam_len, row, row_len, NULL, 0,
					 INT64_MAX, NULL, 0, err);
}

/* The value of a bounded family or column delete (what: "family", "column");
 * WC_INVALID for a bound that is not a committed seq. */
static int
encode_bound(uint64_t bound, uint8_t *buf, const char *what, wc_err *err)
{
	if (bound >= WC_SEQ_PENDING_BASE)
		return wc_err_set(err, WC_INVALID,
						  "%s delete bound %llu is not a committed sequence number (they are below %llu)",
						  what, (unsigned long long) bound, (unsigned long long) WC_SEQ_PENDING_BASE);
	wc_put_fixed64(buf, bound);
	return WC_OK;
}

int
wc_batch_delete_family_upto(wc_batch *b, const void *fam, size_t fam_len,
							const void *row, size_t row_len, uint64_t bound, wc_err *err)
{
	uint8_t		val[WC_FAMILY_BOUND_LEN];
	int			rc;

	if ((rc = check_entry(b, fam, fam_len, row, row_len, NULL, 0, err)) != WC_OK ||
		(rc = encode_bound(bound, val, "family", err)) != WC_OK)
		return rc;
	return add_entry(b, WC_TYPE_DEL_FAMILY_UPTO, fam, fam_len, row, row_len, NULL, 0,
					 INT64_MAX, val, sizeof(val), err);
}

int
wc_batch_delete_column_upto(wc_batch *b, const void *fam, size_t fam_len,
							const void *row, size_t row_len,
							const void *qual, size_t qual_len, uint64_t bound, wc_err *err)
{
	uint8_t		val[WC_COLUMN_BOUND_LEN];
	int			rc;

	if ((rc = check_entry(b, fam, fam_len, row, row_len, qual, qual_len, err)) != WC_OK ||
		(rc = encode_bound(bound, val, "column", err)) != WC_OK)
		return rc;
	return add_entry(b, WC_TYPE_DEL_COLUMN_UPTO, fam, fam_len, row, row_len, qual, qual_len,
					 INT64_MAX, val, sizeof(val), err);
}

int
wc_batch_delete_row(wc_batch *b, const wc_family_opts *families, int n,
					const void *row, size_t row_len, wc_err *err)
{
	return wc_batch_delete_row_upto(b, families, n, row, row_len, WC_SEQ_MAX, err);
}

int
wc_batch_delete_row_upto(wc_batch *b, const wc_family_opts *families, int n,
						 const void *row, size_t row_len, uint64_t bound, wc_err *err)
{
	uint8_t		val[WC_FAMILY_BOUND_LEN];
	bool		bounded = bound != WC_SEQ_MAX;
	wc_batch_mark mark;
	int			rc;

	if (b == NULL)
		return wc_err_set(err, WC_INVALID, "no batch given");
	if (n < 0 || (n > 0 && families == NULL))
		return wc_err_set(err, WC_INVALID, "invalid family list (%d families)", n);
	if ((rc = check_row(row, row_len, err)) != WC_OK ||
		(bounded && (rc = encode_bound(bound, val, "family", err)) != WC_OK))
		return rc;
	/* all or nothing: check every name before adding any entry */
	for (int i = 0; i < n; i++)
	{
		if (families[i].name == NULL)
			return wc_err_set(err, WC_INVALID, "family %d of the row delete has no name", i);
		if ((rc = check_family(families[i].name, strlen(families[i].name), err)) != WC_OK)
			return rc;
	}
	if ((rc = check_count(b, (uint64_t) n, err)) != WC_OK)
		return rc;
	wc_batch_get_mark(b, &mark);
	for (int i = 0; i < n; i++)
	{
		rc = add_entry(b, bounded ? WC_TYPE_DEL_FAMILY_UPTO : WC_TYPE_DEL_FAMILY,
					   families[i].name, strlen(families[i].name), row, row_len, NULL, 0,
					   INT64_MAX, bounded ? val : NULL, bounded ? sizeof(val) : 0, err);
		if (rc != WC_OK)
		{
			/* the row bounds too: they may point into the entries forgotten */
			wc_batch_rewind(b, &mark);
			return rc;
		}
	}
	return WC_OK;
}

int
wc_batch_truncate(wc_batch *b, wc_err *err)
{
	if (b == NULL)
		return wc_err_set(err, WC_INVALID, "no batch given");
	return add_entry(b, WC_TYPE_DEL_ALL, NULL, 0, NULL, 0, NULL, 0, INT64_MAX, NULL, 0, err);
}

int
wc_batch_append(wc_batch *dst, const wc_batch *src, wc_err *err)
{
	uint64_t	first,
				count,
				trunc_index;
	size_t		n,
				base,
				rmin_off,
				rmax_off;
	uint32_t	rmin_len,
				rmax_len;
	bool		trunc,
				rows_any,
				rows_all;
	int			rc;

	if (dst == NULL || src == NULL)
		return wc_err_set(err, WC_INVALID, "no batch given");
	/* dst == src is allowed: read src before dst changes */
	n = src->len;
	count = src->count;
	trunc = src->sum.truncate_seq != 0;
	trunc_index = src->sum.truncate_index;
	rows_any = src->sum.rows_any;
	rows_all = src->sum.rows_all;
	rmin_off = src->sum.rmin_off;
	rmin_len = src->sum.rmin_len;
	rmax_off = src->sum.rmax_off;
	rmax_len = src->sum.rmax_len;
	if (count == 0)
		return WC_OK;
	if ((rc = check_count(dst, count, err)) != WC_OK ||
		(rc = reserve(dst, n, count, err)) != WC_OK)
		return rc;
	/* src's entries are encoded and checked already; src->buf is read after
	 * reserve, which may have moved it (when dst == src) */
	memcpy(dst->buf + dst->len, src->buf, n);
	base = dst->len;
	first = take_pending_seqs(count);
	for (uint64_t i = 0; i < count; i++)
		dst->seqs[dst->count + i] = first + i;
	if (trunc)
	{
		dst->sum.truncate_index = dst->count + trunc_index;
		dst->sum.truncate_seq = first + trunc_index;
	}
	dst->len += n;
	dst->count += count;
	if (rows_all)
		dst->sum.rows_all = true;
	if (rows_any)
	{
		note_row(dst, base + rmin_off, rmin_len);
		note_row(dst, base + rmax_off, rmax_len);
	}
	return WC_OK;
}

void
wc_batch_get_mark(const wc_batch *b, wc_batch_mark *m)
{
	m->count = b->count;
	m->len = b->len;
	m->sum = b->sum;
}

/* Adds seqs [lo, hi] to b's dead ranges, joining the last one if they touch;
 * false if there is no room. */
static bool
add_dead(wc_batch *b, uint64_t lo, uint64_t hi)
{
	if (b->ndead > 0 && b->dead[b->ndead - 1].hi + 1 == lo)
		b->dead[b->ndead - 1].hi = hi;
	else if (b->ndead < WC_BATCH_DEAD_MAX)
	{
		b->dead[b->ndead].lo = lo;
		b->dead[b->ndead].hi = hi;
		b->ndead++;
	}
	else
		return false;
	return true;
}

/*
 * The entries' bytes before m are as they were (entries are only appended), so
 * the bounds and the truncate point saved in m are those of what stays.  Dead
 * ranges hold exactly dead entries' seqs: a scan excludes them from every batch
 * it overlays, so a range must not cover another batch's entries.  The indexed
 * dead entries' seqs are split into runs of consecutive seqs (one run when no
 * other batch took seqs meanwhile), the last one taking in the unindexed dead
 * entries that follow it, so that the ranges of rollbacks one after the other
 * touch and join.  Without room for them, the overlays are dropped, to be
 * rebuilt from the live entries.  The work is in proportion to the entries
 * forgotten.
 */
void
wc_batch_rewind(wc_batch *b, const wc_batch_mark *m)
{
	if (b == NULL || m->count >= b->count)
		return;
	if (b->indexed_count > m->count)
	{
		uint64_t	i = m->count;
		bool		room = true;

		while (room && i < b->indexed_count)
		{
			uint64_t	j = i + 1;

			while (j < b->count && b->seqs[j] == b->seqs[j - 1] + 1)
				j++;
			room = add_dead(b, b->seqs[i], b->seqs[j - 1]);
			i = j;
		}
		if (!room)
			drop_overlays(b);	/* no dead ranges then */
		else
		{
			b->indexed_count = m->count;
			b->indexed_off = m->len;
		}
	}
	b->count = m->count;
	b->len = m->len;
	b->sum = m->sum;
}

int
wc_batch_dead(const wc_batch *b, const wc_seq_range **ranges)
{
	*ranges = b != NULL ? b->dead : NULL;
	return b != NULL ? b->ndead : 0;
}

uint64_t
wc_batch_seq_at(const wc_batch *b, uint64_t i)
{
	return b->seqs[i];
}

uint64_t
wc_batch_count_below(const wc_batch *b, uint64_t seq)
{
	uint64_t	lo = 0,
				hi = b != NULL ? b->count : 0;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (b->seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---------------------------------------------------------------- decoding */

/* Where an entry sits, for messages. */
typedef struct entry_pos
{
	const char *what;			/* "batch record" or "write batch" */
	uint64_t	index;
	uint64_t	count;
} entry_pos;

static int corrupt(wc_err *err, const entry_pos *pos, const char *fmt,...) WC_PRINTF(3, 4);

static int
corrupt(wc_err *err, const entry_pos *pos, const char *fmt,...)
{
	char		why[256];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return wc_err_set(err, WC_CORRUPT, "%s entry %llu of %llu: %s", pos->what,
					  (unsigned long long) pos->index + 1, (unsigned long long) pos->count, why);
}

/* Reads a length-prefixed field of at most limit bytes. */
static const uint8_t *
get_field(const uint8_t *p, const uint8_t *end, const char *what, uint32_t limit,
		  const uint8_t **out, uint32_t *len, const entry_pos *pos, wc_err *err)
{
	const uint8_t *q = wc_get_varint32(p, end, len);

	if (q == NULL)
	{
		corrupt(err, pos, "the %s length is truncated or malformed", what);
		return NULL;
	}
	if (*len > limit)
	{
		corrupt(err, pos, "%s length %u exceeds the limit of %u bytes", what, *len, limit);
		return NULL;
	}
	if (*len > (size_t) (end - q))
	{
		corrupt(err, pos, "%s of %u bytes runs past the end of the payload (%zu bytes left)",
				what, *len, (size_t) (end - q));
		return NULL;
	}
	*out = q;
	return q + *len;
}

/*
 * Decodes the entry at p (p < end) into *e (without seq) and returns the byte
 * after it, or NULL with WC_CORRUPT in err.
 */
static const uint8_t *
decode_entry(const uint8_t *p, const uint8_t *end, wc_batch_entry *e,
			 const entry_pos *pos, wc_err *err)
{
	uint8_t		type = *p++;
	wc_cell    *c = &e->cell;

	if (type < WC_TYPE_PUT || type > WC_TYPE_DEL_COLUMN_UPTO)
	{
		corrupt(err, pos, "unknown entry type %u", type);
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->type = type;
	c->type = type;
	if ((p = get_field(p, end, "family", WC_MAX_FAMILY, &e->fam, &e->fam_len, pos, err)) == NULL ||
		(p = get_field(p, end, "rowkey", WC_MAX_ROWKEY, &c->row, &c->row_len, pos, err)) == NULL ||
		(p = get_field(p, end, "qualifier", WC_MAX_QUALIFIER, &c->qual, &c->qual_len, pos, err)) == NULL)
		return NULL;
	if (end - p < 8)
	{
		corrupt(err, pos, "the timestamp is truncated (%zu of 8 bytes left)", (size_t) (end - p));
		return NULL;
	}
	c->ts = (int64_t) wc_get_fixed64(p);
	p += 8;
	if (type == WC_TYPE_PUT &&
		(p = get_field(p, end, "value", WC_MAX_VALUE, &c->val, &c->val_len, pos, err)) == NULL)
		return NULL;
	if (type == WC_TYPE_DEL_FAMILY_UPTO || type == WC_TYPE_DEL_COLUMN_UPTO)
	{
		if ((p = get_field(p, end, "bound", WC_FAMILY_BOUND_LEN, &c->val, &c->val_len, pos,
						   err)) == NULL)
			return NULL;
		if (c->val_len != WC_FAMILY_BOUND_LEN ||
			wc_get_fixed64(c->val) >= WC_SEQ_PENDING_BASE)
		{
			corrupt(err, pos, "%s entry has a bound of %u bytes%s instead of a committed sequence number",
					type_name(type), c->val_len,
					c->val_len == WC_FAMILY_BOUND_LEN ? " above the committed range" : "");
			return NULL;
		}
		/* from here on it is a DEL_FAMILY or DEL_COLUMN with a value (cell.h) */
		type = type == WC_TYPE_DEL_FAMILY_UPTO ? WC_TYPE_DEL_FAMILY : WC_TYPE_DEL_COLUMN;
		e->type = type;
		c->type = type;
	}

	/* what the encoder guarantees, so that nothing downstream meets a surprise */
	if (type == WC_TYPE_DEL_ALL)
	{
		if (e->fam_len != 0 || c->row_len != 0 || c->qual_len != 0)
		{
			corrupt(err, pos, "DEL_ALL entry has a family of %u, a rowkey of %u and a qualifier of %u bytes instead of none",
					e->fam_len, c->row_len, c->qual_len);
			return NULL;
		}
		return p;
	}
	if (e->fam_len == 0)
	{
		corrupt(err, pos, "%s entry has an empty family name", type_name(type));
		return NULL;
	}
	if (memchr(e->fam, 0, e->fam_len) != NULL)
	{
		corrupt(err, pos, "%s entry has a family name containing a zero byte", type_name(type));
		return NULL;
	}
	if (c->row_len == 0)
	{
		corrupt(err, pos, "%s entry has an empty rowkey", type_name(type));
		return NULL;
	}
	if (type == WC_TYPE_DEL_FAMILY && c->qual_len != 0)
	{
		corrupt(err, pos, "DEL_FAMILY entry has a qualifier of %u bytes instead of none", c->qual_len);
		return NULL;
	}
	if ((type == WC_TYPE_DEL_FAMILY || type == WC_TYPE_DEL_COLUMN) != (c->ts == INT64_MAX))
	{
		corrupt(err, pos, "%s entry has timestamp %lld (INT64_MAX is for DEL_COLUMN and DEL_FAMILY only, and required for them)",
				type_name(type), (long long) c->ts);
		return NULL;
	}
	return p;
}

size_t
wc_batch_encode_header(uint8_t *buf, uint64_t seq_base, uint64_t tag, uint32_t count)
{
	wc_put_fixed64(buf, seq_base);
	wc_put_fixed64(buf + 8, tag);
	return (size_t) (wc_put_varint64(buf + 16, count) - buf);
}

int
wc_batch_reader_init(wc_batch_reader *r, const uint8_t *payload, size_t len, wc_err *err)
{
	const uint8_t *end;
	const uint8_t *p;
	size_t		left;

	memset(r, 0, sizeof(*r));
	if (payload == NULL || len < 8 + 8 + 1)
		return wc_err_set(err, WC_CORRUPT,
						  "batch record of %zu bytes is shorter than the smallest header (17 bytes)", len);
	end = payload + len;
	r->seq_base = wc_get_fixed64(payload);
	r->tag = wc_get_fixed64(payload + 8);
	p = wc_get_varint32(payload + 16, end, &r->count);
	if (p == NULL)
		return wc_err_set(err, WC_CORRUPT, "batch record entry count is truncated or malformed");
	left = (size_t) (end - p);
	if (r->count > left / MIN_ENTRY_SIZE)
		return wc_err_set(err, WC_CORRUPT,
						  "batch record declares %u entries but has %zu bytes for them (an entry takes at least %d)",
						  r->count, left, MIN_ENTRY_SIZE);
	/* committed sequence numbers are below the pending range */
	if (r->count > 0 && r->seq_base > WC_SEQ_PENDING_BASE - r->count)
		return wc_err_set(err, WC_CORRUPT,
						  "batch record sequence numbers from %llu for %u entries reach the pending range at %llu",
						  (unsigned long long) r->seq_base, r->count,
						  (unsigned long long) WC_SEQ_PENDING_BASE);
	r->p = p;
	r->end = end;
	return WC_OK;
}

void
wc_batch_reader_of(wc_batch_reader *r, const wc_batch *b, uint64_t seq_base)
{
	size_t		len;

	memset(r, 0, sizeof(*r));
	r->p = wc_batch_entries(b, &len);
	r->end = r->p + len;
	r->seq_base = seq_base;
	r->count = (uint32_t) b->count;
}

void
wc_batch_reader_span(wc_batch_reader *r, const uint8_t *p, const uint8_t *end, uint32_t count,
					 uint64_t seq_base)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->end = end;
	r->seq_base = seq_base;
	r->count = count;
}

int
wc_batch_reader_next(wc_batch_reader *r, wc_batch_entry *e, wc_err *err)
{
	entry_pos	pos = {"batch record", r->index, r->count};
	const uint8_t *p;

	if (r->index >= r->count)
	{
		if (r->p != r->end)
			return wc_err_set(err, WC_CORRUPT, "batch record has %zu trailing bytes after its %u entries",
							  (size_t) (r->end - r->p), r->count);
		return 0;
	}
	if (r->p >= r->end)
		return wc_err_set(err, WC_CORRUPT, "batch record ends after %u of its %u entries",
						  r->index, r->count);
	if ((p = decode_entry(r->p, r->end, e, &pos, err)) == NULL)
		return WC_CORRUPT;
	e->cell.seq = r->seq_base + r->index;
	r->p = p;
	r->index++;
	return 1;
}

/* ---------------------------------------------------------------- overlays */

static batch_fam *
find_fam(wc_batch *b, const uint8_t *fam, size_t fam_len)
{
	for (int i = 0; i < b->nfams; i++)
		if (b->fams[i].len == fam_len && memcmp(b->fams[i].name, fam, fam_len) == 0)
			return &b->fams[i];
	return NULL;
}

static batch_fam *
add_fam(wc_batch *b, const uint8_t *fam, size_t fam_len, wc_err *err)
{
	batch_fam  *f;

	if (!wc_array_reserve(&b->fams, &b->fams_cap, (size_t) b->nfams + 1, sizeof(*b->fams)))
		goto oom;
	f = &b->fams[b->nfams];
	if ((f->mt = wc_memtable_new()) == NULL)
		goto oom;
	f->len = (uint32_t) fam_len;
	memcpy(f->name, fam, fam_len);
	b->nfams++;
	return f;

oom:
	wc_err_set(err, WC_NOMEM, "out of memory for the overlay of a write batch");
	return NULL;
}

/* Adds the entries added since the last call to the overlays. */
static int
index_new_entries(wc_batch *b, wc_err *err)
{
	const uint8_t *end;
	batch_fam  *f = NULL;

	if (b->indexed_off >= b->len)
		return WC_OK;			/* also when buf is still NULL */
	end = b->buf + b->len;
	while (b->indexed_off < b->len)
	{
		entry_pos	pos = {"write batch", b->indexed_count, b->count};
		wc_batch_entry e;
		const uint8_t *next;
		int			rc;

		next = decode_entry(b->buf + b->indexed_off, end, &e, &pos, err);
		if (next == NULL)
			return WC_CORRUPT;	/* cannot happen: we encoded it */
		if (e.type != WC_TYPE_DEL_ALL)
		{
			/* entries of one family tend to come in runs */
			if (f == NULL || f->len != e.fam_len || memcmp(f->name, e.fam, e.fam_len) != 0)
			{
				f = find_fam(b, e.fam, e.fam_len);
				if (f == NULL && (f = add_fam(b, e.fam, e.fam_len, err)) == NULL)
					return WC_NOMEM;
			}
			e.cell.seq = b->seqs[b->indexed_count];
			if ((rc = wc_memtable_add(f->mt, &e.cell, err)) != WC_OK)
				return rc;
		}
		b->indexed_off = (size_t) (next - b->buf);
		b->indexed_count++;
	}
	return WC_OK;
}

wc_memtable *
wc_batch_overlay(wc_batch *b, const uint8_t *fam, size_t fam_len, wc_err *err)
{
	batch_fam  *f;

	if (b == NULL)
		return NULL;
	if (index_new_entries(b, err) != WC_OK)
		return NULL;
	f = find_fam(b, fam, fam_len);
	return f != NULL ? f->mt : NULL;
}
