/*
 * golden.h -- what the golden files under test/golden hold (test/golden/README.md).
 *
 * The files were written once by make_golden.c from the tables below and are
 * committed; the tests read them with today's readers and compare every entry and
 * field to these tables and to the values written out here (sizes, checksums,
 * block layouts, properties), never to anything derived from the files.  A change
 * to a table or to a writer does not change the files: remaking them is a
 * deliberate step (README.md), as is a format change that adds a golden file.
 *
 * This header is also compiled against the engine of older commits (make_golden.c
 * with GOLDEN_OLD_TREE), so it uses only what the engine had then: wc_cell, the
 * entry types and stdint.
 */
#ifndef WC_GOLDEN_H
#define WC_GOLDEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cell.h"

/* Where the tests find the files (the Makefile passes the absolute path). */
#ifndef WC_GOLDEN_DIR
#define WC_GOLDEN_DIR "test/golden"
#endif

#define GOLDEN_UNUSED __attribute__((unused))

/* A string literal that may hold zero bytes, and its length. */
#define GB(lit)	lit, (uint32_t) (sizeof(lit) - 1)

/* Values given by a pattern instead of a literal (golden_cell.pattern). */
#define GOLDEN_LITERAL		0
#define GOLDEN_ASCENDING	1	/* byte i is i mod 256 */
#define GOLDEN_NOISE		2	/* xorshift64* bytes from seed 0x5EED + val_len */

/* An entry of a sorted file or of a batch (fam is ignored for sorted files). */
typedef struct golden_cell
{
	uint8_t		type;
	const char *fam;
	uint32_t	fam_len;
	const char *row;
	uint32_t	row_len;
	const char *qual;
	uint32_t	qual_len;
	int64_t		ts;
	uint64_t	seq;			/* sorted files only; a batch entry's is seq_base + i */
	const char *val;			/* GOLDEN_LITERAL */
	uint32_t	val_len;
	int			pattern;
} golden_cell;

#define PUT		WC_TYPE_PUT
#define DELV	WC_TYPE_DEL_VERSION
#define DELC	WC_TYPE_DEL_COLUMN
#define DELF	WC_TYPE_DEL_FAMILY
#define DELA	WC_TYPE_DEL_ALL
#define TSMAX	INT64_MAX
#define NOFAM	NULL, 0
#define NOVAL	NULL, 0, GOLDEN_LITERAL

/* The value of g in buf (room for g->val_len bytes), or its literal. */
static inline const uint8_t *
golden_value(const golden_cell *g, uint8_t *buf)
{
	uint64_t	x = 0x5EED + g->val_len;

	if (g->pattern == GOLDEN_LITERAL)
		return (const uint8_t *) g->val;
	for (uint32_t i = 0; i < g->val_len; i++)
	{
		if (g->pattern == GOLDEN_ASCENDING)
			buf[i] = (uint8_t) i;
		else
		{
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			buf[i] = (uint8_t) ((x * UINT64_C(2685821657736338717)) >> 56);
		}
	}
	return buf;
}

/* g as a wc_cell (val in buf when it is a pattern); seq as given. */
static inline wc_cell
golden_to_cell(const golden_cell *g, uint64_t seq, uint8_t *buf)
{
	wc_cell		c;

	memset(&c, 0, sizeof(c));
	c.row = (const uint8_t *) g->row;
	c.row_len = g->row_len;
	c.qual = (const uint8_t *) g->qual;
	c.qual_len = g->qual_len;
	c.ts = g->ts;
	c.seq = seq;
	c.type = g->type;
	c.val = golden_value(g, buf);
	c.val_len = g->val_len;
	return c;
}

/* ---------------------------------------------------------------- sorted files */

/*
 * 000011.sst: format version 1, family "meta", level 1, no compression, 256-byte
 * blocks.  In wc_cell_cmp order: rowkeys with zero and 0xFF bytes and prefixes of
 * each other, every tombstone kind (a DEL_COLUMN of the empty qualifier too),
 * empty qualifiers and values, the extreme timestamps, sequence numbers of 1 to 9
 * varint bytes.
 */
