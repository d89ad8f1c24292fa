/*
 * log.c -- framing of the write-ahead log files (FORMAT.md, "Write-ahead logs").
 *
 *   file   := header record*
 *   header := magic: bytes(8) | version: fixed32 | number: fixed64
 *             | reserved: bytes(8) | crc32c: fixed32 over the 28 bytes before it
 *   record := crc32c: fixed32 over len, type and payload | len: fixed32
 *             | type: u8 | payload: bytes(len)
 *
 * Writers append under the store's write lock while other processes read, so a
 * reader routinely meets a record that is not (wholly) there yet.  Such a record
 * means "nothing more for now".  An invalid record is only corruption when a valid
 * record follows it, since then it cannot be a tail still being written or torn by
 * a crash.  Finding "a valid record after" is a scan that runs only in that rare
 * case.
 */
#include "log.h"

#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "crc32c.h"
#include "err.h"

/* (format) */
static const uint8_t log_magic[8] = {'W', 'C', 'L', 'O', 'G', 0x0d, 0x0a, 0x1a};
/* 2: payloads may be ingest records (ingest.h); a version 1 log holds batches only
 * and is read as it is */
#define LOG_FORMAT_VERSION	2
#define LOG_FORMAT_OLDEST	1
#define LOG_RECORD_HEADER	WC_LOG_RECORD_HEADER	/* crc, len, type */
#define LOG_TYPE_BATCH		1
#define LOG_MAX_RECORD		(UINT32_C(1) << 30)	/* a larger len is damage */

/* Bytes examined per read while scanning for a valid record. */
#define SCAN_WINDOW			(1 << 20)

/* Bytes a reader reads ahead: many small records per system call. */
#define READ_AHEAD			(64 * 1024)

struct wc_log_reader
{
	wc_file    *f;
	uint64_t	off;			/* start of the next record */
	uint64_t	size;			/* file size last seen; refreshed when short */
	uint8_t    *buf;			/* payload of the last record, reused */
	size_t		cap;
	const uint8_t *payload;		/* the last record's payload: in buf, win or map */
	uint8_t    *win;			/* READ_AHEAD bytes of the file read at win_start */
	uint64_t	win_start;
	size_t		win_len;
	const uint8_t *map;			/* the file mapped (map_len bytes), or NULL */
	size_t		map_len;
	uint64_t	whole_end;		/* bytes below are whole records (set_whole) */
};

/* Why the record at an offset is not valid (for the corruption message). */
typedef enum bad_kind
{
	BAD_NONE = 0,
	BAD_SHORT_HEADER,			/* fewer than 9 bytes left: nothing can follow */
	BAD_LENGTH,					/* len above LOG_MAX_RECORD */
	BAD_INCOMPLETE,				/* len runs past the end of the file */
	BAD_CHECKSUM
} bad_kind;

typedef struct bad_record
{
	bad_kind	kind;
	uint32_t	len;
	uint32_t	stored;
	uint32_t	computed;
	uint64_t	size;
} bad_record;

int
wc_log_create(const char *dir, const char *name, uint64_t number, wc_err *err)
{
	uint8_t		h[WC_LOG_HEADER_SIZE];
	int			rc;

	memset(h, 0, sizeof(h));
	memcpy(h, log_magic, 8);
	wc_put_fixed32(h + 8, LOG_FORMAT_VERSION);
	wc_put_fixed64(h + 12, number);
	/* bytes 20..27 reserved, zero */
	wc_put_fixed32(h + 28, wc_crc32c(h, 28));

	if ((rc = wc_env_write_file(dir, name, WC_OPEN_EXCL, h, sizeof(h), err)) != WC_OK)
		return rc;
	if ((rc = wc_env_sync_dir(dir, err)) != WC_OK)
	{
		wc_err		ignored;

		/* we created it, so nobody else refers to it yet */
		wc_err_clear(&ignored);
		(void) wc_env_unlink(dir, name, &ignored);
	}
	return rc;
}

