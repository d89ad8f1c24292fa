/*
 * bulk.c -- bulk writes: a large tagged write written as sorted files, one per
 * family, that one ingest record in the log names (DESIGN.md, "Bulk writes";
 * the record's format is in ingest.h).
 *
 * Sorting: a bulk write usually arrives in rowkey order (COPY of an export,
 * INSERT ... SELECT ... ORDER BY).  When every family's entries are in order,
 * nothing is sorted: the files are written in one pass over the batches.  Else,
 * when a family's entries come as runs (a row's cells one after the other and
 * in order, as a wide table's INSERT writes them) of distinct rows, only the
 * runs are sorted, by their rowkeys, and the file is written run by run from
 * the batches (sort_runs).  Else each family's entries are copied out and
 * insertion-sorted, which costs O(n) on nearly sorted input (the cells of a
 * row in another order); when that has moved more than a few entries per entry
 * on average the input is not nearly sorted and the rest goes to sort_by_keys.
 *
 * Layer 3 of the store core: it calls write.c (the append), version.c (file
 * numbers) and options.c.
 */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "err.h"
#include "ingest.h"

/* Insertion sort gives up after this many moves per entry on average. */
#define NEARLY_SORTED_MOVES	8

/*
 * A run: entries that follow each other in one batch, all of one family and one
 * row, each after the one before in wc_cell_cmp order.
 */
typedef struct plan_run
{
	const uint8_t *p;			/* its first entry in the batch */
	const uint8_t *end;			/* past its last */
	const uint8_t *row;
	uint32_t	row_len;
	uint32_t	count;
	uint64_t	index;			/* its first entry's; seqs count from 0 */
} plan_run;

/*
 * The entries of one family: as runs sorted by rowkey (order names them), or,
 * when they are not runs of distinct rows, copied into cells and sorted there.
 */
typedef struct plan_family
{
	char		name[WC_MAX_FAMILY + 1];
	uint32_t	name_len;
	size_t		n;				/* entries */
	wc_cell    *cells;			/* point into the batches; seqs count from 0 */
	size_t		cap;
	size_t		bytes;			/* of cells (wc_big_buf_grow) */
	bool		mapped;
	plan_run   *runs;
	size_t		nruns;
	size_t		runs_bytes;
	bool		runs_mapped;
	struct sort_key *order;		/* runs[order[k].i] is the k-th; NULL: use cells */
	size_t		order_bytes;
	bool		order_mapped;
} plan_family;

/* The entries of a bulk write's batches sorted per family: entry i (counting
 * across the batches, in order) will have sequence number seq_base + i. */
typedef struct plan
{
	int			nfams;
	plan_family fams[WC_MAX_FAMILIES];	/* in the order the files get numbers */
} plan;

static int
cell_qsort_cmp(const void *a, const void *b)
{
	return wc_cell_cmp(a, b);
}

/*
 * A cell to sort by: the 8 bytes of its rowkey after the prefix every rowkey of
 * the family shares, as a number (big-endian, 0-padded: their order is the
 * rowkeys' order wherever they differ), and its index.  A comparison of two keys
 * is an integer comparison, except between cells whose 8 bytes are equal (the
 * cells of one row, mostly), which wc_cell_cmp orders.
 */
typedef struct sort_key
{
	uint64_t	pfx;
	size_t		i;
} sort_key;

static int
key_qsort_cmp(const void *a, const void *b, void *cells)
{
	const sort_key *x = a;
	const sort_key *y = b;

	if (x->pfx != y->pfx)
		return x->pfx < y->pfx ? -1 : 1;
	return wc_cell_cmp(&((const wc_cell *) cells)[x->i], &((const wc_cell *) cells)[y->i]);
}

/*
 * Sorts c[0..n-1] in random order (a load in hashed key order, YCSB's): qsort of
 * the 72-byte cells copied them through glibc's merge sort at every level and
 * compared rowkeys with memcmp, a third of an INSERT ... SELECT of 1M cells
 * (perf).  The keys above are sorted instead, then the cells are moved once,
 * cycle by cycle.  False if the keys cannot be allocated (the caller sorts the
 * cells themselves).
 */
