/*
 * db_internal.h -- the state of an open store, and the functions through which
 * the files of the store core share it.  The files by layer (DESIGN.md,
 * "Layers"); a file calls only files of lower layers, and in layer 3 flush.c and
 * bulk.c call write.c:
 *
 *   4  db.c        open, close, wc_db_write, wc_db_files, statistics
 *      maintain.c  wc_db_maintain, wc_db_compact, orphan removal
 *   3  flush.c     logs to sorted files      compact.c  merging sorted files
 *      bulk.c      bulk writes               scan.c     reading a version
 *      write.c     the commit path: appending a record, closing and switching logs
 *   2  version.c   MANIFEST, the view's sorted files and logs, the log replay,
 *                  versions, refresh, the rules of flushes and compactions
 *   1  lock.c      LOCK: its byte locks, the write mutex, the shared page
 *      options.c   settings, families, the caller's callbacks
 *
 * The sections below follow the files, bottom up.  See DESIGN.md for the protocol.
 */
#ifndef WC_DB_INTERNAL_H
#define WC_DB_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>

#include "batch.h"
#include "env.h"
#include "log.h"
#include "manifest.h"
#include "memtable.h"
#include "rowcache.h"
#include "shmt.h"
#include "sst.h"

/*
 * Bytes of LOCK that carry the locks (DESIGN.md, "Locks").  The write lock is not a
 * file lock but the robust mutex of the shared page; wc_db_lock() hides that.
 * Order: compact, flush, write, manifest.
 */
#define WC_LOCK_WRITE		0
#define WC_LOCK_MANIFEST	1
#define WC_LOCK_FLUSH		2
#define WC_LOCK_COMPACT		3
#define WC_LOCK_ATTACH		4	/* shared by every open handle; exclusive to (re)initialise */

/*
 * The shared page: the first WC_SHARED_BYTES of LOCK, mapped by every handle
 * (DESIGN.md, "The shared page").  Nothing in it is data: it is rebuilt whenever a
 * handle opens the store while no other handle has it open.
 */
#define WC_SHARED_BYTES		4096
#define WC_SHARED_MAGIC		0x57435348u /* "WCSH" */
#define WC_SHARED_VERSION	2

typedef struct wc_shared
{
	uint32_t	magic;
	uint32_t	version;
	pthread_mutex_t write_mutex;	/* process-shared, robust: the write lock */
	/* where the active log ends, as its last writer left it (a seqlock: odd while
	 * changing); log_number 0 = unknown, look at the file */
	uint64_t	log_change;
	uint64_t	log_number;
	uint64_t	log_end;
	uint64_t	manifest_gen;	/* bumped after every MANIFEST rewrite */
	uint64_t	store_id;		/* random: names the store's logs' shared memtables
								 * (shmt.h); kept when the page is made again in
								 * the same LOCK file (lock.c, init_shared) */
	uint64_t	lock_dev;		/* the LOCK file store_id was made in (its device,
								 * inode and generation: wc_file_identity) */
	uint64_t	lock_ino;
	uint64_t	lock_gen;
} wc_shared;

#define WC_DEFAULT_LOG_SWITCH	(8u << 20)
#define WC_DEFAULT_BLOCK		(4u << 10)
#define WC_DEFAULT_BLOOM		10
#define WC_DEFAULT_L0_TRIGGER	4
#define WC_DEFAULT_INGEST_BYTES	(4u << 20)
#define WC_COMPACT_MAX_FILES	64	/* more files in a family: compacted whole */

/* A memtable of one family. */
typedef struct wc_fammem
{
	char		family[WC_MAX_FAMILY + 1];
	wc_memtable *mt;
} wc_fammem;

/* An open sorted file and its file number. */
typedef struct wc_dbsst
{
	uint64_t	number;
	wc_sst	   *sst;
} wc_dbsst;

