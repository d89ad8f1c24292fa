/*
 * sst.h -- immutable sorted files ("NNNNNN.sst"), one family each.
 *
 * A file holds entries in wc_cell_cmp order, in lz4- or zstd-compressed (or plain) blocks
 * with a CRC32C each, a block index, a bloom filter over rowkeys, and properties
 * (counts, rowkey/ts/seq ranges) that let a read skip the file.  Layout: FORMAT.md.
 *
 * A wc_sst is opened once per process and shared by the scans of that process
 * (reference counted).  The file is mapped read-only (sorted files never change
 * once written); every block is checked against its CRC32C before use, so a
 * damaged file yields WC_CORRUPT with file name and offset.  Only a file
 * truncated by something else while mapped can fault (SIGBUS); WIDECOL_NO_MMAP=1
 * makes every read a pread (DESIGN.md).
 */
#ifndef WC_SST_H
#define WC_SST_H

#include "iter.h"

/* Properties of a sorted file: recorded in its footer and in the manifest. */
typedef struct wc_sst_props
{
	char		family[WC_MAX_FAMILY + 1];
	int			level;			/* 0 = written by a flush, 1 = by a compaction */
	uint64_t	cells;			/* entries of every type */
	uint64_t	tombstones;		/* entries that are not PUT */
	uint64_t	range_tombstones;	/* DEL_COLUMN and DEL_FAMILY entries */
	uint64_t	distinct_rows;
	uint64_t	raw_bytes;		/* sum of row, qualifier and value lengths + 16 per entry */
	uint64_t	file_bytes;		/* size of the file */
	uint64_t	blocks;
	int64_t		ts_min;			/* over PUT and DEL_VERSION; INT64_MAX when none */
	int64_t		ts_max;			/* INT64_MIN when none */
	uint64_t	seq_min;
	uint64_t	seq_max;
	uint8_t    *row_min;		/* malloc'd; NULL when the file is empty */
	uint32_t	row_min_len;
	uint8_t    *row_max;
	uint32_t	row_max_len;
} wc_sst_props;

/* Frees the row bounds of p (not p itself). */
void		wc_sst_props_clear(wc_sst_props *p);
/* Deep copy; WC_NOMEM on failure. */
int			wc_sst_props_copy(wc_sst_props *dst, const wc_sst_props *src, wc_err *err);

typedef struct wc_sst_build_opts
{
	const char *family;
	int			level;
	int			compression;	/* wc_compression */
	size_t		block_bytes;	/* 0 = 16 KiB */
	int			bloom_bits_per_key; /* 0 = 10 */
	int			version;		/* format version written: 0 = the oldest that can
								 * hold the compression and the entries
								 * (WC_SST_VERSION for zstd, else
								 * WC_SST_VERSION_NO_ZSTD, which older builds
								 * read; WC_SST_VERSION_BOUNDED once a bounded
								 * DEL_FAMILY is added,
								 * WC_SST_VERSION_BOUNDED_COLUMN once a bounded
								 * DEL_COLUMN is); 1 (an index without search
								 * arrays) for tests of old files */
	int			compression_level;	/* zstd's; 0 = WC_ZSTD_LEVEL_DEFAULT */
	bool		helper;			/* blocks compressed in a helper thread
								 * (sst_builder.c): for a bulk write, whose
								 * committer waits for it */
} wc_sst_build_opts;

typedef struct wc_sst_builder wc_sst_builder;

/* Creates dir/name (which must not exist).  NULL with err filled on failure. */
wc_sst_builder *wc_sst_builder_new(const char *dir, const char *name,
								   const wc_sst_build_opts *opts, wc_err *err);

/*
 * Adds c, which must sort after everything added before (WC_INVALID otherwise).
 * After an error the builder ignores further adds and finish reports the first.
 */
int			wc_sst_builder_add(wc_sst_builder *b, const wc_cell *c);

/* Number of entries added so far, and the file size so far. */
uint64_t	wc_sst_builder_cells(const wc_sst_builder *b);
uint64_t	wc_sst_builder_file_bytes(const wc_sst_builder *b);

