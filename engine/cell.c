/*
 * cell.c -- the order of internal entries.
 */
#include "cell.h"

#include <string.h>

int
wc_row_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	int			r = n ? memcmp(a, b, n) : 0;

	if (r != 0)
		return r;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

int
wc_cell_cmp(const wc_cell *a, const wc_cell *b)
{
	int			r = wc_row_cmp(a->row, a->row_len, b->row, b->row_len);

	if (r != 0)
		return r;
	r = wc_cell_fam_scope(a) - wc_cell_fam_scope(b);
	if (r != 0)
		return r;
	r = wc_row_cmp(a->qual, a->qual_len, b->qual, b->qual_len);
	if (r != 0)
		return r;
	r = wc_cell_col_scope(a) - wc_cell_col_scope(b);
	if (r != 0)
		return r;
	if (a->ts != b->ts)
		return a->ts > b->ts ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq > b->seq ? -1 : 1;
	return 0;
}

bool
wc_cell_same_column(const wc_cell *a, const wc_cell *b)
{
	return wc_row_cmp(a->row, a->row_len, b->row, b->row_len) == 0 &&
		wc_cell_fam_scope(a) == wc_cell_fam_scope(b) &&
		wc_row_cmp(a->qual, a->qual_len, b->qual, b->qual_len) == 0;
}

void
wc_cell_row_start(wc_cell *c, const uint8_t *row, size_t row_len)
{
	memset(c, 0, sizeof(*c));
	c->row = row;
	c->row_len = (uint32_t) row_len;
	c->type = WC_TYPE_DEL_FAMILY;
	c->ts = INT64_MAX;
	c->seq = WC_SEQ_MAX;
}

void
wc_cell_column_start(wc_cell *c, const uint8_t *row, size_t row_len,
					 const uint8_t *qual, size_t qual_len)
{
	memset(c, 0, sizeof(*c));
	c->row = row;
	c->row_len = (uint32_t) row_len;
	c->qual = qual;
	c->qual_len = (uint32_t) qual_len;
	c->type = WC_TYPE_DEL_COLUMN;
	c->ts = INT64_MAX;
	c->seq = WC_SEQ_MAX;
}
