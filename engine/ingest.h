/*
 * ingest.h -- bulk writes: a large batch written as sorted files that one log
 * record names (DESIGN.md, "Bulk writes").
 *
 * A transaction that writes many cells would otherwise put every byte through
 * the log, a memtable in every process that reads the store, and a flush that
 * writes it once more.  Instead, its committing process appends a small ingest
 * record to the log (this gives the entries their sequence numbers, as for any
 * record), then writes the entries, sorted, as one sorted file per family, with
 * those sequence numbers, and fsyncs them before the transaction can commit.
 * Readers resolve the record's transaction tag like a batch record's: committed,
 * the files become part of that log's content; aborted (a crash while the files
 * were being written included), the record is ignored and the files are orphans.
 * A flush moves a committed record's files into the manifest as they are.
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
	wc_ingest_file *files;		/* malloc'd; one per family, in family order */
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

/*
 * The entries of batches[0..n-1] sorted per family, ready to be written: entry i
 * (counting across the batches, in order) will have sequence number seq_base + i.
 * Points into the batches, which must outlive it.
 */
typedef struct wc_ingest_plan wc_ingest_plan;

/* Decodes and sorts; NULL with err set on failure.  The batches hold no DEL_ALL. */
wc_ingest_plan *wc_ingest_plan_new(wc_batch *const *batches, int n, wc_err *err);
void		wc_ingest_plan_free(wc_ingest_plan *p);

/* Number of families, and the name of family i (in the order the files get numbers). */
int			wc_ingest_plan_families(const wc_ingest_plan *p);
const char *wc_ingest_plan_family(const wc_ingest_plan *p, int i);

/*
 * The entries of family i in wc_cell_cmp order once seq_base is added to every
 * seq (seqs here count from 0).  *cells stays valid while p and the batches live.
 */
void		wc_ingest_plan_cells(const wc_ingest_plan *p, int i, const wc_cell **cells, size_t *n);

#endif
