/*
 * block.c -- building and reading data blocks (layout in block.h and
 * FORMAT.md, "Sorted files").
 *
 * The reader never allocates per entry: qualifiers and values point into the
 * block, and a rowkey or qualifier is copied only when an entry shares a prefix
 * with a predecessor whose bytes are not contiguous with its own suffix.  Rows
 * of a wide row repeat whole (row_unshared = 0), so they cost no copy at all.
 */
#include "block.h"

#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "env.h"

/* Worst case of the five varints, ts, seq and type of one entry. */
#define ENTRY_OVERHEAD	(5 * 5 + 8 + 10 + 1)

/* Room for extra more bytes after b->len: WC_OK or WC_NOMEM. */
static inline int
buf_reserve(wc_block_buf *b, size_t extra)
{
	if (b->len + extra <= b->cap || wc_buf_reserve(&b->data, &b->cap, b->len + extra))
		return WC_OK;
	return WC_NOMEM;
}

/* Makes *last equal to s[0..n-1], given that its first shared bytes already are. */
static int
remember(wc_block_buf *last, const uint8_t *s, size_t n, size_t shared)
{
	if (n > last->cap && !wc_buf_reserve(&last->data, &last->cap, n))
		return WC_NOMEM;
	if (n > shared)
		memcpy(last->data + shared, s + shared, n - shared);
	last->len = n;
	return WC_OK;
}

void
wc_block_builder_init(wc_block_builder *b)
{
	memset(b, 0, sizeof(*b));
}

void
wc_block_builder_free(wc_block_builder *b)
{
	free(b->out.data);
	free(b->restarts);
	free(b->last_row.data);
	free(b->last_qual.data);
	memset(b, 0, sizeof(*b));
}

void
wc_block_builder_reset(wc_block_builder *b)
{
	b->out.len = 0;
	b->nrestarts = 0;
	b->counter = 0;
	b->nentries = 0;
	b->last_row.len = 0;
	b->last_qual.len = 0;
	b->finished = false;
}

int
wc_block_builder_add(wc_block_builder *b, const wc_cell *c)
{
	size_t		rsh = 0,
				qsh = 0;
	uint8_t    *p;

	if (b->nentries > 0 && b->counter < WC_BLOCK_RESTART_INTERVAL)
	{
		rsh = wc_common_prefix(b->last_row.data, b->last_row.len, c->row, c->row_len);
		qsh = wc_common_prefix(b->last_qual.data, b->last_qual.len, c->qual, c->qual_len);
	}
	else
	{
		if (b->nrestarts == b->restarts_cap &&
			!wc_array_reserve(&b->restarts, &b->restarts_cap, (size_t) b->nrestarts + 1,
							  sizeof(*b->restarts)))
			return WC_NOMEM;
		b->restarts[b->nrestarts++] = (uint32_t) b->out.len;
		b->counter = 0;
	}

	if (buf_reserve(&b->out, ENTRY_OVERHEAD + (c->row_len - rsh) +
					(c->qual_len - qsh) + c->val_len) != WC_OK)
		return WC_NOMEM;
	if (remember(&b->last_row, c->row, c->row_len, rsh) != WC_OK ||
		remember(&b->last_qual, c->qual, c->qual_len, qsh) != WC_OK)
		return WC_NOMEM;

	p = b->out.data + b->out.len;
	p = wc_put_varint64(p, rsh);
	p = wc_put_varint64(p, c->row_len - rsh);
	p = wc_put_varint64(p, qsh);
	p = wc_put_varint64(p, c->qual_len - qsh);
	p = wc_put_varint64(p, c->val_len);
	if (c->row_len > rsh)
	{
		memcpy(p, c->row + rsh, c->row_len - rsh);
		p += c->row_len - rsh;
	}
	if (c->qual_len > qsh)
	{
		memcpy(p, c->qual + qsh, c->qual_len - qsh);
		p += c->qual_len - qsh;
	}
	wc_put_fixed64(p, (uint64_t) c->ts);
	p += 8;
	p = wc_put_varint64(p, c->seq);
	*p++ = c->type;
	if (c->val_len > 0)
	{
		memcpy(p, c->val, c->val_len);
		p += c->val_len;
	}
	b->out.len = (size_t) (p - b->out.data);
	b->counter++;
	b->nentries++;
	return WC_OK;
}

size_t
wc_block_builder_size(const wc_block_builder *b)
{
	return b->out.len + 4 * ((size_t) b->nrestarts + 1);
}

