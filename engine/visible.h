/*
 * visible.h -- which entries of a family a reader sees and a compaction keeps.
 *
 * The read rules of DESIGN.md ("Visibility") as one step, shared by the scan
 * (scan.c) and the compaction (compact.c), so that a compaction keeps exactly what
 * readers need: reading its output returns what reading its input did.  A wc_vis
 * is fed the entries of one family in cell order (cell.h) and answers, for each,
 * one wc_vis_verdict:
 *
 *   - which writes exist: a committed entry (seq < WC_SEQ_PENDING_BASE) exists when
 *     trunc <= seq <= snapshot, no pending truncate is set and its seq is in none
 *     of the reader's excluded ranges (the writes its snapshot does not see); a
 *     pending one (a writer's own uncommitted entry) when pend_trunc <= seq <=
 *     pend_max and its seq is in none of the excluded ranges (the entries of
 *     the writer's later commands in a batch it shares with earlier ones).  An
 *     entry that does not exist takes no part in anything below.
 *     (wc_vis_seq_exists alone decides this.)
 *   - masking: a DEL_FAMILY of the row and a DEL_COLUMN of the column hide entries
 *     with a lower seq (a bounded one: with a seq up to its bound, cell.h);
 *     of the entries of one timestamp only the one with the highest
 *     seq counts (so a DEL_VERSION hides older writes of its timestamp, and a put
 *     written after a delete is visible: deletes are ordered by seq, not by ts).
 *   - max_versions: the newest N timestamps of a column that survive masking hold a
 *     place each, whether their latest entry is a put or a DEL_VERSION, so deleting
 *     the newest version does not bring an older one back.  0 = no limit.
 *   - ttl: versions with ts < ttl_cutoff are gone.
 *   - the reader's filters: its time range [ts_min, ts_max] (a version outside it
 *     is not returned but still holds its place for max_versions) and its columns
 *     (quals, qual_prefixes, qual_range: a column not asked for is skipped whole).
 *
 * Modes.  WC_VIS_READ (a scan): WC_VIS_EMIT means "a put to return".  WC_VIS_COMPACT
 * (a compaction that sees, for every row it covers, every sorted file that can hold
 * an entry of that row: all files of the family, or a group no other file overlaps;
 * the logs hold only higher seqs): WC_VIS_EMIT means "write it to the output".  What
 * it keeps is what a reader sees, plus the DEL_VERSION entries that hold a place
 * within max_versions (with max_versions 0 they have no place to hold: the entries
 * they mask are dropped with them).  Tombstones of the other kinds and everything
 * masked, beyond max_versions or expired are dropped.  Entries above keep_above
 * (written by transactions some snapshot may not see yet) are kept as they are
 * and decide nothing about the others: what the compaction drops, a reader who
 * sees more entries would not see either (masking and max_versions only grow
 * with more entries), and a reader who sees fewer finds what it needs.  Except
 * for a bounded tombstone there (cell.h) whose bound lies below keep_above: it
 * hides some of the entries judged and spares later ones, so a version that
 * would take a place for a reader who does not see it frees that place for one
 * who does, and an older version beyond max_versions for the first is not for
 * the second.  In its row (a DEL_FAMILY) or column (a DEL_COLUMN) the
 * compaction then drops nothing for max_versions.  A compaction that
 * sees only the newest files of its rows (rules.partial) keeps the tombstones too.
 *
 * The step is static inline: it is the scan's per-cell path.  It copies the row on
 * a new row and the qualifier on a new column, nothing per cell otherwise.
 */
#ifndef WC_VISIBLE_H
#define WC_VISIBLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cell.h"
#include "env.h"

typedef enum wc_vis_mode
{
	WC_VIS_READ,
	WC_VIS_COMPACT
} wc_vis_mode;

typedef enum wc_vis_verdict
{
	WC_VIS_SKIP,				/* READ: not returned; COMPACT: dropped; a later
								 * entry of the column may be emitted */
	WC_VIS_SKIP_COLUMN,			/* not emitted, nor is any later entry of its
								 * column: a reader may seek past the column */
	WC_VIS_EMIT					/* READ: a visible put; COMPACT: keep it */
} wc_vis_verdict;

