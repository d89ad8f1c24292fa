/*
 * sst_builder.c -- writing a sorted file (layout in FORMAT.md, "Sorted files").
 *
 * Entries go into a data block; a full block is compressed (or kept plain) into
 * a write buffer with its trailer, and its last key goes into the index.  The
 * write buffer is flushed with one pwrite per megabyte, so a file costs few
 * system calls.  At finish the filter, properties, index and footer follow,
 * then the file and its directory are fsynced.  A zstd builder keeps one
 * compression context for all its blocks: creating one costs more than
 * compressing a 4 KiB block.  The builder keeps the first
 * error; a file that failed is removed.
 *
 * A large file's blocks may be compressed in a helper thread while the caller
 * builds the next ones (opts->helper, a bulk write's; DESIGN.md, "Compression
 * beside the build"): full blocks gather in a job of JOB_BYTES; a full job goes
 * to a thread of its own, which compresses each block and appends its trailer,
 * while the blocks of the next job are built; before that one is handed over,
 * the first is joined and written out, its blocks' index entries added in
 * order.  The helper touches only its job and the compression library: no file,
 * no caller's callback, no signal (wc_helper_start: it starts with every signal
 * blocked, so a backend's handlers run in the backend's thread).  The bytes
 * written are those of a build without it.
 */
#include "sst.h"

#include <limits.h>
#include <lz4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "block.h"
#include "bloom.h"
#include "coding.h"
#include "crc32c.h"
#include "env.h"
#include "err.h"

#define DEFAULT_BLOCK_BYTES		(16u << 10)
#define WRITE_BUFFER_FLUSH		(1u << 20)
#define JOB_BYTES				(512u << 10)	/* of blocks as built, per job */

/* A growable byte buffer. */
typedef struct bbuf
{
	uint8_t    *data;
	size_t		len;
	size_t		cap;
} bbuf;

/*
 * Blocks to be compressed together, in the helper thread or, for the last of a
 * file, in the builder's.  The helper reads raw, lens, compression, level and
 * zstd, and writes out, sizes and rc; the builder touches none of them from
 * the thread's start until it has joined it.
 */
typedef struct wc_job
{
	bbuf		raw;			/* the blocks as built, back to back */
	bbuf		lens;			/* per block its length in raw (fixed32) */
	bbuf		keys;			/* per block its last key, as key_put encodes it */
	uint32_t	nblocks;
	size_t		out_bound;		/* the most store_block can append for them */
	bbuf		out;			/* the blocks as stored, each with its trailer */
	bbuf		sizes;			/* per block its stored size (fixed32) */
	int			rc;				/* WC_OK, or WC_NOMEM */
	int			compression;
	int			level;
	ZSTD_CCtx  *zstd;
	wc_helper	helper;
} wc_job;

struct wc_sst_builder
{
	char	   *dir;
	wc_file		file;
	bool		file_open;
	int			compression;
	int			compression_level;	/* zstd's */
	ZSTD_CCtx  *zstd;			/* with WC_COMPRESS_ZSTD, for every data block */
	size_t		block_bytes;
	wc_err		err;			/* the first error */

	wc_block_builder block;
	wc_bloom_builder bloom;
	bool		use_helper;		/* compress full jobs in a helper thread */
	wc_job		jobs[2];		/* jobs[filling] gathers blocks; the other may
								 * be compressing */
	int			filling;
	bbuf		wbuf;			/* bytes not yet written, at offset written */
	uint64_t	written;
	bbuf		index;			/* index entries, without the count */
	uint64_t	nindex;
	bbuf		where;			/* per index entry: its offset in index, its rowkey's
								 * offset and length (fixed32 each), for the search
								 * arrays */
	int			version;		/* of the format written */
	bool		version_fixed;	/* asked for by the caller: never raised */

	/* the last entry added: ordering, distinct rows and index keys */
	bbuf		last_row;
	bbuf		last_qual;
	int64_t		last_ts;
	uint64_t	last_seq;
	uint8_t		last_type;

	wc_sst_props props;
};

/* Room for extra more bytes after b->len: WC_OK or WC_NOMEM. */
static int
bbuf_reserve(bbuf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len || !wc_buf_reserve(&b->data, &b->cap, b->len + extra))
		return WC_NOMEM;
	return WC_OK;
}

static int
bbuf_set(bbuf *b, const uint8_t *s, size_t n)
{
	b->len = 0;
	if (bbuf_reserve(b, n) != WC_OK)
		return WC_NOMEM;
	if (n > 0)
		memcpy(b->data, s, n);
	b->len = n;
	return WC_OK;
}

