/*
 * block.h -- data blocks of a sorted file: a builder and a reader.
 *
 * A block holds entries of one family in wc_cell_cmp order.  Each entry stores
 * its rowkey and qualifier as a shared prefix length plus the differing suffix,
 * relative to the previous entry; every WC_BLOCK_RESTART_INTERVAL entries the
 * prefix is reset (a "restart point"), and the offsets of the restart points
 * close the block, so a seek is a binary search over restart points followed by
 * a short linear walk.  Layout (FORMAT.md, "Sorted files", "Data block"):
 *
 *   block := entry* | restart: fixed32 * n | n: fixed32
 *   entry := row_shared: varint32 | row_unshared: varint32 |
 *            qual_shared: varint32 | qual_unshared: varint32 | val_len: varint32 |
 *            row_suffix | qual_suffix | ts: fixed64 | seq: varint64 | type: u8 | val
 *
 * This is the uncompressed block; compression, checksums and trailers belong to
 * the sorted file (sst_builder.c, sst_reader.c).
 */
#ifndef WC_BLOCK_H
#define WC_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cell.h"

/* Part of the format in the sense that readers accept any interval, but every
 * restart entry must have both shared lengths 0. */
#define WC_BLOCK_RESTART_INTERVAL	16

/* A growable byte string owned by its holder (used for the last key). */
typedef struct wc_block_buf
{
	uint8_t    *data;
	size_t		len;
	size_t		cap;
} wc_block_buf;

typedef struct wc_block_builder
{
	wc_block_buf out;			/* entries, then restarts at finish */
	uint32_t   *restarts;
	uint32_t	nrestarts;
	size_t		restarts_cap;
	int			counter;		/* entries since the last restart */
	uint32_t	nentries;
	wc_block_buf last_row;
	wc_block_buf last_qual;
	bool		finished;
} wc_block_builder;

/* Initializes an empty builder (no allocation yet). */
void		wc_block_builder_init(wc_block_builder *b);

/* Frees the builder's buffers. */
void		wc_block_builder_free(wc_block_builder *b);

/* Empties the builder for the next block, keeping its buffers. */
void		wc_block_builder_reset(wc_block_builder *b);

/*
 * Appends c, which the caller guarantees sorts after the previous entry (the
 * block does not check).  WC_OK or WC_NOMEM; after WC_NOMEM the block must be
 * reset before reuse.
 */
int			wc_block_builder_add(wc_block_builder *b, const wc_cell *c);

/* Size of the block if finished now. */
size_t		wc_block_builder_size(const wc_block_builder *b);

static inline bool
wc_block_builder_empty(const wc_block_builder *b)
{
	return b->nentries == 0;
}

/*
 * Appends the restart array and returns the block bytes in *data, *len; they
 * stay valid until the next reset or free.  WC_OK or WC_NOMEM.
 */
int			wc_block_builder_finish(wc_block_builder *b, const uint8_t **data, size_t *len);

/*
 * An iterator over one decoded block.  It decodes in place: the cell's
 * qualifier and value point into the block, the rowkey and qualifier either
 * into the block or into the iterator's own buffers (when a prefix had to be
 * rebuilt).  The block bytes must outlive the use of the iterator.
 *
 * Errors: status becomes WC_CORRUPT (with reason and offset within the block)
 * or WC_NOMEM, and valid turns false.
 */
typedef struct wc_block_key
{
	const uint8_t *p;			/* the current bytes (block or buf) */
	uint32_t	len;
	uint8_t    *buf;			/* rebuilt prefixes live here */
	size_t		cap;
} wc_block_key;

typedef struct wc_block_iter
{
	const uint8_t *data;
	uint32_t	limit;			/* offset of the restart array */
	uint32_t	nrestarts;
	uint32_t	cur;			/* offset of the current entry */
	uint32_t	next;			/* offset of the entry after it */
	bool		valid;
	int			status;			/* WC_OK, WC_CORRUPT or WC_NOMEM */
	const char *reason;			/* static text when status != WC_OK */
	uint32_t	bad_off;		/* offset within the block of the problem */
	wc_block_key row;
	wc_block_key qual;
	wc_cell		cell;
	wc_block_buf save_row;		/* keys of a row start (seek_row_before) */
	wc_block_buf save_qual;
} wc_block_iter;

/* Initializes an iterator with no block (no allocation yet). */
void		wc_block_iter_init(wc_block_iter *it);

/* Frees the iterator's buffers. */
void		wc_block_iter_free(wc_block_iter *it);

/*
 * Points the iterator at block data[0..len-1], unpositioned.  Checks the restart
 * array; WC_CORRUPT (also in it->status, with it->reason) if it is malformed.
 */
int			wc_block_iter_set(wc_block_iter *it, const uint8_t *data, size_t len);

void		wc_block_iter_seek_first(wc_block_iter *it);
/* Positions at the first entry >= target; invalid when there is none. */
void		wc_block_iter_seek(wc_block_iter *it, const wc_cell *target);
void		wc_block_iter_next(wc_block_iter *it);
/*
 * Positions at the first entry of the row of the last entry < target (target
 * NULL: of the block's last entry); invalid when no entry is below target.
 * *row_start is false when that row may begin earlier than the block shows
 * cheaply (the entry is at a restart point: an earlier restart interval or
 * block may hold more of the row).  next may follow.
 */
void		wc_block_iter_seek_row_before(wc_block_iter *it, const wc_cell *target,
										  bool *row_start);

#endif
