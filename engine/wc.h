/*
 * wc.h -- public API of the widecol storage engine.
 *
 * A store holds HBase-style cell versions (rowkey, family, qualifier, ts) -> value
 * in one directory.  Many processes may open the same store at once; they
 * coordinate through the files themselves (see DESIGN.md).  The library never
 * aborts, never longjmps and never calls back into code that may longjmp.
 *
 * Conventions:
 *  - Functions return WC_OK (0) or a negative wc_code, and fill the caller's
 *    wc_err with a complete message (file names relative to the store).
 *  - The first error recorded in a wc_err wins: a function leaves a wc_err that
 *    already holds an error as it is (so a builder reports the original cause).
 *    Clear it with wc_err_clear before the first use and before reusing it after
 *    an error; otherwise a later failure is reported with the old message.
 *  - Byte strings are (pointer, length) and may contain any byte.
 *  - Pointers returned inside a wc_cell_view stay valid until the next call on
 *    the same scan.
 *
 * Threads: the library starts no threads of its own and needs no setup (what it
 * sets up once per process, such as the CRC tables, is set up safely at the first
 * use), so any number of threads may call it at once on different objects:
 *  - A wc_db handle and the scans opened on it are one unit with no locks inside:
 *    calls on them must not overlap.  One thread at a time; another thread may
 *    take the unit over when the hand-over synchronises (a mutex, thread start
 *    or join).  For work in parallel open one handle per thread, even on the
 *    same store: handles coordinate through the store's locks and files as
 *    handles of different processes do (the engine benchmark runs
 *    wc_db_maintain in a thread with a handle of its own while another thread
 *    writes through its handle).
 *  - A wc_batch is used by one thread at a time.  While wc_db_write writes it,
 *    and for as long as a scan overlays it (wc_scan_opts.pending), it belongs to
 *    that handle's unit.  Different batches may be filled in different threads
 *    at once.
 *  - A wc_err is the caller's: one per thread (or per call in flight).
 *  - The resolve and interrupt callbacks run in the thread that called into
 *    the handle.
 */
#ifndef WC_H
#define WC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * True if a[0..alen-1] and b[0..blen-1] are the same bytes (rowkeys, families,
 * qualifiers).  Those of up to 16 bytes (most: a family is often one letter)
 * are compared bytewise or with two overlapping loads each, not a call to
 * memcmp: a scan asks this once or twice a cell, and so does a caller
 * assembling rows from the cells a scan returns.
 */
static inline bool
wc_bytes_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return false;
	if (alen >= 8 && alen <= 16)
	{
		uint64_t	a1,
					a2,
					b1,
					b2;

		memcpy(&a1, a, 8);
		memcpy(&b1, b, 8);
		memcpy(&a2, a + alen - 8, 8);
		memcpy(&b2, b + alen - 8, 8);
		return ((a1 ^ b1) | (a2 ^ b2)) == 0;
	}
	if (alen >= 4 && alen < 8)
	{
		uint32_t	a1,
					a2,
					b1,
					b2;

		memcpy(&a1, a, 4);
		memcpy(&b1, b, 4);
		memcpy(&a2, a + alen - 4, 4);
		memcpy(&b2, b + alen - 4, 4);
		return ((a1 ^ b1) | (a2 ^ b2)) == 0;
	}
	if (alen < 4)
		return alen == 0 ||
			(a[0] == b[0] && (alen < 2 || a[1] == b[1]) && (alen < 3 || a[2] == b[2]));
	return memcmp(a, b, alen) == 0;
}

typedef enum wc_code
{
	WC_OK = 0,
	WC_NOT_FOUND = -1,			/* no such store, file or key */
	WC_CORRUPT = -2,			/* a checksum, magic or structure is wrong */
	WC_IO = -3,					/* a system call failed; wc_err.sys_errno says why */
	WC_NOSPACE = -4,			/* ENOSPC / EDQUOT */
	WC_INVALID = -5,			/* a bad argument from the caller */
	WC_BUSY = -6,				/* another process holds what we need; try later */
	WC_ABORTED = -7,			/* the interrupt callback asked to stop */
	WC_NOMEM = -8,
	WC_FAILED = -9,				/* the handle refused work after an earlier fsync failure */
	WC_CALLBACK = -10,			/* a caller callback reported an error */
	WC_TOO_OLD = -11,			/* a scan's snapshot needs versions no longer kept */
	WC_HELD = -12				/* a prepared transaction's record holds it back until
								 * someone commits or rolls that transaction back */
} wc_code;

typedef struct wc_err
{
	int			code;			/* first error recorded; WC_OK if none */
	int			sys_errno;		/* errno of the failing call, or 0 */
	char		msg[768];
} wc_err;

/* Clears err (WC_OK, no message): before its first use and before reusing it. */
void		wc_err_clear(wc_err *err);

/* Name of a code ("corrupt", "I/O error" ...). */
const char *wc_code_name(int code);