static int
nomem(wc_sst_builder *b)
{
	return wc_err_set(&b->err, WC_NOMEM, "out of memory building sorted file \"%s\"",
					  b->file.name);
}

static int
flush_wbuf(wc_sst_builder *b)
{
	int			rc;

	if (b->wbuf.len == 0)
		return WC_OK;
	rc = wc_file_pwrite(&b->file, b->wbuf.data, b->wbuf.len, b->written, &b->err);
	if (rc != WC_OK)
		return rc;
	b->written += b->wbuf.len;
	b->wbuf.len = 0;
	return WC_OK;
}

/* Offset in the file of the next block. */
static uint64_t
cur_offset(const wc_sst_builder *b)
{
	return b->written + b->wbuf.len;
}

/*
 * The most store_block appends for a block of len bytes: the compressor's bound
 * (never less than len: a block that does not shrink is stored plain), then the
 * trailer.  It is what store_block reserves, so a job reserved for its blocks'
 * sum (job_start) is never grown by the helper.
 */
static size_t
block_bound(int compression, size_t len)
{
	size_t		bound = len;

	if (compression == WC_COMPRESS_LZ4 && len <= LZ4_MAX_INPUT_SIZE)
		bound = (size_t) LZ4_compressBound((int) len);
	else if (compression == WC_COMPRESS_ZSTD && !ZSTD_isError(ZSTD_compressBound(len)))
		bound = ZSTD_compressBound(len);
	return (bound > len ? bound : len) + WC_SST_TRAILER_SIZE;
}

/*
 * Appends a block to out: data[0..len-1], lz4- or zstd-compressed when asked and
 * worth it (it saves at least an eighth, as in LevelDB: otherwise decompressing
 * costs more than the bytes it saves), then its trailer.  Sets *size to the
 * stored size.  A zstd block is one frame that records its content size (the
 * reader checks it against the trailer's raw_len) and no checksum of its own
 * (the trailer's CRC covers it).  WC_OK or WC_NOMEM; runs in the helper thread
 * too, so it sets no error message.
 */
static int
store_block(bbuf *out, const uint8_t *data, size_t len, int compression, int level,
			ZSTD_CCtx *zstd, uint64_t *size)
{
	size_t		room = block_bound(compression, len) - WC_SST_TRAILER_SIZE;
	uint8_t    *dst;
	size_t		stored = len;
	uint8_t		type = WC_COMPRESS_NONE;
	uint32_t	crc;

	if (bbuf_reserve(out, room + WC_SST_TRAILER_SIZE) != WC_OK)
		return WC_NOMEM;
	dst = out->data + out->len;
	if (compression == WC_COMPRESS_LZ4 && len <= LZ4_MAX_INPUT_SIZE)
	{
		int			n = LZ4_compress_default((const char *) data, (char *) dst, (int) len,
											 (int) room);

		if (n > 0 && (size_t) n < len - len / 8)
		{
			stored = (size_t) n;
			type = WC_COMPRESS_LZ4;
		}
	}
	else if (compression == WC_COMPRESS_ZSTD)
	{
		size_t		n = ZSTD_compressCCtx(zstd, dst, room, data, len, level);

		/* an error (it can only be out of memory) leaves the block plain */
		if (!ZSTD_isError(n) && n < len - len / 8)
		{
			stored = n;
			type = WC_COMPRESS_ZSTD;
		}
	}
	if (type == WC_COMPRESS_NONE && len > 0)
		memcpy(dst, data, len);
	dst[stored] = type;
	wc_put_fixed32(dst + stored + 1, (uint32_t) len);
	crc = wc_crc32c(dst, stored + 5);
	wc_put_fixed32(dst + stored + 5, crc);
	out->len += stored + WC_SST_TRAILER_SIZE;
	*size = stored;
	return WC_OK;
}

/* Appends a block to the write buffer (store_block), writing it out past a megabyte. */
static int
append_block(wc_sst_builder *b, const uint8_t *data, size_t len, int compression,
			 uint64_t *size)
{
	if (len > UINT32_MAX)
		return wc_err_set(&b->err, WC_INVALID, "block of %zu bytes too large in \"%s\"",
						  len, b->file.name);
	if (store_block(&b->wbuf, data, len, compression, b->compression_level, b->zstd,
					size) != WC_OK)
		return nomem(b);
	if (b->wbuf.len >= WRITE_BUFFER_FLUSH)
		return flush_wbuf(b);
	return WC_OK;
}

