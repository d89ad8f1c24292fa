/*
 * test_visible.c -- the visibility step (visible.h): each rule in the read and the
 * compaction mode, then random entries against a brute-force reference, a reader
 * that seeks past columns, and "reading the compaction's output = reading its input".
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "coding.h"
#include "visible.h"
#include "testutil.h"

#define PUT		WC_TYPE_PUT
#define DELV	WC_TYPE_DEL_VERSION
#define DELC	WC_TYPE_DEL_COLUMN
#define DELF	WC_TYPE_DEL_FAMILY
#define TOMB_TS	INT64_MAX
#define PEND(n)	(WC_SEQ_PENDING_BASE + (n))

/* An entry written as a literal; rows and qualifiers are static strings. */
typedef struct ent
{
	const char *row;
	const char *qual;
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
	bool		bounded;		/* DELC, DELF: hides seqs up to bound only (cell.h) */
	uint64_t	bound;
} ent;

/* A bounded tombstone in a literal: {"r", "q", TOMB_TS, 9, DELC, UPTO(4)};
 * the other literals leave both fields out (plain) */
#define UPTO(b) .bounded = true, .bound = (b)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* The highest seq tombstone e hides (wc_cell_column_mask, without a cell). */
static uint64_t
ent_mask(const ent *e)
{
	return e->bounded && e->bound < e->seq ? e->bound : e->seq;
}

/*
 * The cell of e; a bounded tombstone's value (its bound) lies in one of a few
 * buffers taken in turn, valid until as many more cells are made.
 */
static wc_cell
to_cell(const ent *e)
{
	static uint8_t bounds[4][WC_COLUMN_BOUND_LEN];
	static int	next_bound;
	wc_cell		c;

	memset(&c, 0, sizeof(c));
	if (e->bounded)
	{
		uint8_t    *v = bounds[next_bound++ % 4];

		wc_put_fixed64(v, e->bound);
		c.val = v;
		c.val_len = WC_COLUMN_BOUND_LEN;
	}
	c.row = (const uint8_t *) e->row;
	c.row_len = (uint32_t) strlen(e->row);
	c.qual = (const uint8_t *) e->qual;
	c.qual_len = (uint32_t) strlen(e->qual);
	c.ts = e->ts;
	c.seq = e->seq;
	c.type = e->type;
	return c;
}

static char
verdict_char(int v)
{
	return v == WC_VIS_EMIT ? 'E' : v == WC_VIS_SKIP ? '-' : v == WC_VIS_SKIP_COLUMN ? 'x' : '?';
}

/*
 * Feeds es[0..n-1] (which must be in cell order) to a fresh wc_vis with rules and
 * returns the verdicts as a string: 'E' emit, '-' skip, 'x' skip the column.
 */
static const char *
run(const wc_vis_rules *rules, const ent *es, int n)
{
	static char out[256];
	wc_vis		vis;

	wc_vis_init(&vis, rules);
	for (int i = 0; i < n; i++)
	{
		wc_cell		c = to_cell(&es[i]);

		if (i > 0)
		{
			wc_cell		p = to_cell(&es[i - 1]);

			if (wc_cell_cmp(&p, &c) >= 0)
			{
				fprintf(stderr, "test bug: entry %d is not in cell order\n", i);
				exit(2);
			}
		}
		out[i] = verdict_char(wc_vis_step(&vis, &c));
	}
	out[n] = '\0';
	wc_vis_free(&vis);
	return out;
}

static wc_vis_rules
rules_of(wc_vis_mode mode, uint32_t max_versions)
{
	wc_vis_rules r;

	wc_vis_rules_init(&r);
	r.mode = mode;
	r.max_versions = max_versions;
	return r;
}

#define N(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* Checks the verdicts of es under rules r. */
#define EXPECT(r, es, want) do { \
	const char *got_ = run(&(r), (es), N(es)); \
	CHECK(strcmp(got_, (want)) == 0, "got \"%s\", want \"%s\"", got_, (want)); \
} while (0)

/* ---------------------------------------------------------------- rules */

static void
test_defaults(void)
{
	wc_vis_rules r;

	wc_vis_rules_init(&r);
	CHECK(r.mode == WC_VIS_READ && r.trunc == 0 && r.snapshot == WC_SEQ_MAX &&
		  r.pend_trunc == 0 && r.pend_max == WC_SEQ_MAX && r.max_versions == 0 &&
		  r.ttl_cutoff == INT64_MIN && r.ts_min == INT64_MIN && r.ts_max == INT64_MAX &&
		  r.nquals == 0 && r.nqual_prefixes == 0,
		  "wc_vis_rules_init sees everything");
	CHECK(wc_vis_ttl_cutoff(1000, 0) == INT64_MIN, "no ttl");
	CHECK(wc_vis_ttl_cutoff(1000, 300) == 700, "ttl 300 at 1000");
	CHECK(wc_vis_ttl_cutoff(INT64_MIN + 5, 10) == INT64_MIN, "cutoff below the clock's range");
}