/* Limits (checked by the engine, reported as WC_INVALID). */
#define WC_MAX_ROWKEY		65536	/* bytes; HBase's limit */
#define WC_MAX_FAMILY		255
#define WC_MAX_QUALIFIER	(1u << 20)
#define WC_MAX_VALUE		(256u << 20)
#define WC_MAX_FAMILIES		64

/* The codes are part of the format: a block's trailer holds them (FORMAT.md). */
typedef enum wc_compression
{
	WC_COMPRESS_NONE = 0,
	WC_COMPRESS_LZ4 = 1,
	WC_COMPRESS_ZSTD = 2		/* in sorted files of format version 3 only */
} wc_compression;

/*
 * zstd levels a family may ask for.  Levels above 19 need a window of more
 * than 8 MiB at compression, and buy nothing on blocks of a few KiB; 3 is
 * zstd's own default and compresses as fast as lz4's high levels.
 */
#define WC_ZSTD_LEVEL_MIN		1
#define WC_ZSTD_LEVEL_MAX		19
#define WC_ZSTD_LEVEL_DEFAULT	3

/* Per-family settings.  Retention is applied at read time, and by compaction. */
typedef struct wc_family_opts
{
	const char *name;
	uint32_t	max_versions;	/* newest N timestamps of a cell are kept; 0 = all */
	int64_t		ttl_ms;			/* versions with ts < now - ttl are gone; 0 = none */
	int			compression;	/* wc_compression */
	int			compression_level;	/* WC_COMPRESS_ZSTD: WC_ZSTD_LEVEL_MIN to
									 * _MAX; 0 = WC_ZSTD_LEVEL_DEFAULT.  Ignored
									 * for the other compressions */
} wc_family_opts;

/* What a transaction tag resolves to (see wc_db_write). */
typedef enum wc_txn_state
{
	WC_TXN_COMMITTED = 0,
	WC_TXN_ABORTED = 1,
	WC_TXN_IN_PROGRESS = 2,
	WC_TXN_PREPARED = 3			/* in progress until someone ends it (a prepared
								 * two-phase transaction): read as in progress, and
								 * a flush does not wait for it (WC_HELD) */
} wc_txn_state;

/*
 * Resolves a nonzero transaction tag.  Returns WC_OK and sets *state, or an error
 * code (usually WC_CALLBACK) with err filled.  Must not longjmp.
 */
typedef int (*wc_resolve_fn) (void *arg, uint64_t tag, wc_txn_state *state, wc_err *err);

/*
 * Snapshots (DESIGN.md, "Snapshots").  The horizon: every tag below it that
 * committed is seen by every reader's snapshot, now and later (in PostgreSQL: the
 * oldest xmin of any snapshot, as a FullTransactionId).  Must not fail or longjmp.
 */
typedef uint64_t (*wc_horizon_fn) (void *arg);

/*
 * A scan's snapshot: does it see the writes of tag, a transaction that committed?
 * Also told of every tag still in progress (committed false; the answer is not
 * asked for: such writes are never seen), so that a caller may note the conflict
 * (PostgreSQL's serializable transactions).  Returns WC_OK, or an error code
 * (usually WC_CALLBACK) with err filled.  Must not longjmp.
 */
typedef int (*wc_tag_visible_fn) (void *arg, uint64_t tag, bool committed, bool *visible,
								  wc_err *err);

/* Returns nonzero when long work (flush, compaction, long scans) should stop. */
typedef int (*wc_interrupt_fn) (void *arg);

/*
 * A change a handle is about to make to its store's files (DESIGN.md,
 * "Replication").  Applied in the same order to a copy of the directory
 * (wc_replica_apply), the changes make the copy's files equal to the original's.
 * No change depends on what its target held before (bytes at an offset, a size,
 * a file gone, MANIFEST's whole content): a change may be applied twice, and a
 * copy taken while changes were being made converges once every change made
 * since the copy began has been applied.  LOCK (no data) and MANIFEST.tmp (the
 * MANIFEST change stands for it) are never reported.
 */
typedef enum wc_change_kind
{
	WC_CHANGE_WRITE = 1,		/* bytes into file at offset (created if missing) */
	WC_CHANGE_TRUNCATE = 2,		/* file made offset bytes long (created if missing) */
	WC_CHANGE_SYNC = 3,			/* file made durable */
	WC_CHANGE_REMOVE = 4,		/* file removed (no error if missing) */
	WC_CHANGE_MANIFEST = 5		/* MANIFEST replaced, durably, by the bytes */
} wc_change_kind;

typedef struct wc_change
{
	int			kind;			/* wc_change_kind */
	const char *file;			/* name in the directory: "000042.log", "MANIFEST" */
	uint64_t	offset;			/* WRITE: where; TRUNCATE: the new size */
	const struct wc_slice *parts;	/* WRITE, MANIFEST: the bytes, in pieces */
	int			nparts;
} wc_change;

/*
 * Called before the change is made, by the thread making it, while it holds the
 * store's lock that orders the change among the changes to the same file.  An
 * error (returned with err filled; usually WC_CALLBACK) fails the operation that
 * wanted the change, which is then not made.  Must not longjmp.
 */
