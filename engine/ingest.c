/*
 * ingest.c -- encoding and decoding ingest records (ingest.h): bytes only, no I/O.
 *
 *   payload := seq_base_flagged: fixed64 | tag: fixed64 | count: varint32
 *              | nfiles: varint32 | file{nfiles}
 *   file    := number: fixed64 | fam_len: varint32 | fam: bytes[fam_len]
 */
#include "ingest.h"

#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "err.h"

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