static const golden_cell golden_sst_v1[] GOLDEN_UNUSED = {
	{PUT, NOFAM, GB("\x00"), GB(""), 0, 1, GB(""), 0},
	{PUT, NOFAM, GB("\x00\x01\xff"), GB("\x00"), -1, 2, GB("\x00\xff\x00"), 0},
	{PUT, NOFAM, GB("\x00\x01\xff"), GB("\xff"), INT64_MIN, 3, GB("the oldest timestamp"), 0},
	{DELF, NOFAM, GB("a"), GB(""), TSMAX, 40, NOVAL},
	{DELC, NOFAM, GB("a"), GB(""), TSMAX, 43, NOVAL},
	{PUT, NOFAM, GB("a"), GB(""), 1700000000000, 4, GB("empty qualifier"), 0},
	{DELC, NOFAM, GB("a"), GB("c1"), TSMAX, 41, NOVAL},
	{PUT, NOFAM, GB("a"), GB("c1"), 1700000000002, 7, GB("v2"), 0},
	{PUT, NOFAM, GB("a"), GB("c1"), 1700000000001, 6, GB("v1"), 0},
	{DELV, NOFAM, GB("a"), GB("c1"), 1700000000000, 42, NOVAL},
	{PUT, NOFAM, GB("a"), GB("c1"), 1700000000000, 5, GB("v0"), 0},
	{PUT, NOFAM, GB("a\x00"), GB("q"), 5, 8, NULL, 300, GOLDEN_NOISE},
	{PUT, NOFAM, GB("ab"), GB("q"), 5, 9, GB("x"), 0},
	{PUT, NOFAM, GB("ab"), GB("qq"), 5, 10, GB("xx"), 0},
	{PUT, NOFAM, GB("ab"), GB("qqq"), 5, 11, GB("xxx"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-00"), 100, 12, GB("value-00"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-01"), 100, 13, GB("value-01"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-02"), 100, 14, GB("value-02"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-03"), 100, 15, GB("value-03"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-04"), 100, 16, GB("value-04"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-05"), 100, 17, GB("value-05"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-06"), 100, 18, GB("value-06"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-07"), 100, 19, GB("value-07"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-08"), 100, 20, GB("value-08"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-09"), 100, 21, GB("value-09"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-10"), 100, 22, GB("value-10"), 0},
	{PUT, NOFAM, GB("abc"), GB("col-11"), 100, 23, GB("value-11"), 0},
	{DELV, NOFAM, GB("row\x7f"), GB("gone"), -5, 44, NOVAL},
	{PUT, NOFAM, GB("\xff\xfe"), GB("bin"), 9, UINT64_C(4294967296), NULL, 256, GOLDEN_ASCENDING},
	{DELF, NOFAM, GB("\xff\xff\xff"), GB(""), TSMAX, UINT64_C(1099511627777), NOVAL},
	{PUT, NOFAM, GB("\xff\xff\xff"), GB("z"), INT64_MAX - 1, UINT64_C(4611686018427387903),
	GB("the newest timestamp"), 0},
};

/*
 * 000012.sst: format version 2, family "data", level 0, lz4, 512-byte blocks.
 * store-zstd/000003.sst holds the same entries, zstd level 3, format version 3:
 * the two blocks that lz4 compressed are zstd blocks there, the last one plain.  The
 * rowkeys share "user:" (prefix_skip 5); two share the next 8 bytes as well (equal
 * search prefixes).  Blocks of more than 16 entries (two restart points each);
 * two are stored lz4-compressed, the last plain (lz4 would not save an eighth).
 */
static const golden_cell golden_sst_v2[] GOLDEN_UNUSED = {
	{PUT, NOFAM, GB("user:000000001a"), GB("k"), 1, 50, GB("equal search prefixes"), 0},
	{DELC, NOFAM, GB("user:000000001b"), GB("k"), TSMAX, 51, NOVAL},
	{DELV, NOFAM, GB("user:000000001b"), GB("k"), 1, 49, NOVAL},
	{PUT, NOFAM, GB("user:0001"), GB(""), 10, 100, GB(""), 0},
	{PUT, NOFAM, GB("user:0001"), GB("name"), 10, 101, GB("Ada Lovelace"), 0},
	{PUT, NOFAM, GB("user:0001"), GB("name"), 9, 99, GB("Ada Byron"), 0},
	{DELF, NOFAM, GB("user:0002"), GB(""), TSMAX, 150, NOVAL},
	{PUT, NOFAM, GB("user:0002"), GB("name"), 12, 120, GB("Alan Turing"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-00"), 3, 200, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-01"), 3, 201, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-02"), 3, 202, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-03"), 3, 203, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-04"), 3, 204, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-05"), 3, 205, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-06"), 3, 206, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-07"), 3, 207, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-08"), 3, 208, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-09"), 3, 209, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-10"), 3, 210, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-11"), 3, 211, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-12"), 3, 212, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-13"), 3, 213, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-14"), 3, 214, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-15"), 3, 215, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-16"), 3, 216, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-17"), 3, 217, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-18"), 3, 218, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-19"), 3, 219, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-20"), 3, 220, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-21"), 3, 221, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-22"), 3, 222, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-23"), 3, 223, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-24"), 3, 224, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-25"), 3, 225, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-26"), 3, 226, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-27"), 3, 227, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-28"), 3, 228, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("attr-29"), 3, 229, GB("fox"), 0},
	{PUT, NOFAM, GB("user:0004"), GB("blob"), 4, 300, NULL, 600, GOLDEN_NOISE},
	{PUT, NOFAM, GB("user:0005"), GB("\x00\x00"), -100, 400, GB("\x00"), 0},
	{PUT, NOFAM, GB("user:0005"), GB("\xff"), 0, 401, GB("\xff"), 0},
	{PUT, NOFAM, GB("user:1999"), GB("last"), 7, 999, GB("last row"), 0},
};

