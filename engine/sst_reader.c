/*
 * sst_reader.c -- opening, checking and iterating a sorted file (layout in
 * FORMAT.md, "Sorted files").
 *
 * wc_sst_open reads the footer, maps the file read-only, and checks the three
 * meta blocks (filter, properties, index): every checksum, and that the blocks
 * tile the file exactly.  The filter and the index are then used where they are
 * mapped (they are stored plain); only the index's entry table is built.  Data
 * blocks are read from the mapping when an iterator needs them (with pread when
 * mapping is off, WIDECOL_NO_MMAP, or failed); an iterator keeps its current
 * block and reuses its buffers, so a seek that stays within the loaded block
 * costs nothing.  Nothing is trusted before its checksum is: a damaged file gives
 * WC_CORRUPT naming the file and offset.
 *
 * With a block cache (cache.h), an iterator of a scan looks each data block up
 * there first, and one that seeks (not a full scan) leaves the blocks it
 * decompresses there for every process.
 *
 * zstd blocks are decompressed with a context an iterator takes when it first
 * needs one and gives back when it closes; the process keeps one given back for
 * the next iterator (dctx_take), so a backend's point reads, each a new iterator
 * per file, do not allocate one each (a context is some 100 KiB).
 */
#include "sst.h"

#include <limits.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "block.h"
#include "bloom.h"
#include "cache.h"
#include "coding.h"
#include "crc32c.h"
#include "env.h"
#include "err.h"

/* The largest uncompressed block we accept: one entry of the largest row,
 * qualifier and value, with room to spare. */
#define MAX_RAW_BLOCK	((uint64_t) 1 << 30)

/* Entries a forward seek steps over in the current block before it searches. */
#define SEEK_BY_NEXT	4

/* Index entry: a data block and its last key (pointing into index_buf). */
typedef struct idx_entry
{
	wc_cell		key;
	uint64_t	off;
	uint64_t	size;			/* stored bytes, without the trailer */
} idx_entry;

struct wc_sst
{
	int			refs;
	uint64_t	uid;			/* wc_sst_uid */
	wc_file		file;
	uint64_t	file_size;
	uint64_t	data_end;		/* where the data blocks end (the filter's offset) */
	wc_sst_props props;
	const uint8_t *filter;
	size_t		filter_len;
	uint32_t	version;		/* of the format, from the footer */
	const uint8_t *index_buf;	/* the index block; keys point into it */
	uint64_t	index_off;		/* its offset in the file (for messages) */
	uint32_t	nblocks;

	/*
	 * Searching the index.  Its rowkeys share their first pfx_skip bytes (those of
	 * pfx_row); each block's prefix is the next 8 bytes of its last rowkey, as
	 * wc_prefix64 gives them.  A seek compares prefixes first: a probe touches one
	 * dense array instead of an entry and its key bytes apart in memory (on a large
	 * file, each a cache miss); equal prefixes fall back to the whole key.
	 *
	 * Version 2 files hold the prefixes and each entry's offset in the index block
	 * (search_pfx, search_off, within index_buf): opening decodes no entry but the
	 * first and the last, and an entry is decoded when a seek or a read needs it.
	 * Version 1 files are decoded whole at open into index[] and pfx[].
	 */
	const uint8_t *pfx_row;
	uint32_t	pfx_skip;
	const uint8_t *search_pfx;	/* version 2: fixed64 per block */
	const uint8_t *search_off;	/* version 2: fixed32 per block */
	size_t		entries_end;	/* version 2: where the entries end in index_buf */
	idx_entry  *index;			/* version 1 */
	uint64_t   *pfx;			/* version 1 */

	/*
	 * Every 64th prefix (of the last block of each run of 64, and of the last
	 * block), copied at open into memory of the process, or NULL for a small
	 * file: a seek searches these first, then 64 prefixes of the file.  A
	 * binary search over the whole array touched a cache line, on a large
	 * file also a page, per step; this way the search of a cold process
	 * touches one page of the file (a tenth of the steps of a point read in a
	 * 100 MB file came here).  n/8 bytes for n blocks.
	 */
	uint64_t   *sample;
	uint32_t	nsample;
	const uint8_t *map;			/* the whole file mapped, or NULL (pread) */
	size_t		map_len;
	bool		filter_owned;	/* filter is malloc'd (else it lies in map) */
	bool		index_owned;	/* index_buf is malloc'd (else it lies in map) */
	/* the file's identity in the block cache (cache.h); cache_file1 0: none */
	uint64_t	cache_file1;
	uint64_t	cache_file2;
	bool		cache_verify;	/* no inode generation: keys hold block checksums */
	bool		plain_seen;		/* the last block looked up was stored plain (a hint:
								 * most blocks of such a file are, when its values
								 * do not compress) */

	/*
	 * A bit per data block whose checksum this handle has checked in the mapped
	 * file (malloc'd at the first check, NULL before): a block read again is not
	 * checked again, as PostgreSQL checks a page's checksum when it reads the
	 * page into shared buffers, not at every access.  The file never changes
	 * after it is written; a block changed under the mapping by damage after its
	 * check reads as the damaged bytes, which the block parser bounds-checks.
	 */
	uint8_t    *checked;
};

/* A reusable buffer pair for reading blocks. */
typedef struct read_bufs
{
	uint8_t    *raw;			/* stored bytes + trailer */
	size_t		raw_cap;
	uint8_t    *plain;			/* decompressed */
	size_t		plain_cap;
	ZSTD_DCtx  *zstd;			/* taken at the first zstd block, or NULL */
} read_bufs;

/* A zstd context given back by an iterator that closed, for the next one. */
static ZSTD_DCtx *dctx_spare;

/* A context: the spare one if there is one (threads may race for it), or a new one. */
static ZSTD_DCtx *
dctx_take(void)
{
	ZSTD_DCtx  *d = __atomic_exchange_n(&dctx_spare, NULL, __ATOMIC_ACQ_REL);

	return d != NULL ? d : ZSTD_createDCtx();
}

/* Keeps d as the spare, or frees it when another one is kept already. */
static void
dctx_give(ZSTD_DCtx *d)
{
	if (d != NULL)
		ZSTD_freeDCtx(__atomic_exchange_n(&dctx_spare, d, __ATOMIC_ACQ_REL));
}

static void
read_bufs_free(read_bufs *rb)
{
	free(rb->raw);
	free(rb->plain);
	dctx_give(rb->zstd);
	memset(rb, 0, sizeof(*rb));
}

/*
 * Decompresses the zstd block src[0..size-1] into rb->plain, which must then hold
 * exactly raw_len bytes: one frame, of exactly size bytes, recording raw_len as
 * its content size (checked before anything is allocated for it).  Damage is
 * WC_CORRUPT with the file and offset; zstd itself checks every bound while it
 * decodes.
 */