/* What a reader or compaction sees: fill with wc_vis_rules_init, then set fields. */
typedef struct wc_vis_rules
{
	wc_vis_mode mode;
	uint64_t	trunc;			/* committed entries below are gone (truncate point) */
	uint64_t	snapshot;		/* committed entries above are not in the snapshot */
	uint64_t	pend_trunc;		/* nonzero: a pending truncate: every committed entry
								 * and the pending ones below are gone */
	uint64_t	pend_max;		/* pending entries above were written after the reader
								 * began */
	/*
	 * READ: committed entries the reader's snapshot does not see (DESIGN.md,
	 * "Snapshots") and pending ones its command does not see
	 * (wc_scan_opts.pending_excl): seq ranges sorted by seq_lo, disjoint; the
	 * caller's array.
	 */
	const wc_seq_range *excl;
	int			nexcl;
	/*
	 * COMPACT: entries above may be hidden from some snapshot: each is kept as it
	 * is and takes no part in what happens to the others (it masks nothing and
	 * holds no place), as if the compaction did not see it.
	 */
	uint64_t	keep_above;
	/*
	 * COMPACT of the newest files of the rows it covers only: every older file of
	 * those rows is left out (its entries all have lower seqs; newer files may come
	 * meanwhile).  Tombstones are kept, since they may mask entries of the older
	 * files; what they mask in the compaction's own files, duplicates, surplus and
	 * expired versions are still dropped (an older entry can neither mask an entry
	 * with a higher seq nor take its place).
	 */
	bool		partial;
	uint32_t	max_versions;	/* 0 = every version */
	int64_t		ttl_cutoff;		/* versions with ts below are expired; INT64_MIN = none */

	/*
	 * READ only; a compaction leaves the defaults (every ts, every column).  The
	 * time range returned, and the columns: those whose qualifier equals one of
	 * quals or starts with one of qual_prefixes (neither = every column).  The
	 * arrays are the caller's and must outlive vis.
	 */
	int64_t		ts_min,
				ts_max;
	const wc_slice *quals;
	int			nquals;
	const wc_slice *qual_prefixes;
	int			nqual_prefixes;
	const wc_key_range *qual_range; /* and within this range; NULL = any */
} wc_vis_rules;

/*
 * The state: the rules, and what the entries fed so far say about the current row
 * and column.  row/row_len and qual/qual_len are the row and column of the last
 * entry that reached them (a copy: valid until the next wc_vis_step or reset); a
 * caller may read them (a scan seeks past a column with them), never write them.
 */
typedef struct wc_vis
{
	wc_vis_rules rules;

	/*
	 * Each flag sits beside what it guards, as in scan.c before: with the three
	 * flags adjacent, gcc merged their stores into one 16-bit store that the next
	 * one-byte load read back, and readseq measured ~3% slower.
	 */

	/* the row */
	uint8_t    *row;
	size_t		row_len,
				row_cap;
	bool		have_row;
	uint64_t	fam_tomb;		/* highest seq a DEL_FAMILY of the row hides, or 0 */
	uint64_t	rows;			/* rows begun since init (a reset does not go back):
								 * unchanged between two cells = the same row */
	bool		row_every_version;	/* COMPACT: max_versions not applied in the
									 * row (a bounded DEL_FAMILY above
									 * keep_above) */

	/* the column */
	uint8_t    *qual;
	size_t		qual_len,
				qual_cap;
	bool		have_col;
	uint64_t	col_tomb;		/* highest seq a DEL_COLUMN of the column hides,
								 * or 0 */
	uint32_t	slots;			/* timestamps of the column that hold a place so far */
	bool		have_ts;
	int64_t		last_ts;		/* the last of them */
	int			qual_hint;		/* wc_vis_column_wanted's */
	bool		col_every_version;	/* the same in the column (a bounded
									 * DEL_COLUMN above keep_above) */
} wc_vis;

/* Rules of a reader that sees every write: READ mode, no truncate, no snapshot
 * limit, no retention, every timestamp and every column. */
void		wc_vis_rules_init(wc_vis_rules *rules);

/* Starts vis with rules (copied); no allocation until the first entry. */
void		wc_vis_init(wc_vis *vis, const wc_vis_rules *rules);

/* Frees vis's buffers; vis keeps its rules and may be fed again (from a row's
 * start) or freed again. */
void		wc_vis_free(wc_vis *vis);

/* Forgets the current row and column: the next entry fed must be the first of its
 * row (as after a scan's seek to the start of a row range). */
static inline void
wc_vis_reset(wc_vis *vis)
{
	vis->have_row = false;
	vis->have_col = false;
}

/* The ttl_cutoff of a family whose versions live ttl_ms, at now_ms (both ms since
 * the epoch); INT64_MIN (none) when ttl_ms is 0. */
static inline int64_t
wc_vis_ttl_cutoff(int64_t now_ms, int64_t ttl_ms)
{
	if (ttl_ms > 0 && now_ms > INT64_MIN + ttl_ms)
		return now_ms - ttl_ms;
	return INT64_MIN;
}