static bool
sort_by_keys(wc_cell *c, size_t n)
{
	sort_key   *keys = NULL;
	size_t		bytes = 0,
				skip;
	bool		mapped = false;

	if (!wc_big_buf_grow(&keys, &bytes, &mapped, n * sizeof(sort_key)))
		return false;
	skip = c[0].row_len;
	for (size_t i = 1; i < n && skip > 0; i++)
	{
		size_t		m = c[i].row_len < skip ? c[i].row_len : skip,
					k = 0;

		while (k < m && c[i].row[k] == c[0].row[k])
			k++;
		skip = k;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	pfx = 0;

		for (size_t k = skip; k < skip + 8; k++)
			pfx = (pfx << 8) | (k < c[i].row_len ? c[i].row[k] : 0);
		keys[i].pfx = pfx;
		keys[i].i = i;
	}
	qsort_r(keys, n, sizeof(sort_key), key_qsort_cmp, c);

	/* position k takes the cell at keys[k].i: follow each cycle once */
	for (size_t k = 0; k < n; k++)
	{
		wc_cell		first;
		size_t		j = k;

		if (keys[k].i == k)
			continue;
		first = c[k];
		for (;;)
		{
			size_t		from = keys[j].i;

			keys[j].i = j;		/* placed */
			if (from == k)
			{
				c[j] = first;
				break;
			}
			c[j] = c[from];
			j = from;
		}
	}
	wc_big_buf_free(keys, bytes, mapped);
	return true;
}

static void
sort_cells(wc_cell *c, size_t n)
{
	uint64_t	budget = (uint64_t) n * NEARLY_SORTED_MOVES;

	for (size_t i = 1; i < n; i++)
	{
		wc_cell		x;
		size_t		j = i;

		if (wc_cell_cmp(&c[i - 1], &c[i]) <= 0)
			continue;
		x = c[i];
		while (j > 0 && wc_cell_cmp(&c[j - 1], &x) > 0 && budget > 0)
		{
			c[j] = c[j - 1];
			j--;
			budget--;
		}
		c[j] = x;
		if (budget == 0)
		{
			/* not nearly sorted: c[0..i] may still be out of order, sort it all */
			if (!sort_by_keys(c, n))
				qsort(c, n, sizeof(wc_cell), cell_qsort_cmp);
			return;
		}
	}
}

static int
run_qsort_cmp(const void *a, const void *b, void *runs)
{
	const sort_key *x = a;
	const sort_key *y = b;
	const plan_run *r = runs;

	if (x->pfx != y->pfx)
		return x->pfx < y->pfx ? -1 : 1;
	return wc_row_cmp(r[x->i].row, r[x->i].row_len, r[y->i].row, r[y->i].row_len);
}

/*
 * Sorts f's runs by rowkey into f->order, by the 8-byte keys of sort_by_keys.
 * False when they are not runs of distinct rows (two runs of one row, whose
 * entries would interleave), or fewer than two entries a run on average, or the
 * keys cannot be allocated: the entries are then sorted themselves.  A load of
 * a wide table in hashed key order (YCSB's) sorts a tenth as many keys, with no
 * array of 72-byte cells to fault in and permute.
 */
static bool
sort_runs(plan_family *f)
{
	const plan_run *r = f->runs;
	size_t		n = f->nruns,
				skip;
	sort_key   *keys;

	if (n == 0 || n > f->n / 2 ||
		!wc_big_buf_grow(&f->order, &f->order_bytes, &f->order_mapped, n * sizeof(sort_key)))
		return false;
	keys = f->order;
	skip = r[0].row_len;
	for (size_t i = 1; i < n && skip > 0; i++)
		skip = wc_common_prefix(r[0].row, skip, r[i].row, r[i].row_len);
	for (size_t i = 0; i < n; i++)
	{
		keys[i].pfx = r[i].row_len > skip ? wc_prefix64(r[i].row + skip, r[i].row_len - skip) : 0;
		keys[i].i = i;
	}
	qsort_r(keys, n, sizeof(sort_key), run_qsort_cmp, f->runs);
	for (size_t k = 1; k < n; k++)
		if (keys[k - 1].pfx == keys[k].pfx &&
			wc_row_cmp(r[keys[k - 1].i].row, r[keys[k - 1].i].row_len,
					   r[keys[k].i].row, r[keys[k].i].row_len) == 0)
		{
			wc_big_buf_free(f->order, f->order_bytes, f->order_mapped);
			f->order = NULL;
			f->order_bytes = 0;
			f->order_mapped = false;
			return false;
		}
	return true;
}