typedef int (*wc_change_fn) (void *arg, const wc_change *change, wc_err *err);

/*
 * Called after a change whose report succeeded has been made, or has failed, by
 * the same thread, before it reports any other change.  So a caller can tell
 * the moments between changes (PostgreSQL holds a checkpoint's start back from
 * a change's WAL record until the change is made: src/sync.c).
 */
typedef void (*wc_change_done_fn) (void *arg);

typedef struct wc_open_opts
{
	const wc_family_opts *families;
	int			nfamilies;
	bool		create_if_missing;
	size_t		log_switch_bytes;	/* the active log is switched (and later flushed)
									 * at this size; 0 = default 8 MiB */
	size_t		block_bytes;	/* uncompressed data block target; 0 = 4 KiB */
	int			bloom_bits_per_key; /* 0 = default 10 */
	int			l0_compaction_trigger;	/* files of one family before a minor
										 * compaction; 0 = default 4 */
	size_t		ingest_bytes;	/* a tagged write of at least this many bytes is
								 * a bulk write (wc_db_write); 0 = default 4 MiB,
								 * SIZE_MAX = never */
	wc_resolve_fn resolve;		/* NULL: every tag counts as committed */
	void	   *resolve_arg;
	wc_interrupt_fn interrupt;	/* NULL: never interrupted */
	void	   *interrupt_arg;
	/*
	 * NULL: no reader ever has a snapshot older than the newest commit (every
	 * committed write is seen by every scan; scans' tag_visible is not asked).
	 * Otherwise committed writes whose tags are at or above the horizon are
	 * remembered, in this process and in MANIFEST once flushed, with their
	 * sequence numbers, until the horizon passes them, and compactions keep
	 * what they might hide from an older snapshot.
	 */
	wc_horizon_fn horizon;
	void	   *horizon_arg;
	/*
	 * At most this many committed records are remembered per log and in MANIFEST
	 * (0 = default 100000; 24 bytes each).  Beyond, the oldest are forgotten, and
	 * a scan whose snapshot might not have seen one of them fails with WC_TOO_OLD
	 * (PostgreSQL's "snapshot too old"), so that a transaction left open does not
	 * make lists grow without bound.
	 */
	uint32_t	recent_max;
	/*
	 * NULL: changes are not reported.  Reporting is by directory within a
	 * process: while this handle is open, changes that any handle of the
	 * process makes to the store's files are reported to it.
	 */
	wc_change_fn on_change;
	wc_change_done_fn on_change_done;	/* optional; gets on_change_arg */
	void	   *on_change_arg;
	/*
	 * Read only: the handle changes no file of the store, ever (writes, flush,
	 * compact and maintain are WC_INVALID; a torn log tail is read around, not
	 * cut).  For readers of a directory that something else changes, such as a
	 * standby's redo (wc_replica).  A store that does not exist yet reads as
	 * empty until it does; create_if_missing is ignored.
	 */
	bool		read_only;
	/*
	 * Point reads of a row in two or more sorted files keep the row's entries
	 * merged from them in a cache of this handle of at most this many bytes
	 * (rowcache.h); 0 = none.
	 */
	size_t		row_cache_bytes;
} wc_open_opts;

typedef struct wc_db wc_db;

/*
 * Opens (or creates, with create_if_missing) the store in directory dir, which is
 * created if needed.  Replays the live logs into this process's memtable.
 */
int			wc_db_open(const char *dir, const wc_open_opts *opts, wc_db **out, wc_err *err);

/* Closes the handle; open scans must be closed first. */
void		wc_db_close(wc_db *db);

/* Replaces the family settings (after ALTER).  Families not listed become invisible. */
int			wc_db_set_families(wc_db *db, const wc_family_opts *families, int n, wc_err *err);

/*
 * Catches up with what other processes did: a new manifest (flushes, compactions),
 * new log records, and transactions that resolved since the last call.  Cheap when
 * nothing changed (two small reads).  Scans see the state as of the last refresh.
 */
int			wc_db_refresh(wc_db *db, wc_err *err);

/* Removes every file of the store in dir and the directory itself. */
int			wc_db_destroy(const char *dir, wc_err *err);

/* ---------------------------------------------------------------- batches */

/*
 * A write batch: puts and deletes applied atomically, in order (a later entry for
 * the same key wins).  A batch is also an in-memory index that a scan can overlay,
 * so a writer sees its own pending writes.  Not tied to a db.
 */
typedef struct wc_batch wc_batch;

/* Sequence numbers lo..hi, both inclusive. */
typedef struct wc_seq_range
{
	uint64_t	lo;
	uint64_t	hi;
} wc_seq_range;

/*
 * The highest "pending" seq given out so far in this process (WC_SEQ_PENDING_BASE
 * - 1 before the first): every entry added to a batch gets the next one, so the
 * entries added from now on have higher seqs (wc_scan_opts.pending_excl).  A scan
 * ignores pending entries above the value at its start, so a statement never
 * reads what it writes itself (INSERT ... SELECT).
 */