/* Deletes are ordered by seq: a put after a delete is visible, one before it not. */
static void
test_masking(void)
{
	const ent	col[] = {
		{"r", "q", TOMB_TS, 5, DELC},
		{"r", "q", 10, 7, PUT},		/* written after the DEL_COLUMN */
		{"r", "q", 9, 3, PUT},		/* before it */
		{"r", "q", 8, 5 + 1, DELV}, /* DEL_VERSION after the DEL_COLUMN ... */
		{"r", "q", 8, 4, PUT},		/* ... masks a put of its ts (masked anyway) */
	};
	const ent	fam[] = {
		{"r", "", TOMB_TS, 5, DELF},
		{"r", "a", 10, 3, PUT},		/* before the DEL_FAMILY, in every column */
		{"r", "b", 10, 6, PUT},
		{"r", "b", 9, 2, PUT},
		{"s", "a", 10, 1, PUT},		/* another row: not masked */
	};
	const ent	ver[] = {
		{"r", "q", 10, 6, PUT},		/* a put of ts 10 after its DEL_VERSION */
		{"r", "q", 10, 4, DELV},
		{"r", "q", 10, 2, PUT},
		{"r", "q", 9, 8, DELV},		/* a DEL_VERSION hides its ts only */
		{"r", "q", 9, 7, PUT},
		{"r", "q", 8, 1, PUT},
	};
	const ent	dup[] = {
		{"r", "q", 10, 9, PUT},		/* latest write of ts 10 wins */
		{"r", "q", 10, 3, PUT},
		{"r", "q", 10, 2, PUT},
	};
	const ent	cols[] = {
		{"r", "a", TOMB_TS, 5, DELC},
		{"r", "a", 10, 4, PUT},
		{"r", "b", 10, 3, PUT},		/* another column: not masked */
	};
	wc_vis_rules rd = rules_of(WC_VIS_READ, 0),
				cp = rules_of(WC_VIS_COMPACT, 0);

	EXPECT(rd, col, "-E---");
	EXPECT(cp, col, "-E---");
	EXPECT(rd, fam, "--E-E");
	EXPECT(cp, fam, "--E-E");
	EXPECT(rd, ver, "E----E");
	EXPECT(cp, ver, "E----E");
	EXPECT(rd, dup, "E--");
	EXPECT(cp, dup, "E--");
	EXPECT(rd, cols, "--E");
	EXPECT(cp, cols, "--E");
}

/* max_versions counts timestamps; a DEL_VERSION still holds its place. */
static void
test_max_versions(void)
{
	const ent	three[] = {
		{"r", "q", 30, 3, PUT},
		{"r", "q", 30, 1, PUT},		/* an older write of ts 30: no place of its own */
		{"r", "q", 20, 2, PUT},
		{"r", "q", 10, 4, PUT},
		{"r", "q", 5, 5, PUT},
	};
	/* deleting the newest version does not bring the older one back */
	const ent	delnew[] = {
		{"r", "q", 10, 2, DELV},
		{"r", "q", 10, 1, PUT},
		{"r", "q", 9, 3, PUT},
	};
	/* a masked entry holds no place */
	const ent	masked[] = {
		{"r", "q", TOMB_TS, 5, DELC},
		{"r", "q", 30, 4, DELV},
		{"r", "q", 20, 6, PUT},
	};
	wc_vis_rules r;

	r = rules_of(WC_VIS_READ, 2);
	EXPECT(r, three, "E-Exx");
	r = rules_of(WC_VIS_COMPACT, 2);
	EXPECT(r, three, "E-Exx");
	r = rules_of(WC_VIS_READ, 0);
	EXPECT(r, three, "E-EEE");

	r = rules_of(WC_VIS_READ, 1);
	EXPECT(r, delnew, "--x");
	r = rules_of(WC_VIS_COMPACT, 1);
	EXPECT(r, delnew, "E-x");		/* the DEL_VERSION is kept: it holds the place */
	r = rules_of(WC_VIS_READ, 2);
	EXPECT(r, delnew, "--E");
	r = rules_of(WC_VIS_COMPACT, 2);
	EXPECT(r, delnew, "E-E");
	r = rules_of(WC_VIS_READ, 0);
	EXPECT(r, delnew, "--E");
	r = rules_of(WC_VIS_COMPACT, 0);
	EXPECT(r, delnew, "--E");		/* no limit: no place to hold, dropped */

	r = rules_of(WC_VIS_READ, 1);
	EXPECT(r, masked, "--E");
	r = rules_of(WC_VIS_COMPACT, 1);
	EXPECT(r, masked, "--E");
}

static void
test_ttl(void)
{
	const ent	es[] = {
		{"r", "q", 30, 1, PUT},
		{"r", "q", 20, 2, DELV},
		{"r", "q", 15, 3, PUT},		/* ts == cutoff: alive */
		{"r", "q", 10, 4, DELV},	/* expired DEL_VERSION */
		{"r", "q", 9, 5, PUT},
		{"r", "q", 5, 6, PUT},
	};
	wc_vis_rules r;

	r = rules_of(WC_VIS_READ, 0);
	r.ttl_cutoff = 15;
	EXPECT(r, es, "E-E-xx");
	r.mode = WC_VIS_COMPACT;
	EXPECT(r, es, "E-E-xx");		/* max_versions 0: the DEL_VERSION goes */
	r.max_versions = 5;
	EXPECT(r, es, "EEE-xx");
	r.mode = WC_VIS_READ;
	EXPECT(r, es, "E-E-xx");
	r.max_versions = 2;				/* retention first: ts 15 is the third place */
	EXPECT(r, es, "E-xxxx");
}