int
wc_log_check_header(wc_file *f, uint64_t *number, wc_err *err)
{
	uint8_t		h[WC_LOG_HEADER_SIZE];
	size_t		got;
	uint32_t	stored,
				computed,
				version;
	int			rc;

	if ((rc = wc_file_pread_some(f, h, sizeof(h), 0, &got, err)) != WC_OK)
		return rc;
	if (got < sizeof(h))
		return wc_err_set(err, WC_CORRUPT,
						  "log header of %s is truncated: the file has %zu bytes, the header needs %d",
						  f->name, got, WC_LOG_HEADER_SIZE);
	if (memcmp(h, log_magic, 8) != 0)
		return wc_err_set(err, WC_CORRUPT,
						  "%s is not a log file: bad magic number at offset 0", f->name);
	stored = wc_get_fixed32(h + 28);
	computed = wc_crc32c(h, 28);
	if (stored != computed)
		return wc_err_set(err, WC_CORRUPT,
						  "log header checksum mismatch in %s at offset 0: stored 0x%08x, computed 0x%08x",
						  f->name, stored, computed);
	version = wc_get_fixed32(h + 8);
	if (version < LOG_FORMAT_OLDEST || version > LOG_FORMAT_VERSION)
		return wc_err_set(err, WC_CORRUPT,
						  "log %s has format version %u; this build reads versions %d to %d",
						  f->name, version, LOG_FORMAT_OLDEST, LOG_FORMAT_VERSION);
	*number = wc_get_fixed64(h + 12);
	return WC_OK;
}

int
wc_log_append(wc_file *f, uint64_t off, const void *payload, size_t len,
			  uint64_t *new_end, wc_err *err)
{
	wc_slice	part = {payload, len};

	return wc_log_appendv(f, off, &part, 1, new_end, err);
}