/* A block's last key, for its index entry. */
typedef struct index_key
{
	const uint8_t *row;
	size_t		row_len;
	const uint8_t *qual;
	size_t		qual_len;
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
} index_key;

/* The last entry added, the key of the block it ends. */
static index_key
last_key(const wc_sst_builder *b)
{
	index_key	k = {b->last_row.data, b->last_row.len, b->last_qual.data,
	b->last_qual.len, b->last_ts, b->last_seq, b->last_type};

	return k;
}

/* Appends the index entry of the block at off, of size stored bytes, whose last key is k. */
static int
index_add(wc_sst_builder *b, uint64_t off, uint64_t size, const index_key *k)
{
	uint8_t    *p;

	if (bbuf_reserve(&b->index, 10 * 5 + 8 + 1 + k->row_len + k->qual_len) != WC_OK)
		return nomem(b);
	if (bbuf_reserve(&b->where, 12) != WC_OK)
		return nomem(b);
	p = b->index.data + b->index.len;
	wc_put_fixed32(b->where.data + b->where.len, (uint32_t) b->index.len);
	p = wc_put_varint64(p, off);
	p = wc_put_varint64(p, size);
	p = wc_put_varint64(p, k->row_len);
	wc_put_fixed32(b->where.data + b->where.len + 4, (uint32_t) (p - b->index.data));
	wc_put_fixed32(b->where.data + b->where.len + 8, (uint32_t) k->row_len);
	b->where.len += 12;
	if (k->row_len > 0)
		memcpy(p, k->row, k->row_len);
	p += k->row_len;
	p = wc_put_bytes(p, k->qual, k->qual_len);
	wc_put_fixed64(p, (uint64_t) k->ts);
	p += 8;
	p = wc_put_varint64(p, k->seq);
	*p++ = k->type;
	b->index.len = (size_t) (p - b->index.data);
	b->nindex++;
	return WC_OK;
}

/* Encodes k at the end of buf: its rowkey and qualifier (fixed32 length, bytes), ts, seq, type. */
static int
key_put(bbuf *buf, const index_key *k)
{
	uint8_t    *p;

	if (bbuf_reserve(buf, 4 + k->row_len + 4 + k->qual_len + 8 + 8 + 1) != WC_OK)
		return WC_NOMEM;
	p = buf->data + buf->len;
	wc_put_fixed32(p, (uint32_t) k->row_len);
	p += 4;
	if (k->row_len > 0)
		memcpy(p, k->row, k->row_len);
	p += k->row_len;
	wc_put_fixed32(p, (uint32_t) k->qual_len);
	p += 4;
	if (k->qual_len > 0)
		memcpy(p, k->qual, k->qual_len);
	p += k->qual_len;
	wc_put_fixed64(p, (uint64_t) k->ts);
	wc_put_fixed64(p + 8, k->seq);
	p[16] = k->type;
	buf->len = (size_t) (p + 17 - buf->data);
	return WC_OK;
}

/* Decodes the key at *p (key_put's), pointing into it, and moves *p past it. */
static index_key
key_get(const uint8_t **p)
{
	const uint8_t *q = *p;
	index_key	k;

	k.row_len = wc_get_fixed32(q);
	k.row = q + 4;
	q += 4 + k.row_len;
	k.qual_len = wc_get_fixed32(q);
	k.qual = q + 4;
	q += 4 + k.qual_len;
	k.ts = (int64_t) wc_get_fixed64(q);
	k.seq = wc_get_fixed64(q + 8);
	k.type = q[16];
	*p = q + 17;
	return k;
}

/*
 * Compresses a job's blocks (store_block each); the helper thread's body.  Its
 * buffers were reserved by the builder's thread (job_start), so it allocates
 * nothing but what a zstd context may.
 */
static void *
job_run(void *arg)
{
	wc_job	   *j = arg;
	const uint8_t *raw = j->raw.data;

	j->rc = WC_OK;
	for (uint32_t i = 0; i < j->nblocks; i++)
	{
		size_t		len = wc_get_fixed32(j->lens.data + 4 * i);
		uint64_t	size;

		if (store_block(&j->out, raw, len, j->compression, j->level, j->zstd, &size) != WC_OK)
		{
			j->rc = WC_NOMEM;
			break;
		}
		wc_put_fixed32(j->sizes.data + 4 * i, (uint32_t) size);
		raw += len;
	}
	return NULL;
}

/*
 * Starts j's compression in a helper thread (wc_helper_start: every signal
 * blocked); with here, or when no thread can be started, compresses it in this
 * one.
 */