/* Entries below the truncate point and above the snapshot take part in nothing. */
static void
test_truncate_and_snapshot(void)
{
	const ent	trunc[] = {
		{"r", "", TOMB_TS, 10, DELF},	/* at the truncate point: masks */
		{"r", "a", 50, 5, PUT},			/* gone: holds no place */
		{"r", "a", 40, 12, PUT},
		{"r", "a", 30, 11, PUT},
		{"r", "a", 20, 9, PUT},
		{"s", "a", TOMB_TS, 9, DELC},	/* gone: masks nothing */
		{"s", "a", 10, 11, PUT},
		{"s", "a", 5, 8, PUT},
	};
	const ent	snap[] = {
		{"r", "", TOMB_TS, 21, DELF},	/* after the snapshot: masks nothing */
		{"r", "a", TOMB_TS, 20, DELC},
		{"r", "a", 50, 11, PUT},		/* after the snapshot: no place */
		{"r", "a", 40, 9, DELV},		/* the snapshot's newest version */
		{"r", "a", 40, 8, PUT},
		{"r", "a", 30, 10, PUT},		/* at the snapshot */
		{"r", "a", 20, 7, PUT},
	};
	wc_vis_rules r;

	r = rules_of(WC_VIS_READ, 0);
	r.trunc = 10;
	EXPECT(r, trunc, "--EE--E-");
	r.max_versions = 1;
	EXPECT(r, trunc, "--Ex--E-");
	r.mode = WC_VIS_COMPACT;
	EXPECT(r, trunc, "--Ex--E-");

	r = rules_of(WC_VIS_READ, 0);
	r.snapshot = 10;
	EXPECT(r, snap, "-----EE");
	r.max_versions = 2;
	EXPECT(r, snap, "-----Ex");
	r.max_versions = 1;
	EXPECT(r, snap, "-----xx");
	r.snapshot = WC_SEQ_MAX;		/* every write: the DEL_FAMILY masks all */
	EXPECT(r, snap, "-------");
}

/* A writer's own pending entries: numbered from WC_SEQ_PENDING_BASE, newest. */
static void
test_pending(void)
{
	const ent	es[] = {
		{"r", "a", 30, PEND(3), PUT},	/* written after the reader began */
		{"r", "a", 20, PEND(2), PUT},
		{"r", "a", 20, 7, PUT},			/* overwritten by the pending put */
		{"r", "a", 10, PEND(1), DELV},
		{"r", "a", 10, 6, PUT},
		{"r", "a", 5, 5, PUT},
	};
	wc_vis_rules r;

	r = rules_of(WC_VIS_READ, 0);
	r.snapshot = 100;
	r.pend_max = PEND(2);
	EXPECT(r, es, "-E---E");
	/* a pending truncate at PEND(2): every committed entry and PEND(1) are gone */
	r.pend_trunc = PEND(2);
	EXPECT(r, es, "-E----");
	r.pend_max = PEND(3);
	r.pend_trunc = 0;
	r.max_versions = 2;
	EXPECT(r, es, "EE-x-x");
}

/* The reader's time range: a version outside it still holds its place. */
static void
test_time_range(void)
{
	const ent	es[] = {
		{"r", "q", 30, 1, PUT},
		{"r", "q", 20, 2, PUT},
		{"r", "q", 10, 3, PUT},
		{"s", "q", 30, 4, PUT},
	};
	wc_vis_rules r = rules_of(WC_VIS_READ, 0);

	r.ts_min = 15;
	r.ts_max = 25;
	EXPECT(r, es, "-Ex-");
	r.max_versions = 1;
	EXPECT(r, es, "-xx-");			/* ts 30 holds the one place */
	r.ts_min = 30;
	r.ts_max = 30;
	EXPECT(r, es, "ExxE");
}

/* The reader's columns: a column not asked for is skipped whole. */
static void
test_columns(void)
{
	const ent	es[] = {
		{"r", "", TOMB_TS, 9, DELF},
		{"r", "", 10, 10, PUT},		/* filtered below: "" is not asked for */
		{"r", "", 9, 11, PUT},		/* the rest of it, if fed, is not emitted either */
		{"r", "a", TOMB_TS, 12, DELC},
		{"r", "a", 10, 13, PUT},
		{"r", "a", 9, 5, PUT},
		{"r", "ab", 10, 14, PUT},	/* neither "a" nor starting with "b" */
		{"r", "b", TOMB_TS, 3, DELC},
		{"r", "b", 10, 15, PUT},
		{"r", "ba", 10, 16, PUT},
		{"r", "c", TOMB_TS, 2, DELC},	/* an unwanted column's first entry */
		{"r", "c", 10, 17, PUT},
		{"s", "a", 10, 1, PUT},
	};
	const wc_slice want_a[] = {{(const uint8_t *) "a", 1}};
	const wc_slice want_b[] = {{(const uint8_t *) "b", 1}};
	const wc_slice empty[] = {{(const uint8_t *) "", 0}};
	wc_vis_rules r = rules_of(WC_VIS_READ, 0);

	EXPECT(r, es, "-EE-E-E-EE-EE");	/* no filter */
	r.quals = want_a;
	r.nquals = 1;
	r.qual_prefixes = want_b;
	r.nqual_prefixes = 1;
	EXPECT(r, es, "-x--E-x-EEx-E");
	r.nqual_prefixes = 0;
	EXPECT(r, es, "-x--E-xx-xx-E");
	r.quals = empty;				/* the empty qualifier exactly */
	EXPECT(r, es, "-EEx--xx-xx-x");
	r.nquals = 0;
	r.qual_prefixes = empty;		/* the empty prefix: every column */
	r.nqual_prefixes = 1;
	EXPECT(r, es, "-EE-E-E-EE-EE");
}