/* A record read from a log whose transaction was still in progress. */
typedef struct wc_held
{
	uint64_t	tag;
	uint64_t	seq_lo,			/* the seqs its entries carry */
				seq_hi;
	uint8_t    *payload;
	size_t		len;
	uint64_t	off;			/* where the payload lies in the log; 0 = unknown */
} wc_held;

/*
 * This process's view of one live log: what its records applied so far hold.  A
 * flush that reads a log from disk fills one of its own (for_flush).
 */
typedef struct wc_logmem
{
	uint64_t	number;
	wc_file		file;
	wc_mapping *map;			/* the file mapped (values stay there), or NULL */
	wc_shlog   *shl;			/* its shared memtables (referenced; mem[] are handles
								 * on them, in the slot's order), or NULL: our own */
	bool		dead;			/* no longer live (flushed): its slot is freed */
	wc_log_reader *reader;
	uint64_t	valid_end;		/* offset after the last complete record read */
	uint64_t	max_seq;		/* highest seq of any record read (any outcome) */
	uint64_t	trunc;			/* highest DEL_ALL seq applied from this log */
	bool		closed;			/* its closing marker was read: nothing follows */
	bool		for_flush;		/* not in db->logs: applying it changes nothing of db */
	int			nmem;
	size_t		mem_cap;
	wc_fammem  *mem;
	int			nheld;
	size_t		held_cap;
	wc_held    *held;
	int			ningested;		/* sorted files of committed ingest records */
	size_t		ingested_cap;
	wc_dbsst   *ingested;
	wc_recent_list recent;		/* committed records applied that the horizon had
								 * not passed (DESIGN.md, "Snapshots") */
} wc_logmem;

/* An immutable snapshot of what a scan reads (DESIGN.md, "versions"). */
typedef struct wc_version
{
	int			refs;
	uint64_t	snapshot_seq;	/* committed entries above this are ignored */
	uint64_t	truncate_seq;	/* entries below this are gone */
	int			nssts;
	wc_sst	  **ssts;			/* referenced */
	int			nmems;
	wc_fammem  *mems;			/* referenced memtables */
	/*
	 * The writes a scan's snapshot never sees: those still in progress when
	 * the version was built, whose records are applied to the memtables above
	 * when they commit.  The committed ones a snapshot may not see (the
	 * horizon had not passed them) are the handle's lists, read where they
	 * are (wc_db_recent_list) by a scan as it opens on the current version:
	 * a copy in each version cost a busy store the whole list at every
	 * statement while a long transaction held the horizon back.
	 */
	wc_recent_list held;
} wc_version;

/* The handle's lists of remembered committed records: i = 0 MANIFEST's, then
 * each live log's (i <= db->nlogs). */
#define wc_db_recent_list(db, i) \
	((i) == 0 ? &(db)->manifest.recent : &(db)->logs[(i) - 1]->recent)

/* Family settings held by the handle. */
typedef struct wc_family
{
	char		name[WC_MAX_FAMILY + 1];
	size_t		name_len;
	uint32_t	max_versions;
	int64_t		ttl_ms;
	int			compression;
	int			compression_level;	/* zstd's, never 0 */
} wc_family;

struct wc_db
{
	char	   *dir;
	wc_open_opts opts;			/* families pointer not kept: see fams */
	int			nfams;
	wc_family  *fams;			/* sorted by name (byte order) */
	wc_file		lockf;
	wc_shared  *shm;			/* LOCK's shared page, mapped */
	uint64_t	manifest_gen;	/* shm->manifest_gen when MANIFEST was last checked */

	wc_rowcache *rowcache;		/* opts.row_cache_bytes > 0; rowcache.h */

	wc_manifest manifest;		/* as last read */
	dev_t		mf_dev;			/* identity of the MANIFEST file read */
	ino_t		mf_ino;
	int64_t		mf_mtime_ns;
	off_t		mf_size;