static int
job_start(wc_job *j, bool here)
{
	if (bbuf_reserve(&j->out, j->out_bound) != WC_OK ||
		bbuf_reserve(&j->sizes, 4 * (size_t) j->nblocks) != WC_OK)
		return WC_NOMEM;
	if (here || !wc_helper_start(&j->helper, job_run, j))
		job_run(j);
	return WC_OK;
}

/*
 * Writes out a job that was started (joining its thread) and adds its blocks'
 * index entries, then empties it.
 */
static int
job_finish(wc_sst_builder *b, wc_job *j)
{
	const uint8_t *key;
	uint64_t	off;
	int			rc;

	wc_helper_join(&j->helper);
	if (j->rc != WC_OK)
		return nomem(b);
	if ((rc = flush_wbuf(b)) != WC_OK)
		return rc;
	off = b->written;
	key = j->keys.data;
	for (uint32_t i = 0; i < j->nblocks; i++)
	{
		uint64_t	size = wc_get_fixed32(j->sizes.data + 4 * i);
		index_key	k = key_get(&key);

		if ((rc = index_add(b, off, size, &k)) != WC_OK)
			return rc;
		off += size + WC_SST_TRAILER_SIZE;
		b->props.blocks++;
	}
	if (j->out.len > 0 &&
		(rc = wc_file_pwrite(&b->file, j->out.data, j->out.len, b->written, &b->err)) != WC_OK)
		return rc;
	b->written += j->out.len;
	j->raw.len = j->lens.len = j->keys.len = j->out.len = j->sizes.len = 0;
	j->nblocks = 0;
	j->out_bound = 0;
	return WC_OK;
}

/*
 * Hands the filling job to a helper thread once the one before it is written
 * out; with last, compresses it here instead (nothing is left to build beside
 * it) and writes it out too.
 */
static int
job_submit(wc_sst_builder *b, bool last)
{
	wc_job	   *j = &b->jobs[b->filling];
	wc_job	   *prev = &b->jobs[1 - b->filling];
	int			rc;

	/* a job that was handed over has blocks until it is written out */
	if (prev->nblocks > 0)
	{
		if ((rc = job_finish(b, prev)) != WC_OK)
			return rc;
	}
	if (j->nblocks == 0)
		return WC_OK;
	if (job_start(j, last) != WC_OK)
		return nomem(b);
	if (last)
		return job_finish(b, j);
	b->filling = 1 - b->filling;
	return WC_OK;
}

/* Appends a job's block to it, handing the job over once full. */
static int
job_add(wc_sst_builder *b, const uint8_t *data, size_t len, const index_key *k)
{
	wc_job	   *j = &b->jobs[b->filling];

	if (len > UINT32_MAX)
		return wc_err_set(&b->err, WC_INVALID, "block of %zu bytes too large in \"%s\"",
						  len, b->file.name);
	if (bbuf_reserve(&j->raw, len) != WC_OK || bbuf_reserve(&j->lens, 4) != WC_OK ||
		key_put(&j->keys, k) != WC_OK)
		return nomem(b);
	memcpy(j->raw.data + j->raw.len, data, len);
	j->raw.len += len;
	wc_put_fixed32(j->lens.data + j->lens.len, (uint32_t) len);
	j->lens.len += 4;
	j->nblocks++;
	j->out_bound += block_bound(b->compression, len);
	return j->raw.len >= JOB_BYTES ? job_submit(b, false) : WC_OK;
}

static int
emit_data_block(wc_sst_builder *b)
{
	index_key	k = last_key(b);
	const uint8_t *data;
	size_t		len;
	uint64_t	off = cur_offset(b);
	uint64_t	size;
	int			rc;

	if (wc_block_builder_finish(&b->block, &data, &len) != WC_OK)
		return nomem(b);
	if (b->use_helper)
		rc = job_add(b, data, len, &k);
	else if ((rc = append_block(b, data, len, b->compression, &size)) == WC_OK &&
			 (rc = index_add(b, off, size, &k)) == WC_OK)
		b->props.blocks++;
	wc_block_builder_reset(&b->block);
	return rc;
}