/*
 * Where qualifier q[0..len-1] lies against range r: -1 before its start, 1
 * after its stop, 0 inside.
 */
static inline int
wc_vis_qual_in_range(const wc_key_range *r, const uint8_t *q, size_t len)
{
	int			c;

	if (r->start_bound != WC_UNBOUNDED)
	{
		c = wc_row_cmp(q, len, r->start, r->start_len);
		if (c < 0 || (c == 0 && r->start_bound == WC_EXCLUSIVE))
			return -1;
	}
	if (r->stop_bound != WC_UNBOUNDED)
	{
		c = wc_row_cmp(q, len, r->stop, r->stop_len);
		if (c > 0 || (c == 0 && r->stop_bound == WC_EXCLUSIVE))
			return 1;
	}
	return 0;
}

/*
 * Is the column with qualifier q[0..len-1] one the reader asks for?  *hint is
 * the index in r->quals of the last one found: the one after it is tried
 * first, as a row's columns come in order and readers mostly list qualifiers
 * in that order too (a wide table's mapped ones: a row of ten of them asked
 * ten comparisons of its last column, each a call to memcmp).
 */
static inline bool
wc_vis_column_wanted(const wc_vis_rules *r, const uint8_t *q, size_t len, int *hint)
{
	int			h;

	if (r->qual_range != NULL && wc_vis_qual_in_range(r->qual_range, q, len) != 0)
		return false;
	if (r->nquals == 0 && r->nqual_prefixes == 0)
		return true;
	h = *hint + 1 < r->nquals ? *hint + 1 : 0;
	if (r->nquals > 0 && wc_bytes_eq(r->quals[h].data, r->quals[h].len, q, len))
	{
		*hint = h;
		return true;
	}
	for (int i = 0; i < r->nquals; i++)
		if (wc_bytes_eq(r->quals[i].data, r->quals[i].len, q, len))
		{
			*hint = i;
			return true;
		}
	for (int i = 0; i < r->nqual_prefixes; i++)
		if (r->qual_prefixes[i].len <= len &&
			(r->qual_prefixes[i].len == 0 ||
			 memcmp(r->qual_prefixes[i].data, q, r->qual_prefixes[i].len) == 0))
			return true;
	return false;
}