static int
zstd_block(wc_sst *s, uint64_t off, const uint8_t *src, uint64_t size, uint32_t raw_len,
		   read_bufs *rb, uint8_t *dst, const char *what, wc_err *err)
{
	const char *fname = s->file.name;
	unsigned long long content;
	size_t		frame,
				n;

	if (s->version < 3)
		return wc_err_set(err, WC_CORRUPT,
						  "%s in %s at offset %llu is zstd-compressed in a file of format version %u (zstd needs version 3)",
						  what, fname, (unsigned long long) off, s->version);
	frame = ZSTD_findFrameCompressedSize(src, (size_t) size);
	content = ZSTD_getFrameContentSize(src, (size_t) size);
	if (ZSTD_isError(frame) || frame != size)
		return wc_err_set(err, WC_CORRUPT,
						  "%s in %s at offset %llu: not one zstd frame of %llu bytes (%s)",
						  what, fname, (unsigned long long) off, (unsigned long long) size,
						  ZSTD_isError(frame) ? ZSTD_getErrorName(frame) : "a frame of another size");
	/*
	 * zstd expands at most one 128 KiB block per 4 bytes (a 3-byte block header
	 * and the byte of a run): a larger claim is damage, found before allocating
	 * for it
	 */
	if (raw_len > MAX_RAW_BLOCK || raw_len > (size / 4 + 1) * (uint64_t) ZSTD_BLOCKSIZE_MAX)
		return wc_err_set(err, WC_CORRUPT,
						  "%s in %s at offset %llu: implausible lengths %u (uncompressed), %llu (stored)",
						  what, fname, (unsigned long long) off, raw_len,
						  (unsigned long long) size);
	if (content != raw_len)
		return wc_err_set(err, WC_CORRUPT,
						  "%s in %s at offset %llu: zstd frame holds %lld bytes, the trailer says %u",
						  what, fname, (unsigned long long) off,
						  content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR ?
						  -1LL : (long long) content, raw_len);
	if ((dst == NULL && !wc_buf_reserve(&rb->plain, &rb->plain_cap, raw_len > 0 ? raw_len : 1)) ||
		(rb->zstd == NULL && (rb->zstd = dctx_take()) == NULL))
		return wc_err_set(err, WC_NOMEM, "out of memory reading %s of %s at offset %llu",
						  what, fname, (unsigned long long) off);
	n = ZSTD_decompressDCtx(rb->zstd, dst != NULL ? dst : rb->plain, raw_len, src, (size_t) size);
	if (ZSTD_isError(n) || n != raw_len)
		return wc_err_set(err, WC_CORRUPT,
						  "%s decompression failed in %s at offset %llu: zstd %s%s, expected %u bytes",
						  what, fname, (unsigned long long) off,
						  ZSTD_isError(n) ? "says " : "returned a short block",
						  ZSTD_isError(n) ? ZSTD_getErrorName(n) : "", raw_len);
	return WC_OK;
}

/*
 * Reads the block stored at off (size bytes + trailer), checks it and returns
 * its uncompressed bytes in *data, *len: in rb->raw or rb->plain, valid until
 * the next read with rb, or, for a compressed block, in dst when it is not NULL
 * (dst_cap bytes; a larger block is WC_CORRUPT, since the caller sized dst by
 * the same trailer).  what names the block in messages; blk is the number of a
 * data block (whose check in the mapped file is remembered: s->checked),
 * UINT32_MAX for a meta block.
 */
static int
read_block_into(wc_sst *s, uint64_t off, uint64_t size, uint32_t blk, read_bufs *rb,
				uint8_t *dst, size_t dst_cap, const char *what, const uint8_t **data,
				size_t *len, wc_err *err)
{
	const char *fname = s->file.name;
	const uint8_t *src;
	size_t		total;
	uint8_t		type;
	uint32_t	raw_len,
				stored_crc,
				crc;
	bool		mapped = false;
	int			rc;

	if (size > s->file_size)
		return wc_err_set(err, WC_CORRUPT, "%s in %s at offset %llu has a bad size %llu",
						  what, fname, (unsigned long long) off, (unsigned long long) size);
	total = (size_t) size + WC_SST_TRAILER_SIZE;
	/* a mapped file's descriptor is closed (sst_load): the map it must be */
	if (s->map != NULL && off + total <= s->map_len && (wc_env_map_allowed() || s->file.fd < 0))
	{
		src = s->map + off;		/* no system call, no copy */
		mapped = blk < s->nblocks;
	}
	else if (s->file.fd < 0)
		return wc_err_set(err, WC_CORRUPT,
						  "%s in %s at offset %llu (%llu bytes) lies past the end of the file (%llu bytes)",
						  what, fname, (unsigned long long) off, (unsigned long long) size,
						  (unsigned long long) s->file_size);
	else
	{
		if (!wc_buf_reserve(&rb->raw, &rb->raw_cap, total))
			return wc_err_set(err, WC_NOMEM, "out of memory reading %s of %s at offset %llu",
							  what, fname, (unsigned long long) off);
		if ((rc = wc_file_pread(&s->file, rb->raw, total, off, err)) != WC_OK)
			return rc;
		src = rb->raw;
	}
	type = src[size];
	raw_len = wc_get_fixed32(src + size + 1);
	if (!mapped || s->checked == NULL || !(s->checked[blk / 8] & (1u << (blk % 8))))
	{
		stored_crc = wc_get_fixed32(src + size + 5);
		crc = wc_crc32c(src, (size_t) size + 5);
		if (crc != stored_crc)
			return wc_err_set(err, WC_CORRUPT,
							  "%s checksum mismatch in %s at offset %llu: stored 0x%08x, computed 0x%08x",
							  what, fname, (unsigned long long) off, stored_crc, crc);
		if (mapped && s->checked == NULL)
			s->checked = calloc((s->nblocks + 7) / 8, 1);	/* NULL: check again */
		if (mapped && s->checked != NULL)
			s->checked[blk / 8] |= (uint8_t) (1u << (blk % 8));
	}
	if (dst != NULL && type != WC_COMPRESS_NONE && raw_len > dst_cap)
		return wc_err_set(err, WC_CORRUPT, "%s in %s at offset %llu: uncompressed length %u, above the %zu bytes expected",
						  what, fname, (unsigned long long) off, raw_len, dst_cap);
	if (type == WC_COMPRESS_NONE)
	{
		if (raw_len != size)
			return wc_err_set(err, WC_CORRUPT,
							  "%s in %s at offset %llu: uncompressed length %u differs from stored length %llu",
							  what, fname, (unsigned long long) off, raw_len,
							  (unsigned long long) size);
		*data = src;
		*len = (size_t) size;
		return WC_OK;
	}
	if (type == WC_COMPRESS_LZ4)
	{
		int			n;

		/* lz4 expands at most ~255:1; a larger claim is damage, found before
		 * allocating for it */
		if (raw_len > MAX_RAW_BLOCK || size > INT_MAX || raw_len > 255 * size + 16)
			return wc_err_set(err, WC_CORRUPT,
							  "%s in %s at offset %llu: implausible lengths %u (uncompressed), %llu (stored)",
							  what, fname, (unsigned long long) off, raw_len,
							  (unsigned long long) size);
		if (dst == NULL && !wc_buf_reserve(&rb->plain, &rb->plain_cap, raw_len))
			return wc_err_set(err, WC_NOMEM, "out of memory reading %s of %s at offset %llu",
							  what, fname, (unsigned long long) off);
		n = LZ4_decompress_safe((const char *) src, (char *) (dst != NULL ? dst : rb->plain),
								(int) size, (int) raw_len);
		if (n < 0 || (uint32_t) n != raw_len)
			return wc_err_set(err, WC_CORRUPT,
							  "%s decompression failed in %s at offset %llu: lz4 returned %d, expected %u bytes",
							  what, fname, (unsigned long long) off, n, raw_len);
		*data = dst != NULL ? dst : rb->plain;
		*len = raw_len;
		return WC_OK;
	}
	if (type == WC_COMPRESS_ZSTD)
	{
		if ((rc = zstd_block(s, off, src, size, raw_len, rb, dst, what, err)) != WC_OK)
			return rc;
		*data = dst != NULL ? dst : rb->plain;
		*len = raw_len;
		return WC_OK;
	}
	return wc_err_set(err, WC_CORRUPT, "%s in %s at offset %llu has unknown compression type %u",
					  what, fname, (unsigned long long) off, type);
}

static int
read_block(wc_sst *s, uint64_t off, uint64_t size, uint32_t blk, read_bufs *rb,
		   const char *what, const uint8_t **data, size_t *len, wc_err *err)
{
	return read_block_into(s, off, size, blk, rb, NULL, 0, what, data, len, err);
}

/*
 * Reads and checks a meta block: *out points into the mapped file (meta blocks are
 * stored plain), or, read with pread or decompressed, into a malloc'd buffer that
 * the caller frees (*owned).
 */