/* vis holds the current row and column; a reset forgets them. */
static void
test_position_and_reset(void)
{
	const ent	fam = {"r", "", TOMB_TS, 9, DELF};
	const ent	put = {"r", "a", 10, 1, PUT};
	const ent	other = {"rr", "ab", 10, 2, PUT};
	wc_vis_rules r = rules_of(WC_VIS_READ, 0);
	wc_vis		vis;
	wc_cell		c;
	int			v;

	wc_vis_init(&vis, &r);
	c = to_cell(&fam);
	v = wc_vis_step(&vis, &c);
	CHECK(v == WC_VIS_SKIP && vis.row_len == 1 && memcmp(vis.row, "r", 1) == 0,
		  "a DEL_FAMILY starts its row: %c", verdict_char(v));
	c = to_cell(&put);
	v = wc_vis_step(&vis, &c);
	CHECK(v == WC_VIS_SKIP, "masked by the row's DEL_FAMILY: %c", verdict_char(v));
	CHECK(vis.qual_len == 1 && memcmp(vis.qual, "a", 1) == 0, "vis holds the column");

	/* after a reset (a seek to a row's start), the row's tombstones are forgotten */
	wc_vis_reset(&vis);
	v = wc_vis_step(&vis, &c);
	CHECK(v == WC_VIS_EMIT, "after a reset: %c", verdict_char(v));
	c = to_cell(&other);
	v = wc_vis_step(&vis, &c);
	CHECK(v == WC_VIS_EMIT && vis.row_len == 2 && memcmp(vis.row, "rr", 2) == 0 &&
		  vis.qual_len == 2 && memcmp(vis.qual, "ab", 2) == 0, "the next row and column: %c",
		  verdict_char(v));
	wc_vis_free(&vis);
	wc_vis_free(&vis);				/* twice is fine */
	CHECK(vis.row == NULL && vis.qual == NULL && vis.rules.mode == WC_VIS_READ,
		  "freed, rules kept");
}

/*
 * A partial compaction keeps tombstones for the older files it leaves out, but
 * not those a tombstone it keeps hides wholly: a row deleted and written again
 * keeps its newest marker, not every one.  Tombstones above keep_above are kept
 * as they are and hide nothing here.
 */
static void
test_partial_tombstones(void)
{
	const ent	col[] = {
		{"r", "q", TOMB_TS, 9, DELC},
		{"r", "q", TOMB_TS, 7, DELC},	/* hidden by seq 9 */
		{"r", "q", TOMB_TS, 5, DELC},
		{"r", "q", 10, 10, PUT},
		{"r", "q", 10, 8, PUT},			/* masked, and an older write of ts 10 */
		{"r", "q", 9, 6, PUT},			/* masked */
	};
	const ent	fam[] = {
		{"r", "", TOMB_TS, 12, DELF},
		{"r", "", TOMB_TS, 8, DELF},	/* hidden by seq 12 */
		{"r", "a", TOMB_TS, 11, DELC},	/* hides less than the family's */
		{"r", "a", 10, 13, PUT},
		{"r", "b", TOMB_TS, 14, DELC},	/* hides more: kept */
		{"r", "b", 10, 15, PUT},
		{"s", "", TOMB_TS, 3, DELF},	/* another row: its own marker */
	};
	wc_vis_rules r = rules_of(WC_VIS_COMPACT, 0);

	r.partial = true;
	EXPECT(r, col, "E--E--");
	EXPECT(r, fam, "E--EEEE");
	r.partial = false;				/* a full compaction keeps none */
	EXPECT(r, col, "---E--");
	EXPECT(r, fam, "---E-E-");
	/* above keep_above: kept, and hiding nothing, so the next one is kept too */
	r.partial = true;
	r.keep_above = 8;
	EXPECT(r, col, "EE-EE-");		/* seq 8: the newest some snapshot sees */
	EXPECT(r, fam, "EEEEEEE");
	/* a reader sees only the newest tombstone either way */
	r = rules_of(WC_VIS_READ, 0);
	EXPECT(r, col, "---E--");
}

/*
 * Bounded DEL_COLUMN entries (cell.h): each hides the column's entries up to its
 * bound, so one with a lower seq (written earlier) may hide more than the one
 * before it; a partial compaction keeps a bounded one unless one it keeps
 * hides all it does, by bound, not by seq.
 */
