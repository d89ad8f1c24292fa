/*
 * iter.h -- the internal iterator every source implements (memtable, sorted
 * file, merge, filters), so the merge and visibility logic is written once.
 *
 * Usage: seek or seek_first, then while (valid) { cell; next }.  When valid turns
 * false, status tells an end (WC_OK) from an error (code, message in err).
 * Reversed scans (scan.c) step backward a row at a time with seek_row_before,
 * then read the row forward with next: iterators have no prev.
 * The wc_cell returned by cell() and the bytes it points to stay valid until the
 * next call of seek/seek_first/next/close on the same iterator.
 */
#ifndef WC_ITER_H
#define WC_ITER_H

#include "cell.h"
#include "wc.h"

typedef struct wc_iter wc_iter;

typedef struct wc_iter_ops
{
	void		(*seek_first) (wc_iter *it);
	/* Positions at the first entry >= target (wc_cell_cmp). */
	void		(*seek) (wc_iter *it, const wc_cell *target);
	void		(*next) (wc_iter *it);
	bool		(*valid) (const wc_iter *it);
	const wc_cell *(*cell) (const wc_iter *it);
	/* WC_OK, or the first error with its message copied into err. */
	int			(*status) (const wc_iter *it, wc_err *err);
	void		(*close) (wc_iter *it);
	/*
	 * Positions at the first entry of the greatest row below target (target
	 * NULL: of the last row), where target is a row's first possible entry
	 * (wc_cell_row_start); invalid when no row is below.  next then walks
	 * that row; past its end a merge goes on only with the children that
	 * hold the row, so a caller stops at the row's end or seeks.
	 */
	void		(*seek_row_before) (wc_iter *it, const wc_cell *target);
} wc_iter_ops;

struct wc_iter
{
	const wc_iter_ops *ops;
};

static inline void wc_iter_seek_first(wc_iter *it) { it->ops->seek_first(it); }
static inline void wc_iter_seek(wc_iter *it, const wc_cell *t) { it->ops->seek(it, t); }
static inline void wc_iter_next(wc_iter *it) { it->ops->next(it); }
static inline bool wc_iter_valid(const wc_iter *it) { return it->ops->valid(it); }
static inline const wc_cell *wc_iter_cell(const wc_iter *it) { return it->ops->cell(it); }
static inline int wc_iter_status(const wc_iter *it, wc_err *err) { return it->ops->status(it, err); }
static inline void wc_iter_seek_row_before(wc_iter *it, const wc_cell *t) { it->ops->seek_row_before(it, t); }
static inline void wc_iter_close(wc_iter *it) { if (it) it->ops->close(it); }

/*
 * Returns an iterator over the union of children[0..n-1] in cell order.  Takes
 * ownership of the children (closed with it).  Equal cells cannot occur (seq is
 * unique); NULL on allocation failure (children are then closed).
 */
wc_iter    *wc_merge_iter_new(wc_iter **children, int n);

/*
 * The same over children it does not own: they stay open when it is closed (or
 * when it cannot be made), for their owner to seek again and close.  A merge of
 * one child too.
 */
wc_iter    *wc_merge_iter_new_borrowing(wc_iter **children, int n);

#endif
