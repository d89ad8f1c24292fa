/*
 * rowcache.c -- a handle's cache of rows read from sorted files (rowcache.h).
 *
 * An entry is one allocation: its header, the files' uids, the family and row
 * bytes, the cells, then the qualifiers and values the cells point to.  Entries
 * hang in a chained hash table and on a list, most recently used first.  An
 * entry leaves the cache (the table and the list) when the budget needs its
 * room, and is freed when no iterator holds it either.
 */
#include "rowcache.h"

#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "cell.h"
#include "env.h"
#include "err.h"
#include "visible.h"

#define GHOSTS			4096	/* recent misses remembered (a power of 2) */
#define MIN_BUCKETS		64

typedef struct rc_entry
{
	struct rc_entry *hnext;		/* in its bucket */
	struct rc_entry *newer;		/* on the list */
	struct rc_entry *older;
	uint64_t	hash;
	int			refs;			/* the cache's while listed, and each iterator's */
	size_t		bytes;			/* of the allocation */
	const uint8_t *fam;
	const uint8_t *row;
	uint32_t	fam_len;
	uint32_t	row_len;
	const uint64_t *uids;
	int			nuids;
	uint32_t	versions;
	uint64_t	trunc;
	uint32_t	ncells;
	wc_cell    *cells;
} rc_entry;

struct wc_rowcache
{
	size_t		budget;
	size_t		max_entry;		/* the largest entry cached */
	rc_entry  **buckets;
	size_t		nbuckets;		/* a power of 2 */
	rc_entry   *newest;
	rc_entry   *oldest;
	wc_rowcache_stats stats;
	uint64_t	ghosts[GHOSTS];
	/* a fill's scratch: the cells, their bytes at offsets in bytes */
	wc_cell    *cells;
	size_t		cells_cap;		/* cells */
	uint8_t    *bytes;
	size_t		bytes_cap;
};

typedef struct rc_iter
{
	wc_iter		base;
	rc_entry   *e;
	uint32_t	pos;
} rc_iter;

static uint64_t
key_hash(const wc_rowcache_key *k)
{
	uint64_t	h = wc_bloom_hash(k->row, k->row_len);

	h ^= wc_bloom_hash(k->fam, k->fam_len) * UINT64_C(0x9e3779b97f4a7c15);
	for (int i = 0; i < k->nuids; i++)
		h = (h ^ k->uids[i]) * UINT64_C(0xff51afd7ed558ccd);
	h = (h ^ k->versions) * UINT64_C(0xff51afd7ed558ccd);
	h = (h ^ k->trunc) * UINT64_C(0xff51afd7ed558ccd);
	return h != 0 ? h : 1;		/* 0 marks a free ghost */
}

static bool
key_matches(const rc_entry *e, uint64_t hash, const wc_rowcache_key *k)
{
	return e->hash == hash && e->row_len == k->row_len && e->fam_len == k->fam_len &&
		e->nuids == k->nuids && e->versions == k->versions && e->trunc == k->trunc &&
		memcmp(e->row, k->row, k->row_len) == 0 &&
		memcmp(e->fam, k->fam, k->fam_len) == 0 &&
		memcmp(e->uids, k->uids, sizeof(uint64_t) * (size_t) k->nuids) == 0;
}

wc_rowcache *
wc_rowcache_new(size_t budget)
{
	wc_rowcache *rc = calloc(1, sizeof(wc_rowcache));

	if (rc == NULL)
		return NULL;
	rc->budget = budget;
	rc->max_entry = budget / 8;
	rc->nbuckets = MIN_BUCKETS;
	if ((rc->buckets = calloc(rc->nbuckets, sizeof(rc_entry *))) == NULL)
	{
		free(rc);
		return NULL;
	}
	return rc;
}

static void
entry_unref(rc_entry *e)
{
	if (--e->refs == 0)
		free(e);
}

/* Takes e out of the table and the list (its iterators keep it). */
static void
unlist(wc_rowcache *rc, rc_entry *e)
{
	rc_entry  **p = &rc->buckets[e->hash & (rc->nbuckets - 1)];

	while (*p != e)
		p = &(*p)->hnext;
	*p = e->hnext;
	if (e->newer)
		e->newer->older = e->older;
	else
		rc->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		rc->oldest = e->newer;
	rc->stats.entries--;
	rc->stats.bytes -= e->bytes;
	entry_unref(e);
}