static void
test_bounded_tombstones(void)
{
	const ent	col[] = {
		{"r", "q", TOMB_TS, 9, DELC, UPTO(4)},	/* hides seqs 1 to 4 */
		{"r", "q", TOMB_TS, 7, DELC, UPTO(6)},	/* written earlier: hides 1 to 6 */
		{"r", "q", 10, 8, PUT},		/* above both bounds */
		{"r", "q", 9, 6, PUT},		/* at the second's bound */
		{"r", "q", 8, 5, PUT},		/* above the first's, at or below the second's */
		{"r", "q", 7, 4, PUT},		/* at the first's */
		{"r", "q", 6, 3, PUT},
	};
	const ent	plain_first[] = {
		{"r", "q", TOMB_TS, 9, DELC},	/* plain: hides 1 to 9 */
		{"r", "q", TOMB_TS, 8, DELC, UPTO(5)},	/* hidden wholly by it */
		{"r", "q", 10, 10, PUT},
		{"r", "q", 9, 7, PUT},
	};
	const ent	bounded_first[] = {
		{"r", "q", TOMB_TS, 9, DELC, UPTO(1)},	/* a write at seq 3 is spared */
		{"r", "q", TOMB_TS, 2, DELC},	/* plain, written earlier: hides more */
		{"r", "q", 10, 10, PUT},
		{"r", "q", 9, 3, PUT},
		{"r", "q", 8, 1, PUT},
	};
	const ent	above_own[] = {
		{"r", "q", TOMB_TS, 5, DELC, UPTO(100)},	/* never above its own seq */
		{"r", "q", 10, 6, PUT},
		{"r", "q", 9, 5 - 1, PUT},
	};
	const ent	fam[] = {
		{"r", "", TOMB_TS, 9, DELF, UPTO(3)},
		{"r", "a", TOMB_TS, 8, DELC, UPTO(2)},	/* hides less than the family's */
		{"r", "a", 10, 3, PUT},
		{"r", "b", TOMB_TS, 7, DELC, UPTO(5)},	/* hides more */
		{"r", "b", 10, 5, PUT},
		{"r", "b", 9, 4, PUT},
		{"r", "b", 8, 6, PUT},
	};
	wc_vis_rules rd = rules_of(WC_VIS_READ, 0),
				cp = rules_of(WC_VIS_COMPACT, 0),
				pc = rules_of(WC_VIS_COMPACT, 0);

	pc.partial = true;
	EXPECT(rd, col, "--E----");
	EXPECT(cp, col, "--E----");
	EXPECT(pc, col, "EEE----");
	EXPECT(rd, plain_first, "--E-");
	EXPECT(pc, plain_first, "E-E-");
	EXPECT(rd, bounded_first, "--EE-");
	EXPECT(pc, bounded_first, "EEEE-");
	EXPECT(rd, above_own, "-E-");
	EXPECT(pc, above_own, "EE-");
	EXPECT(rd, fam, "------E");
	EXPECT(pc, fam, "E--E--E");
	/* max_versions: masked versions hold no place, spared ones do */
	rd.max_versions = 1;
	EXPECT(rd, bounded_first, "--Ex-");
	/* above keep_above: kept as it is, hiding nothing, so the next one is kept */
	pc.keep_above = 8;
	EXPECT(pc, plain_first, "EEEE");
	{
		/*
		 * A bounded one above keep_above spares some of the entries judged: a
		 * version that holds a place for a reader who does not see it (seq 2)
		 * is hidden from one who does, for whom the next one holds it.  So in
		 * its column (its row, for a DEL_FAMILY) no version is dropped for
		 * max_versions; a plain one, or one whose bound reaches keep_above,
		 * hides every entry judged and changes nothing.
		 */
		const ent	bcol[] = {
			{"r", "q", TOMB_TS, 9, DELC, UPTO(3)},
			{"r", "q", 10, 2, PUT},
			{"r", "q", 9, 5, PUT},
			{"r", "q", 8, 4, PUT},
			{"r", "z", 10, 1, PUT},		/* another column */
			{"r", "z", 9, 6, PUT},
		};
		const ent	reach[] = {
			{"r", "q", TOMB_TS, 9, DELC, UPTO(6)},
			{"r", "q", 10, 2, PUT},
			{"r", "q", 9, 5, PUT},
			{"r", "q", 8, 4, PUT},
		};
		const ent	bfam[] = {
			{"r", "", TOMB_TS, 9, DELF, UPTO(3)},
			{"r", "q", 10, 2, PUT},
			{"r", "q", 9, 5, PUT},
			{"r", "z", 10, 1, PUT},
			{"r", "z", 9, 6, PUT},
			{"s", "q", 10, 3, PUT},		/* another row */
			{"s", "q", 9, 4, PUT},
		};
		wc_vis_rules fc = rules_of(WC_VIS_COMPACT, 1);

		fc.keep_above = 6;
		EXPECT(fc, bcol, "EEEEEx");
		EXPECT(fc, reach, "EExx");
		EXPECT(fc, bfam, "EEEEEEx");
		fc.partial = true;
		EXPECT(fc, bcol, "EEEEEx");
		fc.keep_above = WC_SEQ_MAX;		/* every reader sees it */
		fc.partial = false;
		EXPECT(fc, bcol, "--ExEx");
	}
	{
		const ent	one[] = {{"r", "q", TOMB_TS, 7, DELC, UPTO(6)}};
		wc_cell		c = to_cell(&one[0]);

		CHECK(wc_cell_column_mask(&c) == 6, "mask %" PRIu64, wc_cell_column_mask(&c));
		c.val_len = 0;
		CHECK(wc_cell_column_mask(&c) == 7, "plain: mask %" PRIu64, wc_cell_column_mask(&c));
	}
}

/* ---------------------------------------------------------------- random */

static const char *rows[] = {"a", "ab", "b"};
static const char *quals[] = {"", "x", "xy", "y"};
static const wc_slice filters[] = {
	{(const uint8_t *) "x", 1}, {(const uint8_t *) "", 0}, {(const uint8_t *) "y", 1},
	{(const uint8_t *) "xy", 2}
};

static int
cmp_ent(const void *pa, const void *pb)
{
	wc_cell		a = to_cell(pa),
				b = to_cell(pb);

	return wc_cell_cmp(&a, &b);
}

static bool
exists(const wc_vis_rules *r, uint64_t seq)
{
	if (seq >= WC_SEQ_PENDING_BASE)
		return r->pend_trunc <= seq && seq <= r->pend_max;
	return r->pend_trunc == 0 && r->trunc <= seq && seq <= r->snapshot;
}

