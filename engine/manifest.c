/*
 * manifest.c -- the MANIFEST file: encoding, decoding, atomic replacement.
 *
 *   manifest := magic: bytes(8) | format_version: fixed32 | body_len: fixed32
 *               | body: bytes(body_len) | crc32c: fixed32 over everything before it
 *   body     := version: fixed64 | next_file: fixed64 | last_seq: fixed64
 *               | truncate_seq: fixed64 | nlogs: varint32 | log: fixed64{nlogs}
 *               | nfiles: varint32 | file{nfiles}
 *               [ | nrecent: varint32 | recent{nrecent} | forgotten: fixed64 ]
 *                                                              (format version 2)
 *   recent   := tag: fixed64 | seq_lo: fixed64 | seq_hi: fixed64
 *   file     := number: fixed64 | level: u8 | family_len: varint32 | family
 *               | cells | tombstones | range_tombstones | distinct_rows | raw_bytes
 *               | file_bytes | blocks (varint64 each)
 *               | ts_min: fixed64 | ts_max: fixed64 | seq_min: fixed64 | seq_max: fixed64
 *               | row_min_len: varint32 | row_min | row_max_len: varint32 | row_max
 *
 * A manifest without recent records is written in format version 1, as before
 * they existed, so that it stays readable by builds that know only that one.
 *
 * The decoder trusts nothing: every length and count is checked against what is
 * left before anything is allocated, so a damaged image yields WC_CORRUPT with the
 * offset, never a crash or a huge allocation.
 */
#include "manifest.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "crc32c.h"
#include "env.h"
#include "err.h"

/* (format) */
static const uint8_t manifest_magic[8] = {'W', 'C', 'M', 'A', 'N', 0x0d, 0x0a, 0x1a};
#define MANIFEST_FORMAT_VERSION	2	/* the newest read and written */
#define MANIFEST_RECENT_BYTES	24
#define MANIFEST_HEADER		16	/* magic, format_version, body_len */
#define MANIFEST_TRAILER	4	/* crc32c */
/* The smallest encoded file entry: every varint one byte, empty strings. */
#define MANIFEST_MIN_FILE	(8 + 1 + 1 + 7 + 4 * 8 + 1 + 1)

/* Larger images are refused by the reader, so the writer refuses them too. */
#define MANIFEST_MAX_BYTES	(64u << 20)

#define MANIFEST_NAME		"MANIFEST"
#define MANIFEST_TMP_NAME	"MANIFEST.tmp"

/* ---------------------------------------------------------------- encoding */

static size_t
bytes_size(size_t len)
{
	return (size_t) wc_varint_len(len) + len;
}

static size_t
file_size(const wc_manifest_file *mf)
{
	const wc_sst_props *pr = &mf->props;

	return 8 + 1 + bytes_size(strnlen(pr->family, WC_MAX_FAMILY)) +
		wc_varint_len(pr->cells) + wc_varint_len(pr->tombstones) +
		wc_varint_len(pr->range_tombstones) + wc_varint_len(pr->distinct_rows) +
		wc_varint_len(pr->raw_bytes) + wc_varint_len(pr->file_bytes) +
		wc_varint_len(pr->blocks) + 4 * 8 +
		bytes_size(pr->row_min ? pr->row_min_len : 0) +
		bytes_size(pr->row_max ? pr->row_max_len : 0);
}