/*
 * Writes the index, filter, properties and footer, fsyncs and closes the file,
 * fills *props (caller clears it) and frees the builder.  On error the file is
 * removed, the builder freed, and the first error returned.
 */
int			wc_sst_builder_finish(wc_sst_builder *b, wc_sst_props *props, wc_err *err);

/* Removes the partial file and frees the builder. */
void		wc_sst_builder_abandon(wc_sst_builder *b);

typedef struct wc_sst wc_sst;

/*
 * Format constants (FORMAT.md, "Sorted files"); changing any of them changes the format.
 * Every block is followed by a trailer: type u8 (wc_compression), raw_len
 * fixed32, crc32c fixed32 (over the stored bytes and the first 5 trailer bytes).
 */
#define WC_SST_MAGIC			UINT64_C(0x57c0ff5e5a5d7e11)
#define WC_SST_VERSION			3	/* version 2 + zstd blocks */
#define WC_SST_VERSION_BOUNDED	4	/* version 3 + bounded DEL_FAMILY entries (cell.h) */
#define WC_SST_VERSION_BOUNDED_COLUMN	5	/* version 4 + bounded DEL_COLUMN entries */
#define WC_SST_VERSION_NEWEST	5	/* the newest read */
#define WC_SST_VERSION_NO_ZSTD	2	/* written when no block can be zstd */
#define WC_SST_VERSION_OLDEST	1
#define WC_SST_FOOTER_SIZE		64
#define WC_SST_TRAILER_SIZE		9

/* Opens the file and checks its footer, filter, properties and index (FORMAT.md, "What a
 * reader checks"); one reference. */
int			wc_sst_open(const char *dir, const char *name, wc_sst **out, wc_err *err);
void		wc_sst_ref(wc_sst *s);
void		wc_sst_unref(wc_sst *s);

const wc_sst_props *wc_sst_get_props(const wc_sst *s);
const char *wc_sst_name(const wc_sst *s);

/* A number no other wc_sst opened in this process has had or will have: what
 * was read from this one is known by it (the row cache, rowcache.h). */
uint64_t	wc_sst_uid(const wc_sst *s);

/* False only if no entry of row can be in the file (bloom filter and row range). */
bool		wc_sst_may_contain_row(const wc_sst *s, const uint8_t *row, size_t row_len);

/* Number of data blocks. */
uint32_t	wc_sst_nblocks(const wc_sst *s);

/*
 * The rowkey of the last entry of data block i (i < wc_sst_nblocks), from the
 * index: no data block is read.  The bytes live as long as the wc_sst.  For
 * sampling (wc_db_block_bounds).
 */
int			wc_sst_block_last_row(wc_sst *s, uint32_t i, const uint8_t **row,
								  size_t *row_len, wc_err *err);

/*
 * An iterator over the file (holds a reference).  If stats is not NULL, each data
 * block read from disk adds one to stats->blocks_read.  Errors (checksum,
 * decompression, truncation) end the iteration with status WC_CORRUPT or WC_IO
 * and a message naming the file and offset.
 */
wc_iter    *wc_sst_iter_new(wc_sst *s, wc_scan_stats *stats);

/*
 * The same, using the block cache (cache.h) as cache says: LOOKUP reads blocks
 * found there (stats->blocks_cached counts them), FILL also leaves there the
 * blocks it decompresses; either only for the first WC_CACHE_FILL_RUN blocks of
 * a run of consecutive ones.  wc_sst_iter_new is OFF: a compaction reads every
 * block once and should not push the blocks that scans read out of the cache.
 */
#define WC_SST_CACHE_OFF	0
#define WC_SST_CACHE_LOOKUP	1
#define WC_SST_CACHE_FILL	2
wc_iter    *wc_sst_iter_new_cached(wc_sst *s, wc_scan_stats *stats, int cache);

/* Reads every block and checks it (for verification tools and tests). */
int			wc_sst_verify(wc_sst *s, wc_err *err);

#endif
