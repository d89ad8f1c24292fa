/*
 * merge_iter.c -- the union of several sorted iterators, in cell order.
 *
 * A binary min-heap of the valid children, each with its current cell cached
 * (a cell pointer stays valid until its own iterator moves, and only the top
 * child moves).  next() advances the top child and sifts it down: when one
 * source supplies a run of consecutive entries, as a memtable over sorted
 * files often does, that costs one or two comparisons whatever the number of
 * children, and log2(n) levels at worst for the 20+ sources of a store with
 * many sorted files.
 *
 * seek_row_before leaves in the heap only the children that hold the row it
 * finds (iter.h).
 *
 * Errors are sticky: a child that stops with an error stops the merge, which
 * stays invalid (even across seeks) and reports that error, so a caller that
 * checks status only at the end can never mistake a failure for an end.
 */
#include "iter.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

typedef struct merge_ent
{
	const wc_cell *cell;		/* current cell of it */
	wc_iter    *it;
} merge_ent;

typedef struct merge_iter
{
	wc_iter		base;
	int			n;				/* children */
	int			size;			/* valid children, in heap[0..size-1] */
	bool		failed;
	bool		forward;		/* positioned by seek or seek_first, then next only */
	bool		owns;			/* closes its children */
	wc_iter   **kids;			/* every child */
	merge_ent  *heap;
	wc_err		err;			/* the first child error */
} merge_iter;