/* ---------------------------------------------------------------- logs */

/*
 * The batches of the golden logs, entry i of a batch numbered seq_base + i: three
 * families (one with bytes 0x01 and 0xFF in its name), every entry type, DEL_ALL
 * (a truncate) between puts, empty qualifiers and values, binary bytes.
 */
static const golden_cell golden_batch_a[] GOLDEN_UNUSED = {
	{PUT, GB("meta"), GB("r1"), GB(""), 1, 0, GB(""), 0},
	{PUT, GB("data"), GB("\x00\xff"), GB("\xff\x00"), -1, 0, NULL, 256, GOLDEN_ASCENDING},
	{DELV, GB("meta"), GB("r1"), GB(""), 1, 0, NOVAL},
	{DELC, GB("data"), GB("\x00\xff"), GB("\xff\x00"), TSMAX, 0, NOVAL},
	{DELF, GB("\x01" "fam\xff"), GB("row"), GB(""), TSMAX, 0, NOVAL},
	{PUT, GB("\x01" "fam\xff"), GB("row"), GB("q"), INT64_MIN, 0, GB("the oldest timestamp"), 0},
	{PUT, GB("meta"), GB("r2"), GB("q"), INT64_MAX - 1, 0, NULL, 100, GOLDEN_NOISE},
	{PUT, GB("meta"), GB("r2"), GB("q"), 1700000000000, 0, GB("v"), 0},
	{PUT, GB("data"), GB("user:0001"), GB("name"), 10, 0, GB("Ada Lovelace"), 0},
	{DELF, GB("data"), GB("user:0001"), GB(""), TSMAX, 0, NOVAL},
	{PUT, GB("data"), GB("user:0001"), GB("name"), 11, 0, GB("Ada King"), 0},
	{DELV, GB("data"), GB("user:0001"), GB("name"), 11, 0, NOVAL},
	{PUT, GB("\x01" "fam\xff"), GB("\xff"), GB("\x00"), 0, 0, GB("\x00"), 0},
};