	int			nssts;
	wc_dbsst   *ssts;
	int			nlogs;
	wc_logmem **logs;			/* oldest first; last = active */

	bool		manifest_stale; /* a log was closed: a newer manifest exists */
	int64_t		manifest_checked_ms;	/* monotonic time of the last MANIFEST stat */
	uint64_t	applied_seq;	/* highest seq applied to memtables */
	uint64_t	truncate_seq;	/* max(manifest, DEL_ALL applied) */
	uint64_t	jumped_bytes;	/* of logs not read: their slots' summaries said it */
	bool		dirty;			/* state changed since current was built */
	wc_version *current;
	bool		failed;			/* an fsync failed: refuse writes */
	size_t		ingest_bytes;	/* a tagged write this big is a bulk write */
	bool		absent;			/* read only, and the store does not exist yet:
								 * empty until its MANIFEST appears */
	bool		watching;		/* registered its on_change (wc_env_watch) */
	uint64_t	horizon;		/* the horizon callback's answer, cached ... */
	bool		horizon_known;	/* ... until the next refresh */
	uint64_t	quiet_version;	/* maintain found nothing to compact in the */
	uint64_t	quiet_next_file;	/* manifest of this version and next_file */
};

/* How often a refresh looks at MANIFEST when neither the shared page's generation
 * nor a log says it changed (a safety net; every rewrite bumps the generation). */
#define WC_MANIFEST_CHECK_MS	1000

/* The horizon (wc_open_opts), asked once per refresh; 0 without a callback
 * (then nothing is remembered: every committed write is seen by everyone). */
static inline uint64_t
wc_db_horizon(wc_db *db)
{
	if (db->opts.horizon == NULL)
		return 0;
	if (!db->horizon_known)
	{
		db->horizon = db->opts.horizon(db->opts.horizon_arg);
		db->horizon_known = true;
	}
	return db->horizon;
}

/* Would a committed write with this tag have to be remembered? */
static inline bool
wc_db_tag_recent(wc_db *db, uint64_t tag)
{
	return tag != 0 && db->opts.horizon != NULL && tag >= wc_db_horizon(db);
}

/* ---------------------------------------------------------------- lock.c (1) */

/* Opens LOCK (creating it with create) and maps its shared page, initialising the
 * page when no other handle has the store open. */
int			wc_db_attach(wc_db *db, bool create, wc_err *err);
/* Unmaps the page and closes LOCK, which drops every lock of this handle. */
void		wc_db_detach(wc_db *db);
/* Takes lock byte (WC_LOCK_*) exclusively; wait=false returns WC_BUSY when held. */
int			wc_db_lock(wc_db *db, int byte, bool wait, wc_err *err);
/* Publishes where log number ends (caller holds the write lock); 0 = unknown. */
void		wc_db_shared_set_log(wc_db *db, uint64_t number, uint64_t end);

/* Inline, as every write and every refresh does them: */

static inline void
wc_db_unlock(wc_db *db, int byte)
{
	wc_err		ignored;

	if (byte == WC_LOCK_WRITE)
	{
		pthread_mutex_unlock(&db->shm->write_mutex);
		return;
	}
	wc_err_clear(&ignored);
	(void) wc_file_unlock(&db->lockf, (uint64_t) byte, &ignored);
}