static int
read_meta(wc_sst *s, uint64_t off, uint64_t size, const char *what,
		  const uint8_t **out, size_t *len, bool *owned, wc_err *err)
{
	read_bufs	rb = {0};
	const uint8_t *data;
	int			rc = read_block(s, off, size, UINT32_MAX, &rb, what, &data, len, err);

	*owned = false;
	if (rc == WC_OK && data == rb.plain)
	{
		*owned = true;			/* decompressed (meta blocks are written plain) */
		rb.plain = NULL;
	}
	else if (rc == WC_OK && data == rb.raw)
	{
		*owned = true;			/* read with pread */
		rb.raw = NULL;
	}
	/* else in the mapped file (or an error): no copy to keep */
	read_bufs_free(&rb);
	*out = data;
	return rc;
}

/* ---------------------------------------------------------------- open */

static int
bad_props(wc_sst *s, uint64_t off, const char *why, wc_err *err)
{
	return wc_err_set(err, WC_CORRUPT, "bad properties block in %s at offset %llu: %s",
					  s->file.name, (unsigned long long) off, why);
}

static const uint8_t *
get_bytes(const uint8_t *p, const uint8_t *end, uint32_t max, uint8_t **out, uint32_t *len)
{
	uint32_t	n;

	if ((p = wc_get_varint32(p, end, &n)) == NULL || n > max || (size_t) (end - p) < n)
		return NULL;
	if ((*out = malloc(n ? n : 1)) == NULL)
		return NULL;
	if (n > 0)
		memcpy(*out, p, n);
	*len = n;
	return p + n;
}

static int
decode_props(wc_sst *s, const uint8_t *buf, size_t len, uint64_t off, wc_err *err)
{
	wc_sst_props *pr = &s->props;
	const uint8_t *p = buf;
	const uint8_t *end = buf + len;
	uint64_t	level,
				v[6];
	uint32_t	famlen;

	if (len < 1 || (famlen = buf[0]) == 0 || (size_t) (end - p - 1) < famlen)
		return bad_props(s, off, "bad family name length", err);
	if (memchr(buf + 1, 0, famlen) != NULL)
		return bad_props(s, off, "family name contains a zero byte", err);
	memcpy(pr->family, buf + 1, famlen);
	pr->family[famlen] = '\0';
	p = buf + 1 + famlen;
	if ((p = wc_get_varint64(p, end, &level)) == NULL || level > 255)
		return bad_props(s, off, "bad level", err);
	pr->level = (int) level;
	for (int i = 0; i < 6; i++)
		if ((p = wc_get_varint64(p, end, &v[i])) == NULL)
			return bad_props(s, off, "truncated counters", err);
	pr->cells = v[0];
	pr->tombstones = v[1];
	pr->range_tombstones = v[2];
	pr->distinct_rows = v[3];
	pr->raw_bytes = v[4];
	pr->blocks = v[5];
	if (end - p < 16)
		return bad_props(s, off, "truncated time range", err);
	pr->ts_min = (int64_t) wc_get_fixed64(p);
	pr->ts_max = (int64_t) wc_get_fixed64(p + 8);
	p += 16;
	if ((p = wc_get_varint64(p, end, &pr->seq_min)) == NULL ||
		(p = wc_get_varint64(p, end, &pr->seq_max)) == NULL)
		return bad_props(s, off, "truncated sequence range", err);
	if (pr->cells > 0)
	{
		if ((p = get_bytes(p, end, WC_MAX_ROWKEY, &pr->row_min, &pr->row_min_len)) == NULL ||
			(p = get_bytes(p, end, WC_MAX_ROWKEY, &pr->row_max, &pr->row_max_len)) == NULL)
			return bad_props(s, off, "bad rowkey range (or out of memory)", err);
	}
	else if (end - p < 2 || p[0] != 0 || p[1] != 0)
		return bad_props(s, off, "an empty file with a rowkey range", err);
	else
		p += 2;
	if (p != end)
		return bad_props(s, off, "trailing bytes", err);

	if (pr->tombstones > pr->cells || pr->range_tombstones > pr->tombstones ||
		pr->distinct_rows > pr->cells || (pr->cells > 0) != (pr->distinct_rows > 0) ||
		(pr->cells > 0) != (pr->blocks > 0) || pr->seq_min > pr->seq_max)
		return bad_props(s, off, "inconsistent counters", err);
	if (pr->cells > 0 && wc_row_cmp(pr->row_min, pr->row_min_len,
									pr->row_max, pr->row_max_len) > 0)
		return bad_props(s, off, "smallest rowkey above the largest", err);
	return WC_OK;
}

static int
bad_index(const wc_sst *s, uint64_t off, uint32_t entry, const char *why, wc_err *err)
{
	return wc_err_set(err, WC_CORRUPT, "bad index block in %s at offset %llu, entry %u: %s",
					  s->file.name, (unsigned long long) off, entry, why);
}

/*
 * Parses the index entry at p (entries end at end) into *e: a handle inside the
 * data area and a well-formed key.  Returns the byte after it, or NULL with *why.
 */
static const uint8_t *
parse_index_entry(const wc_sst *s, const uint8_t *p, const uint8_t *end, idx_entry *e,
				  const char **why)
{
	uint32_t	n;

	if ((p = wc_get_varint64(p, end, &e->off)) == NULL ||
		(p = wc_get_varint64(p, end, &e->size)) == NULL)
		return *why = "bad block handle", NULL;
	if (e->size > s->data_end || e->off > s->data_end ||
		e->off + e->size + WC_SST_TRAILER_SIZE > s->data_end)
		return *why = "block outside the data area or not contiguous", NULL;
	if ((p = wc_get_varint32(p, end, &n)) == NULL || n > WC_MAX_ROWKEY || (size_t) (end - p) < n)
		return *why = "bad rowkey", NULL;
	e->key.row = p;
	e->key.row_len = n;
	p += n;
	if ((p = wc_get_varint32(p, end, &n)) == NULL || n > WC_MAX_QUALIFIER || (size_t) (end - p) < n)
		return *why = "bad qualifier", NULL;
	e->key.qual = p;
	e->key.qual_len = n;
	p += n;
	if (end - p < 8)
		return *why = "truncated key", NULL;
	e->key.ts = (int64_t) wc_get_fixed64(p);
	p += 8;
	if ((p = wc_get_varint64(p, end, &e->key.seq)) == NULL || p >= end)
		return *why = "truncated key", NULL;
	e->key.type = *p++;
	if (e->key.type < WC_TYPE_PUT || e->key.type > WC_TYPE_DEL_FAMILY)
		return *why = "bad entry type", NULL;
	e->key.val = NULL;
	e->key.val_len = 0;
	return p;
}

/* Block i's index entry (i < nblocks); a version 2 entry is decoded and checked here. */
static int
index_get(const wc_sst *s, uint32_t i, idx_entry *e, wc_err *err)
{
	uint32_t	at;
	const char *why = "entry offset outside the entries";

	if (s->index != NULL)
	{
		*e = s->index[i];
		return WC_OK;
	}
	at = wc_get_fixed32(s->search_off + 4 * (size_t) i);
	if (at < s->entries_end &&
		parse_index_entry(s, s->index_buf + at, s->index_buf + s->entries_end, e, &why) != NULL)
		return WC_OK;
	return bad_index(s, s->index_off, i, why, err);
}

/* Block i's rowkey prefix (see struct wc_sst). */
static inline uint64_t
index_pfx(const wc_sst *s, uint32_t i)
{
	return s->pfx != NULL ? s->pfx[i] : wc_get_fixed64(s->search_pfx + 8 * (size_t) i);
}

#define SAMPLE_SHIFT 6
#define SAMPLE_EVERY (1u << SAMPLE_SHIFT)

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* s->sample for a file of 128 blocks or more (left NULL if there is no memory for it) */
static void
take_samples(wc_sst *s)
{
	uint32_t	n;

	if (s->nblocks < 2 * SAMPLE_EVERY)
		return;
	n = (s->nblocks + SAMPLE_EVERY - 1) >> SAMPLE_SHIFT;
	if ((s->sample = malloc(sizeof(uint64_t) * n)) == NULL)
		return;
	for (uint32_t j = 0; j < n; j++)
		s->sample[j] = index_pfx(s, min_u32((j << SAMPLE_SHIFT) + SAMPLE_EVERY - 1, s->nblocks - 1));
	s->nsample = n;
}