wc_sst_builder *
wc_sst_builder_new(const char *dir, const char *name, const wc_sst_build_opts *opts,
				   wc_err *err)
{
	wc_sst_builder *b;
	size_t		famlen;

	if (opts == NULL || opts->family == NULL ||
		(famlen = strlen(opts->family)) == 0 || famlen > WC_MAX_FAMILY)
	{
		wc_err_set(err, WC_INVALID, "sorted file \"%s\": family name must have 1 to %d bytes",
				   name, WC_MAX_FAMILY);
		return NULL;
	}
	if (opts->compression != WC_COMPRESS_NONE && opts->compression != WC_COMPRESS_LZ4 &&
		opts->compression != WC_COMPRESS_ZSTD)
	{
		wc_err_set(err, WC_INVALID, "sorted file \"%s\": unknown compression %d",
				   name, opts->compression);
		return NULL;
	}
	if (opts->compression == WC_COMPRESS_ZSTD && opts->compression_level != 0 &&
		(opts->compression_level < WC_ZSTD_LEVEL_MIN || opts->compression_level > WC_ZSTD_LEVEL_MAX))
	{
		wc_err_set(err, WC_INVALID, "sorted file \"%s\": zstd level %d is outside %d to %d",
				   name, opts->compression_level, WC_ZSTD_LEVEL_MIN, WC_ZSTD_LEVEL_MAX);
		return NULL;
	}
	/* zstd blocks are valid from version 3 on (older builds refuse the file whole) */
	if (opts->compression == WC_COMPRESS_ZSTD && opts->version != 0 &&
		opts->version < WC_SST_VERSION)
	{
		wc_err_set(err, WC_INVALID, "sorted file \"%s\": format version %d cannot hold zstd blocks",
				   name, opts->version);
		return NULL;
	}
	if (opts->level < 0 || opts->level > 255)
	{
		wc_err_set(err, WC_INVALID, "sorted file \"%s\": bad level %d", name, opts->level);
		return NULL;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL || (b->dir = strdup(dir)) == NULL ||
		(opts->compression == WC_COMPRESS_ZSTD && (b->zstd = ZSTD_createCCtx()) == NULL))
	{
		if (b != NULL)
			free(b->dir);
		free(b);
		wc_err_set(err, WC_NOMEM, "out of memory creating sorted file \"%s\"", name);
		return NULL;
	}
	wc_err_clear(&b->err);
	if (wc_file_open(dir, name, WC_OPEN_EXCL, &b->file, err) != WC_OK)
	{
		ZSTD_freeCCtx(b->zstd);
		free(b->dir);
		free(b);
		return NULL;
	}
	b->file_open = true;
	b->compression = opts->compression;
	b->compression_level = opts->compression_level ? opts->compression_level : WC_ZSTD_LEVEL_DEFAULT;

	/*
	 * Files without zstd blocks stay at version 2, which builds before zstd
	 * read: a store that never asks for zstd can still be opened by them.
	 */
	b->version_fixed = opts->version != 0;
	if (opts->version)
		b->version = opts->version;
	else
		b->version = opts->compression == WC_COMPRESS_ZSTD ? WC_SST_VERSION : WC_SST_VERSION_NO_ZSTD;
	b->block_bytes = opts->block_bytes ? opts->block_bytes : DEFAULT_BLOCK_BYTES;
	b->use_helper = opts->compression != WC_COMPRESS_NONE && opts->helper;
	for (int i = 0; i < 2; i++)
	{
		b->jobs[i].compression = b->compression;
		b->jobs[i].level = b->compression_level;
		b->jobs[i].zstd = b->zstd;
	}
	wc_block_builder_init(&b->block);
	wc_bloom_builder_init(&b->bloom, opts->bloom_bits_per_key);
	memcpy(b->props.family, opts->family, famlen + 1);
	b->props.level = opts->level;
	b->props.ts_min = INT64_MAX;
	b->props.ts_max = INT64_MIN;
	b->props.seq_min = UINT64_MAX;
	b->props.seq_max = 0;
	return b;
}

/*
 * A bounded DEL_FAMILY (version 4 on) or DEL_COLUMN (version 5 on, cell.h):
 * the file takes the version that holds it, which builds before it refuse
 * whole (they would take the marker for a plain one and hide too much).
 */
static int
builder_bounded_marker(wc_sst_builder *b, const wc_cell *c)
{
	const char *type = c->type == WC_TYPE_DEL_FAMILY ? "DEL_FAMILY" : "DEL_COLUMN";
	int			need = c->type == WC_TYPE_DEL_FAMILY ? WC_SST_VERSION_BOUNDED :
		WC_SST_VERSION_BOUNDED_COLUMN;

	if (c->val_len != WC_FAMILY_BOUND_LEN)
		return wc_err_set(&b->err, WC_INVALID,
						  "%s entry with a value of %u bytes cannot be stored in sorted file \"%s\" (a bound has %d)",
						  type, c->val_len, b->file.name, WC_FAMILY_BOUND_LEN);
	if (b->version < need)
	{
		if (b->version_fixed)
			return wc_err_set(&b->err, WC_INVALID,
							  "sorted file \"%s\" of format version %d cannot hold a bounded %s entry",
							  b->file.name, b->version, type);
		b->version = need;
	}
	return WC_OK;
}