static void
sift_down(merge_iter *m, int i)
{
	merge_ent  *h = m->heap;
	int			n = m->size;
	merge_ent	e = h[i];

	for (;;)
	{
		int			c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && wc_cell_cmp(h[c + 1].cell, h[c].cell) < 0)
			c++;
		if (wc_cell_cmp(e.cell, h[c].cell) <= 0)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

/* Records why child it is no longer valid; false if that is an error. */
static bool
child_ended(merge_iter *m, wc_iter *it)
{
	wc_err		e;
	int			rc;

	wc_err_clear(&e);
	rc = wc_iter_status(it, &e);
	if (rc == WC_OK)
		return true;
	if (e.code == WC_OK)
		wc_err_set(&e, rc, "a merged iterator failed: %s", wc_code_name(rc));
	m->err = e;
	m->failed = true;
	m->size = 0;
	return false;
}

/* Rebuilds the heap after every child was repositioned. */
static void
merge_build(merge_iter *m)
{
	m->size = 0;
	if (m->failed)
		return;
	for (int i = 0; i < m->n; i++)
	{
		wc_iter    *it = m->kids[i];

		if (wc_iter_valid(it))
		{
			m->heap[m->size].it = it;
			m->heap[m->size].cell = wc_iter_cell(it);
			m->size++;
		}
		else if (!child_ended(m, it))
			return;
	}
	for (int i = m->size / 2 - 1; i >= 0; i--)
		sift_down(m, i);
}

static void
merge_seek_first(wc_iter *it)
{
	merge_iter *m = (merge_iter *) it;

	if (m->failed)
		return;
	for (int i = 0; i < m->n; i++)
		wc_iter_seek_first(m->kids[i]);
	merge_build(m);
	m->forward = true;
}

/*
 * A seek forward from where the merge stands, to target >= its current cell,
 * after seek or seek_first and nexts only: every child's entries before its
 * current one are below target then (below the last seek's target, or passed
 * by next as the merge's smallest, which is at most its current cell), so a
 * child whose current cell is >= target is where the seek would put it, and a
 * child that ran out stays out.  Only the others seek.  The point: a scan that
 * skips the versions of a column (scan.c) seeks the merge once per column, and
 * the memtable holding a row's many recent versions is then the only child
 * that needs it, not every sorted file too.
 */
static void
merge_seek_forward(merge_iter *m, const wc_cell *target)
{
	int			n = m->size;

	m->size = 0;
	for (int i = 0; i < n; i++)
	{
		merge_ent	e = m->heap[i];

		if (wc_cell_cmp(e.cell, target) < 0)
		{
			wc_iter_seek(e.it, target);
			if (!wc_iter_valid(e.it))
			{
				if (!child_ended(m, e.it))
					return;
				continue;
			}
			e.cell = wc_iter_cell(e.it);
		}
		m->heap[m->size++] = e;
	}
	for (int i = m->size / 2 - 1; i >= 0; i--)
		sift_down(m, i);
}

static void
merge_seek(wc_iter *it, const wc_cell *target)
{
	merge_iter *m = (merge_iter *) it;

	if (m->failed)
		return;
	if (m->forward && m->size > 0 && wc_cell_cmp(target, m->heap[0].cell) >= 0)
	{
		merge_seek_forward(m, target);
		return;
	}
	for (int i = 0; i < m->n; i++)
		wc_iter_seek(m->kids[i], target);
	merge_build(m);
	m->forward = true;
}

/*
 * The greatest of the rows the children find below target.  The heap holds
 * the children at that row, each at its first entry there; the others sit
 * on smaller rows and are left out until the next seek.
 */
static void
merge_seek_row_before(wc_iter *it, const wc_cell *target)
{
	merge_iter *m = (merge_iter *) it;

	m->size = 0;
	m->forward = false;			/* children left out are not where a seek leaves them */
	if (m->failed)
		return;
	for (int i = 0; i < m->n; i++)
	{
		wc_iter    *kid = m->kids[i];
		const wc_cell *c;
		int			cmp;

		wc_iter_seek_row_before(kid, target);
		if (!wc_iter_valid(kid))
		{
			if (!child_ended(m, kid))
				return;
			continue;
		}
		c = wc_iter_cell(kid);
		cmp = m->size == 0 ? 1 :
			wc_row_cmp(c->row, c->row_len, m->heap[0].cell->row, m->heap[0].cell->row_len);
		if (cmp > 0)
			m->size = 0;		/* a greater row: drop the smaller one's children */
		if (cmp >= 0)
		{
			m->heap[m->size].it = kid;
			m->heap[m->size].cell = c;
			m->size++;
		}
	}
	for (int i = m->size / 2 - 1; i >= 0; i--)
		sift_down(m, i);
}

static void
merge_next(wc_iter *it)
{
	merge_iter *m = (merge_iter *) it;
	merge_ent  *top;

	if (m->size == 0)
		return;
	top = &m->heap[0];
	wc_iter_next(top->it);
	if (wc_iter_valid(top->it))
		top->cell = wc_iter_cell(top->it);
	else
	{
		if (!child_ended(m, top->it))
			return;
		*top = m->heap[--m->size];
	}
	if (m->size > 1)
		sift_down(m, 0);
}

static bool
merge_valid(const wc_iter *it)
{
	return ((const merge_iter *) it)->size > 0;
}

static const wc_cell *
merge_cell(const wc_iter *it)
{
	return ((const merge_iter *) it)->heap[0].cell;
}

static int
merge_status(const wc_iter *it, wc_err *err)
{
	const merge_iter *m = (const merge_iter *) it;

	if (!m->failed)
		return WC_OK;
	if (err != NULL && err->code == WC_OK)
		*err = m->err;
	return m->err.code;
}

static void
merge_close(wc_iter *it)
{
	merge_iter *m = (merge_iter *) it;

	for (int i = 0; i < m->n && m->owns; i++)
		wc_iter_close(m->kids[i]);
	free(m);
}

static const wc_iter_ops merge_ops = {
	merge_seek_first,
	merge_seek,
	merge_next,
	merge_valid,
	merge_cell,
	merge_status,
	merge_close,
	merge_seek_row_before
};

static wc_iter *
merge_new(wc_iter **children, int n, bool owns)
{
	merge_iter *m;
	int			nkids = 0;

	if (n < 0)
		n = 0;
	for (int i = 0; i < n; i++)
		if (children[i] != NULL)
			nkids++;
	/* one child needs no merging: hand it back as it is (if the caller gives it) */
	if (nkids == 1 && owns)
		for (int i = 0; i < n; i++)
			if (children[i] != NULL)
				return children[i];

	m = malloc(sizeof(merge_iter) + (size_t) nkids * (sizeof(wc_iter *) + sizeof(merge_ent)));
	if (m == NULL)
	{
		for (int i = 0; i < n && owns; i++)
			wc_iter_close(children[i]);
		return NULL;
	}
	m->base.ops = &merge_ops;
	m->n = nkids;
	m->size = 0;
	m->failed = false;
	m->forward = false;
	m->owns = owns;
	/* merge_ent holds pointers only, so it is aligned right after the struct */
	m->heap = (merge_ent *) (m + 1);
	m->kids = (wc_iter **) (m->heap + nkids);
	wc_err_clear(&m->err);
	nkids = 0;
	for (int i = 0; i < n; i++)
		if (children[i] != NULL)
			m->kids[nkids++] = children[i];
	return &m->base;
}

wc_iter *
wc_merge_iter_new(wc_iter **children, int n)
{
	return merge_new(children, n, true);
}

wc_iter *
wc_merge_iter_new_borrowing(wc_iter **children, int n)
{
	return merge_new(children, n, false);
}