/* Is qual one of r->quals, or does it start with one of r->qual_prefixes? */
static bool
ref_wanted(const wc_vis_rules *r, const char *qual)
{
	bool		any = r->nquals == 0 && r->nqual_prefixes == 0;

	for (int i = 0; i < r->nquals; i++)
		any |= strlen(qual) == r->quals[i].len && strncmp(qual, (const char *) r->quals[i].data,
														   r->quals[i].len) == 0;
	for (int i = 0; i < r->nqual_prefixes; i++)
		any |= strncmp(qual, (const char *) r->qual_prefixes[i].data,
					   r->qual_prefixes[i].len) == 0;
	return any;
}

static bool
same_col(const ent *a, const ent *b)
{
	return strcmp(a->row, b->row) == 0 && strcmp(a->qual, b->qual) == 0;
}

/*
 * The reference, straight from DESIGN.md and without the step's state: would es[i]
 * be emitted under r?
 */
static bool
ref_emit(const wc_vis_rules *r, const ent *es, int n, int i)
{
	const ent  *e = &es[i];
	uint64_t	mask = 0;
	uint32_t	place = 1;

	if (e->type == DELF || e->type == DELC || !exists(r, e->seq))
		return false;
	for (int j = 0; j < n; j++)
		if (exists(r, es[j].seq) && ent_mask(&es[j]) > mask && strcmp(es[j].row, e->row) == 0 &&
			(es[j].type == DELF || (es[j].type == DELC && strcmp(es[j].qual, e->qual) == 0)))
			mask = ent_mask(&es[j]);
	if (e->seq <= mask)
		return false;
	/* the latest write of its ts? */
	for (int j = 0; j < n; j++)
		if ((es[j].type == PUT || es[j].type == DELV) && exists(r, es[j].seq) &&
			same_col(&es[j], e) && es[j].ts == e->ts && es[j].seq > e->seq)
			return false;
	/* its place: 1 + the newer timestamps that have a latest, unmasked write */
	for (int j = 0; j < n; j++)
	{
		bool		first = true;

		if ((es[j].type != PUT && es[j].type != DELV) || !exists(r, es[j].seq) ||
			!same_col(&es[j], e) || es[j].ts <= e->ts || es[j].seq <= mask)
			continue;
		for (int k = 0; k < j && first; k++)
			if ((es[k].type == PUT || es[k].type == DELV) && exists(r, es[k].seq) &&
				same_col(&es[k], e) && es[k].ts == es[j].ts && es[k].seq > mask)
				first = false;
		if (first)
			place++;
	}
	if (r->max_versions != 0 && place > r->max_versions)
		return false;
	if (e->ts < r->ttl_cutoff)
		return false;
	if (r->mode == WC_VIS_COMPACT)
		return e->type == PUT || r->max_versions != 0;
	return e->type == PUT && e->ts >= r->ts_min && e->ts <= r->ts_max &&
		ref_wanted(r, e->qual);
}

/*
 * Random entries in cell order; seqs are distinct, some pending; half the
 * DEL_COLUMN and DEL_FAMILY entries bounded, by any committed seq (at or above
 * their own, they hide what a plain one would).
 */
static int
random_entries(uint64_t *rnd, ent *es, int max)
{
	int			n = 1 + (int) (test_rand(rnd) % (uint64_t) max);

	for (int i = 0; i < n; i++)
	{
		ent		   *e = &es[i];
		int			kind = (int) (test_rand(rnd) % 10);

		e->row = rows[test_rand(rnd) % N(rows)];
		e->qual = quals[test_rand(rnd) % N(quals)];
		e->ts = (int64_t) (test_rand(rnd) % 6);
		e->seq = (uint64_t) i + 1;
		if (test_rand(rnd) % 8 == 0)
			e->seq = PEND(i + 1);
		e->type = kind < 6 ? PUT : kind < 8 ? DELV : kind < 9 ? DELC : DELF;
		if (e->type == DELC || e->type == DELF)
			e->ts = TOMB_TS;
		if (e->type == DELF)
			e->qual = "";
		e->bounded = false;
		e->bound = 0;
		if ((e->type == DELC || e->type == DELF) && test_rand(rnd) % 2 == 0)
		{
			e->bounded = true;
			e->bound = test_rand(rnd) % (uint64_t) (n + 1);
		}
	}
	qsort(es, (size_t) n, sizeof(ent), cmp_ent);
	return n;
}

static void
random_rules(uint64_t *rnd, wc_vis_rules *r, int n)
{
	wc_vis_rules_init(r);
	r->mode = test_rand(rnd) % 2 ? WC_VIS_COMPACT : WC_VIS_READ;
	r->max_versions = (uint32_t) (test_rand(rnd) % 4);
	if (test_rand(rnd) % 3 == 0)
		r->ttl_cutoff = (int64_t) (test_rand(rnd) % 6);
	if (test_rand(rnd) % 3 == 0)
		r->trunc = test_rand(rnd) % (uint64_t) (n + 1);
	if (test_rand(rnd) % 3 == 0)
		r->snapshot = test_rand(rnd) % (uint64_t) (n + 1);
	if (test_rand(rnd) % 3 == 0)
		r->pend_max = PEND(test_rand(rnd) % (uint64_t) (n + 1));
	if (test_rand(rnd) % 6 == 0)
		r->pend_trunc = PEND(test_rand(rnd) % (uint64_t) (n + 1));
	if (r->mode == WC_VIS_READ && test_rand(rnd) % 3 == 0)
	{
		r->ts_min = (int64_t) (test_rand(rnd) % 6);
		r->ts_max = r->ts_min + (int64_t) (test_rand(rnd) % 4);
	}
	if (r->mode == WC_VIS_READ && test_rand(rnd) % 3 == 0)
	{
		int			a = (int) (test_rand(rnd) % N(filters)),
					b = (int) (test_rand(rnd) % N(filters));

		r->quals = &filters[a];
		r->nquals = (int) (test_rand(rnd) % (uint64_t) (N(filters) - a + 1));
		r->qual_prefixes = &filters[b];
		r->nqual_prefixes = (int) (test_rand(rnd) % (uint64_t) (N(filters) - b + 1));
	}
}

