/*
 * log.h -- the shared write-ahead log files ("NNNNNN.log").
 *
 * A log is a header followed by records appended by writers holding the store's
 * write lock; it is read by every process, concurrently with appends.  This module
 * frames opaque payloads (batch.h defines what a payload is); layout: FORMAT.md.
 *
 * Reading stops at the first record that is not complete and valid.  Such a record
 * is either a tail that is still being written (or was torn by a crash), which is
 * reported as the end for now, or damage followed by valid records, which is
 * reported as WC_CORRUPT: data after it must never be silently dropped.
 */
#ifndef WC_LOG_H
#define WC_LOG_H

#include "env.h"

/* Size of the file header; the first record starts here. */
#define WC_LOG_HEADER_SIZE	32
/* A record's frame before its payload (crc, len, type): a payload at offset off
 * belongs to the record starting at off - WC_LOG_RECORD_HEADER. */
#define WC_LOG_RECORD_HEADER	9

/* Creates dir/name holding only a header for log number; fsyncs file and dir. */
int			wc_log_create(const char *dir, const char *name, uint64_t number, wc_err *err);

/* Checks the header of an open log; fills *number. */
int			wc_log_check_header(wc_file *f, uint64_t *number, wc_err *err);

/*
 * Appends one record with payload[0..len-1] at offset off (the current valid end)
 * and sets *new_end.  Does not sync.
 */
int			wc_log_append(wc_file *f, uint64_t off, const void *payload, size_t len,
						  uint64_t *new_end, wc_err *err);

/* The same for a payload given in parts (concatenated), written with one pwritev. */
int			wc_log_appendv(wc_file *f, uint64_t off, const wc_slice *parts, int nparts,
						   uint64_t *new_end, wc_err *err);

typedef struct wc_log_reader wc_log_reader;

/* A reader of f (not owned) positioned at offset off (>= WC_LOG_HEADER_SIZE). */
wc_log_reader *wc_log_reader_new(wc_file *f, uint64_t off);
void		wc_log_reader_free(wc_log_reader *r);

/*
 * Reads the next record.  Returns 1 with *payload and *len set (valid until the next
 * call) and *end set to the offset after the record; 0 when there is no further
 * complete record now (the position stays, so a later call picks up new records);
 * or an error: WC_CORRUPT when an invalid record is followed by a valid one.
 */
int			wc_log_read(wc_log_reader *r, const uint8_t **payload, size_t *len,
						uint64_t *end, wc_err *err);

/*
 * Tells the reader that the first len bytes of its file are mapped at addr: a record
 * there too large for the read-ahead window is checked by reads into the window and
 * then returned where it lies in the mapping, not copied.
 */
void		wc_log_reader_set_map(wc_log_reader *r, const uint8_t *addr, size_t len);

/*
 * Tells the reader that its file's bytes below end are whole records nobody will
 * cut (the end a writer published after its append, DESIGN.md "Writing"): those
 * in the mapping are checked and returned where they lie, without a read.
 */
void		wc_log_reader_set_whole(wc_log_reader *r, uint64_t end);

/*
 * Frees the reader's buffers (its read-ahead window and the copy of a record larger
 * than that), which the last record returned lives in: for a reader idle until its
 * log grows again, so that a process reading many logs does not keep a buffer of
 * each.  The next read allocates them again.
 */
void		wc_log_reader_release(wc_log_reader *r);

/* Offset after the last record returned (where the next one starts). */
uint64_t	wc_log_reader_offset(const wc_log_reader *r);

/*
 * Moves the reader to off, the end of a record the caller appended itself and
 * so need not read back (a writer holding the write lock, right after its append).
 */
void		wc_log_reader_skip_to(wc_log_reader *r, uint64_t off);

/*
 * For a writer holding the write lock, after reading to the end: if the file is
 * longer than the valid end, checks that no valid record follows (else
 * WC_CORRUPT) and truncates the torn tail.
 */
int			wc_log_repair_tail(wc_file *f, uint64_t valid_end, wc_err *err);

#endif