void
wc_rowcache_free(wc_rowcache *rc)
{
	if (rc == NULL)
		return;
	while (rc->oldest != NULL)
		unlist(rc, rc->oldest);
	free(rc->buckets);
	free(rc->cells);
	free(rc->bytes);
	free(rc);
}

/* Makes e the most recently used. */
static void
touch(wc_rowcache *rc, rc_entry *e)
{
	if (rc->newest == e)
		return;
	/* out of the list (e is not the newest: it has a newer one) */
	e->newer->older = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		rc->oldest = e->newer;
	/* in at the head */
	e->older = rc->newest;
	e->newer = NULL;
	rc->newest->newer = e;
	rc->newest = e;
}

/* ---------------------------------------------------------------- iterators */

static void
ri_seek_first(wc_iter *base)
{
	((rc_iter *) base)->pos = 0;
}

static void
ri_seek(wc_iter *base, const wc_cell *target)
{
	rc_iter    *it = (rc_iter *) base;
	const wc_cell *c = it->e->cells;
	uint32_t	lo = 0,
				hi = it->e->ncells;

	/* forward from here, as a scan seeks past a column it has read */
	if (it->pos < hi && wc_cell_cmp(&c[it->pos], target) < 0)
		lo = it->pos + 1;
	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (wc_cell_cmp(&c[mid], target) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	it->pos = lo;
}

static void
ri_next(wc_iter *base)
{
	((rc_iter *) base)->pos++;
}

static bool
ri_valid(const wc_iter *base)
{
	const rc_iter *it = (const rc_iter *) base;

	return it->pos < it->e->ncells;
}

static const wc_cell *
ri_cell(const wc_iter *base)
{
	const rc_iter *it = (const rc_iter *) base;

	return &it->e->cells[it->pos];
}

static int
ri_status(const wc_iter *base, wc_err *err)
{
	return WC_OK;
}

static void
ri_close(wc_iter *base)
{
	rc_iter    *it = (rc_iter *) base;

	entry_unref(it->e);
	free(it);
}

/* Every entry is of one row: it is below target's row or it is not. */
static void
ri_seek_row_before(wc_iter *base, const wc_cell *target)
{
	rc_iter    *it = (rc_iter *) base;
	const rc_entry *e = it->e;

	if (target == NULL || wc_row_cmp(e->row, e->row_len, target->row, target->row_len) < 0)
		it->pos = 0;
	else
		it->pos = e->ncells;
}

static const wc_iter_ops rc_iter_ops = {
	ri_seek_first, ri_seek, ri_next, ri_valid, ri_cell, ri_status, ri_close, ri_seek_row_before
};

static wc_iter *
iter_new(rc_entry *e)
{
	rc_iter    *it = malloc(sizeof(rc_iter));

	if (it == NULL)
		return NULL;
	it->base.ops = &rc_iter_ops;
	it->e = e;
	it->pos = 0;
	e->refs++;
	return &it->base;
}

/* ---------------------------------------------------------------- lookups */

wc_iter *
wc_rowcache_get(wc_rowcache *rc, const wc_rowcache_key *key, bool *admit)
{
	uint64_t	hash = key_hash(key);
	uint64_t   *ghost = &rc->ghosts[hash & (GHOSTS - 1)];
	rc_entry   *e;

	*admit = false;
	for (e = rc->buckets[hash & (rc->nbuckets - 1)]; e != NULL; e = e->hnext)
		if (key_matches(e, hash, key))
		{
			wc_iter    *it = iter_new(e);

			if (it != NULL)
			{
				touch(rc, e);
				rc->stats.hits++;
			}
			return it;
		}
	rc->stats.misses++;
	if (*ghost == hash)
	{
		*ghost = 0;
		*admit = true;
	}
	else
		*ghost = hash;
	return NULL;
}

/* Doubles the table when it holds more entries than buckets (false: no memory, left as is). */
static bool
grow(wc_rowcache *rc)
{
	size_t		n = rc->nbuckets * 2;
	rc_entry  **b = calloc(n, sizeof(rc_entry *));

	if (b == NULL)
		return false;
	for (size_t i = 0; i < rc->nbuckets; i++)
		for (rc_entry *e = rc->buckets[i], *next; e != NULL; e = next)
		{
			next = e->hnext;
			e->hnext = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	free(rc->buckets);
	rc->buckets = b;
	rc->nbuckets = n;
	return true;
}

wc_iter *
wc_rowcache_fill(wc_rowcache *rc, const wc_rowcache_key *key, wc_iter *from, wc_vis *keep)
{
	size_t		ncells = 0,
				nbytes = 0,
				head,
				total;
	uint64_t	hash = key_hash(key);
	rc_entry   *e;
	uint8_t    *p;
	wc_iter    *it;
	wc_err		ignored;

	/* the row's entries and their bytes into the scratch */
	for (; wc_iter_valid(from); wc_iter_next(from))
	{
		const wc_cell *c = wc_iter_cell(from);
		wc_cell    *d;

		if (wc_row_cmp(c->row, c->row_len, key->row, key->row_len) != 0)
			break;
		if (keep != NULL)
		{
			int			verdict = wc_vis_step(keep, c);

			if (verdict < 0)
				return NULL;
			if (verdict != WC_VIS_EMIT)
				continue;
		}
		if ((ncells + 1) * sizeof(wc_cell) + nbytes + c->qual_len + c->val_len > rc->max_entry ||
			!wc_array_reserve(&rc->cells, &rc->cells_cap, ncells + 1, sizeof(wc_cell)) ||
			!wc_buf_reserve(&rc->bytes, &rc->bytes_cap, nbytes + c->qual_len + c->val_len + 1))
			return NULL;
		d = &rc->cells[ncells++];
		*d = *c;
		/* offsets for now; pointers once the entry is made */
		d->qual = (const uint8_t *) (uintptr_t) nbytes;
		memcpy(rc->bytes + nbytes, c->qual, c->qual_len);
		nbytes += c->qual_len;
		d->val = (const uint8_t *) (uintptr_t) nbytes;
		if (c->val_len > 0)
			memcpy(rc->bytes + nbytes, c->val, c->val_len);
		nbytes += c->val_len;
	}
	wc_err_clear(&ignored);
	if (wc_iter_status(from, &ignored) != WC_OK)
		return NULL;

	/* header, uids, cells (aligned), then family, row and the bytes */
	head = sizeof(rc_entry) + sizeof(uint64_t) * (size_t) key->nuids;
	total = head + sizeof(wc_cell) * ncells + key->fam_len + key->row_len + nbytes;
	if (total > rc->max_entry || (e = malloc(total)) == NULL)
		return NULL;
	memset(e, 0, sizeof(rc_entry));
	e->uids = (const uint64_t *) ((uint8_t *) e + sizeof(rc_entry));
	memcpy((uint64_t *) e->uids, key->uids, sizeof(uint64_t) * (size_t) key->nuids);
	e->cells = (wc_cell *) ((uint8_t *) e + head);
	p = (uint8_t *) (e->cells + ncells);
	memcpy(p, key->fam, key->fam_len);
	e->fam = p;
	p += key->fam_len;
	memcpy(p, key->row, key->row_len);
	e->row = p;
	p += key->row_len;
	if (nbytes > 0)
		memcpy(p, rc->bytes, nbytes);
	for (size_t i = 0; i < ncells; i++)
	{
		e->cells[i] = rc->cells[i];
		e->cells[i].row = e->row;
		e->cells[i].qual = p + (uintptr_t) rc->cells[i].qual;
		e->cells[i].val = p + (uintptr_t) rc->cells[i].val;
	}
	e->hash = hash;
	e->bytes = total;
	e->fam_len = (uint32_t) key->fam_len;
	e->row_len = (uint32_t) key->row_len;
	e->nuids = key->nuids;
	e->versions = key->versions;
	e->trunc = key->trunc;
	e->ncells = (uint32_t) ncells;
	e->refs = 1;				/* the cache's */
	if ((it = iter_new(e)) == NULL)
	{
		free(e);
		return NULL;
	}

	/* room first: the least recently used go */
	while (rc->oldest != NULL && rc->stats.bytes + total > rc->budget)
	{
		rc->stats.evictions++;
		unlist(rc, rc->oldest);
	}
	if (rc->stats.entries + 1 > rc->nbuckets)
		(void) grow(rc);
	e->hnext = rc->buckets[hash & (rc->nbuckets - 1)];
	rc->buckets[hash & (rc->nbuckets - 1)] = e;
	e->older = rc->newest;
	if (rc->newest)
		rc->newest->newer = e;
	else
		rc->oldest = e;
	rc->newest = e;
	rc->stats.entries++;
	rc->stats.bytes += total;
	rc->stats.fills++;
	return it;
}

void
wc_rowcache_get_stats(const wc_rowcache *rc, wc_rowcache_stats *stats)
{
	*stats = rc->stats;
}