/*
 * Every verdict against the reference; after WC_VIS_SKIP_COLUMN nothing of the
 * column is emitted, and a reader that does not feed the rest of the column (as a
 * scan seeks past it) emits the same entries.
 */
static void
test_random(void)
{
	uint64_t	rnd = 12345;
	int			bad = 0,
				emitted = 0,
				skipped_cols = 0;

	for (int iter = 0; iter < 20000 && bad < 5; iter++)
	{
		ent			es[40];
		int			n = random_entries(&rnd, es, N(es));
		wc_vis_rules r;
		wc_vis		full,
					seeking;
		int			skip_until = -1;

		random_rules(&rnd, &r, n);
		wc_vis_init(&full, &r);
		wc_vis_init(&seeking, &r);
		for (int i = 0; i < n; i++)
		{
			wc_cell		c = to_cell(&es[i]);
			int			v = wc_vis_step(&full, &c);
			bool		want = ref_emit(&r, es, n, i);

			if ((v == WC_VIS_EMIT) != want)
			{
				bad++;
				CHECK(false, "iteration %d entry %d (%s/%s@%" PRId64 " seq %" PRIu64 " type %d): "
					  "verdict %c, reference %s", iter, i, es[i].row, es[i].qual, es[i].ts,
					  es[i].seq, es[i].type, verdict_char(v), want ? "emit" : "not");
			}
			emitted += v == WC_VIS_EMIT;

			/* the seeking reader */
			if (skip_until >= 0 && same_col(&es[i], &es[skip_until]) && es[i].type != DELF)
				continue;
			skip_until = -1;
			v = wc_vis_step(&seeking, &c);
			if ((v == WC_VIS_EMIT) != want)
			{
				bad++;
				CHECK(false, "iteration %d entry %d: the seeking reader says %c", iter, i,
					  verdict_char(v));
			}
			if (v == WC_VIS_SKIP_COLUMN)
			{
				skip_until = i;
				skipped_cols++;
				for (int j = i + 1; j < n && same_col(&es[j], &es[i]); j++)
					if (ref_emit(&r, es, n, j))
					{
						bad++;
						CHECK(false, "iteration %d: entry %d emitted after a column skip at %d",
							  iter, j, i);
					}
			}
		}
		wc_vis_free(&full);
		wc_vis_free(&seeking);
	}
	CHECK(bad == 0, "random entries: %d mismatches", bad);
	CHECK(emitted > 10000 && skipped_cols > 1000, "the random test exercises the rules: "
		  "%d emitted, %d column skips", emitted, skipped_cols);
}

/* Random entries as a sorted file holds them: committed ones only, in cell order. */
static int
random_committed_entries(uint64_t *rnd, ent *es, int max)
{
	int			n = random_entries(rnd, es, max);

	for (int i = 0; i < n; i++)
		if (es[i].seq >= WC_SEQ_PENDING_BASE)
			es[i].seq -= WC_SEQ_PENDING_BASE;
	qsort(es, (size_t) n, sizeof(ent), cmp_ent);
	return n;
}

/*
 * Does a reader under rr see the same entries in es1[0..n1-1] as in
 * es2[0..n2-1] (both in cell order)?  *c1 and *c2 get how many it sees in each.
 */
static bool
reads_alike(const wc_vis_rules *rr, const ent *es1, int n1, const ent *es2, int n2,
			int *c1, int *c2)
{
	char		seen[2][64];

	memset(seen, 0, sizeof(seen));
	*c1 = *c2 = 0;
	for (int pass = 0; pass < 2; pass++)
	{
		const ent  *es = pass == 0 ? es1 : es2;
		int			m = pass == 0 ? n1 : n2;
		int		   *count = pass == 0 ? c1 : c2;
		wc_vis		vis;

		wc_vis_init(&vis, rr);
		for (int i = 0; i < m; i++)
		{
			wc_cell		c = to_cell(&es[i]);

			if (wc_vis_step(&vis, &c) == WC_VIS_EMIT)
			{
				seen[pass][es[i].seq] = 1;
				(*count)++;
			}
		}
		wc_vis_free(&vis);
	}
	return memcmp(seen[0], seen[1], sizeof(seen[0])) == 0 && *c1 == *c2;
}

/*
 * What compaction keeps reads as its input does: for any reader (time range,
 * max_versions and ttl the same as the compaction's or not), the entries emitted
 * from the compaction's output are those emitted from its input.
 */