static const golden_cell golden_batch_b[] GOLDEN_UNUSED = {
	{PUT, GB("data"), GB("user:0002"), GB("a"), 5, 0, GB("before the truncate"), 0},
	{PUT, GB("meta"), GB("r3"), GB(""), 5, 0, GB(""), 0},
	{DELA, NOFAM, GB(""), GB(""), TSMAX, 0, NOVAL},
	{PUT, GB("data"), GB("user:0002"), GB("a"), 6, 0, GB("after the truncate"), 0},
	{PUT, GB("data"), GB("user:0002"), GB("b"), 6, 0, GB("b"), 0},
	{DELC, GB("data"), GB("user:0002"), GB("b"), TSMAX, 0, NOVAL},
	{PUT, GB("meta"), GB("r3"), GB("long qualifier: 0123456789abcdef0123456789abcdef"), 7, 0,
	GB("value"), 0},
	{DELF, GB("meta"), GB("r3"), GB(""), TSMAX, 0, NOVAL},
	{PUT, GB("\x01" "fam\xff"), GB("row"), GB("q"), -7, 0, NULL, 40, GOLDEN_NOISE},
	{DELV, GB("\x01" "fam\xff"), GB("row"), GB("q"), -7, 0, NOVAL},
	{PUT, GB("data"), GB("\x00"), GB(""), 1, 0, GB("x"), 0},
};

/*
 * The batch in the log of the zstd store (store-zstd/000002.log), numbered from
 * 1000, after the sorted file's sequence numbers: a newer version of a cell of
 * the file, a column delete that masks one of the file's cells, a new row.
 */
static const golden_cell golden_batch_store[] GOLDEN_UNUSED = {
	{PUT, GB("data"), GB("user:0001"), GB("name"), 11, 0, GB("Ada King"), 0},
	{DELC, GB("data"), GB("user:0003"), GB("attr-00"), TSMAX, 0, NOVAL},
	{PUT, GB("data"), GB("user:2000"), GB("body"), 20, 0, NULL, 300, GOLDEN_ASCENDING},
};

/*
 * store-bounded/000003.sst: format version 4, family "data", level 0, lz4, 512-byte
 * blocks: bounded DEL_FAMILY entries (value: the bound, fixed64) beside a plain one.
 * user:0001's marker (seq 900) hides its entries up to seq 850; user:0002 has a plain
 * marker (seq 950) and a bounded one (seq 940, bound 930).
 */