/* Is seq in one of the reader's excluded ranges (binary search)? */
static inline bool
wc_vis_seq_excluded(const wc_vis_rules *r, uint64_t seq)
{
	int			lo = 0,
				hi = r->nexcl - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (seq < r->excl[mid].lo)
			hi = mid - 1;
		else if (seq > r->excl[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* Does an entry with this seq exist for the reader (snapshot, truncate points and
 * the writes its snapshot does not see)? */
static inline bool
wc_vis_seq_exists(const wc_vis_rules *r, uint64_t seq)
{
	if (seq >= WC_SEQ_PENDING_BASE)
		return seq <= r->pend_max && seq >= r->pend_trunc &&
			(r->nexcl == 0 || !wc_vis_seq_excluded(r, seq));
	return seq <= r->snapshot && seq >= r->trunc && r->pend_trunc == 0 &&
		(r->nexcl == 0 || !wc_vis_seq_excluded(r, seq));
}

/*
 * Feeds c, the entry after the last one fed in cell order (or the first after
 * wc_vis_init or wc_vis_reset), and says what becomes of it.  A caller may leave
 * out the rest of a column after WC_VIS_SKIP_COLUMN (a scan seeks past it), and
 * anything before a reset.  Returns a wc_vis_verdict, or WC_NOMEM (copying the row
 * or qualifier), after which vis must be reset before it is fed again.
 */
static inline int
wc_vis_step(wc_vis *vis, const wc_cell *c)
{
	const wc_vis_rules *r = &vis->rules;
	uint64_t	mask;
	bool		above = false;

	if (c->seq > r->keep_above && r->mode == WC_VIS_COMPACT && c->seq >= r->trunc)
	{
		/* kept as it is; a bounded tombstone that spares some of the entries
		 * judged lifts max_versions in its row or column (above) */
		if ((c->type != WC_TYPE_DEL_FAMILY && c->type != WC_TYPE_DEL_COLUMN) ||
			c->val_len == 0 || wc_cell_bound_mask(c) >= r->keep_above)
			return WC_VIS_EMIT;
		above = true;
	}
	else if (!wc_vis_seq_exists(r, c->seq))
		return WC_VIS_SKIP;

	if (!vis->have_row || !wc_bytes_eq(c->row, c->row_len, vis->row, vis->row_len))
	{
		if (!wc_buf_reserve(&vis->row, &vis->row_cap, c->row_len))
			return WC_NOMEM;
		memcpy(vis->row, c->row, c->row_len);
		vis->row_len = c->row_len;
		vis->have_row = true;
		vis->have_col = false;
		vis->fam_tomb = 0;
		vis->rows++;
		vis->row_every_version = false;
	}
	if (c->type == WC_TYPE_DEL_FAMILY)
	{
		/* a bounded one hides what its bound covers (cell.h) */
		uint64_t	hides = wc_cell_family_mask(c);

		if (above)
		{
			vis->row_every_version = true;
			return WC_VIS_EMIT;
		}

		/*
		 * A partial compaction keeps a tombstone for the older files, unless
		 * one it keeps hides all it does: every reader sees that one (what
		 * set fam_tomb is at or below keep_above).  A row deleted and
		 * written again a thousand times keeps one marker, not a thousand
		 * for every reader to step over.
		 */
		if (hides <= vis->fam_tomb)
			return WC_VIS_SKIP;
		vis->fam_tomb = hides;
		return r->partial ? WC_VIS_EMIT : WC_VIS_SKIP;
	}
	if (!vis->have_col || !wc_bytes_eq(c->qual, c->qual_len, vis->qual, vis->qual_len))
	{
		if (!wc_buf_reserve(&vis->qual, &vis->qual_cap, c->qual_len))
			return WC_NOMEM;
		if (c->qual_len)
			memcpy(vis->qual, c->qual, c->qual_len);
		vis->qual_len = c->qual_len;
		vis->have_col = true;
		vis->col_tomb = 0;
		vis->slots = 0;
		vis->have_ts = false;
		vis->col_every_version = false;
		if (!wc_vis_column_wanted(r, vis->qual, vis->qual_len, &vis->qual_hint))
		{
			/* to this reader the column is deleted whole */
			vis->col_tomb = WC_SEQ_MAX;
			return WC_VIS_SKIP_COLUMN;
		}
	}
	if (c->type == WC_TYPE_DEL_COLUMN)
	{
		/*
		 * The same: a column or family tombstone kept already hides all this
		 * one does.  Not "hides more" by seq: a bounded one (cell.h) with a
		 * lower seq than the one before it may hide more than that one.
		 */
		uint64_t	hides = wc_cell_column_mask(c);

		if (above)
		{
			vis->col_every_version = true;
			return WC_VIS_EMIT;
		}

		if (hides <= vis->col_tomb || hides <= vis->fam_tomb)
			return WC_VIS_SKIP;
		vis->col_tomb = hides;
		return r->partial ? WC_VIS_EMIT : WC_VIS_SKIP;
	}

	/* masked, or an older write of a timestamp already decided */
	mask = vis->fam_tomb > vis->col_tomb ? vis->fam_tomb : vis->col_tomb;
	if (c->seq <= mask || (vis->have_ts && c->ts == vis->last_ts))
		return WC_VIS_SKIP;

	/* the latest write of its timestamp: it holds a place */
	vis->have_ts = true;
	vis->last_ts = c->ts;
	vis->slots++;
	if (r->max_versions != 0 && vis->slots > r->max_versions &&
		!vis->row_every_version && !vis->col_every_version)
		return WC_VIS_SKIP_COLUMN;
	if (c->type != WC_TYPE_PUT)
	{
		/* a DEL_VERSION: hides its timestamp from readers; a compaction keeps it
		 * while it holds a place that counts, a partial one while it may hide an
		 * older file's write of its timestamp */
		if (r->mode == WC_VIS_COMPACT && (r->max_versions != 0 || r->partial) &&
			c->ts >= r->ttl_cutoff)
			return WC_VIS_EMIT;
		return WC_VIS_SKIP;
	}
	if (c->ts > r->ts_max)
		return WC_VIS_SKIP;
	/* every older version is expired or out of range as well */
	if (c->ts < r->ttl_cutoff || c->ts < r->ts_min)
		return WC_VIS_SKIP_COLUMN;
	return WC_VIS_EMIT;
}

/*
 * After an EMIT: would vis refuse every later entry of the column?  A reader
 * (not a compaction, which keeps what some snapshot may need) that holds the
 * versions it asks for: what follows is an older version (SKIP_COLUMN), or
 * one its snapshot does not see, masked, or of a timestamp already decided
 * (SKIP).  A scan then moves past the column at once.
 */
static inline bool
wc_vis_column_full(const wc_vis *vis)
{
	return vis->rules.mode == WC_VIS_READ && vis->rules.max_versions != 0 &&
		vis->slots >= vis->rules.max_versions;
}

#endif