int
wc_log_appendv(wc_file *f, uint64_t off, const wc_slice *parts, int nparts,
			   uint64_t *new_end, wc_err *err)
{
	uint8_t		h[LOG_RECORD_HEADER];
	wc_slice	stack[16];
	wc_slice   *all = stack;
	size_t		len = 0;
	uint32_t	crc;
	int			rc;

	for (int i = 0; i < nparts; i++)
		len += parts[i].len;
	if (len > LOG_MAX_RECORD)
		return wc_err_set(err, WC_INVALID,
						  "a log record of %zu bytes exceeds the limit of %u bytes (in %s)",
						  len, (unsigned) LOG_MAX_RECORD, f->name);
	wc_put_fixed32(h + 4, (uint32_t) len);
	h[8] = LOG_TYPE_BATCH;
	crc = wc_crc32c(h + 4, 5);
	for (int i = 0; i < nparts; i++)
		crc = wc_crc32c_extend(crc, parts[i].data, parts[i].len);
	wc_put_fixed32(h, crc);

	/*
	 * One pwritev makes the record appear at once to readers in the common case;
	 * a torn one is still recognised by its CRC.
	 */
	if (nparts + 1 > (int) (sizeof(stack) / sizeof(stack[0])) &&
		(all = malloc(sizeof(wc_slice) * (nparts + 1))) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory appending to %s", f->name);
	all[0].data = h;
	all[0].len = LOG_RECORD_HEADER;
	memcpy(&all[1], parts, sizeof(wc_slice) * nparts);
	rc = wc_file_pwritev(f, all, nparts + 1, off, err);
	if (all != stack)
		free(all);
	if (rc != WC_OK)
		return rc;
	*new_end = off + LOG_RECORD_HEADER + len;
	return WC_OK;
}

/*
 * Is a valid record at offset p of a file of size bytes?  win[0..wlen-1] holds the
 * file from offset wstart (it must cover p's 9-byte header); a payload beyond the
 * window is read into *scratch.  Returns 1 or 0, or an error.
 */
static int
valid_in_window(wc_file *f, const uint8_t *win, uint64_t wstart, size_t wlen,
				uint64_t p, uint64_t size, uint8_t **scratch, size_t *scratch_cap,
				wc_err *err)
{
	const uint8_t *h = win + (p - wstart);
	uint32_t	len = wc_get_fixed32(h + 4);
	uint32_t	crc;
	size_t		got;
	int			rc;

	/* the type filter makes the scan over damaged data cheap */
	if (h[8] != LOG_TYPE_BATCH || len > LOG_MAX_RECORD ||
		p + LOG_RECORD_HEADER + len > size)
		return 0;
	if (p + LOG_RECORD_HEADER + len <= wstart + wlen)
		crc = wc_crc32c(h + 4, 5 + (size_t) len);
	else
	{
		if (*scratch_cap < len)
		{
			uint8_t    *grown = realloc(*scratch, len);

			if (grown == NULL)
				return wc_err_set(err, WC_NOMEM,
								  "out of memory checking a log record of %u bytes in %s",
								  len, f->name);
			*scratch = grown;
			*scratch_cap = len;
		}
		rc = wc_file_pread_some(f, *scratch, len, p + LOG_RECORD_HEADER, &got, err);
		if (rc != WC_OK)
			return rc;
		if (got < len)
			return 0;			/* the file shrank meanwhile */
		crc = wc_crc32c_extend(wc_crc32c(h + 4, 5), *scratch, len);
	}
	return crc == wc_get_fixed32(h) ? 1 : 0;
}

/*
 * Looks for a valid record starting at any offset in [from, end of file), first at
 * hint (the end an invalid record claims, if plausible; 0 = none).  Returns 1 with
 * *at set, 0 if there is none, or an error.
 */
static int
find_valid_record(wc_file *f, uint64_t from, uint64_t hint, uint64_t *at, wc_err *err)
{
	uint8_t    *win;
	uint8_t    *scratch = NULL;
	size_t		scratch_cap = 0;
	size_t		wlen = 0;
	uint64_t	wstart = from;
	uint64_t	size;
	uint64_t	p;
	int			rc;

	if ((rc = wc_file_size(f, &size, err)) != WC_OK)
		return rc;
	if (from + LOG_RECORD_HEADER > size)
		return 0;
	/* a torn tail is usually a few bytes: no 1 MiB window for it */
	if ((win = malloc(size - from < SCAN_WINDOW ? (size_t) (size - from) : SCAN_WINDOW)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory checking %s", f->name);

	rc = 0;
	if (hint >= from && hint + LOG_RECORD_HEADER <= size)
	{
		rc = wc_file_pread_some(f, win, LOG_RECORD_HEADER, hint, &wlen, err);
		if (rc == WC_OK && wlen == LOG_RECORD_HEADER)
			rc = valid_in_window(f, win, hint, wlen, hint, size,
								 &scratch, &scratch_cap, err);
		if (rc == 1)
			*at = hint;
		wlen = 0;
	}
	for (p = from; rc == 0 && p + LOG_RECORD_HEADER <= size; p++)
	{
		if (p + LOG_RECORD_HEADER > wstart + wlen)
		{
			uint64_t	want = size - p < SCAN_WINDOW ? size - p : SCAN_WINDOW;

			wstart = p;
			rc = wc_file_pread_some(f, win, (size_t) want, p, &wlen, err);
			if (rc != WC_OK || wlen < LOG_RECORD_HEADER)
				break;
		}
		rc = valid_in_window(f, win, wstart, wlen, p, size, &scratch, &scratch_cap, err);
		if (rc == 1)
			*at = p;
	}
	free(win);
	free(scratch);
	return rc;
}

wc_log_reader *
wc_log_reader_new(wc_file *f, uint64_t off)
{
	wc_log_reader *r = calloc(1, sizeof(wc_log_reader));

	if (r == NULL)
		return NULL;
	r->f = f;
	r->off = off < WC_LOG_HEADER_SIZE ? WC_LOG_HEADER_SIZE : off;
	return r;
}

void
wc_log_reader_free(wc_log_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r->win);
	free(r);
}

void
wc_log_reader_set_map(wc_log_reader *r, const uint8_t *addr, size_t len)
{
	r->map = addr;
	r->map_len = addr != NULL ? len : 0;
}

void
wc_log_reader_set_whole(wc_log_reader *r, uint64_t end)
{
	r->whole_end = end;
}

void
wc_log_reader_release(wc_log_reader *r)
{
	free(r->buf);
	free(r->win);
	r->buf = NULL;
	r->cap = 0;
	r->win = NULL;
	r->win_len = 0;
	r->payload = NULL;
}

uint64_t
wc_log_reader_offset(const wc_log_reader *r)
{
	return r->off;
}

void
wc_log_reader_skip_to(wc_log_reader *r, uint64_t off)
{
	r->off = off;
	if (off > r->size)
		r->size = off;
}

/*
 * The record at r->off if the read-ahead window holds all of it and it is valid:
 * returns 1 with r->payload and *len set.  Reads the window again (at r->off)
 * once when the record starts beyond it or runs past its end.  Returns 0 when the
 * record is larger than the window or is not whole and valid in the bytes read:
 * read_record's own reads then decide, so nothing is judged damaged on bytes
 * read for an earlier record.  Or an error.
 */
static int
window_record(wc_log_reader *r, uint32_t *len, wc_err *err)
{
	uint64_t	whole = r->whole_end < r->map_len ? r->whole_end : r->map_len;

	/*
	 * Below what a writer published the bytes are whole and stay: a record there
	 * is read in the mapping, with no system call (a refresh with new records
	 * made one; a record's pages are touched anyway, as its values stay there)
	 */
	if (r->map != NULL && r->off + LOG_RECORD_HEADER <= whole)
	{
		const uint8_t *h = r->map + r->off;
		uint32_t	n = wc_get_fixed32(h + 4);

		if (n <= whole - r->off - LOG_RECORD_HEADER)
		{
			if (h[8] != LOG_TYPE_BATCH ||
				wc_get_fixed32(h) != wc_crc32c(h + 4, 5 + (size_t) n))
				return 0;		/* damage: read_record's own reads say what */
			r->payload = h + LOG_RECORD_HEADER;
			*len = n;
			return 1;
		}
	}
	for (int attempt = 0;; attempt++)
	{
		uint64_t	off = r->off;
		size_t		got;
		int			rc;

		if (off >= r->win_start && off - r->win_start + LOG_RECORD_HEADER <= r->win_len)
		{
			const uint8_t *h = r->win + (off - r->win_start);
			uint32_t	n = wc_get_fixed32(h + 4);

			if (n <= READ_AHEAD - LOG_RECORD_HEADER &&
				off - r->win_start + LOG_RECORD_HEADER + n <= r->win_len)
			{
				if (h[8] != LOG_TYPE_BATCH ||
					wc_get_fixed32(h) != wc_crc32c(h + 4, 5 + (size_t) n))
					return 0;
				r->payload = h + LOG_RECORD_HEADER;
				*len = n;
				return 1;
			}
			if (n > READ_AHEAD - LOG_RECORD_HEADER)
				return 0;
		}
		if (attempt == 1)
			return 0;
		if (r->win == NULL && (r->win = malloc(READ_AHEAD)) == NULL)
			return 0;			/* read record by record */
		r->win_len = 0;
		/* one read: looping to fill the window would chase a concurrent writer */
		if ((rc = wc_file_pread_once(r->f, r->win, READ_AHEAD, off, &got, err)) != WC_OK)
			return rc;
		r->win_start = off;
		r->win_len = got;
	}
}

/*
 * The checksum crc extended over the n bytes of the file at off, read READ_AHEAD
 * bytes at a time into the window (*got: the bytes there were, fewer when the file
 * is shorter).  Leaves the window empty.
 */
static int
crc_by_window(wc_log_reader *r, uint64_t off, size_t n, uint32_t crc, uint32_t *out,
			  size_t *got, wc_err *err)
{
	int			rc = WC_OK;

	*got = 0;
	r->win_len = 0;
	if (r->win == NULL && (r->win = malloc(READ_AHEAD)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory reading %s", r->f->name);
	while (*got < n)
	{
		size_t		want = n - *got < READ_AHEAD ? n - *got : READ_AHEAD,
					part;

		if ((rc = wc_file_pread_some(r->f, r->win, want, off + *got, &part, err)) != WC_OK)
			break;
		crc = wc_crc32c_extend(crc, r->win, part);
		*got += part;
		if (part < want)
			break;
	}
	*out = crc;
	return rc;
}

/*
 * Tries to read the record at r->off (into r->buf unless the read-ahead window
 * holds it or the file is mapped; r->payload points to it).  Returns 1 (valid,
 * *len set), 0 (invalid; *bad says why and *len is the claimed length) or an
 * error.
 */
static int
read_record(wc_log_reader *r, uint32_t *len, bad_record *bad, wc_err *err)
{
	uint8_t		h[LOG_RECORD_HEADER];
	uint64_t	off = r->off;
	size_t		got;
	uint32_t	n;
	int			rc;

	memset(bad, 0, sizeof(*bad));
	*len = 0;
	if ((rc = window_record(r, len, err)) != 0)
		return rc;
	if ((rc = wc_file_pread_some(r->f, h, sizeof(h), off, &got, err)) != WC_OK)
		return rc;
	if (got < sizeof(h))
	{
		bad->kind = BAD_SHORT_HEADER;
		bad->size = off + got;
		return 0;
	}
	n = wc_get_fixed32(h + 4);
	*len = bad->len = n;
	if (n > LOG_MAX_RECORD)
	{
		bad->kind = BAD_LENGTH;
		return 0;
	}
	/* check the size before allocating for a length that may be damaged */
	if (off + LOG_RECORD_HEADER + n > r->size &&
		(rc = wc_file_size(r->f, &r->size, err)) != WC_OK)
		return rc;
	if (off + LOG_RECORD_HEADER + n > r->size)
	{
		bad->kind = BAD_INCOMPLETE;
		bad->size = r->size;
		return 0;
	}
	bad->stored = wc_get_fixed32(h);
	if (r->map != NULL && off + LOG_RECORD_HEADER + n <= r->map_len)
	{
		/*
		 * Mapped: the checksum is computed over reads into the window, and only
		 * once the record is known whole and valid is the mapping touched (the
		 * caller reads the payload there), since an invalid tail may be cut
		 * meanwhile, and a page past the end of the file faults.  No copy of a
		 * large record, and no fresh memory to fault in for it.
		 */
		if ((rc = crc_by_window(r, off + LOG_RECORD_HEADER, n, wc_crc32c(h + 4, 5),
								&bad->computed, &got, err)) != WC_OK)
			return rc;
		r->payload = r->map + off + LOG_RECORD_HEADER;
	}
	else
	{
		if (!wc_buf_reserve(&r->buf, &r->cap, n))
			return wc_err_set(err, WC_NOMEM,
							  "out of memory for a log record of %u bytes in %s at offset %llu",
							  n, r->f->name, (unsigned long long) off);
		if ((rc = wc_file_pread_some(r->f, r->buf, n, off + LOG_RECORD_HEADER, &got,
									 err)) != WC_OK)
			return rc;
		if (got == n)
			bad->computed = wc_crc32c_extend(wc_crc32c(h + 4, 5), r->buf, n);
		r->payload = r->buf;
	}
	if (got < n)
	{
		/* truncated since we looked at the size */
		bad->kind = BAD_INCOMPLETE;
		bad->size = r->size = off + LOG_RECORD_HEADER + got;
		r->payload = NULL;
		return 0;
	}
	if (bad->stored != bad->computed)
	{
		bad->kind = BAD_CHECKSUM;
		r->payload = NULL;
		return 0;
	}
	if (h[8] != LOG_TYPE_BATCH)
		return wc_err_set(err, WC_CORRUPT,
						  "log record of unknown type %u in %s at offset %llu",
						  h[8], r->f->name, (unsigned long long) off);
	return 1;
}

static int
report_corrupt(wc_log_reader *r, const bad_record *bad, uint64_t at, wc_err *err)
{
	const char *name = r->f->name;
	unsigned long long off = (unsigned long long) r->off;
	unsigned long long next = (unsigned long long) at;

	switch (bad->kind)
	{
		case BAD_CHECKSUM:
			return wc_err_set(err, WC_CORRUPT,
							  "log record checksum mismatch in %s at offset %llu: stored 0x%08x, computed 0x%08x (a valid record follows at offset %llu)",
							  name, off, bad->stored, bad->computed, next);
		case BAD_LENGTH:
			return wc_err_set(err, WC_CORRUPT,
							  "log record in %s at offset %llu has length %u, above the limit of %u (a valid record follows at offset %llu)",
							  name, off, bad->len, (unsigned) LOG_MAX_RECORD, next);
		default:
			return wc_err_set(err, WC_CORRUPT,
							  "log record in %s at offset %llu has length %u, which runs past the end of the file at %llu, but a valid record starts at offset %llu",
							  name, off, bad->len, (unsigned long long) bad->size, next);
	}
}

int
wc_log_read(wc_log_reader *r, const uint8_t **payload, size_t *len,
			uint64_t *end, wc_err *err)
{
	bad_record	bad;
	uint32_t	n;
	uint64_t	hint = 0;
	uint64_t	at;
	int			rc;

	rc = read_record(r, &n, &bad, err);
	if (rc == 0 && bad.kind != BAD_SHORT_HEADER)
	{
		if (bad.kind != BAD_LENGTH)
			hint = r->off + LOG_RECORD_HEADER + n;
		rc = find_valid_record(r->f, r->off + 1, hint, &at, err);
		if (rc == 1)
		{
			/*
			 * A record being appended while we looked is complete by the time a
			 * later one is (appends are serialised), so look again before calling
			 * it damage.
			 */
			rc = read_record(r, &n, &bad, err);
			if (rc == 0)
				return report_corrupt(r, &bad, at, err);
		}
	}
	if (rc != 1)
		return rc;
	*payload = r->payload;
	*len = n;
	r->off += LOG_RECORD_HEADER + (uint64_t) n;
	*end = r->off;
	return 1;
}

int
wc_log_repair_tail(wc_file *f, uint64_t valid_end, wc_err *err)
{
	uint64_t	size;
	uint64_t	at;
	int			rc;

	if ((rc = wc_file_size(f, &size, err)) != WC_OK)
		return rc;
	if (size == valid_end)
		return WC_OK;
	if (size < valid_end)
		return wc_err_set(err, WC_CORRUPT,
						  "log %s has %llu bytes, fewer than its valid end at offset %llu",
						  f->name, (unsigned long long) size, (unsigned long long) valid_end);

	/* a valid record at valid_end itself means the caller did not read to the end */
	rc = find_valid_record(f, valid_end, 0, &at, err);
	if (rc == 1 && at == valid_end)
		return wc_err_set(err, WC_CORRUPT,
						  "log %s has a valid record at offset %llu, where its valid end was thought to be; not truncating it",
						  f->name, (unsigned long long) at);
	if (rc == 1)
		return wc_err_set(err, WC_CORRUPT,
						  "log %s has a valid record at offset %llu after an invalid one at offset %llu; not truncating it",
						  f->name, (unsigned long long) at, (unsigned long long) valid_end);
	if (rc != 0)
		return rc;
	if ((rc = wc_file_truncate(f, valid_end, err)) != WC_OK)
		return rc;
	return wc_file_sync(f, true, err);
}