uint64_t	wc_batch_pending_seq_now(void);

wc_batch   *wc_batch_new(void);
void		wc_batch_free(wc_batch *b);
void		wc_batch_clear(wc_batch *b);
uint64_t	wc_batch_count(const wc_batch *b);
size_t		wc_batch_bytes(const wc_batch *b);

/* All return WC_OK, WC_INVALID (limits) or WC_NOMEM; bytes are copied. */
int			wc_batch_put(wc_batch *b, const void *fam, size_t fam_len,
						 const void *row, size_t row_len,
						 const void *qual, size_t qual_len, int64_t ts,
						 const void *val, size_t val_len, wc_err *err);
int			wc_batch_delete_version(wc_batch *b, const void *fam, size_t fam_len,
									const void *row, size_t row_len,
									const void *qual, size_t qual_len, int64_t ts,
									wc_err *err);
int			wc_batch_delete_column(wc_batch *b, const void *fam, size_t fam_len,
								   const void *row, size_t row_len,
								   const void *qual, size_t qual_len, wc_err *err);
int			wc_batch_delete_family(wc_batch *b, const void *fam, size_t fam_len,
								   const void *row, size_t row_len, wc_err *err);
/* Deletes the row in every family named in families[0..n-1]. */
int			wc_batch_delete_row(wc_batch *b, const wc_family_opts *families, int n,
								const void *row, size_t row_len, wc_err *err);
/*
 * Bounded family deletes: hide the row's entries in the family (every family of
 * families[0..n-1]) whose seq is at most bound, a committed seq (below
 * WC_SEQ_PENDING_BASE; WC_INVALID otherwise), and spare later ones, also those
 * committed before this batch is written.  A transaction deleting what its
 * snapshot saw passes wc_scan_visible_bound of a scan under that snapshot.  The
 * batch's own entries and other pending ones are never hidden (their seqs come at
 * commit).  wc_batch_delete_row_upto with WC_SEQ_MAX is wc_batch_delete_row.
 * Stored files holding one are of format version 4 (FORMAT.md).
 */
int			wc_batch_delete_family_upto(wc_batch *b, const void *fam, size_t fam_len,
										const void *row, size_t row_len, uint64_t bound,
										wc_err *err);
int			wc_batch_delete_row_upto(wc_batch *b, const wc_family_opts *families, int n,
									 const void *row, size_t row_len, uint64_t bound,
									 wc_err *err);
/*
 * A bounded column delete: hides the column's (row, qualifier) entries in the
 * family whose seq is at most bound, as wc_batch_delete_family_upto does the
 * row's (same bound, same checks).  Stored files holding one are of format
 * version 5 (FORMAT.md).
 */
int			wc_batch_delete_column_upto(wc_batch *b, const void *fam, size_t fam_len,
										const void *row, size_t row_len,
										const void *qual, size_t qual_len, uint64_t bound,
										wc_err *err);
/* Everything written before this entry (in the store and earlier in the batch) is gone. */
int			wc_batch_truncate(wc_batch *b, wc_err *err);

/* Appends src's entries to dst, after dst's (for a subtransaction that commits
 * into its parent), with new pending seqs; all or nothing. */
int			wc_batch_append(wc_batch *dst, const wc_batch *src, wc_err *err);
/*
 * What a batch's entries so far say about it as a whole: where its last
 * truncate is, and which rows they touch.
 */
typedef struct wc_batch_summary
{
	uint64_t	truncate_seq;	/* pending seq of the last DEL_ALL, or 0 */
	uint64_t	truncate_index; /* its entry index */
	/* the rows of the entries lie in [min, max] (offsets into the entries),
	 * unless rows_all (a DEL_ALL) or !rows_any (no entry yet) */
	size_t		rmin_off;
	size_t		rmax_off;
	uint32_t	rmin_len;
	uint32_t	rmax_len;
	bool		rows_any;
	bool		rows_all;
} wc_batch_summary;

/*
 * A point in a batch's history to go back to: a subtransaction that writes into
 * its parent's batch takes one before its first entry, and its rollback rewinds
 * the batch to it.  Valid for b while b has not been rewound to an earlier mark
 * or cleared.
 */
typedef struct wc_batch_mark
{
	uint64_t	count;			/* entries before it */
	size_t		len;			/* their bytes */
	wc_batch_summary sum;		/* the batch's summary there */
} wc_batch_mark;

void		wc_batch_get_mark(const wc_batch *b, wc_batch_mark *m);
/*
 * Forgets the entries added since m; allocates nothing and cannot fail.  Their
 * pending seqs are not given out again.  Where the batch's overlays had indexed
 * some of them, those stay in the overlays and their seqs are dead: every scan
 * that overlays b excludes them (wc_batch_dead), so a scan open over b, which
 * holds the overlays, keeps working.
 */