/* The index of family fam in p (*last: the one found before, tried first), or -1. */
static int
plan_family_find(const plan *p, const uint8_t *fam, uint32_t len, int *last)
{
	if (*last >= 0 && p->fams[*last].name_len == len && memcmp(p->fams[*last].name, fam, len) == 0)
		return *last;
	for (int i = 0; i < p->nfams; i++)
		if (p->fams[i].name_len == len && memcmp(p->fams[i].name, fam, len) == 0)
			return *last = i;
	return -1;
}

/* Family fam of p, added if new; NULL with err set if p has no room for it. */
static plan_family *
plan_family_get(plan *p, const uint8_t *fam, uint32_t len, int *last, wc_err *err)
{
	int			i = plan_family_find(p, fam, len, last);

	if (i >= 0)
		return &p->fams[i];
	if (p->nfams == WC_MAX_FAMILIES)
	{
		wc_err_set(err, WC_INVALID, "a bulk write names more than %d families", WC_MAX_FAMILIES);
		return NULL;
	}
	memcpy(p->fams[p->nfams].name, fam, len);
	p->fams[p->nfams].name_len = len;
	*last = p->nfams;
	return &p->fams[p->nfams++];
}

/* Frees what f holds; its name and count stay. */
static void
plan_family_clear(plan_family *f)
{
	if (f->cells != NULL)
		wc_big_buf_free(f->cells, f->bytes, f->mapped);
	if (f->runs != NULL)
		wc_big_buf_free(f->runs, f->runs_bytes, f->runs_mapped);
	if (f->order != NULL)
		wc_big_buf_free(f->order, f->order_bytes, f->order_mapped);
	f->cells = NULL;
	f->cap = f->bytes = 0;
	f->mapped = false;
	f->runs = NULL;
	f->nruns = f->runs_bytes = 0;
	f->runs_mapped = false;
	f->order = NULL;
	f->order_bytes = 0;
	f->order_mapped = false;
}

static void
plan_free(plan *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->nfams; i++)
		plan_family_clear(&p->fams[i]);
	free(p);
}

/* A builder of sorted file number for family (its options), or NULL with err set. */
static wc_sst_builder *
builder_new(wc_db *db, const char *family, uint64_t number, wc_err *err)
{
	wc_sst_build_opts o;
	char		name[32];

	wc_file_name(name, sizeof(name), number, "sst");
	wc_db_build_opts(db, family, 0, &o);
	/* the committer waits for these files: their lz4 goes to a second core */
	o.helper = true;
	return wc_sst_builder_new(db->dir, name, &o, err);
}

/* Removes files first .. first + n - 1 of a bulk write that will not commit
 * (those never written, or removed by a failed build, are not there). */
static void
remove_files(wc_db *db, uint64_t first, int n)
{
	wc_err		ignored;
	char		name[32];

	wc_err_clear(&ignored);
	for (int i = 0; i < n; i++)
	{
		wc_file_name(name, sizeof(name), first + (uint64_t) i, "sst");
		(void) wc_env_unlink(db->dir, name, &ignored);
	}
}

/* What a pass of plan_read does. */
typedef enum plan_pass
{
	PLAN_CHECK,					/* count, and stop at the first entry out of order */
	PLAN_RUNS,					/* each family's runs */
	PLAN_CELLS					/* copy the entries of families without runs */
} plan_pass;

/* Runs give up past this many when they are shorter than two entries on average. */
#define RUNS_GIVE_UP	1024

