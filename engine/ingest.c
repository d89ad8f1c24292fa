/*
 * ingest.c -- ingest records and the sorting of a bulk write (ingest.h).
 *
 *   payload := seq_base_flagged: fixed64 | tag: fixed64 | count: varint32
 *              | nfiles: varint32 | file{nfiles}
 *   file    := number: fixed64 | fam_len: varint32 | fam: bytes[fam_len]
 *
 * Sorting: a bulk write usually arrives in rowkey order with the cells of one
 * row in any order (COPY of an export, INSERT ... SELECT ... ORDER BY), so each
 * family's entries are first insertion-sorted, which costs O(n) on such input;
 * when that has moved more than a few entries per entry on average the input is
 * not nearly sorted and the rest goes to qsort.
 */
#include "ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "db_internal.h"
#include "err.h"

/* Insertion sort gives up after this many moves per entry on average. */
#define NEARLY_SORTED_MOVES	8

bool
wc_ingest_is_record(const uint8_t *payload, size_t len)
{
	return len >= 8 && (wc_get_fixed64(payload) & WC_INGEST_FLAG) != 0;
}

int
wc_ingest_encode(const wc_ingest_record *r, uint8_t **buf, size_t *len, wc_err *err)
{
	size_t		cap = 8 + 8 + 5 + 5;
	uint8_t    *out,
			   *p;

	for (int i = 0; i < r->nfiles; i++)
		cap += 8 + 5 + strlen(r->files[i].family);
	if ((out = malloc(cap)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	wc_put_fixed64(out, r->seq_base | WC_INGEST_FLAG);
	wc_put_fixed64(out + 8, r->tag);
	p = wc_put_varint64(out + 16, r->count);
	p = wc_put_varint64(p, (uint64_t) r->nfiles);
	for (int i = 0; i < r->nfiles; i++)
	{
		size_t		flen = strlen(r->files[i].family);

		wc_put_fixed64(p, r->files[i].number);
		p = wc_put_varint64(p + 8, flen);
		memcpy(p, r->files[i].family, flen);
		p += flen;
	}
	*buf = out;
	*len = (size_t) (p - out);
	return WC_OK;
}

void
wc_ingest_record_clear(wc_ingest_record *r)
{
	free(r->files);
	memset(r, 0, sizeof(*r));
}

int
wc_ingest_decode(const uint8_t *payload, size_t len, wc_ingest_record *r, wc_err *err)
{
	const uint8_t *p,
			   *end = payload + len;
	uint32_t	nfiles;

	memset(r, 0, sizeof(*r));
	if (len < 8 + 8 + 1 + 1 || !wc_ingest_is_record(payload, len))
		return wc_err_set(err, WC_CORRUPT, "ingest record of %zu bytes is too short", len);
	r->seq_base = wc_get_fixed64(payload) & ~WC_INGEST_FLAG;
	r->tag = wc_get_fixed64(payload + 8);
	if ((p = wc_get_varint32(payload + 16, end, &r->count)) == NULL ||
		(p = wc_get_varint32(p, end, &nfiles)) == NULL)
		return wc_err_set(err, WC_CORRUPT, "ingest record header is truncated or malformed");
	if (r->count == 0 || r->seq_base == 0 || r->seq_base > WC_SEQ_PENDING_BASE - r->count)
		return wc_err_set(err, WC_CORRUPT,
						  "ingest record sequence numbers from %llu for %u entries are out of range",
						  (unsigned long long) r->seq_base, r->count);
	if (nfiles == 0 || nfiles > WC_MAX_FAMILIES || nfiles > r->count)
		return wc_err_set(err, WC_CORRUPT, "ingest record names %u files for %u entries",
						  nfiles, r->count);
	if ((r->files = calloc(nfiles, sizeof(wc_ingest_file))) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (uint32_t i = 0; i < nfiles; i++)
	{
		uint32_t	flen;

		if (end - p < 8)
			break;
		r->files[i].number = wc_get_fixed64(p);
		if ((p = wc_get_varint32(p + 8, end, &flen)) == NULL || flen == 0 ||
			flen > WC_MAX_FAMILY || (size_t) (end - p) < flen || memchr(p, 0, flen) != NULL)
			break;
		memcpy(r->files[i].family, p, flen);
		p += flen;
		for (uint32_t j = 0; j < i; j++)
			if (r->files[j].number == r->files[i].number ||
				strcmp(r->files[j].family, r->files[i].family) == 0)
			{
				int			dup = (int) j;

				wc_ingest_record_clear(r);
				return wc_err_set(err, WC_CORRUPT,
								  "ingest record file entry %u repeats the file number or family of entry %d",
								  i, dup);
			}
		r->nfiles++;
	}
	if (r->nfiles != (int) nfiles || p != end)
	{
		int			got = r->nfiles;

		wc_ingest_record_clear(r);
		return wc_err_set(err, WC_CORRUPT,
						  "ingest record file entry %d of %u is malformed, or bytes follow the last one",
						  got, nfiles);
	}
	return WC_OK;
}

/* ---------------------------------------------------------------- plans */

typedef struct plan_family
{
	char		name[WC_MAX_FAMILY + 1];
	uint32_t	name_len;
	wc_cell    *cells;
	size_t		n;
	size_t		cap;
} plan_family;

struct wc_ingest_plan
{
	int			nfams;
	plan_family fams[WC_MAX_FAMILIES];
};

static int
cell_qsort_cmp(const void *a, const void *b)
{
	return wc_cell_cmp(a, b);
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
			qsort(c, n, sizeof(wc_cell), cell_qsort_cmp);
			return;
		}
	}
}

static plan_family *
plan_family_get(wc_ingest_plan *p, const uint8_t *fam, uint32_t len, int *last, wc_err *err)
{
	if (*last >= 0 && p->fams[*last].name_len == len && memcmp(p->fams[*last].name, fam, len) == 0)
		return &p->fams[*last];
	for (int i = 0; i < p->nfams; i++)
		if (p->fams[i].name_len == len && memcmp(p->fams[i].name, fam, len) == 0)
		{
			*last = i;
			return &p->fams[i];
		}
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

wc_ingest_plan *
wc_ingest_plan_new(wc_batch *const *batches, int n, wc_err *err)
{
	wc_ingest_plan *p = calloc(1, sizeof(wc_ingest_plan));
	uint64_t	index = 0;
	int			last = -1;

	if (p == NULL)
	{
		wc_err_set(err, WC_NOMEM, "out of memory");
		return NULL;
	}
	for (int b = 0; b < n; b++)
	{
		wc_batch_reader r;
		wc_batch_entry e;
		int			rc;

		wc_batch_reader_of(&r, batches[b], index);
		index += r.count;
		while ((rc = wc_batch_reader_next(&r, &e, err)) == 1)
		{
			plan_family *f;

			if (e.type == WC_TYPE_DEL_ALL)
			{
				wc_err_set(err, WC_INVALID, "a bulk write cannot hold a truncate");
				goto fail;
			}
			if ((f = plan_family_get(p, e.fam, e.fam_len, &last, err)) == NULL)
				goto fail;
			if (f->n == f->cap)
			{
				size_t		cap = f->cap ? f->cap * 2 : 1024;
				wc_cell    *grown = realloc(f->cells, cap * sizeof(wc_cell));

				if (grown == NULL)
				{
					wc_err_set(err, WC_NOMEM, "out of memory");
					goto fail;
				}
				f->cells = grown;
				f->cap = cap;
				wc_env_advise_huge(grown, cap * sizeof(wc_cell));
			}
			f->cells[f->n++] = e.cell;
		}
		if (rc < 0)
			goto fail;
	}
	for (int i = 0; i < p->nfams; i++)
		sort_cells(p->fams[i].cells, p->fams[i].n);
	return p;

fail:
	wc_ingest_plan_free(p);
	return NULL;
}

void
wc_ingest_plan_free(wc_ingest_plan *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->nfams; i++)
		free(p->fams[i].cells);
	free(p);
}

int
wc_ingest_plan_families(const wc_ingest_plan *p)
{
	return p->nfams;
}

const char *
wc_ingest_plan_family(const wc_ingest_plan *p, int i)
{
	return p->fams[i].name;
}

void
wc_ingest_plan_cells(const wc_ingest_plan *p, int i, const wc_cell **cells, size_t *n)
{
	*cells = p->fams[i].cells;
	*n = p->fams[i].n;
}

/* ---------------------------------------------------------------- the store's side */

/* Writes family i of plan as sorted file number, its entries' seqs raised by seq_base. */
static int
build_file(wc_db *db, const wc_ingest_plan *plan, int i, uint64_t number, uint64_t seq_base,
		   wc_err *err)
{
	wc_sst_build_opts o;
	wc_sst_builder *b;
	wc_sst_props props;
	const wc_cell *cells;
	size_t		n;
	char		name[32];
	int			rc;

	wc_file_name(name, sizeof(name), number, "sst");
	wc_db_build_opts(db, wc_ingest_plan_family(plan, i), 0, &o);
	if ((b = wc_sst_builder_new(db->dir, name, &o, err)) == NULL)
		return err->code;
	wc_ingest_plan_cells(plan, i, &cells, &n);
	for (size_t k = 0; k < n; k++)
	{
		wc_cell		c = cells[k];

		c.seq += seq_base;
		if (wc_sst_builder_add(b, &c) != WC_OK)
			break;				/* finish reports the first error */
	}
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
wc_db_write_ingest(wc_db *db, wc_batch *const *batches, int n, uint64_t count, uint64_t tag,
				   bool sync, wc_err *err)
{
	wc_ingest_plan *plan;
	wc_ingest_record rec;
	uint8_t    *payload = NULL;
	size_t		len;
	uint64_t	first = 0,
				seq_base;
	wc_logmem  *active;
	wc_slice	part;
	int			built = 0,
				rc;

	memset(&rec, 0, sizeof(rec));
	if ((plan = wc_ingest_plan_new(batches, n, err)) == NULL)
		return err->code;
	rec.seq_base = 1;			/* wc_db_append writes the real one */
	rec.tag = tag;
	rec.count = (uint32_t) count;
	rec.nfiles = wc_ingest_plan_families(plan);
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
		snprintf(rec.files[i].family, sizeof(rec.files[i].family), "%s",
				 wc_ingest_plan_family(plan, i));
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
	for (; built < rec.nfiles && rc == WC_OK; built++)
		rc = build_file(db, plan, built, first + (uint64_t) built, seq_base, err);
	if (rc == WC_OK)
		rc = wc_env_sync_dir(db->dir, err);
	if (rc == WC_OK && sync && (rc = wc_file_sync(&active->file, false, err)) != WC_OK)
		db->failed = true;
	if (rc != WC_OK)
	{
		wc_err		ignored;
		char		name[32];

		/* the tag will not commit (the caller's contract): the files are orphans;
		 * a failed build removed its own partial file already */
		wc_err_clear(&ignored);
		for (int i = 0; i < built; i++)
		{
			wc_file_name(name, sizeof(name), first + (uint64_t) i, "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
	}
out:
	free(payload);
	wc_ingest_record_clear(&rec);
	wc_ingest_plan_free(plan);
	return rc;
}

int
wc_ingest_payload_header(const uint8_t *payload, size_t len, wc_batch_reader *r, wc_err *err)
{
	wc_ingest_record rec;
	int			rc;

	if (!wc_ingest_is_record(payload, len))
		return wc_batch_reader_init(r, payload, len, err);
	memset(r, 0, sizeof(*r));
	if ((rc = wc_ingest_decode(payload, len, &rec, err)) != WC_OK)
		return rc;
	r->seq_base = rec.seq_base;
	r->count = rec.count;
	r->tag = rec.tag;
	wc_ingest_record_clear(&rec);
	return WC_OK;
}