/* Where the active log ends, as published; false when unknown or changing. */
static inline bool
wc_db_shared_get_log(const wc_db *db, uint64_t *number, uint64_t *end)
{
	const wc_shared *shm = db->shm;
	uint64_t	c1 = __atomic_load_n(&shm->log_change, __ATOMIC_ACQUIRE),
				c2;

	if (c1 & 1)
		return false;
	*number = __atomic_load_n(&shm->log_number, __ATOMIC_RELAXED);
	*end = __atomic_load_n(&shm->log_end, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	c2 = __atomic_load_n(&shm->log_change, __ATOMIC_RELAXED);
	return c1 == c2 && *number != 0;
}

/* The manifest generation, and its bump after every MANIFEST rewrite. */
static inline uint64_t
wc_db_shared_manifest_gen(const wc_db *db)
{
	return __atomic_load_n(&db->shm->manifest_gen, __ATOMIC_ACQUIRE);
}

static inline void
wc_db_shared_manifest_bump(wc_db *db)
{
	__atomic_add_fetch(&db->shm->manifest_gen, 1, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------- options.c (1) */

/* Copies opts into db with the defaults filled in, and its families. */
int			wc_db_set_options(wc_db *db, const wc_open_opts *opts, wc_err *err);
/* WC_INVALID when the handle is read only: what would change the store. */
int			wc_db_check_writable(const wc_db *db, const char *what, wc_err *err);
const wc_family *wc_db_family(const wc_db *db, const uint8_t *name, size_t len);
/* Sorted-file options for family (an undeclared family gets the defaults). */
void		wc_db_build_opts(wc_db *db, const char *family, int level, wc_sst_build_opts *o);
/* The outcome of tag from the caller's callback (tag 0, or no callback: committed). */
int			wc_db_resolve(wc_db *db, uint64_t tag, wc_txn_state *state, wc_err *err);
/* Nonzero when the caller's callback asks long work to stop. */
int			wc_db_interrupted(wc_db *db);

/* ---------------------------------------------------------------- version.c (2) */

/* "NNNNNN.ext", the name of store file number. */
void		wc_file_name(char *buf, size_t size, uint64_t number, const char *ext);
/* Reads MANIFEST fresh into *m; caller holds the manifest lock when it will write. */
int			wc_db_read_manifest(wc_db *db, wc_manifest *m, wc_err *err);
/* Writes m (its version bumped here) and bumps the shared manifest generation;
 * after a failure the handle refuses writes (the rename may have happened). */
int			wc_db_write_manifest(wc_db *db, wc_manifest *m, wc_err *err);
/* Reserves n consecutive file numbers in the manifest; the first is *first. */
int			wc_db_reserve_numbers(wc_db *db, int n, uint64_t *first, wc_err *err);
/* An open sorted file of this process with that number (manifest or ingested), or NULL. */
wc_sst	   *wc_db_find_sst(wc_db *db, uint64_t number);

/* A refresh (wc_db_refresh) that always looks at MANIFEST. */
int			wc_db_refresh_full(wc_db *db, wc_err *err);
/* The current version, referenced; rebuilt when the state changed.  NULL with err
 * set when out of memory. */
wc_version *wc_db_version(wc_db *db, wc_err *err);
void		wc_version_unref(wc_version *v);

/*
 * The visibility rules (visible.h) of a compaction of family's entries, partial or
 * not, and of a flush (a partial one): the family's max_versions and ttl, the
 * truncate point trunc, and keep_above below the oldest record that MANIFEST or
 * also (a flushed log's list, or NULL) remembers, both pruned to the horizon
 * first (DESIGN.md, "Snapshots").
 */
struct wc_vis_rules;
void		wc_db_compact_rules(wc_db *db, const char *family, bool partial, uint64_t trunc,
								wc_recent_list *also, struct wc_vis_rules *rules);
/* Releases the view (versions, files, logs, manifest): for wc_db_close. */
void		wc_db_view_free(wc_db *db);

/*
 * Applies a committed batch record, whose payload lies at offset off of lm's log
 * (0 = unknown) and ends at end, given as n readers positioned at their entries,
 * to lm's memtables (and, for a log of the view, raises the handle's applied and
 * truncate seqs).  With shared memtables, the entries are added only if no
 * process has added them (DESIGN.md, "Shared memtables").
 */
int			wc_db_apply_readers(wc_db *db, wc_logmem *lm, const wc_batch_reader *rs, int n,
								uint64_t off, uint64_t end, wc_err *err);
/* Holds a record whose tag is in progress (a copy of payload, which lies at offset
 * off of lm's log; 0 = unknown). */
int			wc_db_hold(wc_logmem *lm, uint64_t tag, uint64_t seq_lo, uint64_t seq_hi,
					   const uint8_t *payload, size_t len, uint64_t off, wc_err *err);

/*
 * Bytes of a log mapped by each logmem (values of committed records below that
 * stay in the log: DESIGN.md, "Values stay in the log"); 0 = the default,
 * 4 x log_switch_bytes and at least 64 MiB.  For tests.
 */
extern size_t wc_log_map_bytes;
/*
 * Set, a handle opening a live log reads every record below its slot's frontier
 * instead of taking the slot's summary of them (version.c, logmem_jump).  For
 * tests that count what reading a record does, and compare the two.
 */
extern bool wc_db_jump_disabled;
/*
 * Reads log number whole from disk into a logmem of the caller's (*out; free with
 * wc_db_log_free), every record resolved: with wait, waits a while for a
 * transaction in progress, then (or at once) fails with WC_BUSY.  For a flush,
 * whose flush lock makes a file missing from an ingest record WC_CORRUPT.
 */
int			wc_db_load_log(wc_db *db, uint64_t number, bool wait, wc_logmem **out, wc_err *err);
void		wc_db_log_free(wc_logmem *lm);

/* ---------------------------------------------------------------- write.c (3) */

/*
 * Appends one record to the active log under the write lock: parts[0..nparts-1]
 * are its payload, whose first 8 bytes (at seq_field, inside parts[0]) are
 * overwritten with the record's seq_base | flag.  The record is then applied to
 * this process's view: batches[0..n-1] for a batch record, or, with batches NULL,
 * the payload is held until tag resolves.  With switch_log the active log is
 * switched afterwards whatever its size.  *seq_base and *active (valid until the
 * next refresh) say where it went; the caller fsyncs.
 */
int			wc_db_append(wc_db *db, const wc_slice *parts, int nparts, uint64_t count,
						 uint8_t *seq_field, uint64_t flag, wc_batch *const *batches, int n,
						 uint64_t tag, bool switch_log, uint64_t *seq_base, wc_logmem **active,
						 wc_err *err);
/* Appends the closing marker (an empty batch) to lm, which must be the active log;
 * caller holds the write lock. */
int			wc_db_close_log(wc_db *db, wc_logmem *lm, wc_err *err);
/* Closes the active log (if not yet) and lists a new one; caller holds the write lock. */
int			wc_db_switch_log(wc_db *db, wc_logmem *active, wc_err *err);

/* ---------------------------------------------------------------- bulk.c (3) */

/* wc_db_write of a bulk write (DESIGN.md, "Bulk writes"): tag nonzero, no truncate
 * in the batches, count entries in all. */
int			wc_db_write_bulk(wc_db *db, wc_batch *const *batches, int n, uint64_t count,
							 uint64_t tag, bool sync, wc_err *err);

/* ---------------------------------------------------------------- flush.c (3) */

/* Flushes every log but the active one; caller holds the flush lock.  Without wait,
 * a log holding a transaction in progress is WC_BUSY at once. */
int			wc_db_flush_logs(wc_db *db, bool wait, wc_err *err);

/* ---------------------------------------------------------------- compact.c (3) */

/* Compacts family's files (only[0..nonly-1], or all when only is NULL); compact lock
 * held.  partial: only the newest files of their rows, tombstones kept (visible.h). */
int			wc_db_compact_family(wc_db *db, const char *family, const uint64_t *only, int nonly,
								 bool partial, wc_err *err);
/* What wc_db_maintain compacts: groups of overlapping files; compact lock held when
 * run; without run, returns 1 when there is something to compact. */
int			wc_db_compact_some(wc_db *db, const char *family, int trigger, bool run, wc_err *err);

#endif