static uint8_t *
put_file(uint8_t *p, const wc_manifest_file *mf)
{
	const wc_sst_props *pr = &mf->props;

	wc_put_fixed64(p, mf->number);
	p += 8;
	*p++ = (uint8_t) pr->level;
	p = wc_put_bytes(p, pr->family, strnlen(pr->family, WC_MAX_FAMILY));
	p = wc_put_varint64(p, pr->cells);
	p = wc_put_varint64(p, pr->tombstones);
	p = wc_put_varint64(p, pr->range_tombstones);
	p = wc_put_varint64(p, pr->distinct_rows);
	p = wc_put_varint64(p, pr->raw_bytes);
	p = wc_put_varint64(p, pr->file_bytes);
	p = wc_put_varint64(p, pr->blocks);
	wc_put_fixed64(p, (uint64_t) pr->ts_min);
	wc_put_fixed64(p + 8, (uint64_t) pr->ts_max);
	wc_put_fixed64(p + 16, pr->seq_min);
	wc_put_fixed64(p + 24, pr->seq_max);
	p += 32;
	p = wc_put_bytes(p, pr->row_min, pr->row_min ? pr->row_min_len : 0);
	p = wc_put_bytes(p, pr->row_max, pr->row_max ? pr->row_max_len : 0);
	return p;
}