void		wc_batch_rewind(wc_batch *b, const wc_batch_mark *m);
/* The seqs of b's dead entries (wc_batch_rewind): *ranges[0..n-1], increasing. */
int			wc_batch_dead(const wc_batch *b, const wc_seq_range **ranges);
/* The pending seq of entry i of b (i < wc_batch_count(b)); they increase with i. */
uint64_t	wc_batch_seq_at(const wc_batch *b, uint64_t i);
/* How many of b's entries have a pending seq below seq. */
uint64_t	wc_batch_count_below(const wc_batch *b, uint64_t seq);

/*
 * Writes batches[0..n-1], in order, as one atomic log record stamped with tag
 * (0 = no transaction: visible at once).  With a nonzero tag the cells become
 * visible to readers only once the resolve callback says the tag committed, and
 * never if it aborted.  With sync, returns only after the record is on disk.
 * After an fsync failure the handle refuses further writes (WC_FAILED).
 */
int			wc_db_write(wc_db *db, wc_batch *const *batches, int n, uint64_t tag,
						bool sync, wc_err *err);

/*
 * Makes every record the handle's logs hold durable (what wc_db_write's sync
 * does for its own record): for a write made without sync whose durability is
 * wanted after all.  After an fsync failure the handle refuses further writes.
 */
int			wc_db_sync_logs(wc_db *db, wc_err *err);

/*
 * Closes the active log and starts a new one, unless the active log holds
 * nothing (not even a torn tail).  A caller that lets records reach the log
 * before they are durable elsewhere calls it before its first write after a
 * restart (src/store.c): whatever the crash left at the end of the old log,
 * no later record follows it there.
 */
int			wc_db_rotate_log(wc_db *db, wc_err *err);

/*
 * Bulk writes.  A write with a nonzero tag whose batches hold at least
 * ingest_bytes (wc_open_opts) and no truncate is written as sorted files, one per
 * family, that a small log record names (DESIGN.md, "Bulk writes"): its bytes go
 * to disk once, compressed, instead of through the log, every reader's memtable
 * and a flush.  It is as atomic and durable as any write, and invisible until the
 * tag commits.  As for every tagged write, a caller whose wc_db_write failed must
 * not commit the tag.  Changes the threshold of this handle (0 = default).
 */
void		wc_db_set_ingest_bytes(wc_db *db, size_t bytes);

/* ---------------------------------------------------------------- scans */

typedef enum wc_bound
{
	WC_UNBOUNDED = 0,
	WC_INCLUSIVE = 1,
	WC_EXCLUSIVE = 2
} wc_bound;

typedef struct wc_key_range
{
	const uint8_t *start;
	size_t		start_len;
	int			start_bound;	/* wc_bound */
	const uint8_t *stop;
	size_t		stop_len;
	int			stop_bound;		/* wc_bound */
} wc_key_range;

typedef struct wc_slice
{
	const uint8_t *data;
	size_t		len;
} wc_slice;

typedef struct wc_scan_opts
{
	/* Row ranges, sorted by start and disjoint; 0 ranges = every row. */
	const wc_key_range *ranges;
	int			nranges;
	/* Families to read (by name); 0 = every family of the handle. */
	const wc_slice *families;
	int			nfamilies;
	/* Qualifier filter: a cell passes if it equals one of quals or starts with one
	 * of qual_prefixes; both empty = every qualifier. */
	const wc_slice *quals;
	int			nquals;
	const wc_slice *qual_prefixes;
	int			nqual_prefixes;
	/*
	 * And a qualifier range (the bounds compared as bytes, as rowkeys are): a
	 * cell passes only if its qualifier lies in it.  NULL = every qualifier.
	 * Unlike quals, it seeks: the scan jumps to the range's start within a row
	 * and to the next row past its stop.
	 */
	const wc_key_range *qual_range;
	/* Timestamps in [ts_min, ts_max], both inclusive (no overflow at the ends). */
	int64_t		ts_min;
	int64_t		ts_max;
	/* "Now" for TTL, in ms since the epoch; 0 = the clock. */
	int64_t		now_ms;
	/* The caller's uncommitted writes, overlaid (later batches win). */
	wc_batch   *const *pending;
	int			npending;
	/*
	 * Entries of those batches the reader does not see: ranges of their pending
	 * seqs (wc_batch_pending_seq_now), disjoint, in any order.  For a writer that
	 * keeps adding its later commands' writes to one batch, these are the writes
	 * of the commands after the reader's (src/store.c).
	 */
	const wc_seq_range *pending_excl;
	int			npending_excl;
	/*
	 * Pending entries above this seq are not seen either; 0 = the value of
	 * wc_batch_pending_seq_now() at open.  A caller that opens a scan again later
	 * with the options of an earlier one (to read a row's newest version) passes
	 * the earlier one's, so that what was written since stays unseen.
	 */
	uint64_t	pending_max;
	/*
	 * The reader's snapshot, for stores opened with a horizon: asked at open about
	 * every committed write the horizon has not passed.  NULL: every committed
	 * write is seen.  Writes still in progress are never seen either way.
	 */
	wc_tag_visible_fn tag_visible;
	void	   *tag_visible_arg;
	/* With tag_visible: every committed tag below this is seen by the snapshot
	 * (PostgreSQL: its xmin); a scan that needs a forgotten record is WC_TOO_OLD. */
	uint64_t	snapshot_min;
	/*
	 * With tag_visible, optionally the snapshot as bounds and a set, so that a
	 * scan decides about the remembered writes without a call each (while a
	 * long transaction holds the horizon back, a store remembers thousands):
	 * a committed tag below snapshot_min is seen, one at or above snapshot_max
	 * is not, and one between is seen unless it is among running (ascending,
	 * nrunning tags).  tag_visible is then asked only about the writes the
	 * snapshot does not see, committed or in progress, and only with
	 * ask_unseen (PostgreSQL: a serializable transaction's conflict check).
	 */
	bool		snapshot_sets;
	uint64_t	snapshot_max;
	const uint64_t *running;
	int			nrunning;
	bool		ask_unseen;
	/*
	 * Rows in descending rowkey order (HBase's Scan.setReversed), the ranges
	 * taken from the last to the first.  Within a row, cells come in the forward
	 * order, (family, qualifier) ascending and versions newest first, as HBase
	 * returns a reversed scan's rows.  Everything else is as for a forward scan;
	 * each row costs a seek backward and one forward in every source.
	 */
	bool		reverse;
	/*
	 * A scan of much of the store cut into row ranges (PostgreSQL: a parallel
	 * scan's chunks): it reads the blocks the block cache holds but leaves none
	 * of its own there, as a scan of every row (no ranges) does; a scan of row
	 * ranges otherwise leaves the blocks it decompresses there (wc.h, "block
	 * cache").
	 */
	bool		bulk;

	/*
	 * The families' max_versions not applied: every version the snapshot sees
	 * that a newer one only outnumbers (masking, ttl and the time range still
	 * apply).  Whether a version is gone or merely past max_versions.
	 */
	bool		every_version;
} wc_scan_opts;