int
wc_sst_builder_add(wc_sst_builder *b, const wc_cell *c)
{
	wc_sst_props *p = &b->props;
	bool		new_row;
	int			rc;

	if (b->err.code != WC_OK)
		return b->err.code;
	if (c->row_len > WC_MAX_ROWKEY || c->qual_len > WC_MAX_QUALIFIER ||
		c->val_len > WC_MAX_VALUE)
		return wc_err_set(&b->err, WC_INVALID,
						  "entry too large for sorted file \"%s\": rowkey %u, qualifier %u, value %u bytes",
						  b->file.name, c->row_len, c->qual_len, c->val_len);
	if (c->type < WC_TYPE_PUT || c->type > WC_TYPE_DEL_FAMILY)
		return wc_err_set(&b->err, WC_INVALID, "entry of type %d cannot be stored in sorted file \"%s\"",
						  c->type, b->file.name);
	if ((c->type == WC_TYPE_DEL_FAMILY || c->type == WC_TYPE_DEL_COLUMN) && c->val_len != 0 &&
		(rc = builder_bounded_marker(b, c)) != WC_OK)
		return rc;
	if (p->cells == 0)
		new_row = true;
	else
	{
		wc_cell		last;
		int			r = wc_row_cmp(b->last_row.data, b->last_row.len, c->row, c->row_len);

		last.row = b->last_row.data;
		last.row_len = (uint32_t) b->last_row.len;
		last.qual = b->last_qual.data;
		last.qual_len = (uint32_t) b->last_qual.len;
		last.ts = b->last_ts;
		last.seq = b->last_seq;
		last.type = b->last_type;
		if (r > 0 || (r == 0 && wc_cell_cmp(&last, c) >= 0))
			return wc_err_set(&b->err, WC_INVALID,
							  "entry %llu added to sorted file \"%s\" out of order (seq %llu after seq %llu)",
							  (unsigned long long) p->cells, b->file.name,
							  (unsigned long long) c->seq, (unsigned long long) b->last_seq);
		new_row = r != 0;
	}

	if (new_row)
	{
		if (bbuf_set(&b->last_row, c->row, c->row_len) != WC_OK ||
			wc_bloom_builder_add(&b->bloom, wc_bloom_hash(c->row, c->row_len)) != WC_OK)
			return nomem(b);
		if (p->row_min == NULL)
		{
			if ((p->row_min = malloc(c->row_len ? c->row_len : 1)) == NULL)
				return nomem(b);
			if (c->row_len > 0)
				memcpy(p->row_min, c->row, c->row_len);
			p->row_min_len = c->row_len;
		}
		p->distinct_rows++;
	}
	if (bbuf_set(&b->last_qual, c->qual, c->qual_len) != WC_OK)
		return nomem(b);
	b->last_ts = c->ts;
	b->last_seq = c->seq;
	b->last_type = c->type;

	p->cells++;
	p->raw_bytes += (uint64_t) c->row_len + c->qual_len + c->val_len + 16;
	if (c->type != WC_TYPE_PUT)
		p->tombstones++;
	if (c->type == WC_TYPE_DEL_COLUMN || c->type == WC_TYPE_DEL_FAMILY)
		p->range_tombstones++;
	else
	{
		if (c->ts < p->ts_min)
			p->ts_min = c->ts;
		if (c->ts > p->ts_max)
			p->ts_max = c->ts;
	}
	if (c->seq < p->seq_min)
		p->seq_min = c->seq;
	if (c->seq > p->seq_max)
		p->seq_max = c->seq;

	if (wc_block_builder_add(&b->block, c) != WC_OK)
		return nomem(b);
	if (wc_block_builder_size(&b->block) >= b->block_bytes &&
		(rc = emit_data_block(b)) != WC_OK)
		return rc;
	return WC_OK;
}

uint64_t
wc_sst_builder_cells(const wc_sst_builder *b)
{
	return b->props.cells;
}

uint64_t
wc_sst_builder_file_bytes(const wc_sst_builder *b)
{
	/* blocks waiting in jobs counted as built */
	return cur_offset(b) + b->jobs[0].raw.len + b->jobs[1].raw.len +
		(wc_block_builder_empty(&b->block) ? 0 : wc_block_builder_size(&b->block));
}