/* The common prefix of the first and last rowkeys (every rowkey between shares it). */
static uint32_t
common_prefix(const wc_cell *first, const wc_cell *last)
{
	return (uint32_t) wc_common_prefix(first->row, first->row_len, last->row, last->row_len);
}

/*
 * Walks count index entries from p (just after the count) to end: each well
 * formed, the blocks tiling the data area, the keys strictly increasing.  With
 * out (version 1) it stores them there; without (version 2, verification) it
 * checks each against the search arrays: its offset, its prefix, the common
 * prefix.
 */
static int
walk_index(wc_sst *s, const uint8_t *p, const uint8_t *end, uint32_t count, idx_entry *out,
		   wc_err *err)
{
	uint64_t	expect = 0;
	idx_entry	e,
				prev = {0};
	const char *why;

	for (uint32_t i = 0; i < count; i++)
	{
		if (out == NULL &&
			(uint32_t) (p - s->index_buf) != wc_get_fixed32(s->search_off + 4 * (size_t) i))
			return bad_index(s, s->index_off, i, "entry offset differs from the search array", err);
		if ((p = parse_index_entry(s, p, end, &e, &why)) == NULL)
			return bad_index(s, s->index_off, i, why, err);
		if (e.off != expect)
			return bad_index(s, s->index_off, i, "block outside the data area or not contiguous", err);
		expect = e.off + e.size + WC_SST_TRAILER_SIZE;
		if (i > 0 && wc_cell_cmp(&prev.key, &e.key) >= 0)
			return bad_index(s, s->index_off, i, "keys out of order", err);
		if (out != NULL)
			out[i] = e;
		else if (e.key.row_len < s->pfx_skip || memcmp(e.key.row, s->pfx_row, s->pfx_skip) != 0 ||
				 index_pfx(s, i) != wc_prefix64(e.key.row + s->pfx_skip, e.key.row_len - s->pfx_skip))
			return bad_index(s, s->index_off, i, "rowkey prefix differs from the search array", err);
		prev = e;
	}
	if (p != end)
		return bad_index(s, s->index_off, count, "trailing bytes", err);
	if (expect != s->data_end)
		return bad_index(s, s->index_off, count, "the data blocks do not end where the filter starts", err);
	return WC_OK;
}