/* Sets opts to "everything": no ranges, all families, all ts. */
void		wc_scan_opts_init(wc_scan_opts *opts);

/* One visible cell version. */
typedef struct wc_cell_view
{
	const uint8_t *row;
	size_t		row_len;
	const char *family;
	size_t		family_len;
	const uint8_t *qual;
	size_t		qual_len;
	int64_t		ts;
	const uint8_t *val;
	size_t		val_len;
	uint64_t	seq;			/* the version's sequence number: a later write of
								 * the same cell has a higher one (pending writes
								 * of the caller's batches: above every committed) */
} wc_cell_view;

/* What a scan did (for EXPLAIN ANALYZE). */
typedef struct wc_scan_stats
{
	uint64_t	files_total;	/* sorted files of the scanned families */
	uint64_t	files_read;		/* of those, opened for reading */
	uint64_t	files_skipped_key;	/* excluded by rowkey range */
	uint64_t	files_skipped_time; /* excluded by time range */
	uint64_t	files_skipped_bloom;	/* excluded by a bloom filter */
	uint64_t	blocks_read;	/* data blocks read from disk */
	uint64_t	blocks_cached;	/* of those, found in the block cache */
	uint64_t	cells_scanned;	/* internal entries visited (all sources) */
	uint64_t	cells_returned;
	uint64_t	seeks;			/* range starts positioned (reversed scans:
								 * rows positioned) */
	uint64_t	rows_cached;	/* a family of a row read from the row cache
								 * (wc_open_opts.row_cache_bytes) instead of its
								 * files */
} wc_scan_stats;

typedef struct wc_scan wc_scan;

/*
 * Opens a scan of the state as of the last refresh (plus opts->pending).  Rows come
 * in (rowkey, family, qualifier) byte order, versions newest first (with
 * opts->reverse, rowkeys descending and the rest as before).  opts and what it
 * points to must stay valid until the scan is closed or reset.
 */
int			wc_scan_open(wc_db *db, const wc_scan_opts *opts, wc_scan **out, wc_err *err);

/* Returns 1 and fills *cell, 0 at the end, or a negative wc_code. */
int			wc_scan_next(wc_scan *scan, wc_cell_view *cell, wc_err *err);

/* Restarts the scan over new ranges (same snapshot, files kept open). */
int			wc_scan_reset(wc_scan *scan, const wc_key_range *ranges, int nranges, wc_err *err);

/*
 * Would a scan of the handle's newest state (after wc_db_refresh) return what this
 * one does?  True when its snapshot hides no committed write and nothing was
 * committed since it was opened: a cheap answer for a writer that locked a cell
 * and must know whether a newer version exists.  False means "look".
 */
bool		wc_scan_sees_latest(const wc_scan *scan);

/*
 * The highest committed seq up to which the scan's view holds no write it does not
 * see (none in progress when it opened, none its snapshot excludes): every entry
 * at or below it that exists is one the scan sees, or would see but for its
 * filters and retention.  A bounded family delete (wc_batch_delete_family_upto)
 * with this bound therefore removes only what this scan's snapshot sees; a version
 * the scan returned with a higher seq (a pending write, or a committed one above
 * an excluded one) needs a delete of its own.
 */