/* Encodes the properties block (FORMAT.md, "Sorted files", "Properties block"). */
static int
encode_props(wc_sst_builder *b, bbuf *out)
{
	const wc_sst_props *p = &b->props;
	size_t		famlen = strlen(p->family);
	uint8_t    *q;

	out->len = 0;
	if (bbuf_reserve(out, 1 + famlen + 12 * 10 + 16 + p->row_min_len + p->row_max_len) != WC_OK)
		return nomem(b);
	q = out->data;
	*q++ = (uint8_t) famlen;
	memcpy(q, p->family, famlen);
	q += famlen;
	q = wc_put_varint64(q, (uint64_t) p->level);
	q = wc_put_varint64(q, p->cells);
	q = wc_put_varint64(q, p->tombstones);
	q = wc_put_varint64(q, p->range_tombstones);
	q = wc_put_varint64(q, p->distinct_rows);
	q = wc_put_varint64(q, p->raw_bytes);
	q = wc_put_varint64(q, p->blocks);
	wc_put_fixed64(q, (uint64_t) p->ts_min);
	q += 8;
	wc_put_fixed64(q, (uint64_t) p->ts_max);
	q += 8;
	q = wc_put_varint64(q, p->seq_min);
	q = wc_put_varint64(q, p->seq_max);
	q = wc_put_bytes(q, p->row_min, p->row_min_len);
	q = wc_put_bytes(q, p->row_max, p->row_max_len);
	out->len = (size_t) (q - out->data);
	return WC_OK;
}

/* Writes everything after the data blocks and makes the file durable. */
/*
 * Appends the search arrays of a version 2 index (FORMAT.md, "Index block") to
 * meta, which holds the count (countlen bytes) and the entries and has room: per
 * entry the 8 bytes of its rowkey after the prefix all rowkeys share, then per
 * entry its offset in the block, then that prefix's length and the count.
 */
static void
add_search_arrays(wc_sst_builder *b, bbuf *meta, size_t countlen)
{
	const uint8_t *w = b->where.data;
	const uint8_t *ix = b->index.data;
	uint8_t    *p = meta->data + meta->len;
	uint32_t	skip = 0;

	if (b->nindex > 0)
	{
		const uint8_t *last = w + 12 * (b->nindex - 1);

		skip = (uint32_t) wc_common_prefix(ix + wc_get_fixed32(w + 4), wc_get_fixed32(w + 8),
										   ix + wc_get_fixed32(last + 4), wc_get_fixed32(last + 8));
	}
	for (uint64_t i = 0; i < b->nindex; i++, p += 8)
		wc_put_fixed64(p, wc_prefix64(ix + wc_get_fixed32(w + 12 * i + 4) + skip,
									  wc_get_fixed32(w + 12 * i + 8) - skip));
	for (uint64_t i = 0; i < b->nindex; i++, p += 4)
		wc_put_fixed32(p, (uint32_t) (countlen + wc_get_fixed32(w + 12 * i)));
	wc_put_fixed32(p, skip);
	wc_put_fixed32(p + 4, (uint32_t) b->nindex);
	meta->len = (size_t) (p + 8 - meta->data);
}