#define BOUND(b)	b, 8, GOLDEN_LITERAL
static const golden_cell golden_sst_v4[] GOLDEN_UNUSED = {
	{DELF, NOFAM, GB("user:0001"), GB(""), TSMAX, 900, BOUND("\x52\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, NOFAM, GB("user:0001"), GB("a"), 5, 901, GB("new"), 0},
	{PUT, NOFAM, GB("user:0001"), GB("a"), 4, 800, GB("old"), 0},
	{PUT, NOFAM, GB("user:0001"), GB("b"), 1, 860, GB("kept"), 0},
	{DELF, NOFAM, GB("user:0002"), GB(""), TSMAX, 950, NOVAL},
	{DELF, NOFAM, GB("user:0002"), GB(""), TSMAX, 940, BOUND("\xa2\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, NOFAM, GB("user:0002"), GB("b"), 3, 945, GB("hidden by the plain marker"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("c"), 1, 10, GB("plain"), 0},
};

/*
 * The batch in store-bounded/000002.log, numbered from 1000: a put, a bounded
 * DEL_FAMILY_UPTO of its row up to it (seq 1000), a put after it, and one of
 * user:0001 up to seq 870.  Reading the store: user:0001/data:a@5 and
 * user:0003/data:d@1.
 */
static const golden_cell golden_batch_bounded[] GOLDEN_UNUSED = {
	{PUT, GB("data"), GB("user:0003"), GB("c"), 2, 0, GB("log"), 0},
	{DELF, GB("data"), GB("user:0003"), GB(""), TSMAX, 0, BOUND("\xe8\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, GB("data"), GB("user:0003"), GB("d"), 1, 0, GB("after"), 0},
	{DELF, GB("data"), GB("user:0001"), GB(""), TSMAX, 0, BOUND("\x66\x03\x00\x00\x00\x00\x00\x00")},
};

/*
 * store-bounded-column/000003.sst: format version 5, family "data", level 0, lz4,
 * 512-byte blocks: bounded DEL_COLUMN entries (value: the bound, fixed64) beside
 * plain ones, and a bounded DEL_FAMILY.  user:0001's column a: a marker (seq 900)
 * hides its entries up to seq 850, sparing 860; user:0002's column c: a plain
 * marker (seq 950) and a bounded one (seq 940, bound 930); user:0003: a family
 * marker up to seq 20, and column d's two markers, the second of which (seq 975,
 * bound 972) hides more than the first (seq 985, bound 15).
 */
static const golden_cell golden_sst_v5[] GOLDEN_UNUSED = {
	{DELC, NOFAM, GB("user:0001"), GB("a"), TSMAX, 900, BOUND("\x52\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, NOFAM, GB("user:0001"), GB("a"), 5, 901, GB("new"), 0},
	{PUT, NOFAM, GB("user:0001"), GB("a"), 4, 860, GB("spared"), 0},
	{PUT, NOFAM, GB("user:0001"), GB("a"), 3, 800, GB("old"), 0},
	{PUT, NOFAM, GB("user:0001"), GB("b"), 1, 810, GB("other"), 0},
	{DELC, NOFAM, GB("user:0002"), GB("c"), TSMAX, 950, NOVAL},
	{DELC, NOFAM, GB("user:0002"), GB("c"), TSMAX, 940, BOUND("\xa2\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, NOFAM, GB("user:0002"), GB("c"), 3, 945, GB("hidden by the plain marker"), 0},
	{DELF, NOFAM, GB("user:0003"), GB(""), TSMAX, 990, BOUND("\x14\x00\x00\x00\x00\x00\x00\x00")},
	{DELC, NOFAM, GB("user:0003"), GB("d"), TSMAX, 985, BOUND("\x0f\x00\x00\x00\x00\x00\x00\x00")},
	{DELC, NOFAM, GB("user:0003"), GB("d"), TSMAX, 975, BOUND("\xcc\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, NOFAM, GB("user:0003"), GB("d"), 2, 973, GB("both"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("d"), 1, 960, GB("hidden by the second"), 0},
	{PUT, NOFAM, GB("user:0003"), GB("e"), 1, 10, GB("hidden by the family's"), 0},
};

/*
 * The batch in store-bounded-column/000002.log, numbered from 1000: a put, a
 * DEL_COLUMN_UPTO of its column up to seq 950 (seq 1001: it spares the put and
 * 973; 960 only the file's second marker hides), a put of another column, a
 * DEL_COLUMN_UPTO of user:0001's column a up to seq 870 (hiding 860), and a plain
 * DEL_COLUMN.  Reading the store: user:0001/data:a@5, user:0001/data:b@1,
 * user:0003/data:d@3, user:0003/data:d@2 and user:0003/data:f@1.
 */
static const golden_cell golden_batch_bounded_column[] GOLDEN_UNUSED = {
	{PUT, GB("data"), GB("user:0003"), GB("d"), 3, 0, GB("log"), 0},
	{DELC, GB("data"), GB("user:0003"), GB("d"), TSMAX, 0, BOUND("\xb6\x03\x00\x00\x00\x00\x00\x00")},
	{PUT, GB("data"), GB("user:0003"), GB("f"), 1, 0, GB("after"), 0},
	{DELC, GB("data"), GB("user:0001"), GB("a"), TSMAX, 0, BOUND("\x66\x03\x00\x00\x00\x00\x00\x00")},
	{DELC, GB("data"), GB("user:0002"), GB("c"), TSMAX, 0, NOVAL},
};

/* A record of a golden log. */
#define GOLDEN_BATCH	1
#define GOLDEN_INGEST	2
#define GOLDEN_MARKER	3		/* the closing marker: a batch of no entries */

typedef struct golden_file_ref
{
	uint64_t	number;
	const char *family;
} golden_file_ref;

typedef struct golden_record
{
	int			kind;
	uint64_t	seq_base;
	uint64_t	tag;
	const golden_cell *entries; /* GOLDEN_BATCH */
	uint32_t	count;			/* entries of a batch; of the files of an ingest record */
	const golden_file_ref *files;	/* GOLDEN_INGEST */
	int			nfiles;
} golden_record;

static const golden_file_ref golden_ingest_files[] GOLDEN_UNUSED = {
	{13, "data"},
	{14, "\x01" "fam\xff"},
};

#define GOLDEN_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* 000009.log, format version 2: two batches, an ingest record, the closing marker. */
static const golden_record golden_log_v2[] GOLDEN_UNUSED = {
	{GOLDEN_BATCH, 1000, 0, golden_batch_a, GOLDEN_NELEM(golden_batch_a), NULL, 0},
	{GOLDEN_BATCH, 1013, UINT64_C(0x0000000100000abc), golden_batch_b, GOLDEN_NELEM(golden_batch_b), NULL, 0},
	{GOLDEN_INGEST, 1024, UINT64_C(0x0000000100000abd), NULL, 500, golden_ingest_files, 2},
	{GOLDEN_MARKER, 0, 0, NULL, 0, NULL, 0},
};

/* store-bounded/000002.log, format version 2: its batch, the log still active. */
static const golden_record golden_log_bounded[] GOLDEN_UNUSED = {
	{GOLDEN_BATCH, 1000, 0, golden_batch_bounded, GOLDEN_NELEM(golden_batch_bounded), NULL, 0},
};

/* store-bounded-column/000002.log, format version 2: its batch, the log still active. */
static const golden_record golden_log_bounded_column[] GOLDEN_UNUSED = {
	{GOLDEN_BATCH, 1000, 0, golden_batch_bounded_column, GOLDEN_NELEM(golden_batch_bounded_column),
	NULL, 0},
};

/* store-zstd/000002.log, format version 2: the store's batch, the log still active. */
static const golden_record golden_log_store[] GOLDEN_UNUSED = {
	{GOLDEN_BATCH, 1000, 0, golden_batch_store, GOLDEN_NELEM(golden_batch_store), NULL, 0},
};

/* 000007.log, format version 1 (written by the engine of commit 4d2bef1^): the same
 * two batches and the closing marker; version 1 had no ingest records. */
static const golden_record golden_log_v1[] GOLDEN_UNUSED = {
	{GOLDEN_BATCH, 1000, 0, golden_batch_a, GOLDEN_NELEM(golden_batch_a), NULL, 0},
	{GOLDEN_BATCH, 1013, UINT64_C(0x0000000100000abc), golden_batch_b, GOLDEN_NELEM(golden_batch_b), NULL, 0},
	{GOLDEN_MARKER, 0, 0, NULL, 0, NULL, 0},
};


/* ---------------------------------------------------------------- what the files are */

/*
 * Written out from make_golden's report when the files were made; a test that
 * finds otherwise has found a reader that no longer reads what was written.
 */

/* Sorted file properties (wc_sst_props, with const rowkeys). */
typedef struct golden_props
{
	const char *family;
	int			level;
	uint64_t	cells;
	uint64_t	tombstones;
	uint64_t	range_tombstones;
	uint64_t	distinct_rows;
	uint64_t	raw_bytes;
	uint64_t	file_bytes;
	uint64_t	blocks;
	int64_t		ts_min;
	int64_t		ts_max;
	uint64_t	seq_min;
	uint64_t	seq_max;
	const char *row_min;
	uint32_t	row_min_len;
	const char *row_max;
	uint32_t	row_max_len;
} golden_props;

/* A data block: its handle and how it is stored (trailer type, wc_compression). */
typedef struct golden_block
{
	uint64_t	off;
	uint64_t	size;
	uint8_t		type;
} golden_block;

typedef struct golden_sst
{
	const char *name;
	uint32_t	version;		/* in the footer */
	uint64_t	size;
	uint32_t	crc;			/* CRC-32C of the whole file */
	const golden_cell *cells;
	size_t		ncells;
	const golden_block *blocks;
	size_t		nblocks;
	golden_props props;
} golden_sst;

static const golden_block golden_sst_v1_blocks[] GOLDEN_UNUSED = {
	{0, 543, 0},				/* 543 bytes, 1 restart point */
	{552, 262, 0},				/* 262 bytes, 1 restart point */
	{823, 417, 0},				/* 417 bytes, 1 restart point */
	{1249, 75, 0},				/* 75 bytes, 1 restart point */
};

static const golden_block golden_sst_v2_blocks[] GOLDEN_UNUSED = {
	{0, 333, 1},				/* 516 bytes, 2 restart points */
	{342, 797, 1},				/* 978 bytes, 2 restart points */
	{1148, 86, 0},				/* 86 bytes, 1 restart point */
};

static const golden_block golden_sst_v3_blocks[] GOLDEN_UNUSED = {
	{0, 269, 2},				/* 516 bytes, 2 restart points */
	{278, 766, 2},				/* 978 bytes, 2 restart points */
	{1053, 86, 0},				/* 86 bytes, 1 restart point */
};

static const golden_block golden_sst_v4_blocks[] GOLDEN_UNUSED = {
	{0, 174, 1},				/* 207 bytes, 1 restart point */
};

static const golden_block golden_sst_v5_blocks[] GOLDEN_UNUSED = {
	{0, 277, 1},				/* 376 bytes, 1 restart point */
};

/* The properties of the two files (also in the MANIFEST), and of the stores' files */
#define GOLDEN_PROPS_11 {"meta", 1, 31, 6, 4, 9, 1388, 1578, 4, INT64_MIN, INT64_MAX - 1, \
	1, UINT64_C(4611686018427387903), GB("\x00"), GB("\xff\xff\xff")}
#define GOLDEN_PROPS_12 {"data", 0, 42, 3, 2, 8, 2057, 1539, 3, -100, 12, \
	49, 999, GB("user:000000001a"), GB("user:1999")}
#define GOLDEN_PROPS_STORE_3 {"data", 0, 42, 3, 2, 8, 2057, 1444, 3, -100, 12, \
	49, 999, GB("user:000000001a"), GB("user:1999")}
#define GOLDEN_PROPS_BOUNDED_3 {"data", 0, 8, 3, 3, 3, 262, 381, 1, 1, 5, \
	10, 950, GB("user:0001"), GB("user:0003")}
#define GOLDEN_PROPS_BOUNDED_COLUMN_3 {"data", 0, 14, 6, 6, 3, 492, 484, 1, 1, 5, \
	10, 990, GB("user:0001"), GB("user:0003")}

static const golden_sst golden_ssts[] GOLDEN_UNUSED = {
	{"000011.sst", 1, 1578, 0x5CE12F81, golden_sst_v1, GOLDEN_NELEM(golden_sst_v1),
	golden_sst_v1_blocks, GOLDEN_NELEM(golden_sst_v1_blocks), GOLDEN_PROPS_11},
	{"000012.sst", 2, 1539, 0x1B33E590, golden_sst_v2, GOLDEN_NELEM(golden_sst_v2),
	golden_sst_v2_blocks, GOLDEN_NELEM(golden_sst_v2_blocks), GOLDEN_PROPS_12},
	{"store-zstd/000003.sst", 3, 1444, 0xF011DD68, golden_sst_v2, GOLDEN_NELEM(golden_sst_v2),
	golden_sst_v3_blocks, GOLDEN_NELEM(golden_sst_v3_blocks), GOLDEN_PROPS_STORE_3},
	{"store-bounded/000003.sst", 4, 381, 0x8D466963, golden_sst_v4, GOLDEN_NELEM(golden_sst_v4),
	golden_sst_v4_blocks, GOLDEN_NELEM(golden_sst_v4_blocks), GOLDEN_PROPS_BOUNDED_3},
	{"store-bounded-column/000003.sst", 5, 484, 0x8D466963, golden_sst_v5, GOLDEN_NELEM(golden_sst_v5),
	golden_sst_v5_blocks, GOLDEN_NELEM(golden_sst_v5_blocks), GOLDEN_PROPS_BOUNDED_COLUMN_3},
};

/* The logs: name, number, format version, size, CRC-32C, records and their ends. */
typedef struct golden_log
{
	const char *name;
	uint64_t	number;
	uint32_t	version;
	uint64_t	size;
	uint32_t	crc;
	const golden_record *records;
	size_t		nrecords;
	uint64_t	ends[4];		/* offset after each record */
} golden_log;

static const golden_log golden_logs[] GOLDEN_UNUSED = {
	{"000007.log", 7, 1, 1171, 0xA22164B2, golden_log_v1, GOLDEN_NELEM(golden_log_v1),
	{751, 1145, 1171}},
	{"000009.log", 9, 2, 1226, 0x33506167, golden_log_v2, GOLDEN_NELEM(golden_log_v2),
	{751, 1145, 1200, 1226}},
	{"store-zstd/000002.log", 2, 2, 459, 0xC70C1660, golden_log_store, GOLDEN_NELEM(golden_log_store),
	{459}},
	{"store-bounded/000002.log", 2, 2, 188, 0x8351A300, golden_log_bounded,
	GOLDEN_NELEM(golden_log_bounded), {188}},
	{"store-bounded-column/000002.log", 2, 2, 216, 0x16F37978, golden_log_bounded_column,
	GOLDEN_NELEM(golden_log_bounded_column), {216}},
};

/* MANIFEST: its size and checksum, the header fields, the logs and the files. */
#define GOLDEN_MANIFEST_SIZE	352
#define GOLDEN_MANIFEST_CRC		0x48674BC7

typedef struct golden_manifest_file
{
	uint64_t	number;
	golden_props props;
} golden_manifest_file;

static const uint64_t golden_manifest_logs[] GOLDEN_UNUSED = {7, 9};

/* Files 11 and 12 are the golden sorted files; make_golden made 15 and 16 up. */
static const golden_manifest_file golden_manifest_files[] GOLDEN_UNUSED = {
	{11, GOLDEN_PROPS_11},
	{12, GOLDEN_PROPS_12},
	{15, {"\x01" "fam\xff", 0, 0, 0, 0, 0, 0, 200, 0, INT64_MAX, INT64_MIN, 0, 0,
	NULL, 0, NULL, 0}},
	{16, {"data", 1, UINT64_C(5000000000), 123456789, 1234567, 99999999, UINT64_C(1) << 40,
		UINT64_C(1) << 39, 1u << 24, -1000, INT64_MAX - 1, 1, (UINT64_C(1) << 62) - 1,
	GB("\x00"), GB("\xff\xff")}},
};

#define GOLDEN_MANIFEST_VERSION		42
#define GOLDEN_MANIFEST_NEXT_FILE	17
#define GOLDEN_MANIFEST_LAST_SEQ	999
#define GOLDEN_MANIFEST_TRUNCATE_SEQ 17

/*
 * manifest-v2/MANIFEST: format version 2, the MANIFEST above read and written again with
 * three recent records (DESIGN.md, "Snapshots") and a forgotten tag.
 */
#define GOLDEN_MANIFEST_V2_SIZE		433
#define GOLDEN_MANIFEST_V2_FORGOTTEN	733

static const struct
{
	uint64_t	tag,
				seq_lo,
				seq_hi;
}			golden_manifest_v2_recent[] GOLDEN_UNUSED = {
	{734, 40, 63},
	{0x123456789ABCDEF0ULL, 1, 1},
	{1ULL << 62, (1ULL << 62) - 1, (1ULL << 62) - 1},
};


#endif