int
wc_block_builder_finish(wc_block_builder *b, const uint8_t **data, size_t *len)
{
	if (!b->finished)
	{
		uint8_t    *p;

		if (buf_reserve(&b->out, 4 * ((size_t) b->nrestarts + 1)) != WC_OK)
			return WC_NOMEM;
		p = b->out.data + b->out.len;
		for (uint32_t i = 0; i < b->nrestarts; i++, p += 4)
			wc_put_fixed32(p, b->restarts[i]);
		wc_put_fixed32(p, b->nrestarts);
		b->out.len += 4 * ((size_t) b->nrestarts + 1);
		b->finished = true;
	}
	*data = b->out.data;
	*len = b->out.len;
	return WC_OK;
}

/* ---------------------------------------------------------------- reader */

/* One entry as stored. */
typedef struct raw_entry
{
	uint32_t	rsh,
				run,
				qsh,
				qun,
				vlen;
	const uint8_t *rsuf;
	const uint8_t *qsuf;
	const uint8_t *val;
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
	uint32_t	end;			/* offset after the entry */
} raw_entry;

/* Decodes the entry at off; NULL on success, else why it is malformed. */
static const char *
parse_raw(const uint8_t *data, uint32_t off, uint32_t limit, raw_entry *e)
{
	const uint8_t *p = data + off;
	const uint8_t *end = data + limit;

	if (end - p >= 5 && (p[0] | p[1] | p[2] | p[3] | p[4]) < 0x80)
	{
		e->rsh = p[0];
		e->run = p[1];
		e->qsh = p[2];
		e->qun = p[3];
		e->vlen = p[4];
		p += 5;
	}
	else if ((p = wc_get_varint32(p, end, &e->rsh)) == NULL ||
			 (p = wc_get_varint32(p, end, &e->run)) == NULL ||
			 (p = wc_get_varint32(p, end, &e->qsh)) == NULL ||
			 (p = wc_get_varint32(p, end, &e->qun)) == NULL ||
			 (p = wc_get_varint32(p, end, &e->vlen)) == NULL)
		return "bad entry header";
	if ((uint64_t) e->rsh + e->run > WC_MAX_ROWKEY)
		return "rowkey too long";
	if ((uint64_t) e->qsh + e->qun > WC_MAX_QUALIFIER)
		return "qualifier too long";
	if ((uint64_t) (end - p) < (uint64_t) e->run + e->qun + 8 + 2)
		return "entry overruns the block";
	e->rsuf = p;
	p += e->run;
	e->qsuf = p;
	p += e->qun;
	e->ts = (int64_t) wc_get_fixed64(p);
	p += 8;
	if ((p = wc_get_varint64(p, end, &e->seq)) == NULL || p >= end)
		return "bad sequence number";
	e->type = *p++;
	if (e->type < WC_TYPE_PUT || e->type > WC_TYPE_DEL_FAMILY)
		return "bad entry type";
	/* a DEL_FAMILY's or DEL_COLUMN's value is empty or its bound (cell.h) */
	if (e->type == WC_TYPE_DEL_FAMILY && e->vlen != 0 && e->vlen != WC_FAMILY_BOUND_LEN)
		return "bad DEL_FAMILY bound";
	if (e->type == WC_TYPE_DEL_COLUMN && e->vlen != 0 && e->vlen != WC_COLUMN_BOUND_LEN)
		return "bad DEL_COLUMN bound";
	if ((uint64_t) (end - p) < e->vlen)
		return "value overruns the block";
	e->val = p;
	e->end = (uint32_t) (p + e->vlen - data);
	return NULL;
}

/* Rebuilds a key from the previous one's first shared bytes and suffix s[0..n-1]. */
static bool
key_apply(wc_block_key *k, uint32_t shared, const uint8_t *s, uint32_t n)
{
	uint32_t	total;

	if (shared == 0)
	{
		k->p = s;
		k->len = n;
		return true;
	}
	if (n == 0)
	{
		/* a prefix of the previous key: its bytes are still where they were */
		k->len = shared;
		return true;
	}
	total = shared + n;
	if (total > k->cap)
	{
		/* k->p is either k->buf (moved along by the growth) or in the block */
		bool		in_buf = k->p == k->buf;

		if (!wc_buf_reserve(&k->buf, &k->cap, total))
			return false;
		if (in_buf)
			k->p = k->buf;
	}
	if (k->p != k->buf)
		memmove(k->buf, k->p, shared);
	memcpy(k->buf + shared, s, n);
	k->p = k->buf;
	k->len = total;
	return true;
}