int
wc_manifest_encode(const wc_manifest *m, uint8_t **buf, size_t *len, wc_err *err)
{
	size_t		body = 4 * 8 + wc_varint_len((uint64_t) m->nlogs) + 8 * (size_t) m->nlogs +
		wc_varint_len((uint64_t) m->nfiles);
	size_t		total;
	uint8_t    *out,
			   *p;
	bool		v2 = m->recent.n > 0 || m->recent.forgotten != 0;

	*buf = NULL;
	*len = 0;
	if (m->nlogs < 0 || m->nfiles < 0 || m->recent.n < 0)
		return wc_err_set(err, WC_INVALID, "manifest with %d logs, %d files, %d recent records",
						  m->nlogs, m->nfiles, m->recent.n);
	if (v2)
		body += wc_varint_len((uint64_t) m->recent.n) +
			MANIFEST_RECENT_BYTES * (size_t) m->recent.n + 8;
	for (int i = 0; i < m->nfiles; i++)
	{
		const wc_sst_props *pr = &m->files[i].props;

		/* the decoder rejects these, so never write them */
		if ((pr->row_min && pr->row_min_len > WC_MAX_ROWKEY) ||
			(pr->row_max && pr->row_max_len > WC_MAX_ROWKEY) ||
			pr->level < 0 || pr->level > 255)
			return wc_err_set(err, WC_INVALID,
							  "manifest entry for file %llu has level %d, row bounds of %u and %u bytes",
							  (unsigned long long) m->files[i].number, pr->level,
							  pr->row_min_len, pr->row_max_len);
		body += file_size(&m->files[i]);
		if (body > MANIFEST_MAX_BYTES)
			break;
	}
	total = MANIFEST_HEADER + body + MANIFEST_TRAILER;
	if (total > MANIFEST_MAX_BYTES)
		return wc_err_set(err, WC_INVALID,
						  "manifest with %d files exceeds the limit of %u bytes",
						  m->nfiles, MANIFEST_MAX_BYTES);
	if ((out = malloc(total)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory encoding a manifest of %zu bytes", total);

	memcpy(out, manifest_magic, 8);
	wc_put_fixed32(out + 8, v2 ? 2 : 1);
	wc_put_fixed32(out + 12, (uint32_t) body);
	p = out + MANIFEST_HEADER;
	wc_put_fixed64(p, m->version);
	wc_put_fixed64(p + 8, m->next_file);
	wc_put_fixed64(p + 16, m->last_seq);
	wc_put_fixed64(p + 24, m->truncate_seq);
	p += 32;
	p = wc_put_varint64(p, (uint64_t) m->nlogs);
	for (int i = 0; i < m->nlogs; i++, p += 8)
		wc_put_fixed64(p, m->logs[i]);
	p = wc_put_varint64(p, (uint64_t) m->nfiles);
	for (int i = 0; i < m->nfiles; i++)
		p = put_file(p, &m->files[i]);
	if (v2)
	{
		p = wc_put_varint64(p, (uint64_t) m->recent.n);
		for (int i = 0; i < m->recent.n; i++, p += MANIFEST_RECENT_BYTES)
		{
			wc_put_fixed64(p, m->recent.items[i].tag);
			wc_put_fixed64(p + 8, m->recent.items[i].seq_lo);
			wc_put_fixed64(p + 16, m->recent.items[i].seq_hi);
		}
		wc_put_fixed64(p, m->recent.forgotten);
		p += 8;
	}
	wc_put_fixed32(p, wc_crc32c(out, (size_t) (p - out)));
	p += MANIFEST_TRAILER;
	if ((size_t) (p - out) != total)
	{
		free(out);
		return wc_err_set(err, WC_INVALID, "manifest encoding size mismatch: %zu != %zu",
						  (size_t) (p - out), total);
	}
	*buf = out;
	*len = total;
	return WC_OK;
}

/* ---------------------------------------------------------------- decoding */

/* A cursor over the body; offsets in messages are from the start of the image. */
typedef struct cursor
{
	const uint8_t *start;
	const uint8_t *p;
	const uint8_t *end;
	wc_err	   *err;
} cursor;

static size_t
cur_off(const cursor *c)
{
	return (size_t) (c->p - c->start);
}

static int
cur_short(cursor *c, const char *what, size_t need)
{
	return wc_err_set(c->err, WC_CORRUPT,
					  "MANIFEST is damaged at offset %zu: %s needs %zu bytes but only %zu are left in the body",
					  cur_off(c), what, need, (size_t) (c->end - c->p));
}

static int
get_fixed64(cursor *c, const char *what, uint64_t *v)
{
	if (c->end - c->p < 8)
		return cur_short(c, what, 8);
	*v = wc_get_fixed64(c->p);
	c->p += 8;
	return WC_OK;
}

static int
get_varint(cursor *c, const char *what, uint64_t *v)
{
	const uint8_t *next = wc_get_varint64(c->p, c->end, v);

	if (next == NULL)
		return wc_err_set(c->err, WC_CORRUPT,
						  "MANIFEST is damaged at offset %zu: %s is not a valid varint",
						  cur_off(c), what);
	c->p = next;
	return WC_OK;
}

/* A length-prefixed string of at most max bytes; *data points into the image. */
static int
get_bytes(cursor *c, const char *what, size_t max, const uint8_t **data, size_t *len)
{
	size_t		at = cur_off(c);
	uint64_t	n;
	int			rc;

	if ((rc = get_varint(c, what, &n)) != WC_OK)
		return rc;
	if (n > max)
		return wc_err_set(c->err, WC_CORRUPT,
						  "MANIFEST is damaged at offset %zu: %s has length %llu, above the limit of %zu",
						  at, what, (unsigned long long) n, max);
	if ((uint64_t) (c->end - c->p) < n)
		return cur_short(c, what, (size_t) n);
	*data = c->p;
	*len = (size_t) n;
	c->p += n;
	return WC_OK;
}

static int
get_row(cursor *c, const char *what, uint8_t **row, uint32_t *row_len)
{
	const uint8_t *data;
	size_t		len;
	int			rc;

	if ((rc = get_bytes(c, what, WC_MAX_ROWKEY, &data, &len)) != WC_OK)
		return rc;
	if (len == 0)
		return WC_OK;
	if ((*row = malloc(len)) == NULL)
		return wc_err_set(c->err, WC_NOMEM, "out of memory reading the manifest");
	memcpy(*row, data, len);
	*row_len = (uint32_t) len;
	return WC_OK;
}

static int
get_file(cursor *c, wc_manifest_file *mf)
{
	wc_sst_props *pr = &mf->props;
	const uint8_t *fam;
	size_t		fam_len;
	uint64_t	v[4];
	int			rc;

	if ((rc = get_fixed64(c, "file number", &mf->number)) != WC_OK)
		return rc;
	if (c->p >= c->end)
		return cur_short(c, "file level", 1);
	pr->level = *c->p++;
	if ((rc = get_bytes(c, "family name", WC_MAX_FAMILY, &fam, &fam_len)) != WC_OK)
		return rc;
	if (memchr(fam, '\0', fam_len) != NULL)
		return wc_err_set(c->err, WC_CORRUPT,
						  "MANIFEST is damaged at offset %zu: family name of file %llu contains a zero byte",
						  cur_off(c) - fam_len, (unsigned long long) mf->number);
	memcpy(pr->family, fam, fam_len);
	pr->family[fam_len] = '\0';
	if ((rc = get_varint(c, "cells", &pr->cells)) != WC_OK ||
		(rc = get_varint(c, "tombstones", &pr->tombstones)) != WC_OK ||
		(rc = get_varint(c, "range_tombstones", &pr->range_tombstones)) != WC_OK ||
		(rc = get_varint(c, "distinct_rows", &pr->distinct_rows)) != WC_OK ||
		(rc = get_varint(c, "raw_bytes", &pr->raw_bytes)) != WC_OK ||
		(rc = get_varint(c, "file_bytes", &pr->file_bytes)) != WC_OK ||
		(rc = get_varint(c, "blocks", &pr->blocks)) != WC_OK ||
		(rc = get_fixed64(c, "ts_min", &v[0])) != WC_OK ||
		(rc = get_fixed64(c, "ts_max", &v[1])) != WC_OK ||
		(rc = get_fixed64(c, "seq_min", &v[2])) != WC_OK ||
		(rc = get_fixed64(c, "seq_max", &v[3])) != WC_OK)
		return rc;
	pr->ts_min = (int64_t) v[0];
	pr->ts_max = (int64_t) v[1];
	pr->seq_min = v[2];
	pr->seq_max = v[3];
	if ((rc = get_row(c, "row_min", &pr->row_min, &pr->row_min_len)) != WC_OK)
		return rc;
	return get_row(c, "row_max", &pr->row_max, &pr->row_max_len);
}

/* Reads a count of items of at least min_size bytes each, bounded by what is left. */
static int
get_count(cursor *c, const char *what, size_t min_size, int *count)
{
	size_t		at = cur_off(c);
	uint64_t	n;
	int			rc;

	if ((rc = get_varint(c, what, &n)) != WC_OK)
		return rc;
	if (n > (uint64_t) (c->end - c->p) / min_size || n > INT_MAX)
		return wc_err_set(c->err, WC_CORRUPT,
						  "MANIFEST is damaged at offset %zu: %s is %llu but only %zu bytes are left in the body",
						  at, what, (unsigned long long) n, (size_t) (c->end - c->p));
	*count = (int) n;
	return WC_OK;
}

static int
decode_body(cursor *c, uint32_t format, wc_manifest *m)
{
	int			rc;
	int			n;

	if ((rc = get_fixed64(c, "version", &m->version)) != WC_OK ||
		(rc = get_fixed64(c, "next_file", &m->next_file)) != WC_OK ||
		(rc = get_fixed64(c, "last_seq", &m->last_seq)) != WC_OK ||
		(rc = get_fixed64(c, "truncate_seq", &m->truncate_seq)) != WC_OK)
		return rc;

	if ((rc = get_count(c, "nlogs", 8, &n)) != WC_OK)
		return rc;
	if (n > 0 && (m->logs = malloc(sizeof(uint64_t) * (size_t) n)) == NULL)
		return wc_err_set(c->err, WC_NOMEM, "out of memory reading the manifest");
	for (m->nlogs = 0; m->nlogs < n; m->nlogs++)
		if ((rc = get_fixed64(c, "log number", &m->logs[m->nlogs])) != WC_OK)
			return rc;

	if ((rc = get_count(c, "nfiles", MANIFEST_MIN_FILE, &n)) != WC_OK)
		return rc;
	if (n > 0 && (m->files = calloc((size_t) n, sizeof(wc_manifest_file))) == NULL)
		return wc_err_set(c->err, WC_NOMEM, "out of memory reading the manifest");
	while (m->nfiles < n)
	{
		/* counted first, so clearing frees a half-read entry */
		m->nfiles++;
		if ((rc = get_file(c, &m->files[m->nfiles - 1])) != WC_OK)
			return rc;
	}
	if (format >= 2)
	{
		if ((rc = get_count(c, "nrecent", MANIFEST_RECENT_BYTES, &n)) != WC_OK)
			return rc;
		if (n > 0 && (m->recent.items = malloc(sizeof(wc_recent) * (size_t) n)) == NULL)
			return wc_err_set(c->err, WC_NOMEM, "out of memory reading the manifest");
		m->recent.cap = (size_t) n;
		for (m->recent.n = 0; m->recent.n < n; m->recent.n++)
		{
			wc_recent  *r = &m->recent.items[m->recent.n];

			if ((rc = get_fixed64(c, "recent tag", &r->tag)) != WC_OK ||
				(rc = get_fixed64(c, "recent seq_lo", &r->seq_lo)) != WC_OK ||
				(rc = get_fixed64(c, "recent seq_hi", &r->seq_hi)) != WC_OK)
				return rc;
			if (r->seq_lo == 0 || r->seq_lo > r->seq_hi || r->tag == 0)
				return wc_err_set(c->err, WC_CORRUPT,
								  "MANIFEST is damaged at offset %zu: recent record %d has tag %llu and seqs %llu..%llu",
								  cur_off(c) - MANIFEST_RECENT_BYTES, m->recent.n,
								  (unsigned long long) r->tag, (unsigned long long) r->seq_lo,
								  (unsigned long long) r->seq_hi);
		}
		if ((rc = get_fixed64(c, "forgotten", &m->recent.forgotten)) != WC_OK)
			return rc;
		wc_recent_sort(&m->recent);	/* older versions wrote them in commit order */
	}
	if (c->p != c->end)
		return wc_err_set(c->err, WC_CORRUPT,
						  "MANIFEST is damaged at offset %zu: %zu bytes follow the last file entry in the body",
						  cur_off(c), (size_t) (c->end - c->p));
	return WC_OK;
}

int
wc_manifest_decode(const uint8_t *buf, size_t len, wc_manifest *m, wc_err *err)
{
	cursor		c;
	uint32_t	version,
				body_len,
				stored,
				computed;
	int			rc;

	memset(m, 0, sizeof(*m));
	if (len < MANIFEST_HEADER + MANIFEST_TRAILER)
		return wc_err_set(err, WC_CORRUPT,
						  "MANIFEST is truncated: %zu bytes, fewer than the %d of header and checksum",
						  len, MANIFEST_HEADER + MANIFEST_TRAILER);
	if (memcmp(buf, manifest_magic, 8) != 0)
		return wc_err_set(err, WC_CORRUPT, "MANIFEST has a bad magic number at offset 0");
	version = wc_get_fixed32(buf + 8);
	if (version < 1 || version > MANIFEST_FORMAT_VERSION)
		return wc_err_set(err, WC_CORRUPT,
						  "MANIFEST has format version %u; this build reads version %d",
						  version, MANIFEST_FORMAT_VERSION);
	body_len = wc_get_fixed32(buf + 12);
	if ((uint64_t) body_len + MANIFEST_TRAILER > len - MANIFEST_HEADER)
		return wc_err_set(err, WC_CORRUPT,
						  "MANIFEST is truncated: body_len %u needs %llu bytes after the header (with the checksum) but only %zu follow",
						  body_len, (unsigned long long) body_len + MANIFEST_TRAILER,
						  len - MANIFEST_HEADER);
	if ((uint64_t) body_len + MANIFEST_TRAILER < len - MANIFEST_HEADER)
		return wc_err_set(err, WC_CORRUPT,
						  "MANIFEST has %zu trailing bytes after its checksum at offset %u",
						  len - MANIFEST_HEADER - body_len - MANIFEST_TRAILER,
						  MANIFEST_HEADER + body_len);
	stored = wc_get_fixed32(buf + MANIFEST_HEADER + body_len);
	computed = wc_crc32c(buf, MANIFEST_HEADER + body_len);
	if (stored != computed)
		return wc_err_set(err, WC_CORRUPT,
						  "MANIFEST checksum mismatch at offset %u: stored 0x%08x, computed 0x%08x",
						  MANIFEST_HEADER + body_len, stored, computed);

	c.start = buf;
	c.p = buf + MANIFEST_HEADER;
	c.end = c.p + body_len;
	c.err = err;
	if ((rc = decode_body(&c, version, m)) != WC_OK)
		wc_manifest_clear(m);
	return rc;
}

/* ---------------------------------------------------------------- the file */

int
wc_manifest_read(const char *dir, wc_manifest *m, wc_err *err)
{
	wc_file		f;
	uint64_t	size;
	uint8_t    *buf;
	int			rc;

	memset(m, 0, sizeof(*m));
	if ((rc = wc_file_open(dir, MANIFEST_NAME, WC_OPEN_READ, &f, err)) != WC_OK)
		return rc;
	if ((rc = wc_file_size(&f, &size, err)) != WC_OK)
	{
		wc_file_close(&f);
		return rc;
	}
	if (size > MANIFEST_MAX_BYTES)
	{
		wc_file_close(&f);
		return wc_err_set(err, WC_CORRUPT, "MANIFEST has %llu bytes, above the limit of %u",
						  (unsigned long long) size, MANIFEST_MAX_BYTES);
	}
	if ((buf = malloc(size > 0 ? (size_t) size : 1)) == NULL)
	{
		wc_file_close(&f);
		return wc_err_set(err, WC_NOMEM, "out of memory reading MANIFEST (%llu bytes)",
						  (unsigned long long) size);
	}
	rc = wc_file_pread(&f, buf, (size_t) size, 0, err);
	wc_file_close(&f);
	if (rc == WC_OK)
		rc = wc_manifest_decode(buf, (size_t) size, m, err);
	free(buf);
	return rc;
}

int
wc_manifest_write(const char *dir, const wc_manifest *m, wc_err *err)
{
	uint8_t    *buf;
	size_t		len;
	int			rc;
	wc_slice	bytes;
	wc_change	change;

	if ((rc = wc_manifest_encode(m, &buf, &len, err)) != WC_OK)
		return rc;
	/* the one report of a manifest rewrite: MANIFEST.tmp and its rename are not */
	bytes.data = buf;
	bytes.len = len;
	change.kind = WC_CHANGE_MANIFEST;
	change.file = MANIFEST_NAME;
	change.offset = 0;
	change.parts = &bytes;
	change.nparts = 1;
	rc = wc_env_report(dir, &change, err);
	if (rc == WC_OK)
	{
		rc = wc_manifest_write_bytes(dir, buf, len, err);
		wc_env_report_done(dir, MANIFEST_NAME);
	}
	free(buf);
	return rc;
}

int
wc_manifest_write_bytes(const char *dir, const uint8_t *buf, size_t len, wc_err *err)
{
	int			rc;

	rc = wc_env_write_file(dir, MANIFEST_TMP_NAME, WC_OPEN_CREATE, buf, len, err);
	if (rc == WC_OK)
		rc = wc_env_rename(dir, MANIFEST_TMP_NAME, MANIFEST_NAME, err);
	if (rc != WC_OK)
	{
		wc_err		ignored;

		/*
		 * MANIFEST is untouched unless the rename itself happened and only the
		 * directory fsync failed; either way no MANIFEST.tmp is left behind.
		 */
		wc_err_clear(&ignored);
		(void) wc_env_unlink(dir, MANIFEST_TMP_NAME, &ignored);
	}
	return rc;
}

/* ---------------------------------------------------------------- editing */

void
wc_manifest_clear(wc_manifest *m)
{
	for (int i = 0; i < m->nfiles; i++)
		wc_sst_props_clear(&m->files[i].props);
	free(m->files);
	free(m->logs);
	wc_recent_clear(&m->recent);
	memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------- recent records */

/*
 * A list is kept in ascending tag order (ties in any order), so that a scan
 * finds the records a snapshot does not see by binary searches (scan.c).
 * Records come in the order their transactions committed, close to the order
 * of their tags: an insertion moves few, a long transaction's record many.
 */
int
wc_recent_add(wc_recent_list *l, uint64_t tag, uint64_t seq_lo, uint64_t seq_hi, wc_err *err)
{
	int			i;

	if (!wc_array_reserve(&l->items, &l->cap, (size_t) l->n + 1, sizeof(wc_recent)))
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (i = l->n; i > 0 && l->items[i - 1].tag > tag; i--)
		;
	if (i < l->n)
		memmove(l->items + i + 1, l->items + i, sizeof(wc_recent) * (size_t) (l->n - i));
	l->items[i].tag = tag;
	l->items[i].seq_lo = seq_lo;
	l->items[i].seq_hi = seq_hi;
	l->n++;
	return WC_OK;
}

/* Takes back the record wc_recent_add added (tag, seq_lo). */
void
wc_recent_remove(wc_recent_list *l, uint64_t tag, uint64_t seq_lo)
{
	for (int i = wc_recent_lower_bound(l, 0, tag); i < l->n && l->items[i].tag == tag; i++)
		if (l->items[i].seq_lo == seq_lo)
		{
			memmove(l->items + i, l->items + i + 1, sizeof(wc_recent) * (size_t) (l->n - i - 1));
			l->n--;
			return;
		}
}

static int
tag_cmp(const void *a, const void *b)
{
	const wc_recent *x = a,
			   *y = b;

	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* Puts l back in tag order (a list read from an older MANIFEST, two joined). */
void
wc_recent_sort(wc_recent_list *l)
{
	for (int i = 1; i < l->n; i++)
		if (l->items[i - 1].tag > l->items[i].tag)
		{
			qsort(l->items, (size_t) l->n, sizeof(wc_recent), tag_cmp);
			return;
		}
}

/* The first of l's records whose tag is tag or above, from lo on (l->n if none). */
int
wc_recent_lower_bound(const wc_recent_list *l, int lo, uint64_t tag)
{
	int			hi = l->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (l->items[mid].tag < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
wc_recent_append(wc_recent_list *dst, const wc_recent_list *src, wc_err *err)
{
	if (src->forgotten > dst->forgotten)
		dst->forgotten = src->forgotten;
	if (src->n == 0)
		return WC_OK;
	if (!wc_array_reserve(&dst->items, &dst->cap, (size_t) dst->n + (size_t) src->n,
						  sizeof(wc_recent)))
		return wc_err_set(err, WC_NOMEM, "out of memory");
	memcpy(dst->items + dst->n, src->items, sizeof(wc_recent) * (size_t) src->n);
	dst->n += src->n;
	dst->pruned_at = 0;			/* src's may be below dst's last horizon */
	wc_recent_sort(dst);
	if (src->forgotten > dst->forgotten)
		dst->forgotten = src->forgotten;
	return WC_OK;
}

void
wc_recent_prune(wc_recent_list *l, uint64_t horizon)
{
	int			kept = 0;

	/*
	 * Pruned at this horizon already: what was added since was at or above
	 * the horizon of its day (wc_db_tag_recent), and an item left below a
	 * later one is seen by every snapshot, which changes no answer until the
	 * horizon moves.  While a long transaction holds it still, the list (of
	 * thousands) is not walked at every version a busy store builds.
	 */
	if (horizon <= l->pruned_at)
		return;
	l->pruned_at = horizon;

	for (int i = 0; i < l->n; i++)
		if (l->items[i].tag >= horizon)
			l->items[kept++] = l->items[i];
	l->n = kept;
	if (l->forgotten < horizon)
		l->forgotten = 0;
}

void
wc_recent_bound(wc_recent_list *l, uint32_t max)
{
	int			drop;

	if (max == 0 || (uint32_t) l->n <= max)
		return;
	drop = l->n - (int) (max - max / 4);
	qsort(l->items, (size_t) l->n, sizeof(wc_recent), tag_cmp);
	if (l->items[drop - 1].tag > l->forgotten)
		l->forgotten = l->items[drop - 1].tag;
	memmove(l->items, l->items + drop, sizeof(wc_recent) * (size_t) (l->n - drop));
	l->n -= drop;
}

uint64_t
wc_recent_min_seq(const wc_recent_list *l)
{
	uint64_t	min = UINT64_MAX;

	for (int i = 0; i < l->n; i++)
		if (l->items[i].seq_lo < min)
			min = l->items[i].seq_lo;
	return min;
}

void
wc_recent_clear(wc_recent_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int
wc_manifest_copy(wc_manifest *dst, const wc_manifest *src, wc_err *err)
{
	int			rc;

	memset(dst, 0, sizeof(*dst));
	dst->version = src->version;
	dst->next_file = src->next_file;
	dst->last_seq = src->last_seq;
	dst->truncate_seq = src->truncate_seq;
	if (src->nlogs > 0)
	{
		if ((dst->logs = malloc(sizeof(uint64_t) * (size_t) src->nlogs)) == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory copying the manifest");
		memcpy(dst->logs, src->logs, sizeof(uint64_t) * (size_t) src->nlogs);
		dst->nlogs = src->nlogs;
	}
	if (src->nfiles > 0)
	{
		if ((dst->files = calloc((size_t) src->nfiles, sizeof(wc_manifest_file))) == NULL)
		{
			wc_manifest_clear(dst);
			return wc_err_set(err, WC_NOMEM, "out of memory copying the manifest");
		}
		for (int i = 0; i < src->nfiles; i++)
		{
			dst->files[i].number = src->files[i].number;
			if ((rc = wc_sst_props_copy(&dst->files[i].props, &src->files[i].props, err)) != WC_OK)
			{
				wc_manifest_clear(dst);
				return rc;
			}
			dst->nfiles++;
		}
	}
	if ((rc = wc_recent_append(&dst->recent, &src->recent, err)) != WC_OK)
	{
		wc_manifest_clear(dst);
		return rc;
	}
	return WC_OK;
}

int
wc_manifest_add_file(wc_manifest *m, uint64_t number, const wc_sst_props *props, wc_err *err)
{
	wc_manifest_file *files;
	int			rc;

	if (m->nfiles == INT_MAX)
		return wc_err_set(err, WC_INVALID, "manifest already lists %d files", m->nfiles);
	files = realloc(m->files, sizeof(wc_manifest_file) * ((size_t) m->nfiles + 1));
	if (files == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory adding a file to the manifest");
	m->files = files;
	memset(&files[m->nfiles], 0, sizeof(wc_manifest_file));
	files[m->nfiles].number = number;
	if ((rc = wc_sst_props_copy(&files[m->nfiles].props, props, err)) != WC_OK)
		return rc;
	m->nfiles++;
	return WC_OK;
}

void
wc_manifest_remove_file(wc_manifest *m, uint64_t number)
{
	for (int i = 0; i < m->nfiles; i++)
	{
		if (m->files[i].number != number)
			continue;
		wc_sst_props_clear(&m->files[i].props);
		memmove(&m->files[i], &m->files[i + 1],
				sizeof(wc_manifest_file) * (size_t) (m->nfiles - i - 1));
		m->nfiles--;
		return;
	}
}