uint64_t	wc_scan_visible_bound(const wc_scan *scan);

void		wc_scan_get_stats(const wc_scan *scan, wc_scan_stats *stats);
void		wc_scan_close(wc_scan *scan);

/* ---------------------------------------------------------------- maintenance */

/*
 * Makes everything committed so far durable in sorted files and empties the logs.
 * Waits for other flushers.  WC_BUSY if a transaction written to the log is still
 * in progress (its outcome is not known yet); WC_HELD at once if it is prepared
 * (WC_TXN_PREPARED): the logs from that one on stay until it ends.
 */
int			wc_db_flush(wc_db *db, wc_err *err);

/*
 * As wc_db_flush, but it never waits: WC_BUSY at once when another process is
 * flushing or a transaction written to the logs is still in progress (the logs
 * before it are flushed; the rest waits for a later flush).  For work that must
 * not stall, such as the flush a session runs right after its commit.
 */
int			wc_db_flush_nowait(wc_db *db, wc_err *err);

/* Major compaction: one sorted file per family, retention applied, tombstones dropped. */
int			wc_db_compact(wc_db *db, wc_err *err);

/*
 * Opportunistic housekeeping without waiting: flushes logs that are full and
 * resolved, runs a minor compaction where a family has too many files, removes
 * files nothing refers to.  Decides on the handle's view as of its last refresh
 * or write (refresh first for the latest), and refreshes after a flush or a
 * compaction.  Returns WC_OK when it did nothing.
 */
int			wc_db_maintain(wc_db *db, wc_err *err);

/* ---------------------------------------------------------------- statistics */

typedef struct wc_file_info
{
	char		name[32];		/* e.g. "000042.sst" */
	char		family[WC_MAX_FAMILY + 1];
	int			level;			/* 0 = flushed, 1 = compacted */
	uint64_t	cells;
	uint64_t	file_bytes;
	uint64_t	raw_bytes;		/* keys and values before compression */
	uint8_t    *row_min;		/* owned by the array */
	size_t		row_min_len;
	uint8_t    *row_max;
	size_t		row_max_len;
	int64_t		ts_min;
	int64_t		ts_max;
} wc_file_info;

/* Lists the live sorted files (those of committed bulk writes still named by a log
 * included); free with wc_file_info_free. */
int			wc_db_files(wc_db *db, wc_file_info **out, int *n, wc_err *err);
void		wc_file_info_free(wc_file_info *files, int n);

typedef struct wc_db_stats
{
	uint64_t	files;
	uint64_t	file_cells;		/* entries in sorted files (before retention) */
	uint64_t	file_bytes;
	uint64_t	raw_bytes;
	uint64_t	mem_cells;		/* entries in the memtables (this process's or shared) */
	uint64_t	mem_bytes;		/* their size (of a shared one: its entries') */
	uint64_t	log_bytes;		/* live log files */
	uint64_t	distinct_rows_est;	/* an estimate of distinct rowkeys */
} wc_db_stats;

/* Totals; family NULL = all families, else that family only. */
int			wc_db_get_stats(wc_db *db, const char *family, wc_db_stats *stats, wc_err *err);

/* The bytes of this process's own memtables (shared ones not counted), cheaply. */
uint64_t	wc_db_mem_bytes(const wc_db *db);

/*
 * Sampling (PostgreSQL's ANALYZE): the rowkeys that end the data blocks of the
 * live sorted files of the given families (n = 0: all families), taken from
 * the files' indexes without reading a data block, sorted and de-duplicated.
 * Consecutive bounds b[i-1] < row <= b[i] split the key space into pieces
 * that hold at most about one data block of each file (plus the memtables'
 * entries there), so that scanning a random subset of the pieces reads that
 * fraction of the store.  *out is one malloc'd array (free with free()) whose
 * slices point into it.
 */
int			wc_db_block_bounds(wc_db *db, const wc_slice *families, int nfamilies,
							   wc_slice **out, int *n, wc_err *err);

/* ---------------------------------------------------------------- inspection */

/* What a store directory holds (wc_store_inspect). */
typedef struct wc_store_info
{
	int			nfamilies;
	char		(*families)[WC_MAX_FAMILY + 1];	/* of the sorted files, sorted */
	uint64_t	files;
	uint64_t	cells;			/* entries in sorted files */
	uint64_t	log_bytes;		/* record bytes in the live logs: writes not flushed */
	int			recent;			/* committed transactions MANIFEST remembers */
	uint64_t	forgotten;		/* MANIFEST's forgotten tag, or 0 */
	bool		truncated;		/* a truncate point is set */
} wc_store_info;

/*
 * Reads the MANIFEST of the store in dir, and the sizes of its live logs, without
 * opening the store (no lock, nothing changed): for moving a store to another
 * PostgreSQL cluster, where log records and remembered transactions, which carry
 * the writing cluster's transaction ids, would mean something else.  WC_NOT_FOUND
 * when dir holds no MANIFEST.  Free with wc_store_info_free.
 */