static void
set_corrupt(wc_block_iter *it, const char *reason, uint32_t off)
{
	it->valid = false;
	if (it->status == WC_OK)
	{
		it->status = WC_CORRUPT;
		it->reason = reason;
		it->bad_off = off;
	}
}

static void
set_nomem(wc_block_iter *it, uint32_t off)
{
	it->valid = false;
	if (it->status == WC_OK)
	{
		it->status = WC_NOMEM;
		it->reason = "out of memory";
		it->bad_off = off;
	}
}

/* Makes e, the entry at off whose keys are it->row and it->qual now, current. */
static void
make_current(wc_block_iter *it, const raw_entry *e, uint32_t off)
{
	it->cell.row = it->row.p;
	it->cell.row_len = it->row.len;
	it->cell.qual = it->qual.p;
	it->cell.qual_len = it->qual.len;
	it->cell.ts = e->ts;
	it->cell.seq = e->seq;
	it->cell.type = e->type;
	it->cell.val = e->val;
	it->cell.val_len = e->vlen;
	it->cur = off;
	it->next = e->end;
	it->valid = true;
}

/* Decodes the entry at off on top of the current key and makes it current. */
static void
parse_entry(wc_block_iter *it, uint32_t off)
{
	raw_entry	e;
	const char *why = parse_raw(it->data, off, it->limit, &e);

	if (why == NULL && (e.rsh > it->row.len || e.qsh > it->qual.len))
		why = "shared prefix longer than the previous key";
	if (why != NULL)
	{
		set_corrupt(it, why, off);
		return;
	}
	if (!key_apply(&it->row, e.rsh, e.rsuf, e.run) ||
		!key_apply(&it->qual, e.qsh, e.qsuf, e.qun))
	{
		set_nomem(it, off);
		return;
	}
	make_current(it, &e, off);
}

void
wc_block_iter_init(wc_block_iter *it)
{
	memset(it, 0, sizeof(*it));
}

void
wc_block_iter_free(wc_block_iter *it)
{
	free(it->row.buf);
	free(it->qual.buf);
	free(it->save_row.data);
	free(it->save_qual.data);
	memset(it, 0, sizeof(*it));
}

int
wc_block_iter_set(wc_block_iter *it, const uint8_t *data, size_t len)
{
	uint32_t	n;

	it->data = data;
	it->valid = false;
	it->status = WC_OK;
	it->reason = NULL;
	it->limit = 0;
	it->nrestarts = 0;
	it->row.len = 0;
	it->qual.len = 0;
	if (len < 8 || len > UINT32_MAX)
	{
		set_corrupt(it, "bad block length", 0);
		return WC_CORRUPT;
	}
	n = wc_get_fixed32(data + len - 4);
	if (n == 0 || n > (len - 4) / 4)
	{
		set_corrupt(it, "bad restart count", (uint32_t) len - 4);
		return WC_CORRUPT;
	}
	it->limit = (uint32_t) (len - 4 - 4 * (size_t) n);
	it->nrestarts = n;
	if (wc_get_fixed32(data + it->limit) != 0)
	{
		set_corrupt(it, "first restart point is not 0", it->limit);
		return WC_CORRUPT;
	}
	return WC_OK;
}

/* Positions at restart point i (with an empty previous key). */
static void
seek_restart(wc_block_iter *it, uint32_t i)
{
	uint32_t	off = wc_get_fixed32(it->data + it->limit + 4 * (size_t) i);

	it->row.len = 0;
	it->qual.len = 0;
	if (off >= it->limit)
	{
		set_corrupt(it, "restart point beyond the entries", it->limit + 4 * i);
		return;
	}
	parse_entry(it, off);
}

void
wc_block_iter_seek_first(wc_block_iter *it)
{
	it->valid = false;
	if (it->status != WC_OK || it->nrestarts == 0)
		return;
	seek_restart(it, 0);
}

void
wc_block_iter_next(wc_block_iter *it)
{
	if (!it->valid)
		return;
	if (it->next >= it->limit)
	{
		it->valid = false;
		return;
	}
	parse_entry(it, it->next);
}

/*
 * The last restart point whose entry sorts before target, or 0 when none does
 * (then *none is set, if asked for); -1 after marking the block corrupt.
 */