static int
finish_file(wc_sst_builder *b)
{
	wc_sst_props *p = &b->props;
	uint8_t    *filter = NULL;
	size_t		filter_len;
	bbuf		meta = {0};
	uint64_t	filter_off,
				filter_size,
				props_off,
				props_size,
				index_off,
				index_size;
	uint8_t		footer[WC_SST_FOOTER_SIZE];
	uint8_t		countbuf[10];
	size_t		countlen;
	int			rc;

	if (!wc_block_builder_empty(&b->block) && (rc = emit_data_block(b)) != WC_OK)
		return rc;
	if (b->use_helper && (rc = job_submit(b, true)) != WC_OK)
		return rc;
	if (p->cells == 0)
	{
		p->seq_min = 0;
		p->seq_max = 0;
	}
	else
	{
		if ((p->row_max = malloc(b->last_row.len ? b->last_row.len : 1)) == NULL)
			return nomem(b);
		if (b->last_row.len > 0)
			memcpy(p->row_max, b->last_row.data, b->last_row.len);
		p->row_max_len = (uint32_t) b->last_row.len;
	}

	/* filter */
	filter_off = cur_offset(b);
	if (wc_bloom_builder_finish(&b->bloom, &filter, &filter_len) != WC_OK)
		return nomem(b);
	rc = append_block(b, filter, filter_len, WC_COMPRESS_NONE, &filter_size);
	free(filter);
	if (rc != WC_OK)
		return rc;

	/* properties */
	props_off = cur_offset(b);
	if ((rc = encode_props(b, &meta)) != WC_OK ||
		(rc = append_block(b, meta.data, meta.len, WC_COMPRESS_NONE, &props_size)) != WC_OK)
	{
		free(meta.data);
		return rc;
	}

	/* index: the count, the entries, then (version 2) the search arrays */
	index_off = cur_offset(b);
	countlen = (size_t) (wc_put_varint64(countbuf, b->nindex) - countbuf);
	meta.len = 0;
	if (countlen + b->index.len + 12 * b->nindex + 8 > UINT32_MAX)
	{
		free(meta.data);
		return wc_err_set(&b->err, WC_INVALID, "sorted file \"%s\" would have an index over 4 GiB",
						  b->file.name);
	}
	if (bbuf_reserve(&meta, countlen + b->index.len + 12 * b->nindex + 8) != WC_OK)
	{
		free(meta.data);
		return nomem(b);
	}
	memcpy(meta.data, countbuf, countlen);
	if (b->index.len > 0)
		memcpy(meta.data + countlen, b->index.data, b->index.len);
	meta.len = countlen + b->index.len;
	if (b->version >= 2)
		add_search_arrays(b, &meta, countlen);
	rc = append_block(b, meta.data, meta.len, WC_COMPRESS_NONE, &index_size);
	free(meta.data);
	if (rc != WC_OK)
		return rc;

	/* footer */
	wc_put_fixed64(footer, filter_off);
	wc_put_fixed64(footer + 8, filter_size);
	wc_put_fixed64(footer + 16, props_off);
	wc_put_fixed64(footer + 24, props_size);
	wc_put_fixed64(footer + 32, index_off);
	wc_put_fixed64(footer + 40, index_size);
	wc_put_fixed32(footer + 48, (uint32_t) b->version);
	wc_put_fixed32(footer + 52, wc_crc32c(footer, 52));
	wc_put_fixed64(footer + 56, WC_SST_MAGIC);
	if (bbuf_reserve(&b->wbuf, sizeof(footer)) != WC_OK)
		return nomem(b);
	memcpy(b->wbuf.data + b->wbuf.len, footer, sizeof(footer));
	b->wbuf.len += sizeof(footer);
	p->file_bytes = cur_offset(b);

	if ((rc = flush_wbuf(b)) != WC_OK ||
		(rc = wc_file_sync(&b->file, true, &b->err)) != WC_OK)
		return rc;
	wc_file_close(&b->file);
	b->file_open = false;
	return wc_env_sync_dir(b->dir, &b->err);
}

static void
builder_free(wc_sst_builder *b, bool remove)
{
	char		name[sizeof(b->file.name)];

	memcpy(name, b->file.name, sizeof(name));
	for (int i = 0; i < 2; i++)
	{
		wc_job	   *j = &b->jobs[i];

		wc_helper_join(&j->helper);
		free(j->raw.data);
		free(j->lens.data);
		free(j->keys.data);
		free(j->out.data);
		free(j->sizes.data);
	}
	if (b->file_open)
		wc_file_close(&b->file);
	if (remove)
	{
		wc_err		ignored;

		wc_err_clear(&ignored);
		wc_env_unlink(b->dir, name, &ignored);
	}
	wc_block_builder_free(&b->block);
	wc_bloom_builder_free(&b->bloom);
	ZSTD_freeCCtx(b->zstd);
	free(b->wbuf.data);
	free(b->index.data);
	free(b->where.data);
	free(b->last_row.data);
	free(b->last_qual.data);
	wc_sst_props_clear(&b->props);
	free(b->dir);
	free(b);
}

int
wc_sst_builder_finish(wc_sst_builder *b, wc_sst_props *props, wc_err *err)
{
	int			rc = b->err.code;

	if (rc == WC_OK)
		rc = finish_file(b);
	if (rc != WC_OK)
	{
		if (err != NULL && err->code == WC_OK)
			*err = b->err;
		builder_free(b, true);
		return rc;
	}
	*props = b->props;
	memset(&b->props, 0, sizeof(b->props));
	builder_free(b, false);
	return WC_OK;
}

void
wc_sst_builder_abandon(wc_sst_builder *b)
{
	if (b != NULL)
		builder_free(b, true);
}