int			wc_store_inspect(const char *dir, wc_store_info *info, wc_err *err);
void		wc_store_info_free(wc_store_info *info);

/* ---------------------------------------------------------------- block cache */

/*
 * A cache of decompressed data blocks in memory that processes share (DESIGN.md,
 * "The block cache"): a block one process decompressed is read by the others (and
 * by itself again) without decompressing it.  Optional; without one every read
 * decompresses.  The region is the caller's, shared by every process that uses
 * it (MAP_SHARED, or PostgreSQL's shared memory); it must stay mapped as long as
 * the process uses the engine.
 *
 * wc_block_cache_region_size: the bytes of region for about `bytes` of blocks
 * (0 when that is too little: fewer than 16 slots of 5 KiB).
 * wc_block_cache_create: lays the region out (size bytes, 64-byte aligned) and
 * makes it this process's cache; processes forked afterwards inherit it.  Call it
 * before any store is opened, once per region.
 * wc_block_cache_detach: this process stops using it (for tests).
 */
size_t		wc_block_cache_region_size(size_t bytes);
int			wc_block_cache_create(void *region, size_t size, wc_err *err);
void		wc_block_cache_detach(void);

typedef struct wc_block_cache_stats
{
	uint64_t	slots;			/* 0: no cache */
	uint64_t	slot_bytes;		/* the largest block a slot holds */
	uint64_t	used;			/* slots holding a block */
	uint64_t	used_bytes;		/* the bytes of those blocks */
	uint64_t	pinned;			/* slots being read now */
} wc_block_cache_stats;

/* Counts the slots of this process's cache (a walk over all of them). */
void		wc_block_cache_get_stats(wc_block_cache_stats *stats);

/* ---------------------------------------------------------------- shared memtables */

/*
 * Memtables of live logs in memory that processes share (DESIGN.md, "Shared
 * memtables"): the unflushed writes of a store are indexed once, for every
 * process that reads it, instead of once per process.  Optional; without a
 * region every process keeps its own.  The region is the caller's, shared by
 * every process that uses it and mapped at the same address in each
 * (PostgreSQL's shared memory; or MAP_SHARED before fork); it must stay mapped as
 * long as the process uses the engine.
 *
 * wc_shared_memtable_region_size: the bytes of region for about `bytes` of
 * memtables (0 when that is too little: fewer than 4 chunks of 128 KiB).
 * wc_shared_memtable_create: lays the region out (size bytes, 64-byte aligned)
 * and makes it this process's; processes forked afterwards inherit it.  Call it
 * before any store is opened, once per region.
 * wc_shared_memtable_detach: this process stops using it (for tests).
 * wc_shared_memtable_release: gives back every reference this process holds on
 * shared memtables, and stops using them: at exit, for stores it could not close
 * (their handles must not be used afterwards).
 */
size_t		wc_shared_memtable_region_size(size_t bytes);
int			wc_shared_memtable_create(void *region, size_t size, wc_err *err);
void		wc_shared_memtable_detach(void);
void		wc_shared_memtable_release(void);

typedef struct wc_shared_memtable_stats
{
	uint64_t	chunks;			/* 0: no region */
	uint64_t	chunk_bytes;
	uint64_t	chunks_free;
	uint64_t	logs;			/* logs with shared memtables */
	uint64_t	logs_unused;	/* of those, kept for later: no process references them */
	uint64_t	logs_failed;	/* of those, out of room: their users went on with copies */
	uint64_t	evictions;		/* unused logs' memory taken for others */
} wc_shared_memtable_stats;

void		wc_shared_memtable_get_stats(wc_shared_memtable_stats *stats);

/* ---------------------------------------------------------------- replicas */

/*
 * A directory kept equal to another store's by applying the changes reported
 * by the other's handles (wc_change), in the order they were reported: a
 * standby's copy, kept by PostgreSQL's redo.  A replica takes part in the
 * store's locking as a writer does, so read_only handles of the same directory
 * see each change whole (a log record appended, MANIFEST replaced) as they see
 * a writer's.
 */
typedef struct wc_replica wc_replica;

/* Opens dir to apply changes (the directory, and any above it, created if missing). */
int			wc_replica_open(const char *dir, wc_replica **out, wc_err *err);

/* Makes the change.  WRITE, TRUNCATE and REMOVE of a file that is not there
 * create it or do nothing; MANIFEST is written aside, synced and renamed. */
int			wc_replica_apply(wc_replica *r, const wc_change *change, wc_err *err);

/*
 * After the last change (PostgreSQL: at the end of recovery): cuts each log the
 * replica wrote to where the applied changes left its end, and syncs it; *cut is
 * the number of bytes removed.  Bytes past that end were written by the store's own
 * handles and never reported as made: a primary's commit records whose WAL a crash
 * lost, which no standby has either.
 */
int			wc_replica_cut(wc_replica *r, uint64_t *cut, wc_err *err);

void		wc_replica_close(wc_replica *r);

#ifdef __cplusplus
}
#endif

#endif							/* WC_H */