static void
test_compaction_reads_the_same(void)
{
	uint64_t	rnd = 777;
	int			bad = 0,
				dropped = 0;

	for (int iter = 0; iter < 20000 && bad < 5; iter++)
	{
		ent			in[40],
					out[40];
		int			n = random_committed_entries(&rnd, in, N(in)),
					nout = 0;
		wc_vis_rules cr,
					rr;
		int			nin_emit,
					nout_emit;

		wc_vis_rules_init(&cr);
		cr.mode = WC_VIS_COMPACT;
		cr.max_versions = (uint32_t) (test_rand(&rnd) % 4);
		if (test_rand(&rnd) % 3 == 0)
			cr.ttl_cutoff = (int64_t) (test_rand(&rnd) % 6);
		if (test_rand(&rnd) % 3 == 0)
			cr.trunc = test_rand(&rnd) % (uint64_t) (n + 1);
		{
			wc_vis		vis;

			wc_vis_init(&vis, &cr);
			for (int i = 0; i < n; i++)
			{
				wc_cell		c = to_cell(&in[i]);

				if (wc_vis_step(&vis, &c) == WC_VIS_EMIT)
					out[nout++] = in[i];
			}
			wc_vis_free(&vis);
		}
		dropped += n - nout;

		/* a reader of the same store: same retention and truncate point, any time
		 * range, and a ttl cutoff that may have moved on since */
		wc_vis_rules_init(&rr);
		rr.max_versions = cr.max_versions;
		rr.trunc = cr.trunc;
		rr.ttl_cutoff = cr.ttl_cutoff;
		if (test_rand(&rnd) % 3 == 0)
			rr.ttl_cutoff = (int64_t) (test_rand(&rnd) % 6);
		if (rr.ttl_cutoff < cr.ttl_cutoff)
			rr.ttl_cutoff = cr.ttl_cutoff;
		if (test_rand(&rnd) % 2 == 0)
		{
			rr.ts_min = (int64_t) (test_rand(&rnd) % 6);
			rr.ts_max = rr.ts_min + (int64_t) (test_rand(&rnd) % 4);
		}
		if (!reads_alike(&rr, in, n, out, nout, &nin_emit, &nout_emit))
		{
			bad++;
			CHECK(false, "iteration %d: a reader sees %d entries in the input, %d in the "
				  "compaction's output", iter, nin_emit, nout_emit);
		}
	}
	CHECK(bad == 0, "compaction output reads as its input: %d mismatches", bad);
	CHECK(dropped > 10000, "compactions dropped entries: %d", dropped);
}

/*
 * A partial compaction of the newest entries (seq above a split point; the older
 * ones stay in files it leaves out), with a horizon keep_above: for any reader
 * whose snapshot is at or above the horizon, the older entries with the output
 * read as the older entries with the input.
 */
static void
test_partial_compaction_reads_the_same(void)
{
	uint64_t	rnd = 4242;
	int			bad = 0,
				dropped_tombs = 0,
				bounded_cols[2] = {0, 0};	/* dropped, kept */

	for (int iter = 0; iter < 20000 && bad < 5; iter++)
	{
		ent			in[40],
					merged[40];
		int			n = random_committed_entries(&rnd, in, N(in)),
					nmerged = 0;
		uint64_t	split,
					horizon;
		wc_vis_rules cr,
					rr;
		int			nin_emit,
					nout_emit;

		split = test_rand(&rnd) % (uint64_t) (n + 1);
		horizon = split + test_rand(&rnd) % (uint64_t) (n + 1 - split);
		wc_vis_rules_init(&cr);
		cr.mode = WC_VIS_COMPACT;
		cr.partial = true;
		cr.keep_above = test_rand(&rnd) % 4 == 0 ? WC_SEQ_MAX : horizon;
		cr.max_versions = (uint32_t) (test_rand(&rnd) % 4);
		if (test_rand(&rnd) % 3 == 0)
			cr.ttl_cutoff = (int64_t) (test_rand(&rnd) % 6);
		{
			wc_vis		vis;

			/* the older entries as they are, the newer ones through the compaction */
			wc_vis_init(&vis, &cr);
			for (int i = 0; i < n; i++)
			{
				wc_cell		c = to_cell(&in[i]);

				if (in[i].seq <= split)
					merged[nmerged++] = in[i];
				else if (wc_vis_step(&vis, &c) == WC_VIS_EMIT)
				{
					merged[nmerged++] = in[i];
					bounded_cols[1] += in[i].type == DELC && in[i].bounded;
				}
				else if (in[i].type == DELC || in[i].type == DELF)
				{
					dropped_tombs++;
					bounded_cols[0] += in[i].type == DELC && in[i].bounded;
				}
			}
			wc_vis_free(&vis);
		}

		/* a reader whose snapshot is at or above the horizon */
		wc_vis_rules_init(&rr);
		rr.max_versions = cr.max_versions;
		rr.ttl_cutoff = cr.ttl_cutoff;
		if (cr.keep_above != WC_SEQ_MAX)
			rr.snapshot = horizon + test_rand(&rnd) % (uint64_t) (n + 1 - horizon + 1);
		if (!reads_alike(&rr, in, n, merged, nmerged, &nin_emit, &nout_emit))
		{
			bad++;
			CHECK(false, "iteration %d: a reader sees %d entries before the partial "
				  "compaction, %d after", iter, nin_emit, nout_emit);
		}
	}
	CHECK(bad == 0, "partial compaction output reads as its input: %d mismatches", bad);
	CHECK(dropped_tombs > 1000, "partial compactions dropped tombstones: %d", dropped_tombs);
	CHECK(bounded_cols[0] > 1000 && bounded_cols[1] > 1000,
		  "partial compactions dropped %d bounded DEL_COLUMN entries and kept %d",
		  bounded_cols[0], bounded_cols[1]);
}

int
main(void)
{
	t_name = "test_visible";
	test_defaults();
	test_masking();
	test_max_versions();
	test_ttl();
	test_truncate_and_snapshot();
	test_pending();
	test_time_range();
	test_columns();
	test_position_and_reset();
	test_random();
	test_compaction_reads_the_same();
	test_partial_tombstones();
	test_bounded_tombstones();
	test_partial_compaction_reads_the_same();
	TEST_DONE();
}
