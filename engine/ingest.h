/*
 * ingest.h -- ingest records: the log record that names a bulk write's sorted
 * files (DESIGN.md, "Bulk writes"; the writer is bulk.c, the readers' side
 * version.c).  Encoding and decoding only, beside batch.h and log.h.
 *
 * A bulk write's committing process appends this small record to the log (which
 * gives the entries their sequence numbers, as for any record), then writes the
 * entries as one sorted file per family with those sequence numbers.  Readers
 * resolve the record's transaction tag like a batch record's: committed, the
 * files become part of that log's content; aborted, the record is ignored and the
 * files are orphans.
 *
 * Ingest record payload (FORMAT.md, "Ingest records"), inside a log record of
 * type 1 like a batch; bit 63 of the first field tells them apart:
 *   payload := seq_base_flagged: fixed64 | tag: fixed64 | count: varint32
 *              | nfiles: varint32 | file{nfiles}
 *   file    := number: fixed64 | fam_len: varint32 | fam: bytes[fam_len]
 * seq_base_flagged = seq_base | WC_INGEST_FLAG; the files hold the entries
 * seq_base .. seq_base + count - 1 between them.
 */
#ifndef WC_INGEST_H
#define WC_INGEST_H

#include "batch.h"

/* Bit 63 of a payload's first field: an ingest record, not a batch (format). */
#define WC_INGEST_FLAG		(UINT64_C(1) << 63)

typedef struct wc_ingest_file
{
	uint64_t	number;			/* NNNNNN.sst */
	char		family[WC_MAX_FAMILY + 1];
} wc_ingest_file;

typedef struct wc_ingest_record
{
	uint64_t	seq_base;		/* without the flag */
	uint64_t	tag;
	uint32_t	count;			/* entries in the files, all together */
	int			nfiles;
	wc_ingest_file *files;		/* malloc'd; one per family, in the order the write named them */
} wc_ingest_record;

/* True when payload (at least 8 bytes) is an ingest record rather than a batch. */
bool		wc_ingest_is_record(const uint8_t *payload, size_t len);

/* Encodes r into a malloc'd buffer (*buf, *len); WC_NOMEM on failure. */
int			wc_ingest_encode(const wc_ingest_record *r, uint8_t **buf, size_t *len, wc_err *err);

/* Decodes an ingest payload into *r (caller clears it); WC_CORRUPT says what is wrong. */
int			wc_ingest_decode(const uint8_t *payload, size_t len, wc_ingest_record *r, wc_err *err);

void		wc_ingest_record_clear(wc_ingest_record *r);

/*
 * The header of a log record payload of either kind: for a batch, r is ready for
 * wc_batch_reader_next; for an ingest record, r holds its seq_base, count and tag
 * and no entries.  WC_CORRUPT says what is wrong.
 */
int			wc_ingest_payload_header(const uint8_t *payload, size_t len, wc_batch_reader *r,
									 wc_err *err);

#endif