/*
 * Reads the batches into p.  PLAN_CHECK (p's families empty): only the families
 * and their counts are kept, and *in_order tells whether the entries of every
 * family follow each other in wc_cell_cmp order, as in an export loaded in
 * rowkey order; reading stops at the first entry out of order.  When they do,
 * the files are written in one pass over the batches (build_files_in_order),
 * with nothing to sort and no array, which for a million cells was 72 MB of
 * fresh memory (on a virtual machine the first touch of a page is the
 * expensive part; DESIGN.md, "Bulk writes").  PLAN_RUNS (p's families empty):
 * the families, their counts and their runs (plan_run; a family whose runs
 * are too short gives them up).  PLAN_CELLS (after PLAN_RUNS): the entries of
 * each family without an order of its runs go into its array of cells, seq i
 * for entry i counting across the batches, to be sorted.  WC_OK or an error (a
 * truncate among the entries included: a bulk write cannot hold one).
 */
static int
plan_read(wc_batch *const *batches, int n, plan *p, plan_pass pass, bool *in_order, wc_err *err)
{
	wc_cell		prev[WC_MAX_FAMILIES];
	bool		no_runs[WC_MAX_FAMILIES] = {false};
	uint64_t	index = 0;
	int			last = -1;

	*in_order = pass == PLAN_CHECK;
	for (int b = 0; b < n; b++)
	{
		wc_batch_reader r;
		wc_batch_entry e;
		const uint8_t *at;
		int			before = -1;	/* the family of the batch's entry before */
		int			rc;

		wc_batch_reader_of(&r, batches[b], index);
		index += r.count;
		while (at = r.p, (rc = wc_batch_reader_next(&r, &e, err)) == 1)
		{
			plan_family *f;
			plan_run   *run;
			bool		extend;
			int			i;

			if (e.type == WC_TYPE_DEL_ALL)
				return wc_err_set(err, WC_INVALID, "a bulk write cannot hold a truncate");
			if ((f = plan_family_get(p, e.fam, e.fam_len, &last, err)) == NULL)
				return err->code;
			i = (int) (f - p->fams);
			if (pass == PLAN_CHECK)
			{
				if (f->n > 0 && wc_cell_cmp(&prev[i], &e.cell) >= 0)
				{
					*in_order = false;
					return WC_OK;
				}
				prev[i] = e.cell;
				f->n++;
				continue;
			}
			if (pass == PLAN_CELLS)
			{
				if (f->order != NULL)
					continue;
				if (f->n == f->cap)
				{
					if (f->n + 1 > SIZE_MAX / sizeof(wc_cell) ||
						!wc_big_buf_grow(&f->cells, &f->bytes, &f->mapped,
										 (f->n + 1) * sizeof(wc_cell)))
						return wc_err_set(err, WC_NOMEM, "out of memory");
					f->cap = f->bytes / sizeof(wc_cell);
				}
				f->cells[f->n++] = e.cell;
				continue;
			}
			f->n++;
			/* the batch's entry before: of this family and row, and before this one? */
			extend = before == i && !no_runs[i] && prev[i].row_len == e.cell.row_len &&
				memcmp(prev[i].row, e.cell.row, e.cell.row_len) == 0 &&
				wc_cell_cmp(&prev[i], &e.cell) < 0;
			before = i;
			if (no_runs[i])
				continue;
			if (extend)
			{
				run = &f->runs[f->nruns - 1];
				run->end = r.p;
				run->count++;
			}
			else if (f->nruns >= RUNS_GIVE_UP && f->nruns * 2 > f->n)
			{
				no_runs[i] = true;
				wc_big_buf_free(f->runs, f->runs_bytes, f->runs_mapped);
				f->runs = NULL;
				f->nruns = f->runs_bytes = 0;
				f->runs_mapped = false;
				continue;
			}
			else
			{
				if (f->nruns + 1 > SIZE_MAX / sizeof(plan_run) ||
					!wc_big_buf_grow(&f->runs, &f->runs_bytes, &f->runs_mapped,
									 (f->nruns + 1) * sizeof(plan_run)))
					return wc_err_set(err, WC_NOMEM, "out of memory");
				run = &f->runs[f->nruns++];
				run->p = at;
				run->end = r.p;
				run->row = e.cell.row;
				run->row_len = e.cell.row_len;
				run->count = 1;
				run->index = e.cell.seq;
			}
			prev[i] = e.cell;
		}
		if (rc < 0)
			return rc;
	}
	return WC_OK;
}