/* Version 1: decodes every entry (walk_index), computes the prefixes. */
static int
decode_index_v1(wc_sst *s, size_t len, uint64_t off, wc_err *err)
{
	const uint8_t *p = s->index_buf;
	const uint8_t *end = p + len;
	uint64_t	count;
	int			rc;

	/* an entry takes at least 13 bytes, which bounds the allocation */
	if ((p = wc_get_varint64(p, end, &count)) == NULL || count > len / 13 ||
		count != s->props.blocks)
		return bad_index(s, off, 0, "bad block count", err);
	if ((s->index = calloc(count ? count : 1, sizeof(idx_entry))) == NULL ||
		(s->pfx = malloc(sizeof(uint64_t) * (count ? count : 1))) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory reading the index of %s", s->file.name);
	if ((rc = walk_index(s, p, end, (uint32_t) count, s->index, err)) != WC_OK)
		return rc;
	s->nblocks = (uint32_t) count;
	if (count == 0)
		return WC_OK;
	if (wc_row_cmp(s->index[count - 1].key.row, s->index[count - 1].key.row_len,
				   s->props.row_max, s->props.row_max_len) != 0)
		return bad_index(s, off, s->nblocks, "last key differs from the largest rowkey", err);
	s->pfx_row = s->index[0].key.row;
	s->pfx_skip = common_prefix(&s->index[0].key, &s->index[count - 1].key);
	for (uint32_t i = 0; i < count; i++)
		s->pfx[i] = wc_prefix64(s->index[i].key.row + s->pfx_skip,
								s->index[i].key.row_len - s->pfx_skip);
	return WC_OK;
}

/*
 * Version 2: finds the search arrays and checks what costs no pass over the
 * entries: the counts, the arrays' place, the first entry (where the entries
 * begin, the first block) and the last (the last block ends the data area, its
 * rowkey is the largest), and the common prefix.  Every other entry is checked
 * when decoded; wc_sst_verify checks them all, with order and tiling.
 */
static int
decode_index_v2(wc_sst *s, size_t len, uint64_t off, wc_err *err)
{
	const uint8_t *buf = s->index_buf;
	const uint8_t *p;
	uint64_t	count;
	idx_entry	first,
				last;

	if (len < 8 || (p = wc_get_varint64(buf, buf + len, &count)) == NULL ||
		count != s->props.blocks || count != wc_get_fixed32(buf + len - 4) ||
		count > (len - 8) / 25 ||	/* 12 bytes of arrays + at least 13 of entry */
		(size_t) (p - buf) > len - 8 - 12 * count)
		return bad_index(s, off, 0, "bad block count or search arrays", err);
	s->nblocks = (uint32_t) count;
	s->entries_end = len - 8 - 12 * (size_t) count;
	s->search_pfx = buf + s->entries_end;
	s->search_off = s->search_pfx + 8 * (size_t) count;
	s->pfx_skip = wc_get_fixed32(buf + len - 8);
	if (count == 0)
		return s->entries_end == (size_t) (p - buf) ? WC_OK :
			bad_index(s, off, 0, "trailing bytes", err);
	if (wc_get_fixed32(s->search_off) != (uint32_t) (p - buf))
		return bad_index(s, off, 0, "the first entry is not where the entries begin", err);
	if (index_get(s, 0, &first, err) != WC_OK ||
		index_get(s, s->nblocks - 1, &last, err) != WC_OK)
		return WC_CORRUPT;
	if (first.off != 0)
		return bad_index(s, off, 0, "block outside the data area or not contiguous", err);
	if (last.off + last.size + WC_SST_TRAILER_SIZE != s->data_end)
		return bad_index(s, off, s->nblocks, "the data blocks do not end where the filter starts", err);
	if (wc_row_cmp(last.key.row, last.key.row_len, s->props.row_max, s->props.row_max_len) != 0)
		return bad_index(s, off, s->nblocks, "last key differs from the largest rowkey", err);
	if (s->pfx_skip != common_prefix(&first.key, &last.key))
		return bad_index(s, off, 0, "wrong common rowkey prefix", err);
	s->pfx_row = first.key.row;
	return WC_OK;
}

static void
sst_free(wc_sst *s)
{
	wc_file_unmap(s->map, s->map_len);
	wc_file_close(&s->file);
	wc_sst_props_clear(&s->props);
	if (s->filter_owned)
		free((uint8_t *) s->filter);
	if (s->index_owned)
		free((uint8_t *) s->index_buf);
	free(s->index);
	free(s->pfx);
	free(s->sample);
	free(s->checked);
	free(s);
}

/*
 * The file's identity in the block cache (cache.h): its inode number, and a
 * hash of its device, its size, its inode's generation, its footer (which holds
 * the footer's checksum and the meta blocks' places) and the stored checksums of
 * its meta blocks.  A file read with pread is not cached (its lookups would cost
 * a read each).
 */
static void
cache_identity(wc_sst *s, const uint8_t *footer)
{
	uint8_t		buf[8 + 8 + 4 + WC_SST_FOOTER_SIZE + 3 * 4];
	uint64_t	dev,
				ino,
				offs[3],
				sizes[3];
	uint32_t	gen;
	bool		gen_known;
	wc_err		ignored;

	s->cache_file1 = 0;
	if (!wc_cache_enabled() || s->map == NULL)
		return;
	wc_err_clear(&ignored);
	if (wc_file_identity(&s->file, &dev, &ino, &gen, &gen_known, &ignored) != WC_OK)
		return;
	s->cache_verify = !gen_known || wc_cache_verify_forced;
	memcpy(buf, &dev, 8);
	memcpy(buf + 8, &s->file_size, 8);
	memcpy(buf + 16, &gen, 4);
	memcpy(buf + 20, footer, WC_SST_FOOTER_SIZE);
	for (int i = 0; i < 3; i++)
	{
		offs[i] = wc_get_fixed64(footer + 16 * i);
		sizes[i] = wc_get_fixed64(footer + 16 * i + 8);
		/* sst_load checked that the meta blocks tile the file: in the mapping */
		memcpy(buf + 20 + WC_SST_FOOTER_SIZE + 4 * i, s->map + offs[i] + sizes[i] + 5, 4);
	}
	s->cache_file1 = ino | ((uint64_t) 1 << 63);	/* never 0 */
	s->cache_file2 = wc_bloom_hash(buf, sizeof(buf));
}

/* Reads and checks the footer, then the meta blocks. */
static int
sst_load(wc_sst *s, wc_err *err)
{
	const char *fname = s->file.name;
	uint8_t		footer[WC_SST_FOOTER_SIZE];
	uint64_t	foot_off,
				filter_off,
				filter_size,
				props_off,
				props_size,
				index_off,
				index_size,
				magic;
	uint32_t	version,
				stored_crc,
				crc;
	const uint8_t *props_buf = NULL;
	bool		props_owned;
	size_t		len;
	int			rc;

	if ((rc = wc_file_size(&s->file, &s->file_size, err)) != WC_OK)
		return rc;
	if (s->file_size < WC_SST_FOOTER_SIZE + 3 * WC_SST_TRAILER_SIZE)
		return wc_err_set(err, WC_CORRUPT, "file %s is too short to be a sorted file: %llu bytes",
						  fname, (unsigned long long) s->file_size);
	foot_off = s->file_size - WC_SST_FOOTER_SIZE;
	if ((rc = wc_file_pread(&s->file, footer, sizeof(footer), foot_off, err)) != WC_OK)
		return rc;
	magic = wc_get_fixed64(footer + 56);
	if (magic != WC_SST_MAGIC)
		return wc_err_set(err, WC_CORRUPT,
						  "bad magic number in %s at offset %llu: stored 0x%016llx, expected 0x%016llx",
						  fname, (unsigned long long) (foot_off + 56),
						  (unsigned long long) magic, (unsigned long long) WC_SST_MAGIC);
	stored_crc = wc_get_fixed32(footer + 52);
	crc = wc_crc32c(footer, 52);
	if (stored_crc != crc)
		return wc_err_set(err, WC_CORRUPT,
						  "footer checksum mismatch in %s at offset %llu: stored 0x%08x, computed 0x%08x",
						  fname, (unsigned long long) foot_off, stored_crc, crc);
	version = wc_get_fixed32(footer + 48);
	if (version < WC_SST_VERSION_OLDEST || version > WC_SST_VERSION_NEWEST)
		return wc_err_set(err, WC_CORRUPT, "unsupported format version %u in %s (this engine reads %d to %d)",
						  version, fname, WC_SST_VERSION_OLDEST, WC_SST_VERSION_NEWEST);
	s->version = version;
	filter_off = wc_get_fixed64(footer);
	filter_size = wc_get_fixed64(footer + 8);
	props_off = wc_get_fixed64(footer + 16);
	props_size = wc_get_fixed64(footer + 24);
	index_off = wc_get_fixed64(footer + 32);
	index_size = wc_get_fixed64(footer + 40);
	/* the meta blocks follow each other and the footer exactly */
	if (filter_off > foot_off || filter_size > foot_off || props_size > foot_off ||
		index_size > foot_off ||
		filter_off + filter_size + WC_SST_TRAILER_SIZE != props_off ||
		props_off + props_size + WC_SST_TRAILER_SIZE != index_off ||
		index_off + index_size + WC_SST_TRAILER_SIZE != foot_off)
		return wc_err_set(err, WC_CORRUPT,
						  "bad footer in %s at offset %llu: filter %llu+%llu, properties %llu+%llu, index %llu+%llu do not fit a file of %llu bytes",
						  fname, (unsigned long long) foot_off,
						  (unsigned long long) filter_off, (unsigned long long) filter_size,
						  (unsigned long long) props_off, (unsigned long long) props_size,
						  (unsigned long long) index_off, (unsigned long long) index_size,
						  (unsigned long long) s->file_size);
	s->data_end = filter_off;
	/* the whole file, whose size the footer just proved consistent: meta blocks are
	 * stored plain, so the filter and the index are used where they are mapped */
	s->map_len = (size_t) s->file_size;
	if ((rc = wc_file_map(&s->file, s->map_len, &s->map, err)) != WC_OK)
		return rc;

	if ((rc = read_meta(s, filter_off, filter_size, "filter block", &s->filter,
						&s->filter_len, &s->filter_owned, err)) != WC_OK)
		return rc;
	if (!wc_bloom_valid(s->filter, s->filter_len))
		return wc_err_set(err, WC_CORRUPT, "bad filter block in %s at offset %llu",
						  fname, (unsigned long long) filter_off);

	if ((rc = read_meta(s, props_off, props_size, "properties block", &props_buf,
						&len, &props_owned, err)) != WC_OK)
		return rc;
	rc = decode_props(s, props_buf, len, props_off, err);
	if (props_owned)
		free((uint8_t *) props_buf);
	if (rc != WC_OK)
		return rc;
	s->props.file_bytes = s->file_size;

	if ((rc = read_meta(s, index_off, index_size, "index block", &s->index_buf,
						&len, &s->index_owned, err)) != WC_OK)
		return rc;
	s->index_off = index_off;
	rc = version == 1 ? decode_index_v1(s, len, index_off, err) :
		decode_index_v2(s, len, index_off, err);
	if (rc == WC_OK)
	{
		take_samples(s);
		cache_identity(s, footer);
		/*
		 * Mapped whole, the file needs no descriptor: a session that opened
		 * hundreds of tables kept one per sorted file and ran out of them
		 * ("Too many open files"), where PostgreSQL's own files share a pool.
		 * The map keeps the file, even once a compaction has unlinked it.
		 */
		if (s->map != NULL)
			wc_file_close(&s->file);
	}
	return rc;
}

/* The last uid given out (wc_sst_uid). */
static uint64_t last_uid;

int
wc_sst_open(const char *dir, const char *name, wc_sst **out, wc_err *err)
{
	wc_sst	   *s = calloc(1, sizeof(*s));
	int			rc;

	*out = NULL;
	if (s == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory opening sorted file \"%s\"", name);
	s->refs = 1;
	s->uid = __atomic_add_fetch(&last_uid, 1, __ATOMIC_RELAXED);
	if ((rc = wc_file_open(dir, name, WC_OPEN_READ, &s->file, err)) != WC_OK)
	{
		free(s);
		return rc;
	}
	if ((rc = sst_load(s, err)) != WC_OK)
	{
		sst_free(s);
		return rc;
	}
	*out = s;
	return WC_OK;
}

void
wc_sst_ref(wc_sst *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void
wc_sst_unref(wc_sst *s)
{
	if (s != NULL && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		sst_free(s);
}

const wc_sst_props *
wc_sst_get_props(const wc_sst *s)
{
	return &s->props;
}

uint64_t
wc_sst_uid(const wc_sst *s)
{
	return s->uid;
}

const char *
wc_sst_name(const wc_sst *s)
{
	return s->file.name;
}

int
wc_sst_block_last_row(wc_sst *s, uint32_t i, const uint8_t **row, size_t *row_len, wc_err *err)
{
	idx_entry	e;
	int			rc;

	if (i >= s->nblocks)
		return wc_err_set(err, WC_INVALID, "block %u of %s does not exist (it has %u)",
						  i, s->file.name, s->nblocks);
	if ((rc = index_get(s, i, &e, err)) != WC_OK)
		return rc;
	*row = e.key.row;
	*row_len = e.key.row_len;
	return WC_OK;
}

uint32_t
wc_sst_nblocks(const wc_sst *s)
{
	return s->nblocks;
}

bool
wc_sst_may_contain_row(const wc_sst *s, const uint8_t *row, size_t row_len)
{
	const wc_sst_props *p = &s->props;

	if (p->cells == 0 ||
		wc_row_cmp(row, row_len, p->row_min, p->row_min_len) < 0 ||
		wc_row_cmp(row, row_len, p->row_max, p->row_max_len) > 0)
		return false;
	return wc_bloom_may_contain(s->filter, s->filter_len, wc_bloom_hash(row, row_len));
}

void
wc_sst_props_clear(wc_sst_props *p)
{
	free(p->row_min);
	free(p->row_max);
	p->row_min = NULL;
	p->row_max = NULL;
	p->row_min_len = 0;
	p->row_max_len = 0;
}

int
wc_sst_props_copy(wc_sst_props *dst, const wc_sst_props *src, wc_err *err)
{
	*dst = *src;
	dst->row_min = NULL;
	dst->row_max = NULL;
	if (src->row_min != NULL)
	{
		if ((dst->row_min = malloc(src->row_min_len ? src->row_min_len : 1)) == NULL)
			goto nomem;
		memcpy(dst->row_min, src->row_min, src->row_min_len);
	}
	if (src->row_max != NULL)
	{
		if ((dst->row_max = malloc(src->row_max_len ? src->row_max_len : 1)) == NULL)
			goto nomem;
		memcpy(dst->row_max, src->row_max, src->row_max_len);
	}
	return WC_OK;

nomem:
	wc_sst_props_clear(dst);
	return wc_err_set(err, WC_NOMEM, "out of memory copying the properties of a sorted file");
}

/* ---------------------------------------------------------------- iterator */

/* A block read and checked, and the buffers its bytes may live in. */
typedef struct loaded_block
{
	uint32_t	blk;			/* its number; UINT32_MAX if none */
	int32_t		slot;			/* its block cache slot, pinned; -1 if none */
	uint64_t	off;			/* its offset in the file (for messages) */
	read_bufs	rb;
	const uint8_t *data;		/* its uncompressed bytes */
	size_t		len;
} loaded_block;

typedef struct sst_iter
{
	wc_iter		base;
	wc_sst	   *sst;
	wc_scan_stats *stats;
	/*
	 * The current block, and the one before it was loaded: a reversed scan
	 * goes back and forth across a block boundary (it reads a row to its end,
	 * which is in the next block, then steps back), and would otherwise read
	 * and decompress each block three times.
	 */
	loaded_block cur;
	loaded_block prev;
	wc_block_iter bi;
	int			cache;			/* WC_SST_CACHE_* */
	uint32_t	run;			/* blocks loaded each right after the one before */
	uint8_t    *rowbuf;			/* a row sought from its start (seek_row_before) */
	size_t		rowcap;
	wc_err		err;			/* sticky: after an error the iterator stays invalid */
} sst_iter;

/* Records the block iterator's problem with the file's name and the block's offset. */
static void
block_error(sst_iter *it)
{
	if (it->bi.status == WC_NOMEM)
		wc_err_set(&it->err, WC_NOMEM, "out of memory reading block of %s at offset %llu",
				   it->sst->file.name, (unsigned long long) it->cur.off);
	else
		wc_err_set(&it->err, WC_CORRUPT, "corrupt block in %s at offset %llu: %s at byte %u of the block",
				   it->sst->file.name, (unsigned long long) it->cur.off,
				   it->bi.reason ? it->bi.reason : "malformed", it->bi.bad_off);
}

/* Unpins lb's block cache slot, if it has one. */
static void
release_slot(loaded_block *lb)
{
	if (lb->slot >= 0)
	{
		wc_cache_unpin(lb->slot);
		lb->slot = -1;
	}
}

/*
 * Reads data block i (at e) into lb: from the block cache when the iterator uses
 * it and the block is there; decompressed into a slot taken for it when the
 * iterator fills the cache; otherwise as without a cache.  A hit touches nothing
 * of the file (unless its identity needs the block's checksum: cache.h).
 */
static int
read_data_block(sst_iter *it, uint32_t i, const idx_entry *e, loaded_block *lb)
{
	wc_sst	   *s = it->sst;

	release_slot(lb);
	/* a long run of blocks, each after the one before: read as a full scan reads */
	if (it->cache != WC_SST_CACHE_OFF && it->run < WC_CACHE_FILL_RUN &&
		s->cache_file1 != 0 && wc_cache_enabled() && e->size <= s->file_size &&
		e->off + e->size + WC_SST_TRAILER_SIZE <= s->map_len && wc_env_map_allowed())
	{
		const uint8_t *t = s->map + e->off + e->size;
		wc_cache_key k;
		const uint8_t *p;
		uint8_t    *dst;
		int32_t		slot;
		uint32_t	len;
		int			rc;

		k.file1 = s->cache_file1;
		k.file2 = s->cache_file2;
		k.off = e->off;
		k.crc = s->cache_verify ? (uint64_t) wc_get_fixed32(t + 5) | ((uint64_t) 1 << 32) : 0;
		/*
		 * A plain block is read where it lies: no lookup where they are usual.
		 * Its bytes are asked for first, all at once: the trailer, the restart
		 * array before it and the entries a seek reads are otherwise fetched one
		 * after the other, each a miss (in a file larger than the caches, a
		 * TLB miss too).
		 */
		if (s->plain_seen)
		{
			for (uint64_t o = 0; o < e->size; o += 64)
				__builtin_prefetch(s->map + e->off + o);
			__builtin_prefetch(t + WC_SST_TRAILER_SIZE - 1);
			if (t[0] == WC_COMPRESS_NONE)
				return read_block(s, e->off, e->size, i, &lb->rb, "block", &lb->data,
								  &lb->len, &it->err);
		}
		if ((p = wc_cache_get(&k, &slot, &len)) != NULL)
		{
			/*
			 * Another process (or long ago this one) wrote the block: it is in
			 * none of this CPU's caches.  The seek that follows reads the
			 * restart array at its end, then entries from a restart point on,
			 * each load waiting for the one before; ask for all of it at once.
			 */
			for (uint32_t o = 0; o < len; o += 64)
				__builtin_prefetch(p + o);
			__builtin_prefetch(p + len - 1);
			lb->slot = slot;
			lb->data = p;
			lb->len = len;
			if (it->stats)
				it->stats->blocks_cached++;
			return WC_OK;
		}
		s->plain_seen = t[0] == WC_COMPRESS_NONE;
		if (it->cache == WC_SST_CACHE_FILL && t[0] != WC_COMPRESS_NONE &&
			wc_get_fixed32(t + 1) <= WC_CACHE_SLOT_BYTES &&
			(dst = wc_cache_take(&slot)) != NULL)
		{
			rc = read_block_into(s, e->off, e->size, i, &lb->rb, dst, WC_CACHE_SLOT_BYTES,
								 "block", &lb->data, &lb->len, &it->err);
			if (rc != WC_OK || lb->data != dst)
			{
				wc_cache_abandon(slot);
				if (rc == WC_OK)	/* read in place after all */
					return WC_OK;
				return rc;
			}
			lb->data = wc_cache_put(&k, (uint32_t) lb->len, &slot);
			lb->slot = slot;
			return WC_OK;
		}
	}
	return read_block(s, e->off, e->size, i, &lb->rb, "block", &lb->data, &lb->len, &it->err);
}

/* Makes block i current (reading it unless it already is); false on error. */
static bool
load_block(sst_iter *it, uint32_t i)
{
	if (it->err.code != WC_OK)
		return false;
	if (it->cur.blk != i)
	{
		loaded_block t = it->prev;

		it->run = it->cur.blk != UINT32_MAX && i == it->cur.blk + 1 ? it->run + 1 : 0;
		idx_entry	e;

		/* the current block becomes the previous one, whose buffers are reused */
		it->prev = it->cur;
		it->cur = t;
		if (it->cur.blk != i)
		{
			it->cur.blk = UINT32_MAX;
			if (index_get(it->sst, i, &e, &it->err) != WC_OK ||
				read_data_block(it, i, &e, &it->cur) != WC_OK)
			{
				it->bi.valid = false;
				return false;
			}
			if (it->stats)
				it->stats->blocks_read++;
			it->cur.blk = i;
			it->cur.off = e.off;
		}
	}
	if (wc_block_iter_set(&it->bi, it->cur.data, it->cur.len) != WC_OK)
	{
		block_error(it);
		return false;
	}
	return true;
}

/*
 * A scan reading on from block to block will read the next one: ask the CPU for
 * its first bytes and its trailer now, while this block's cells are iterated.  In
 * a full scan of a file larger than the caches, the first touch of each block (its
 * trailer, in a page not yet in the TLB: a walk of nested page tables on a virtual
 * machine) was a tenth of the time (perf).  Blocks are contiguous, so the next one
 * starts right after this one's trailer; the next index entry gives its size.
 */
static void
prefetch_next(sst_iter *it)
{
	const wc_sst *s = it->sst;
	uint32_t	i = it->cur.blk + 1;
	idx_entry	e;
	wc_err		ignored;

	if (s->map == NULL || i >= s->nblocks)
		return;
	wc_err_clear(&ignored);
	if (index_get(s, i, &e, &ignored) != WC_OK || e.off + e.size + WC_SST_TRAILER_SIZE > s->map_len)
		return;
	for (uint64_t o = e.off; o < e.off + e.size; o += 256)
		__builtin_prefetch(s->map + o);
	__builtin_prefetch(s->map + e.off + e.size);
}

/* After the block iterator ran off its block: on to the next one, or the end. */
static void
skip_empty(sst_iter *it)
{
	while (!it->bi.valid)
	{
		if (it->bi.status != WC_OK)
		{
			block_error(it);
			return;
		}
		if (it->cur.blk == UINT32_MAX || it->cur.blk + 1 >= it->sst->nblocks)
			return;
		if (!load_block(it, it->cur.blk + 1))
			return;
		/* not for a point read whose row ran into this block: a scan */
		if (it->run >= 2)
			prefetch_next(it);
		wc_block_iter_seek_first(&it->bi);
	}
}

static void
sst_iter_seek_first(wc_iter *base)
{
	sst_iter   *it = (sst_iter *) base;

	it->bi.valid = false;
	if (it->sst->nblocks == 0 || !load_block(it, 0))
		return;
	wc_block_iter_seek_first(&it->bi);
	skip_empty(it);
}

/* Is block i's last key below target (its prefix mp, target's tp)?  -1 on error. */
static inline int
block_below(sst_iter *it, uint32_t i, uint64_t mp, uint64_t tp, const wc_cell *target)
{
	idx_entry	e;

	if (mp != tp)
		return mp < tp;
	if (index_get(it->sst, i, &e, &it->err) != WC_OK)
		return -1;
	return wc_cell_cmp(&e.key, target) < 0;
}

/* The first block whose last key is >= target (nblocks if none); UINT32_MAX on error. */
static uint32_t
block_for(sst_iter *it, const wc_cell *target)
{
	const wc_sst *s = it->sst;
	uint32_t	lo = 0,
				hi = s->nblocks;

	/* pfx is set when there are blocks */
	if (s->nblocks > 0)
	{
		uint32_t	skip = s->pfx_skip;
		size_t		n = target->row_len < skip ? target->row_len : skip;
		int			c = n > 0 ? memcmp(target->row, s->pfx_row, n) : 0;

		if (c < 0 || (c == 0 && target->row_len < skip))
			hi = 0;				/* before every rowkey of the file */
		else if (c > 0)
			lo = hi;			/* after every rowkey of the file */
		else
		{
			uint64_t	tp = target->row_len > skip ?
				wc_prefix64(target->row + skip, target->row_len - skip) : 0;
			int			below;

			if (s->sample != NULL)
			{
				/* the first run of 64 blocks whose last one is not below target
				 * holds the answer (or none does: nblocks) */
				uint32_t	glo = 0,
							ghi = s->nsample;

				while (glo < ghi)
				{
					uint32_t	mid = glo + (ghi - glo) / 2;
					uint32_t	last = min_u32((mid << SAMPLE_SHIFT) + SAMPLE_EVERY - 1, s->nblocks - 1);

					if ((below = block_below(it, last, s->sample[mid], tp, target)) < 0)
						return UINT32_MAX;
					if (below)
						glo = mid + 1;
					else
						ghi = mid;
				}
				lo = min_u32(glo << SAMPLE_SHIFT, s->nblocks);
				hi = min_u32(lo + SAMPLE_EVERY, s->nblocks);
			}
			while (lo < hi)
			{
				uint32_t	mid = lo + (hi - lo) / 2;

				if ((below = block_below(it, mid, index_pfx(s, mid), tp, target)) < 0)
					return UINT32_MAX;
				if (below)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
	}
	return lo;
}

static void
sst_iter_seek(wc_iter *base, const wc_cell *target)
{
	sst_iter   *it = (sst_iter *) base;
	uint32_t	b;

	/*
	 * A seek a little way forward (past the versions of a column a scan has
	 * read, scan.c) steps within the current block: the index and the block's
	 * restart points would cost a dozen comparisons for what is most often the
	 * next entry.
	 */
	if (it->bi.valid && wc_cell_cmp(&it->bi.cell, target) < 0)
	{
		for (int i = 0; i < SEEK_BY_NEXT; i++)
		{
			wc_block_iter_next(&it->bi);
			if (!it->bi.valid)
				break;
			if (wc_cell_cmp(&it->bi.cell, target) >= 0)
				return;
		}
		if (!it->bi.valid && it->bi.status != WC_OK)
		{
			block_error(it);
			return;
		}
	}
	it->bi.valid = false;
	b = block_for(it, target);
	if (b >= it->sst->nblocks || !load_block(it, b))
		return;
	wc_block_iter_seek(&it->bi, target);
	skip_empty(it);
}

/*
 * The last entry below target is in the block where target would be, or
 * else it is the last entry of the block before (whose last key is below
 * target).  The block finds where that entry's row begins within it; a row
 * that may begin earlier (at a restart point, or in an earlier block) is
 * sought from its start through the index.
 */
static void
sst_iter_seek_row_before(wc_iter *base, const wc_cell *target)
{
	sst_iter   *it = (sst_iter *) base;
	uint32_t	b = it->sst->nblocks;
	bool		row_start = false;
	wc_cell		start;

	it->bi.valid = false;
	if (target != NULL && (b = block_for(it, target)) == UINT32_MAX)
		return;
	if (b < it->sst->nblocks)
	{
		if (!load_block(it, b))
			return;
		wc_block_iter_seek_row_before(&it->bi, target, &row_start);
		if (it->bi.status != WC_OK)
		{
			block_error(it);
			return;
		}
	}
	if (!it->bi.valid)
	{
		if (b == 0 || !load_block(it, b - 1))
			return;
		wc_block_iter_seek_row_before(&it->bi, NULL, &row_start);
		if (it->bi.status != WC_OK)
		{
			block_error(it);
			return;
		}
		if (!it->bi.valid)
			return;
	}
	if (row_start)
		return;
	if (!wc_buf_reserve(&it->rowbuf, &it->rowcap, it->bi.cell.row_len + 1))
	{
		wc_err_set(&it->err, WC_NOMEM, "out of memory reading %s", it->sst->file.name);
		it->bi.valid = false;
		return;
	}
	memcpy(it->rowbuf, it->bi.cell.row, it->bi.cell.row_len);
	wc_cell_row_start(&start, it->rowbuf, it->bi.cell.row_len);
	sst_iter_seek(base, &start);
}

static void
sst_iter_next(wc_iter *base)
{
	sst_iter   *it = (sst_iter *) base;

	if (!it->bi.valid)
		return;
	wc_block_iter_next(&it->bi);
	if (!it->bi.valid)
		skip_empty(it);
}

static bool
sst_iter_valid(const wc_iter *base)
{
	const sst_iter *it = (const sst_iter *) base;

	return it->bi.valid && it->err.code == WC_OK;
}

static const wc_cell *
sst_iter_cell(const wc_iter *base)
{
	return &((const sst_iter *) base)->bi.cell;
}

static int
sst_iter_status(const wc_iter *base, wc_err *err)
{
	const sst_iter *it = (const sst_iter *) base;

	if (it->err.code != WC_OK && err != NULL && err->code == WC_OK)
		*err = it->err;
	return it->err.code;
}

static void
iter_release(sst_iter *it)
{
	wc_block_iter_free(&it->bi);
	free(it->rowbuf);
	release_slot(&it->cur);
	release_slot(&it->prev);
	read_bufs_free(&it->cur.rb);
	read_bufs_free(&it->prev.rb);
}

static void
sst_iter_close(wc_iter *base)
{
	sst_iter   *it = (sst_iter *) base;

	iter_release(it);
	wc_sst_unref(it->sst);
	free(it);
}

static const wc_iter_ops sst_iter_ops = {
	sst_iter_seek_first,
	sst_iter_seek,
	sst_iter_next,
	sst_iter_valid,
	sst_iter_cell,
	sst_iter_status,
	sst_iter_close,
	sst_iter_seek_row_before
};

static void
iter_setup(sst_iter *it, wc_sst *s, wc_scan_stats *stats)
{
	memset(it, 0, sizeof(*it));
	it->base.ops = &sst_iter_ops;
	it->sst = s;
	it->stats = stats;
	it->cur.blk = UINT32_MAX;
	it->prev.blk = UINT32_MAX;
	it->cur.slot = -1;
	it->prev.slot = -1;
	wc_block_iter_init(&it->bi);
	wc_err_clear(&it->err);
}

wc_iter *
wc_sst_iter_new(wc_sst *s, wc_scan_stats *stats)
{
	return wc_sst_iter_new_cached(s, stats, WC_SST_CACHE_OFF);
}

wc_iter *
wc_sst_iter_new_cached(wc_sst *s, wc_scan_stats *stats, int cache)
{
	sst_iter   *it = malloc(sizeof(*it));

	if (it == NULL)
		return NULL;
	iter_setup(it, s, stats);
	it->cache = cache;
	wc_sst_ref(s);
	return &it->base;
}

/* ---------------------------------------------------------------- verify */

static int
verify_fail(wc_sst *s, const char *why, wc_err *err)
{
	return wc_err_set(err, WC_CORRUPT, "sorted file %s fails verification: %s",
					  s->file.name, why);
}

/* What opening a version 2 file leaves unchecked in its index: every entry (walk_index). */
static int
verify_index(wc_sst *s, wc_err *err)
{
	uint64_t	count;
	const uint8_t *p;

	if (s->index != NULL)
		return WC_OK;			/* version 1: all checked at open */
	/* the count was read at open */
	p = wc_get_varint64(s->index_buf, s->index_buf + s->entries_end, &count);
	return walk_index(s, p, s->index_buf + s->entries_end, s->nblocks, NULL, err);
}

int
wc_sst_verify(wc_sst *s, wc_err *err)
{
	sst_iter	it;
	wc_sst_props got = {0};
	uint8_t    *prev_row = NULL,
			   *prev_qual = NULL;
	uint32_t	prev_row_cap = 0,
				prev_qual_cap = 0;
	wc_cell		prev = {0};
	int			rc = WC_OK;

	if ((rc = verify_index(s, err)) != WC_OK)
		return rc;
	iter_setup(&it, s, NULL);
	got.ts_min = INT64_MAX;
	got.ts_max = INT64_MIN;
	got.seq_min = UINT64_MAX;
	for (uint32_t i = 0; i < s->nblocks && rc == WC_OK; i++)
	{
		if (!load_block(&it, i))
			break;
		for (wc_block_iter_seek_first(&it.bi); it.bi.valid; wc_block_iter_next(&it.bi))
		{
			const wc_cell *c = &it.bi.cell;
			bool		new_row = got.cells == 0 ||
				wc_row_cmp(prev.row, prev.row_len, c->row, c->row_len) != 0;

			if (got.cells > 0 && wc_cell_cmp(&prev, c) >= 0)
			{
				rc = verify_fail(s, "entries out of order", err);
				break;
			}
			if (got.cells == 0 && wc_row_cmp(c->row, c->row_len, s->props.row_min,
											 s->props.row_min_len) != 0)
			{
				rc = verify_fail(s, "first rowkey differs from the recorded smallest", err);
				break;
			}
			got.cells++;
			got.distinct_rows += new_row;
			got.raw_bytes += (uint64_t) c->row_len + c->qual_len + c->val_len + 16;
			got.tombstones += c->type != WC_TYPE_PUT;
			if (c->type == WC_TYPE_DEL_FAMILY && c->val_len != 0 &&
				(c->val_len != WC_FAMILY_BOUND_LEN || s->version < WC_SST_VERSION_BOUNDED))
			{
				rc = verify_fail(s, "DEL_FAMILY entry with a value that is not a bound of a version 4 file", err);
				break;
			}
			if (c->type == WC_TYPE_DEL_COLUMN && c->val_len != 0 &&
				(c->val_len != WC_COLUMN_BOUND_LEN || s->version < WC_SST_VERSION_BOUNDED_COLUMN))
			{
				rc = verify_fail(s, "DEL_COLUMN entry with a value that is not a bound of a version 5 file", err);
				break;
			}
			if (c->type == WC_TYPE_DEL_COLUMN || c->type == WC_TYPE_DEL_FAMILY)
				got.range_tombstones++;
			else
			{
				got.ts_min = c->ts < got.ts_min ? c->ts : got.ts_min;
				got.ts_max = c->ts > got.ts_max ? c->ts : got.ts_max;
			}
			got.seq_min = c->seq < got.seq_min ? c->seq : got.seq_min;
			got.seq_max = c->seq > got.seq_max ? c->seq : got.seq_max;

			/* keep a copy: the next entry may overwrite the iterator's buffers */
			if (c->row_len > prev_row_cap || c->qual_len > prev_qual_cap || prev_row == NULL ||
				prev_qual == NULL)
			{
				free(prev_row);
				free(prev_qual);
				prev_row_cap = c->row_len > prev_row_cap ? c->row_len : prev_row_cap;
				prev_qual_cap = c->qual_len > prev_qual_cap ? c->qual_len : prev_qual_cap;
				prev_row = malloc(prev_row_cap + 1);
				prev_qual = malloc(prev_qual_cap + 1);
				if (prev_row == NULL || prev_qual == NULL)
				{
					rc = wc_err_set(err, WC_NOMEM, "out of memory verifying %s", s->file.name);
					break;
				}
			}
			memcpy(prev_row, c->row, c->row_len);
			memcpy(prev_qual, c->qual, c->qual_len);
			prev = *c;
			prev.row = prev_row;
			prev.qual = prev_qual;
		}
		if (rc != WC_OK)
			break;
		if (it.bi.status != WC_OK)
		{
			block_error(&it);
			break;
		}
		{
			idx_entry	e;

			if (index_get(s, i, &e, err) != WC_OK)
				rc = WC_CORRUPT;
			else if (got.cells == 0 || wc_cell_cmp(&prev, &e.key) != 0)
				rc = verify_fail(s, "a block's last key differs from its index entry", err);
		}
	}
	if (rc == WC_OK && it.err.code != WC_OK)
		rc = sst_iter_status(&it.base, err);
	if (rc == WC_OK)
	{
		const wc_sst_props *p = &s->props;

		if (got.cells == 0)
			got.seq_min = 0;
		if (got.cells != p->cells || got.tombstones != p->tombstones ||
			got.range_tombstones != p->range_tombstones ||
			got.distinct_rows != p->distinct_rows || got.raw_bytes != p->raw_bytes ||
			got.ts_min != p->ts_min || got.ts_max != p->ts_max ||
			got.seq_min != p->seq_min || got.seq_max != p->seq_max)
			rc = verify_fail(s, "recorded properties differ from the entries", err);
	}
	free(prev_row);
	free(prev_qual);
	iter_release(&it);
	return rc;
}
