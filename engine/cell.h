/*
 * cell.h -- the internal entry: one put or tombstone inside one family.
 *
 * Order (wc_cell_cmp), the order of memtables, sorted files and merges:
 *   rowkey      bytes ascending (shorter prefix first)
 *   family scope  a DEL_FAMILY tombstone before every column of the row
 *   qualifier   bytes ascending
 *   column scope  a DEL_COLUMN tombstone before every version of the column
 *   ts          descending (newest first)
 *   seq         descending (latest write first)
 * Type does not take part: (row, qual, ts, seq) is unique in a store because a
 * sequence number is given to exactly one entry.
 *
 * Tombstones: DEL_VERSION hides entries of the same (row, qual, ts) with a lower
 * seq; DEL_COLUMN hides the column's entries with a lower seq; DEL_FAMILY hides
 * the row's entries in this family with a lower seq.  For DEL_COLUMN and
 * DEL_FAMILY, ts is stored as INT64_MAX and qual is empty for DEL_FAMILY.
 * DEL_ALL (truncate) exists only in log records and batches; it becomes the
 * store's truncate_seq and never a stored entry.
 *
 * A bounded DEL_FAMILY carries a committed seq B as its 8-byte value (fixed64)
 * and hides only the row's entries in the family with seq <= B (and below its
 * own seq): a transaction's delete of what its snapshot saw, which must spare
 * what others commit after that snapshot but before its own commit (which
 * gives the marker its seq).  A plain DEL_FAMILY has an empty value.  In
 * batches and logs a bounded one is encoded as type DEL_FAMILY_UPTO (an older
 * release rejects it); a decoded entry is a DEL_FAMILY with the value.
 *
 * A bounded DEL_COLUMN is the same for one column: its 8-byte value B hides
 * the column's entries with seq <= B (and below its own seq), and spares what
 * others commit to the column between the deleter's snapshot and its commit.
 * A plain DEL_COLUMN has an empty value.  In batches and logs a bounded one is
 * type DEL_COLUMN_UPTO; decoded, a DEL_COLUMN with the value.  Unlike plain
 * ones, the column's DEL_COLUMN entries then do not hide less as their seqs
 * fall: one written earlier, with a lower seq, may have a later bound than the
 * one before it in order.  wc_cell_column_mask says what each hides.
 */
#ifndef WC_CELL_H
#define WC_CELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wc.h"

/* Entry types: part of the on-disk format (FORMAT.md); never renumber. */
#define WC_TYPE_PUT			1
#define WC_TYPE_DEL_VERSION	2
#define WC_TYPE_DEL_COLUMN	3
#define WC_TYPE_DEL_FAMILY	4
#define WC_TYPE_DEL_ALL		5
#define WC_TYPE_DEL_FAMILY_UPTO	6	/* batches and logs only: a bounded DEL_FAMILY */
#define WC_TYPE_DEL_COLUMN_UPTO	7	/* batches and logs only: a bounded DEL_COLUMN */

/* The value of a bounded DEL_FAMILY or DEL_COLUMN: the bound, fixed64 (format). */
#define WC_FAMILY_BOUND_LEN	8
#define WC_COLUMN_BOUND_LEN	WC_FAMILY_BOUND_LEN

/* Sequence numbers of committed writes are below this; a writer's own pending
 * (uncommitted) entries are numbered from it so they sort as newest. */
#define WC_SEQ_PENDING_BASE	(UINT64_C(1) << 62)
#define WC_SEQ_MAX			UINT64_MAX

typedef struct wc_cell
{
	const uint8_t *row;
	uint32_t	row_len;
	const uint8_t *qual;
	uint32_t	qual_len;
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
	const uint8_t *val;
	uint32_t	val_len;
} wc_cell;

/* Total order described above; returns <0, 0, >0. */
int			wc_cell_cmp(const wc_cell *a, const wc_cell *b);

/* Compares only the rowkeys. */
int			wc_row_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* True if a and b are the same column: same row, qualifier and scope. */
bool		wc_cell_same_column(const wc_cell *a, const wc_cell *b);

/* Fills *c with the smallest possible entry of row (a seek target). */
void		wc_cell_row_start(wc_cell *c, const uint8_t *row, size_t row_len);

/* Fills *c with the smallest entry of column (row, qual): its DEL_COLUMN position. */
void		wc_cell_column_start(wc_cell *c, const uint8_t *row, size_t row_len,
								 const uint8_t *qual, size_t qual_len);

static inline bool
wc_type_is_tombstone(uint8_t type)
{
	return type != WC_TYPE_PUT;
}

/* Family scope: 0 for DEL_FAMILY, 1 otherwise; column scope: 0 for DEL_COLUMN. */
static inline int
wc_cell_fam_scope(const wc_cell *c)
{
	return c->type == WC_TYPE_DEL_FAMILY ? 0 : 1;
}

static inline int
wc_cell_col_scope(const wc_cell *c)
{
	return c->type == WC_TYPE_DEL_COLUMN ? 0 : 1;
}

/*
 * The highest seq a range tombstone c (a DEL_FAMILY or DEL_COLUMN) hides: its
 * own for a plain one (no other entry has it), its bound for a bounded one,
 * never above its own.
 */
static inline uint64_t
wc_cell_bound_mask(const wc_cell *c)
{
	uint64_t	bound;

	if (c->val_len != WC_FAMILY_BOUND_LEN)
		return c->seq;
	bound = 0;
	for (int i = WC_FAMILY_BOUND_LEN - 1; i >= 0; i--)
		bound = (bound << 8) | c->val[i];
	return bound < c->seq ? bound : c->seq;
}

/* The highest seq DEL_FAMILY c hides (entries of its row and family). */
static inline uint64_t
wc_cell_family_mask(const wc_cell *c)
{
	return wc_cell_bound_mask(c);
}

/* The highest seq DEL_COLUMN c hides (entries of its column). */
static inline uint64_t
wc_cell_column_mask(const wc_cell *c)
{
	return wc_cell_bound_mask(c);
}

#endif