/*
 * The plan of a bulk write: its families, and unless *in_order (plan_read),
 * each family's runs in order, or its cells sorted.  NULL with err set on
 * failure.
 */
static plan *
plan_new(wc_batch *const *batches, int n, bool *in_order, wc_err *err)
{
	plan	   *p = calloc(1, sizeof(plan));
	bool		cells = false;

	if (p == NULL)
	{
		wc_err_set(err, WC_NOMEM, "out of memory");
		return NULL;
	}
	if (plan_read(batches, n, p, PLAN_CHECK, in_order, err) != WC_OK)
		goto fail;
	if (*in_order)
		return p;
	memset(p, 0, sizeof(plan));
	if (plan_read(batches, n, p, PLAN_RUNS, in_order, err) != WC_OK)
		goto fail;
	for (int i = 0; i < p->nfams; i++)
		if (!sort_runs(&p->fams[i]))
		{
			plan_family_clear(&p->fams[i]);
			p->fams[i].n = 0;	/* counted again by PLAN_CELLS */
			cells = true;
		}
	if (!cells)
		return p;
	if (plan_read(batches, n, p, PLAN_CELLS, in_order, err) != WC_OK)
		goto fail;
	for (int i = 0; i < p->nfams; i++)
		if (p->fams[i].order == NULL)
			sort_cells(p->fams[i].cells, p->fams[i].n);
	return p;

fail:
	plan_free(p);
	return NULL;
}

/*
 * Writes every family's file (numbers first, first + 1, ... in p's order) in
 * one pass over the batches, whose entries plan_read found in order, each
 * entry's seq raised by seq_base.  On failure every file is removed (finish
 * and abandon remove their own).
 */
static int
build_files_in_order(wc_db *db, wc_batch *const *batches, int n, const plan *p,
					 uint64_t first, uint64_t seq_base, wc_err *err)
{
	wc_sst_builder *builders[WC_MAX_FAMILIES];
	uint64_t	index = 0;
	int			last = -1,
				nopen = 0,
				rc = WC_OK;

	for (; nopen < p->nfams; nopen++)
	{
		if ((builders[nopen] = builder_new(db, p->fams[nopen].name, first + (uint64_t) nopen,
										   err)) == NULL)
		{
			rc = err->code;
			goto fail;
		}
	}
	for (int b = 0, more = 0; b < n && more == 0; b++)
	{
		wc_batch_reader r;
		wc_batch_entry e;

		wc_batch_reader_of(&r, batches[b], seq_base + index);
		index += r.count;
		while ((more = wc_batch_reader_next(&r, &e, err)) == 1)
		{
			int			i = plan_family_find(p, e.fam, e.fam_len, &last);

			if (i < 0)
			{
				rc = wc_err_set(err, WC_INVALID, "a bulk write's batches changed while it was written");
				goto fail;
			}
			/* the builder keeps a failed add's error for finish, below */
			if (wc_sst_builder_add(builders[i], &e.cell) != WC_OK)
				break;			/* with more == 1: stops the outer loop too */
		}
		if (more < 0)
		{
			rc = more;
			goto fail;
		}
	}
	for (int i = 0; i < nopen; i++)
	{
		wc_sst_props props;

		if (rc != WC_OK)
		{
			wc_sst_builder_abandon(builders[i]);
			continue;
		}
		memset(&props, 0, sizeof(props));
		rc = wc_sst_builder_finish(builders[i], &props, err);
		wc_sst_props_clear(&props);
	}
	if (rc != WC_OK)
		remove_files(db, first, nopen);
	return rc;

fail:
	for (int i = 0; i < nopen; i++)
		wc_sst_builder_abandon(builders[i]);
	return rc;
}