static int64_t
restart_before(wc_block_iter *it, const wc_cell *target, bool *none)
{
	uint32_t	lo = 0,
				hi = it->nrestarts - 1;

	if (none)
		*none = false;
	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo + 1) / 2;
		uint32_t	off = wc_get_fixed32(it->data + it->limit + 4 * (size_t) mid);
		raw_entry	e;
		const char *why;
		wc_cell		key;

		if (off >= it->limit)
		{
			set_corrupt(it, "restart point beyond the entries", it->limit + 4 * mid);
			return -1;
		}
		why = parse_raw(it->data, off, it->limit, &e);
		if (why == NULL && (e.rsh != 0 || e.qsh != 0))
			why = "restart entry has a shared prefix";
		if (why != NULL)
		{
			set_corrupt(it, why, off);
			return -1;
		}
		key.row = e.rsuf;
		key.row_len = e.run;
		key.qual = e.qsuf;
		key.qual_len = e.qun;
		key.ts = e.ts;
		key.seq = e.seq;
		key.type = e.type;
		if (wc_cell_cmp(&key, target) < 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (lo == 0 && none)
	{
		/* restart 0 was never compared: the search only moves lo up */
		seek_restart(it, 0);
		if (!it->valid)
			return -1;
		*none = wc_cell_cmp(&it->cell, target) >= 0;
	}
	return lo;
}

void
wc_block_iter_seek(wc_block_iter *it, const wc_cell *target)
{
	int64_t		r;

	it->valid = false;
	if (it->status != WC_OK || it->nrestarts == 0)
		return;
	if ((r = restart_before(it, target, NULL)) < 0)
		return;
	seek_restart(it, (uint32_t) r);
	while (it->valid && wc_cell_cmp(&it->cell, target) < 0)
		wc_block_iter_next(it);
}

/* Copies bytes[0..len-1] into b; false when out of memory. */
static bool
save_bytes(wc_block_buf *b, const uint8_t *bytes, size_t len)
{
	if (!wc_buf_reserve(&b->data, &b->cap, len > 0 ? len : 1))
		return false;
	memcpy(b->data, bytes, len);
	b->len = len;
	return true;
}

/* Makes a key the bytes of b (a copy, since b is reused). */
static bool
restore_key(wc_block_key *k, const wc_block_buf *b)
{
	if (!wc_buf_reserve(&k->buf, &k->cap, b->len > 0 ? b->len : 1))
		return false;
	memcpy(k->buf, b->data, b->len);
	k->p = k->buf;
	k->len = (uint32_t) b->len;
	return true;
}

/*
 * Entries decode only forward (each shares a prefix with the one before), so
 * going back means walking from a restart point: from the last restart below
 * target, remember where each row begins (its offset and its decoded keys)
 * and stop at target; then put the iterator back where the last row began.
 */
void
wc_block_iter_seek_row_before(wc_block_iter *it, const wc_cell *target, bool *row_start)
{
	int64_t		r = (int64_t) it->nrestarts - 1;
	bool		none = false;
	bool		have = false;
	bool		first = true;	/* the entry is the first one walked */
	uint32_t	off = 0;
	raw_entry	e;
	const char *why;

	*row_start = false;
	it->valid = false;
	if (it->status != WC_OK || it->nrestarts == 0)
		return;
	if (target != NULL && ((r = restart_before(it, target, &none)) < 0 || none))
	{
		it->valid = false;
		return;
	}
	seek_restart(it, (uint32_t) r);
	while (it->valid && (target == NULL || wc_cell_cmp(&it->cell, target) < 0))
	{
		if (!have || it->cell.row_len != it->save_row.len ||
			memcmp(it->cell.row, it->save_row.data, it->cell.row_len) != 0)
		{
			if (!save_bytes(&it->save_row, it->cell.row, it->cell.row_len) ||
				!save_bytes(&it->save_qual, it->cell.qual, it->cell.qual_len))
			{
				set_nomem(it, it->cur);
				return;
			}
			off = it->cur;
			have = true;
			*row_start = !first;
		}
		first = false;
		wc_block_iter_next(it);
	}
	if (it->status != WC_OK || !have)
	{
		it->valid = false;
		return;
	}
	/* back to the row's first entry: its keys, then the rest of it parsed again */
	if ((why = parse_raw(it->data, off, it->limit, &e)) != NULL)
	{
		set_corrupt(it, why, off);
		return;
	}
	if (!restore_key(&it->row, &it->save_row) || !restore_key(&it->qual, &it->save_qual))
	{
		set_nomem(it, off);
		return;
	}
	make_current(it, &e, off);
}
