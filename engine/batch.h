/*
 * batch.h -- the engine's view of a write batch (wc_batch in wc.h).
 *
 * A batch keeps its entries in two forms: an encoded buffer, in insertion order,
 * which becomes a log record payload as it is; and, built on demand, one memtable
 * per family whose entries carry "pending" sequence numbers (from
 * WC_SEQ_PENDING_BASE up, process-wide increasing) so a scan can overlay a
 * writer's own uncommitted entries on the committed ones.
 *
 * Log record payload (FORMAT.md, "Batch records"):
 *   payload := seq_base: fixed64 | tag: fixed64 | count: varint32 | entry{count}
 *   entry   := type: u8 | fam_len: varint32 | fam | row_len: varint32 | row
 *              | qual_len: varint32 | qual | ts: fixed64 (two's complement)
 *              | val_len: varint32 | val          (val_len and val only for PUT)
 * Entry i has sequence number seq_base + i.  DEL_ALL has fam, row, qual empty.
 */
#ifndef WC_BATCH_H
#define WC_BATCH_H

#include "memtable.h"

/* Size of the payload header before the first entry. */
#define WC_BATCH_HEADER_MAX	(8 + 8 + 5)

/* Encoded entries (without the payload header) and their count. */
const uint8_t *wc_batch_entries(const wc_batch *b, size_t *len);

/*
 * The overlay memtable of family fam (NULL if the batch has no entry for it), up
 * to date with every entry added so far.  Owned by the batch.  NULL with err set
 * on allocation failure.
 */
wc_memtable *wc_batch_overlay(wc_batch *b, const uint8_t *fam, size_t fam_len, wc_err *err);

/* The pending seq of the batch's last DEL_ALL entry, or 0 if none. */
uint64_t	wc_batch_truncate_seq(const wc_batch *b);

/*
 * The least and the greatest rowkey among b's entries (pointing into b, valid
 * until it changes): true.  False when b has no entry or holds a truncate,
 * which touches every row.
 */
bool		wc_batch_row_bounds(const wc_batch *b, const uint8_t **min, size_t *min_len,
								const uint8_t **max, size_t *max_len);

/* A decoded payload entry. */
typedef struct wc_batch_entry
{
	uint8_t		type;
	const uint8_t *fam;
	uint32_t	fam_len;
	wc_cell		cell;			/* row, qual, ts, type, val; seq = seq_base + index */
} wc_batch_entry;

typedef struct wc_batch_reader
{
	const uint8_t *p;
	const uint8_t *end;
	uint64_t	seq_base;
	uint64_t	tag;
	uint32_t	count;
	uint32_t	index;
} wc_batch_reader;

/* Parses a payload header.  WC_CORRUPT (message says what) if malformed. */
int			wc_batch_reader_init(wc_batch_reader *r, const uint8_t *payload, size_t len, wc_err *err);

/* Positions r on b's own entries (no payload header), entry i numbered seq_base + i. */
void		wc_batch_reader_of(wc_batch_reader *r, const wc_batch *b, uint64_t seq_base);

/* Positions r on count entries of a batch that another reader of it returned:
 * p was that reader's position before the first of them, end after the last;
 * the first is numbered seq_base. */
void		wc_batch_reader_span(wc_batch_reader *r, const uint8_t *p, const uint8_t *end,
								 uint32_t count, uint64_t seq_base);

/* Returns 1 with *e filled (pointing into the payload), 0 after the last entry,
 * or WC_CORRUPT if an entry is malformed or the payload has trailing bytes. */
int			wc_batch_reader_next(wc_batch_reader *r, wc_batch_entry *e, wc_err *err);

/* Writes the payload header for (seq_base, tag, count) into buf; returns its size. */
size_t		wc_batch_encode_header(uint8_t *buf, uint64_t seq_base, uint64_t tag, uint32_t count);

#endif