/* Writes the entries of f as sorted file number, their seqs raised by seq_base. */
static int
build_file(wc_db *db, const plan_family *f, uint64_t number, uint64_t seq_base, wc_err *err)
{
	wc_sst_builder *b;
	wc_sst_props props;
	int			rc;

	if ((b = builder_new(db, f->name, number, err)) == NULL)
		return err->code;
	if (f->order != NULL)
	{
		/* run by run, each read again from its batch (plan_read read them all) */
		for (size_t k = 0; k < f->nruns; k++)
		{
			const plan_run *run = &f->runs[f->order[k].i];
			wc_batch_reader r;
			wc_batch_entry e;
			int			more;

			wc_batch_reader_span(&r, run->p, run->end, run->count, seq_base + run->index);
			while ((more = wc_batch_reader_next(&r, &e, err)) == 1)
				if (wc_sst_builder_add(b, &e.cell) != WC_OK)
					goto finish;	/* finish reports the first error */
			if (more < 0)
			{
				wc_sst_builder_abandon(b);
				return more;
			}
		}
	}
	else
		for (size_t k = 0; k < f->n; k++)
		{
			wc_cell		c = f->cells[k];

			c.seq += seq_base;
			if (wc_sst_builder_add(b, &c) != WC_OK)
				break;			/* finish reports the first error */
		}
finish:
	memset(&props, 0, sizeof(props));
	rc = wc_sst_builder_finish(b, &props, err);
	wc_sst_props_clear(&props);
	return rc;
}

/*
 * The order is what makes it safe (DESIGN.md, "Bulk writes"): the record is
 * appended first, so the entries get their sequence numbers and every reader
 * sees the record (held while the tag is in progress) before any of its files
 * exists; orphan removal, which looks at the logs under the write lock, then
 * keeps the files.  The files, the directory and the log are all fsynced before
 * we return, i.e. before the caller can commit the tag.
 */
int
wc_db_write_bulk(wc_db *db, wc_batch *const *batches, int n, uint64_t count, uint64_t tag,
				 bool sync, wc_err *err)
{
	plan	   *p;
	wc_ingest_record rec;
	uint8_t    *payload = NULL;
	size_t		len;
	uint64_t	first = 0,
				seq_base;
	wc_logmem  *active;
	wc_slice	part;
	int			built = 0,
				rc;
	bool		in_order = false;

	memset(&rec, 0, sizeof(rec));
	if ((p = plan_new(batches, n, &in_order, err)) == NULL)
		return err->code;
	rec.seq_base = 1;			/* wc_db_append writes the real one */
	rec.tag = tag;
	rec.count = (uint32_t) count;
	rec.nfiles = p->nfams;
	if ((rec.files = calloc(rec.nfiles, sizeof(wc_ingest_file))) == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = wc_db_reserve_numbers(db, rec.nfiles, &first, err)) != WC_OK)
		goto out;
	for (int i = 0; i < rec.nfiles; i++)
	{
		rec.files[i].number = first + (uint64_t) i;
		snprintf(rec.files[i].family, sizeof(rec.files[i].family), "%s", p->fams[i].name);
	}
	if ((rc = wc_ingest_encode(&rec, &payload, &len, err)) != WC_OK)
		goto out;
	part.data = payload;
	part.len = len;
	/* the log is switched at once, so that a flush soon moves the files into the
	 * manifest, where compaction sees them */
	if ((rc = wc_db_append(db, &part, 1, count, payload, WC_INGEST_FLAG, NULL, 0, tag, true,
						   &seq_base, &active, err)) != WC_OK)
		goto out;
	if (in_order)
		rc = build_files_in_order(db, batches, n, p, first, seq_base, err);
	else
		for (; built < rec.nfiles && rc == WC_OK; built++)
			rc = build_file(db, &p->fams[built], first + (uint64_t) built, seq_base, err);
	if (rc == WC_OK)
		rc = wc_env_sync_dir(db->dir, err);
	if (rc == WC_OK && sync && (rc = wc_file_sync(&active->file, false, err)) != WC_OK)
		db->failed = true;
	/* the tag will not commit (the caller's contract): the files are orphans; a
	 * failed build removed its own partial file already */
	if (rc != WC_OK)
		remove_files(db, first, in_order ? rec.nfiles : built);
out:
	free(payload);
	wc_ingest_record_clear(&rec);
	plan_free(p);
	return rc;
}
