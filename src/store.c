/*-------------------------------------------------------------------------
 *
 * store.c
 *		  Per-backend cache of open widecol stores, their pending writes, and
 *		  the transaction callbacks that commit or discard them
 *
 * One module owns a store's handle and the transaction's writes to it, as
 * postgres_fdw's connection.c owns a connection and the remote transaction on
 * it: one hash of WcFdwStore, one entry per foreign table, walked by no other
 * file.  The executor gets an entry from wcfdw_store_get, writes into the
 * batch wcfdw_store_write_batch returns and has a scan overlay what
 * wcfdw_store_visible_batches returns; only this file edits the pending
 * list, and it calls no file above it (only error.c, option.c, resolve.c).
 *
 * Why one owner rather than a transaction module beside a handle cache: the
 * two need each other.  Opening the store of a table created by this
 * transaction leaves a directory to remove if it aborts, and the batches an
 * abort discards are freed when the last scan closes; split in two, each half
 * would call the other.  And the next changes each land in one place.  The
 * commit path is one function, wcfdw_pre_commit: the WAL records of each
 * store write (wal.c) are made there, by the wc_db_write they describe.  The
 * row locks that scans under a PostgreSQL snapshot will take are transaction
 * state of a store, kept on the same entry and released by the same
 * callbacks (how a tag resolves against a snapshot is resolve.c's).
 *
 * The cache.  A store is opened lazily on first use and kept open for the
 * life of the backend.  A relcache invalidation of the table (ALTER, DROP,
 * ANALYZE) or of its options marks the entry stale; the next use re-reads the
 * options and either updates the family settings (wc_db_set_families) or,
 * when the directory changed (new server option, or a new table that reuses
 * the OID), reopens the store.  Handles are closed at backend exit.  A store
 * is opened with resolve.c's callbacks, through which the engine learns
 * whether a transaction committed and whether to stop.
 *
 * Pending writes.  Every INSERT/UPDATE/DELETE/TRUNCATE is buffered in this
 * backend, in a list of wc_batch per store.  Each batch belongs to one
 * subtransaction nesting level and holds the writes of one or more commands,
 * in the order of their command ids:
 *
 *	- a write goes to the last batch if it has the current level and its
 *	  last command is the current one or an earlier one (and neither it nor
 *	  the write is a TRUNCATE), else to a new one; a write of a deeper level
 *	  (after a SAVEPOINT) whose command is later than the batch's last goes
 *	  on into it too, after a mark (wc_batch_get_mark) saying where that
 *	  level's writes begin;
 *	- a scan overlays the batches of earlier commands (cid < its snapshot's
 *	  curcid), so a session sees its own writes from the next statement on,
 *	  and an UPDATE never sees the rows it is writing: a batch shared with
 *	  later commands is overlaid without their entries, whose pending seqs
 *	  each command's first one bounds (wc_scan_opts.pending_excl), nor
 *	  anything written after the scan began (a row lock reads the row again
 *	  with the scan's options);
 *	- a subtransaction that commits hands its batches and marks to its
 *	  parent: they are relabelled, and the last batch is appended to the one
 *	  before when they could have been one (wcfdw_pending_fold); one that
 *	  aborts drops its batches and rewinds the outer ones to its marks
 *	  (wc_batch_rewind);
 *	- at PRE_COMMIT each store's batches go to disk in one atomic log record
 *	  (wc_db_write), tagged with the top-level FullTransactionId, so readers
 *	  resolve it through the commit log; nothing is written on abort.
 *
 * Batches that a scan may still point to (the executor of an aborted query
 * is cleaned up after the abort callbacks) are freed once no scan is open.
 *
 * Store directories.  Those of tables dropped by the transaction (ddl.c
 * registers them) are removed at COMMIT and forgotten on abort; those of
 * tables created by a transaction that aborts are removed at ABORT.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/resource.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "access/table.h"
#include "access/parallel.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "replication/message.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "widecol_fdw.h"

/* A store directory to remove at the end of the transaction. */
typedef struct WcFdwDirEntry
{
	Oid			relid;
	char	   *path;
	int			level;
} WcFdwDirEntry;

static HTAB *wcfdw_stores = NULL;
static int	wcfdw_nscans_total = 0;
static uint64 wcfdw_xact_count = 1;	/* transactions ended, plus one */

/* finished batches a scan may still point to */
static wc_batch **wcfdw_graveyard = NULL;
static int	wcfdw_ngrave = 0;
static int	wcfdw_maxgrave = 0;

static List *wcfdw_drops = NIL;		/* removed at commit */
static List *wcfdw_creates = NIL;	/* removed at abort */

static void wcfdw_free_buried(void);
static void wcfdw_register_dir(List **list, Oid relid, const char *path);
static void wcfdw_store_drop(Oid relid, const char *path);
static void wcfdw_xact_cb(XactEvent event, void *arg);
static void wcfdw_subxact_cb(SubXactEvent event, SubTransactionId mySubid,
							 SubTransactionId parentSubid, void *arg);

/* ---------------------------------------------------------------- the cache */

static void
wcfdw_mark_stale(Oid relid)
{
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;

	if (wcfdw_stores == NULL)
		return;
	/* any table may be (or stop being) a wide one showing a store */
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		s->wide_known = false;
		if (!OidIsValid(relid) || s->relid == relid)
			s->stale = true;
	}
}

/*
 * wcfdw_store_has_wide
 *		Does a wide table show the store (ddl.c, wcfdw_store_shown_wide)?
 *		Known until the next relcache invalidation: a tall table's row locks
 *		take their rowkey's lock only then (scan.c)
 */
bool
wcfdw_store_has_wide(WcFdwStore *store)
{
	if (!store->wide_known)
	{
		store->has_wide = wcfdw_store_shown_wide(store->relid);
		store->wide_known = true;
	}
	return store->has_wide;
}

static void
wcfdw_relcache_cb(Datum arg, Oid relid)
{
	wcfdw_mark_stale(relid);
}

static void
wcfdw_syscache_cb(Datum arg, int cacheid, uint32 hashvalue)
{
	wcfdw_mark_stale(InvalidOid);
}

static void
wcfdw_store_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;

	/*
	 * A single-user backend made the shared memory itself and has detached it
	 * by now (its own on_shmem_exit callbacks, which a child of the postmaster
	 * resets): closing would write the shared memtables' counts there.  The
	 * process ends as after a kill -9, which a store survives; its commits
	 * made their logs durable themselves (no syncer runs in single-user mode).
	 */
	if (wcfdw_stores == NULL || !IsUnderPostmaster)
		return;
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		/* an open scan would make closing unsafe; the OS cleans up */
		if (s->db && s->nscans == 0)
			wc_db_close(s->db);
		s->db = NULL;
	}
	/* the shared memtables those stores still reference are given back */
	wc_shared_memtable_release();
}

#define WCFDW_FD_LIMIT	((rlim_t) 1048576)

/*
 * wcfdw_raise_fd_limit
 *		Raises the soft limit on open files to the hard one
 *
 * An open store holds descriptors outside PostgreSQL's pool of virtual file
 * descriptors (max_files_per_process): its LOCK file, whose byte locks are
 * its handles' attachment and locks, and the live logs it reads.  Under the
 * usual soft limit of 1024, a session that opened a few hundred tables (one
 * pg_dump of a database of many tables) ran out ("Too many open files") while
 * PostgreSQL's own pool may take a thousand.  The hard limit is the system's
 * to set; the soft one is the process's, as many servers raise it at start.
 * At module load: in the postmaster when preloaded (its children inherit it).
 * No higher than the kernel's usual cap (nr_open), nor unlimited.
 */
static void
wcfdw_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max ||
		rl.rlim_cur >= WCFDW_FD_LIMIT)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > WCFDW_FD_LIMIT
		? WCFDW_FD_LIMIT : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		elog(DEBUG1, "widecol_fdw: could not raise the limit on open files: %m");
}

/*
 * wcfdw_store_init
 *		Registers the cache's invalidation and exit callbacks and the
 *		transaction callbacks (at module load), and raises the limit on open
 *		files
 */
void
wcfdw_store_init(void)
{
	wcfdw_raise_fd_limit();
	CacheRegisterRelcacheCallback(wcfdw_relcache_cb, (Datum) 0);
	CacheRegisterSyscacheCallback(FOREIGNTABLEREL, wcfdw_syscache_cb, (Datum) 0);
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, wcfdw_syscache_cb, (Datum) 0);
	RegisterXactCallback(wcfdw_xact_cb, NULL);
	RegisterSubXactCallback(wcfdw_subxact_cb, NULL);
}

/*
 * wcfdw_get_hash
 *		The stores of this process, made at first use, when the exit callback
 *		that closes them is registered: not at module load, as a preloaded
 *		library is loaded by the postmaster, whose proc_exit callbacks a
 *		backend drops when it starts (on_exit_reset), and the references a
 *		backend holds on shared memtables must be given back when it exits
 */
static HTAB *
wcfdw_get_hash(void)
{
	if (wcfdw_stores == NULL)
	{
		HASHCTL		ctl;

		on_proc_exit(wcfdw_store_exit, (Datum) 0);

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(WcFdwStore);
		wcfdw_stores = hash_create("widecol_fdw stores", 16, &ctl,
								   HASH_ELEM | HASH_BLOBS);
	}
	return wcfdw_stores;
}

static WcFdwStore *
wcfdw_store_lookup(Oid relid)
{
	if (wcfdw_stores == NULL)
		return NULL;
	return hash_search(wcfdw_stores, &relid, HASH_FIND, NULL);
}

static bool
wcfdw_families_equal(const WcFdwStore *s, const WcFdwTableOptions *opts)
{
	int			i;

	if (s->nfamilies != opts->nfamilies)
		return false;
	for (i = 0; i < s->nfamilies; i++)
	{
		const wc_family_opts *a = &s->families[i];
		const wc_family_opts *b = &opts->families[i];

		if (strcmp(a->name, b->name) != 0 || a->max_versions != b->max_versions ||
			a->ttl_ms != b->ttl_ms || a->compression != b->compression ||
			a->compression_level != b->compression_level)
			return false;
	}
	return true;
}

static void
wcfdw_set_cached_families(WcFdwStore *s, const WcFdwTableOptions *opts)
{
	int			i;

	if (s->families)
	{
		for (i = 0; i < s->nfamilies; i++)
			pfree((char *) s->families[i].name);
		pfree(s->families);
	}
	s->families = MemoryContextAlloc(TopMemoryContext,
									 sizeof(wc_family_opts) * opts->nfamilies);
	for (i = 0; i < opts->nfamilies; i++)
	{
		s->families[i] = opts->families[i];
		s->families[i].name = MemoryContextStrdup(TopMemoryContext, opts->families[i].name);
	}
	s->nfamilies = opts->nfamilies;
}

static bool
wcfdw_dir_identity(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/*
 * wcfdw_store_open
 *		Opens (creating it if needed) the store of rel
 */
static void
wcfdw_store_open(WcFdwStore *s, Relation rel, const WcFdwTableOptions *opts, char *path)
{
	wc_open_opts oo;
	wc_err		err;
	int			rc;

	Assert(s->db == NULL);

	/*
	 * A logged table's changes go to the WAL (wal.c).  In recovery the store
	 * is only read: redo keeps it.  A logged table is only read as well when
	 * the WAL cannot take its changes (the library was not preloaded): a
	 * write then fails in wcfdw_store_write_batch, and nothing, not even the
	 * creation of the store, changes its files behind the WAL's back.
	 */
	s->logged = opts->logged;
	s->read_only = RecoveryInProgress() || (s->logged && !wcfdw_wal_available());
	if (s->walpath)
		pfree(s->walpath);
	s->walpath = MemoryContextStrdup(TopMemoryContext, wcfdw_wal_path(path));

	/*
	 * A table created by this transaction has no committed data: whatever
	 * is in its directory was left by a dropped table whose OID it reuses
	 * (a crash between that DROP's commit and the file removal).  And if
	 * this transaction aborts, the directory must go.  Not so for a table
	 * that names its directory (store_directory, IMPORT FOREIGN SCHEMA): it
	 * adopts a store that was there before it, and leaves it on abort.  A
	 * parallel worker leaves both to its leader (no parallel scan of such a
	 * table is planned: widecolIsForeignScanParallelSafe).
	 */
	if (rel->rd_createSubid != InvalidSubTransactionId && opts->store_dir == NULL &&
		!IsParallelWorker())
	{
		struct stat st;

		if (stat(path, &st) == 0)
		{
			if (s->logged && !s->read_only)
				wcfdw_wal_destroy(path);
			wc_err_clear(&err);
			rc = wc_db_destroy(path, &err);
			wcfdw_check(rc, &err, "remove the leftover", RelationGetRelationName(rel));
		}
		wcfdw_register_dir(&wcfdw_creates, RelationGetRelid(rel), path);
	}

	wcfdw_set_cached_families(s, opts);
	if (s->path)
		pfree(s->path);
	s->path = MemoryContextStrdup(TopMemoryContext, path);
	if (s->relname)
		pfree(s->relname);
	s->relname = MemoryContextStrdup(TopMemoryContext, RelationGetRelationName(rel));

	/* a server's directory is created on first use, like a tablespace's */
	if (opts->directory && pg_mkdir_p(pstrdup(opts->directory), pg_dir_create_mode) != 0 &&
		errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", opts->directory)));

	memset(&oo, 0, sizeof(oo));
	oo.families = s->families;
	oo.nfamilies = s->nfamilies;
	oo.create_if_missing = !s->read_only;
	oo.read_only = s->read_only;
	oo.resolve = wcfdw_resolve;
	oo.interrupt = wcfdw_interrupt;
	oo.horizon = wcfdw_horizon;
	oo.recent_max = (uint32) wcfdw_max_remembered_commits;
	oo.row_cache_bytes = (size_t) wcfdw_row_cache_kb * 1024;
	if (s->logged && !s->read_only)
	{
		oo.on_change = wcfdw_wal_change;
		oo.on_change_done = wcfdw_chkpt_change_end;
		oo.on_change_arg = s->walpath;
	}

	wc_err_clear(&err);
	rc = wc_db_open(path, &oo, &s->db, &err);
	if (rc < 0)
	{
		s->db = NULL;
		wcfdw_engine_error(ERROR, rc, &err, "open", s->relname);
	}
	if (!wcfdw_dir_identity(path, &s->dir_dev, &s->dir_ino))
		s->dir_dev = 0, s->dir_ino = 0;
	s->stale = false;
	s->failed = false;
	s->refreshed_cxt = NULL;
}

static void
wcfdw_store_close(WcFdwStore *s)
{
	if (s->db && s->nscans == 0)
	{
		wc_db_close(s->db);
		s->db = NULL;
		s->refreshed_cxt = NULL;
	}
}

/*
 * wcfdw_store_get
 *		The open store of a widecol foreign table
 */
WcFdwStore *
wcfdw_store_get(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			owner = wcfdw_store_owner_cached(relid);
	WcFdwStore *s;
	bool		found;
	bool		writable;

	/*
	 * A table with option store shows the store of another: one entry, one
	 * handle and one list of pending writes for both, so each sees the
	 * other's writes of this transaction.  The lock keeps that table from
	 * being dropped under us.
	 */
	if (owner != relid)
	{
		Relation	orel = table_open(owner, AccessShareLock);

		s = wcfdw_store_get(orel);
		table_close(orel, NoLock);
		return s;
	}

	s = hash_search(wcfdw_get_hash(), &relid, HASH_ENTER, &found);
	if (!found)
	{
		memset(((char *) s) + sizeof(Oid), 0, sizeof(WcFdwStore) - sizeof(Oid));
		s->stale = true;
	}
	s->last_used = wcfdw_xact_count;
	if (s->doomed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("store of foreign table \"%s\" is being removed",
						RelationGetRelationName(rel))));

	/* opened read only in recovery, and the server was promoted since */
	writable = s->db != NULL && s->read_only && !RecoveryInProgress() &&
		(!s->logged || wcfdw_wal_available());

	if (s->db == NULL || ((s->stale || s->failed || writable) && s->nscans == 0))
	{
		WcFdwTableOptions opts;
		char	   *path;
		dev_t		dev;
		ino_t		ino;

		wcfdw_get_table_options(relid, &opts);
		path = wcfdw_store_path(relid, &opts);
		if (RecoveryInProgress() && !opts.logged)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot access unlogged widecol table \"%s\" during recovery",
							RelationGetRelationName(rel)),
					 errdetail("The changes of an unlogged table do not reach the WAL, so a standby does not have them.")));
		if (s->db != NULL &&
			(s->failed || writable || strcmp(path, s->path) != 0 || opts.logged != s->logged ||
			 !wcfdw_dir_identity(path, &dev, &ino) ||
			 dev != s->dir_dev || ino != s->dir_ino))
			wcfdw_store_close(s);

		if (s->db == NULL)
			wcfdw_store_open(s, rel, &opts, path);
		else
		{
			if (!wcfdw_families_equal(s, &opts))
			{
				wc_err		err;
				int			rc;

				wcfdw_set_cached_families(s, &opts);
				wc_err_clear(&err);
				rc = wc_db_set_families(s->db, s->families, s->nfamilies, &err);
				wcfdw_check(rc, &err, "change the families of the", RelationGetRelationName(rel));
			}
			if (strcmp(s->relname, RelationGetRelationName(rel)) != 0)
			{
				pfree(s->relname);
				s->relname = MemoryContextStrdup(TopMemoryContext, RelationGetRelationName(rel));
			}
			s->stale = false;
		}
	}
	return s;
}

/* ---------------------------------------------------------------- statements */

typedef struct WcFdwRefreshCb
{
	MemoryContextCallback cb;
	Oid			relid;
	MemoryContext cxt;
} WcFdwRefreshCb;

static void
wcfdw_statement_ended(void *arg)
{
	WcFdwRefreshCb *r = (WcFdwRefreshCb *) arg;
	WcFdwStore *s = wcfdw_store_lookup(r->relid);

	if (s && s->refreshed_cxt == r->cxt)
		s->refreshed_cxt = NULL;
}

/*
 * wcfdw_store_refresh
 *		Catches up with other sessions' commits, flushes and compactions
 */
void
wcfdw_store_refresh(WcFdwStore *s)
{
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_db_refresh(s->db, &err);
	wcfdw_check(rc, &err, "refresh", s->relname);
	/* on that view; it refreshes again only after a flush or compaction */
	if (s->needs_maintain && !s->read_only)
	{
		s->needs_maintain = false;
		wc_err_clear(&err);
		rc = wc_db_maintain(s->db, &err);
		if (rc < 0 && rc != WC_BUSY && rc != WC_HELD)
		{
			if (rc == WC_CALLBACK || rc == WC_ABORTED)
				wcfdw_engine_error(ERROR, rc, &err, "maintain", s->relname);
			wcfdw_engine_error(WARNING, rc, &err, "maintain", s->relname);
		}
	}
}

/*
 * wcfdw_store_begin_statement
 *		Refreshes the store once per statement (per executor state), so
 *		that all scans of one statement see the same state
 */
void
wcfdw_store_begin_statement(WcFdwStore *s, EState *estate)
{
	WcFdwRefreshCb *r;

	if (estate != NULL && s->refreshed_cxt == estate->es_query_cxt)
		return;
	wcfdw_store_refresh(s);
	if (estate == NULL)
		return;
	r = MemoryContextAlloc(estate->es_query_cxt, sizeof(WcFdwRefreshCb));
	r->relid = s->relid;
	r->cxt = estate->es_query_cxt;
	r->cb.func = wcfdw_statement_ended;
	r->cb.arg = r;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &r->cb);
	s->refreshed_cxt = estate->es_query_cxt;
}

/* ---------------------------------------------------------------- scans */

/*
 * wcfdw_store_scan_opened
 *		A wc_scan of the store was opened: the handle and the batches it
 *		overlays must stay until it is closed
 */
void
wcfdw_store_scan_opened(WcFdwStore *s)
{
	s->nscans++;
	wcfdw_nscans_total++;
}

/*
 * wcfdw_store_scan_closed
 *		A wc_scan of the store was closed: a dropped store goes with its
 *		last scan, buried batches with the last scan of the backend
 */
void
wcfdw_store_scan_closed(WcFdwStore *s)
{
	Assert(s->nscans > 0);
	s->nscans--;
	wcfdw_nscans_total--;
	if (s->doomed && s->nscans == 0)
		wcfdw_store_drop(s->relid, s->path);
	if (wcfdw_nscans_total == 0)
		wcfdw_free_buried();
}

/* ---------------------------------------------------------------- pending writes */

/*
 * wcfdw_array_room
 *		arr (a TopMemoryContext array of *max elements of elemsize, n used)
 *		with room for one more: doubled when full, first elements at first
 */
static void *
wcfdw_array_room(void *arr, int n, int *max, Size elemsize, int first)
{
	int			newmax;

	if (n < *max)
		return arr;
	newmax = *max ? *max * 2 : first;
	if (arr == NULL)
		arr = MemoryContextAlloc(TopMemoryContext, newmax * elemsize);
	else
		arr = repalloc(arr, newmax * elemsize);
	*max = newmax;
	return arr;
}

/* A batch no transaction needs any more, freed once no scan is open. */
static void
wcfdw_bury(wc_batch *b)
{
	wcfdw_graveyard = wcfdw_array_room(wcfdw_graveyard, wcfdw_ngrave, &wcfdw_maxgrave,
									   sizeof(wc_batch *), 16);
	wcfdw_graveyard[wcfdw_ngrave++] = b;
}

/*
 * wcfdw_free_buried
 *		Frees finished batches once no scan can point to them
 */
static void
wcfdw_free_buried(void)
{
	if (wcfdw_nscans_total > 0)
		return;
	while (wcfdw_ngrave > 0)
		wc_batch_free(wcfdw_graveyard[--wcfdw_ngrave]);
}

/*
 * wcfdw_store_count_row_lock
 *		Counts a row lock this transaction took in the store (scan.c); returns
 *		how many it has taken in all stores
 *
 * Counted per transaction: the count of an earlier one is dropped at the
 * first lock of the next.  A subtransaction that aborts gives its locks back
 * but not its count, so the count may be high: escalation (scan.c) then comes
 * a little early, which is safe.
 */
int64
wcfdw_store_count_row_lock(WcFdwStore *s)
{
	static uint64 total_xact = 0;
	static int64 total = 0;

	if (s->rowlocks_xact != wcfdw_xact_count)
	{
		s->rowlocks_xact = wcfdw_xact_count;
		s->nrowlocks = 0;
	}
	if (total_xact != wcfdw_xact_count)
	{
		total_xact = wcfdw_xact_count;
		total = 0;
	}
	++s->nrowlocks;
	/*
	 * The shared lock table's slots are the transaction's, whatever the
	 * tables: its row locks in every store count (20 tables of 990 locked rows
	 * each filled it before), and the store taking more escalates.
	 */
	return ++total;
}

/* The level writing into p now: its last mark's, or its own. */
static int
wcfdw_pending_tail_level(const WcFdwPendingBatch *p)
{
	return p->nmarks > 0 ? p->marks[p->nmarks - 1].level : p->level;
}

/* Adds command cid, whose entries begin after the pending seqs given out so far, to p. */
static void
wcfdw_pending_add_cmd(WcFdwPendingBatch *p, CommandId cid)
{
	p->cmds = wcfdw_array_room(p->cmds, p->ncmds, &p->maxcmds, sizeof(WcFdwPendingCmd), 4);
	p->cmds[p->ncmds].cid = cid;
	p->cmds[p->ncmds].seq_lo = wc_batch_pending_seq_now() + 1;
	p->ncmds++;
}

/*
 * wcfdw_store_write_batch
 *		The batch that command cid (the executor's es_output_cid, or
 *		GetCurrentCommandId(true) for TRUNCATE) writes into; alone: one that
 *		no other command writes into (a TRUNCATE's)
 *
 * A transaction of many writing statements (a PL/pgSQL loop, a client's
 * batch of single-row UPDATEs, each after a savepoint or not) keeps one
 * batch, not one per statement: every scan considers each batch, and with
 * one per statement the n-th statement's scans cost in proportion to n (a
 * point read after 20,000 single-row INSERTs took 4-7 ms).  Command ids only
 * increase within a batch, so the commands a scan must not see are the
 * batch's last ones, one range of seqs.  A command that writes again after a
 * later one has (a statement whose function wrote between its rows) gets a
 * batch of its own, as does a TRUNCATE, whose truncate point covers the
 * batch.
 */
wc_batch *
wcfdw_store_write_batch(WcFdwStore *s, CommandId cid, bool alone)
{
	int			level = GetCurrentTransactionNestLevel();
	WcFdwPendingBatch *last;
	WcFdwPendingBatch *p;
	CommandId	last_cid;
	wc_batch   *b;

	if (s->read_only)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot write to logged widecol table \"%s\"", s->relname),
				 errdetail("The changes of a logged table go to PostgreSQL's WAL through a resource manager that is registered only when the library is preloaded."),
				 errhint("Add widecol_fdw to shared_preload_libraries in postgresql.conf and restart the server, or make the table unlogged (option logged 'false').")));

	/* the tag of our commit record; assign it now, not in PRE_COMMIT */
	(void) GetTopFullTransactionId();

	last = s->npending > 0 ? &s->pending[s->npending - 1] : NULL;
	if (last && wcfdw_pending_tail_level(last) == level)
	{
		last_cid = last->cmds[last->ncmds - 1].cid;
		if (last_cid == cid && !(alone && last->ncmds > 1))
			return last->batch;
		if (cid > last_cid && !alone && !last->truncates)
		{
			wcfdw_pending_add_cmd(last, cid);
			return last->batch;
		}
	}
	else if (last && wcfdw_pending_tail_level(last) < level &&
			 cid > last->cmds[last->ncmds - 1].cid && !alone && !last->truncates)
	{
		/*
		 * A deeper level writes on into the outer level's batch, from a mark
		 * its rollback rewinds the batch to: with a batch per level, N
		 * statements each after a SAVEPOINT never released (a client's
		 * autosave) left N batches, and each statement's scans went
		 * through all of them.
		 */
		WcFdwPendingMark *m;

		last->marks = wcfdw_array_room(last->marks, last->nmarks, &last->maxmarks,
									   sizeof(WcFdwPendingMark), 4);
		m = &last->marks[last->nmarks++];
		m->level = level;
		m->ncmds = last->ncmds;
		wc_batch_get_mark(last->batch, &m->bm);
		wcfdw_pending_add_cmd(last, cid);
		return last->batch;
	}

	s->pending = wcfdw_array_room(s->pending, s->npending, &s->maxpending,
								  sizeof(WcFdwPendingBatch), 8);
	b = wc_batch_new();
	if (b == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	p = &s->pending[s->npending];
	p->batch = b;
	p->level = level;
	p->truncates = false;
	p->cmds = NULL;
	p->ncmds = p->maxcmds = 0;
	p->marks = NULL;
	p->nmarks = p->maxmarks = 0;
	s->npending++;
	wcfdw_pending_add_cmd(p, cid);
	return b;
}

/*
 * wcfdw_store_truncate
 *		TRUNCATE of the store by command cid: a truncate entry in its batch,
 *		which is marked so that the commit gives the space back at once
 *
 * The mark lives on the batch, not on the store: a rollback to a savepoint
 * that discards the batch forgets it too.
 */
void
wcfdw_store_truncate(WcFdwStore *s, CommandId cid)
{
	wc_batch   *b = wcfdw_store_write_batch(s, cid, true);
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_batch_truncate(b, &err);
	wcfdw_check(rc, &err, "truncate the", s->relname);
	Assert(s->npending > 0 && s->pending[s->npending - 1].batch == b);
	s->pending[s->npending - 1].truncates = true;
}

/*
 * wcfdw_store_visible_batches
 *		Sets opts->pending (oldest first) and opts->pending_excl: the pending
 *		writes a scan whose snapshot has curcid must overlay (palloc'd arrays;
 *		none: NULL and 0)
 *
 * A batch is overlaid if its first command is earlier than curcid; the
 * commands of it that are not (a suffix, cids increasing) are excluded by
 * their seqs: from the first one's seq_lo to where the batch stopped taking
 * writes, the next batch's first seq_lo (only the last batch takes writes).
 * Entries written after the call are not seen (pending_max).  The batches
 * stay valid until the scan is closed (see wcfdw_bury).
 */
void
wcfdw_store_visible_batches(WcFdwStore *s, CommandId curcid, wc_scan_opts *opts)
{
	wc_batch  **out;
	wc_seq_range *excl;
	int			n = 0,
				nexcl = 0;

	opts->pending = NULL;
	opts->npending = 0;
	opts->pending_excl = NULL;
	opts->npending_excl = 0;
	opts->pending_max = 0;
	if (s->npending == 0)
		return;
	out = palloc(sizeof(wc_batch *) * s->npending);
	excl = palloc(sizeof(wc_seq_range) * s->npending);
	for (int i = 0; i < s->npending; i++)
	{
		WcFdwPendingBatch *p = &s->pending[i];
		int			lo = 1,
					hi = p->ncmds;

		if (p->cmds[0].cid >= curcid)
			continue;
		out[n++] = p->batch;
		/* the first command at or after curcid, or ncmds */
		while (lo < hi)
		{
			int			mid = lo + (hi - lo) / 2;

			if (p->cmds[mid].cid < curcid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < p->ncmds)
		{
			excl[nexcl].lo = p->cmds[lo].seq_lo;
			excl[nexcl].hi = i + 1 < s->npending ?
				s->pending[i + 1].cmds[0].seq_lo - 1 : PG_UINT64_MAX;
			nexcl++;
		}
	}
	/*
	 * And whatever is written from now on: the current command's later
	 * writes, which go to the last batch, and the copies a subtransaction's
	 * commit makes (wcfdw_pending_fold).  A scan opened now would ignore them
	 * anyway, but a row lock's read of the newest version opens a new scan
	 * with these opts later, maybe after this statement wrote the row (a
	 * subquery FOR UPDATE rescanned under a DELETE).
	 */
	opts->pending_max = wc_batch_pending_seq_now();
	opts->pending = out;
	opts->npending = n;
	opts->pending_excl = excl;
	opts->npending_excl = nexcl;
}

static void
wcfdw_discard_pending(WcFdwStore *s, int from_level)
{
	while (s->npending > 0 && s->pending[s->npending - 1].level >= from_level)
	{
		WcFdwPendingBatch *p = &s->pending[--s->npending];

		wcfdw_bury(p->batch);
		if (p->cmds)
			pfree(p->cmds);
		if (p->marks)
			pfree(p->marks);
	}
	/* what those levels wrote into outer levels' batches */
	for (int i = 0; i < s->npending; i++)
	{
		WcFdwPendingBatch *p = &s->pending[i];
		int			j = p->nmarks;

		while (j > 0 && p->marks[j - 1].level >= from_level)
			j--;
		if (j < p->nmarks)
		{
			wc_batch_rewind(p->batch, &p->marks[j].bm);
			p->ncmds = p->marks[j].ncmds;
			p->nmarks = j;
		}
	}
}

/* ---------------------------------------------------------------- store directories */

static void
wcfdw_register_dir(List **list, Oid relid, const char *path)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	WcFdwDirEntry *e = palloc(sizeof(WcFdwDirEntry));

	e->relid = relid;
	e->path = pstrdup(path);
	e->level = GetCurrentTransactionNestLevel();
	*list = lappend(*list, e);
	MemoryContextSwitchTo(old);
}

/*
 * wcfdw_store_drop_at_commit
 *		The store of relid, at path, is removed if this (sub)transaction
 *		commits (ddl.c, for a DROP)
 */
void
wcfdw_store_drop_at_commit(Oid relid, const char *path)
{
	wcfdw_register_dir(&wcfdw_drops, relid, path);
}

static void
wcfdw_free_dirs(List **list)
{
	ListCell   *lc;

	foreach(lc, *list)
	{
		WcFdwDirEntry *e = lfirst(lc);

		pfree(e->path);
		pfree(e);
	}
	list_free(*list);
	*list = NIL;
}

static bool
wcfdw_is_dropped(Oid relid)
{
	ListCell   *lc;

	foreach(lc, wcfdw_drops)
		if (((WcFdwDirEntry *) lfirst(lc))->relid == relid)
			return true;
	return false;
}

/*
 * wcfdw_store_drop
 *		Closes the store of a dropped table and removes its files
 *
 * Called at commit, where nothing may raise an ERROR: failures are WARNINGs.
 * With a scan still open (a portal not cleaned up yet) the removal waits for
 * its close.
 */
static void
wcfdw_store_drop(Oid relid, const char *path)
{
	WcFdwStore *s = wcfdw_store_lookup(relid);
	char	   *mypath = pstrdup(path);
	wc_err		err;
	int			rc;

	if (s)
	{
		if (s->nscans > 0)
		{
			if (!s->doomed)
			{
				if (s->path)
					pfree(s->path);
				s->path = MemoryContextStrdup(TopMemoryContext, path);
			}
			s->doomed = true;
			return;
		}
		if (s->db)
			wc_db_close(s->db);
		s->db = NULL;
		if (s->families)
		{
			int			i;

			for (i = 0; i < s->nfamilies; i++)
				pfree((char *) s->families[i].name);
			pfree(s->families);
		}
		if (s->path)
			pfree(s->path);
		if (s->relname)
			pfree(s->relname);
		if (s->walpath)
			pfree(s->walpath);
		wcfdw_discard_pending(s, 0);
		if (s->pending)
			pfree(s->pending);
		hash_search(wcfdw_stores, &relid, HASH_REMOVE, NULL);
	}

	/* before the files go: a standby or a recovery removes them too */
	wcfdw_wal_destroy(mypath);
	wc_err_clear(&err);
	rc = wc_db_destroy(mypath, &err);
	if (rc < 0 && rc != WC_NOT_FOUND)
		ereport(WARNING,
				(errmsg("could not remove store directory \"%s\" of a dropped foreign table", mypath),
				 errdetail_internal("%s", err.msg)));
	pfree(mypath);
}

/* ---------------------------------------------------------------- transaction callbacks */

/*
 * wcfdw_log_xid
 *		Makes our xid durable in PostgreSQL's WAL before an unlogged store
 *		holds it
 *
 * A transaction that wrote only to foreign tables writes no WAL before its
 * commit record, so PostgreSQL would commit it asynchronously (the commit
 * record not flushed) and, after a crash, could hand out the same xid again:
 * a store record tagged with it would then take the new transaction's fate.
 * A WAL record carrying the xid, flushed before the store write, makes
 * recovery advance nextXid past it (so a crashed tag resolves as aborted,
 * never as someone else's); and since the transaction has now written WAL,
 * its commit record is flushed as synchronous_commit says.
 */
static void
wcfdw_log_xid(void)
{
	XLogRecPtr	lsn;

	(void) GetTopTransactionId();
	lsn = LogLogicalMessage("widecol_fdw", "commit", 6, false);
	XLogFlush(lsn);
}

/*
 * wcfdw_record_limit
 *		The most a commit's log record may hold, with room to spare: a logged
 *		store's record goes into one WAL record too (wal.c), an unlogged
 *		store's is at most 1 GiB (engine/log.c)
 */
static size_t
wcfdw_record_limit(bool logged)
{
	return (logged ? MaxAllocSize / 2 : (size_t) 1 << 30) - ((size_t) 1 << 20);
}

/*
 * wcfdw_pre_commit
 *		The commit path: writes every store's pending batches, each store's
 *		as one record tagged with our FullTransactionId; all fallible work
 *		of a commit is here
 *
 * PREPARE TRANSACTION takes the same path (prepare is true): the records are
 * durable before the prepare record, and their tag stays in progress until
 * COMMIT PREPARED or ROLLBACK PREPARED sets its fate in the commit log, which
 * every reader already consults (also after a restart and on a standby).  So
 * nothing of ours has to run at COMMIT PREPARED.  A store created or removed
 * by the transaction has work at commit (a directory to remove), which a
 * prepared transaction could no longer do: such a PREPARE is refused.
 */
static void
wcfdw_pre_commit(bool prepare)
{
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;
	ListCell   *lc;
	bool		xid_logged = false;
	bool		truncates;

	/* a table created and dropped (or rolled back to before it) in this xact */
	foreach(lc, wcfdw_creates)
	{
		WcFdwDirEntry *e = lfirst(lc);

		if (!wcfdw_is_dropped(e->relid) &&
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(e->relid)))
			wcfdw_register_dir(&wcfdw_drops, e->relid, e->path);
	}
	if (prepare && (wcfdw_drops != NIL || wcfdw_creates != NIL))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot PREPARE a transaction that created or dropped a widecol_fdw foreign table"),
				 errhint("Create and drop widecol_fdw foreign tables in transactions of their own.")));

	if (wcfdw_stores == NULL)
		return;
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		wc_batch  **batches;
		int			n = 0;
		int			i;
		wc_err		err;
		int			rc;

		if (s->npending == 0 || wcfdw_is_dropped(s->relid))
			continue;
		batches = palloc(sizeof(wc_batch *) * s->npending);
		truncates = false;
		for (i = 0; i < s->npending; i++)
		{
			if (wc_batch_count(s->pending[i].batch) > 0)
				batches[n++] = s->pending[i].batch;
			truncates |= s->pending[i].truncates;
		}
		if (n == 0)
			continue;
		if (s->db == NULL)
			elog(ERROR, "store of foreign table %u is not open at commit", s->relid);
		wc_err_clear(&err);

		/*
		 * The xid durable before an unlogged store holds it (a logged
		 * store's record carries it into the WAL, and recovery cuts a
		 * record whose WAL it lost: wal.c); outside the table's write lock,
		 * where concurrent commits share the flush.
		 */
		if (!s->logged && !xid_logged)
		{
			wcfdw_log_xid();
			xid_logged = true;
		}

		/* a bulk write also when bulk writes are off, where one record could not hold it */
		wc_db_set_ingest_bytes(s->db, Min(wcfdw_bulk_write_bytes(), wcfdw_record_limit(s->logged)));
		if (s->logged && wcfdw_log_sync == WCFDW_LOG_SYNC_CHECKPOINT)
		{
			/*
			 * The log is made durable by the syncer before a checkpoint
			 * passes the record (sync.c), or here if there is no syncer.
			 * From the record on no checkpoint may start writing: not before
			 * the store is marked.
			 */
			wcfdw_chkpt_commit_begin();
			rc = wc_db_write(s->db, batches, n,
							 U64FromFullTransactionId(GetTopFullTransactionId()),
							 false, &err);
			if (rc >= 0 && !wcfdw_sync_defer(s->path))
				rc = wc_db_sync_logs(s->db, &err);
			wcfdw_chkpt_commit_end();
		}
		else
			rc = wc_db_write(s->db, batches, n,
							 U64FromFullTransactionId(GetTopFullTransactionId()),
							 synchronous_commit > SYNCHRONOUS_COMMIT_OFF, &err);
		if (rc < 0)
		{
			if (rc == WC_IO || rc == WC_NOSPACE || rc == WC_FAILED)
				s->failed = true;
			hash_seq_term(&seq);
			wcfdw_engine_error(ERROR, rc, &err, "write to", s->relname ? s->relname : "?");
		}
		s->needs_maintain = true;
		/* a prepared TRUNCATE may still be rolled back: nothing to give back yet */
		s->flush_at_commit = truncates && !prepare;
	}
}

/*
 * wcfdw_flush_truncated
 *		After the commit: flushes the stores this transaction truncated, so
 *		that the sorted files and logs wholly below the truncate point are
 *		removed now rather than at the next flush (engine/flush.c)
 *
 * The transaction has committed, so nothing here may raise an ERROR: a
 * failure is a WARNING and the space comes back at a later flush.  Nor may it
 * wait: WC_BUSY (another session flushing, or another transaction between its
 * log write and its commit, which with a synchronous standby lasts until the
 * standby answers) and WC_HELD (a prepared transaction in a log) are left for
 * later quietly.  A
 * logged store's flush goes to the WAL through its on_change callback as
 * widecol_flush()'s does.
 */
static void
wcfdw_flush_truncated(void)
{
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;

	if (wcfdw_stores == NULL)
		return;
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		MemoryContext oldcxt = CurrentMemoryContext;

		if (!s->flush_at_commit)
			continue;
		s->flush_at_commit = false;
		if (s->db == NULL || s->read_only || s->failed)
			continue;
		PG_TRY();
		{
			wc_err		err;
			int			rc;

			/* never stall a commit: another flusher or a commit in flight
			 * (a synchronous standby's wait) leaves it for later */
			wc_err_clear(&err);
			rc = wc_db_flush_nowait(s->db, &err);
			if (rc < 0 && rc != WC_BUSY && rc != WC_HELD)
				wcfdw_engine_error(WARNING, rc, &err, "flush the truncated", s->relname);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(oldcxt);
			edata = CopyErrorData();
			FlushErrorState();
			ereport(WARNING,
					(errmsg("could not flush the truncated store of foreign table \"%s\"",
							s->relname),
					 errdetail_internal("%s", edata->message)));
			FreeErrorData(edata);
		}
		PG_END_TRY();
	}
}

/*
 * wcfdw_trim_stores
 *		Closes the stores used longest ago while the memory their unflushed
 *		cells take in this session exceeds widecol_fdw.session_memory
 *
 * An open store whose logs are not indexed in shared memory (no preload,
 * widecol_fdw.shared_memtable_size = 0, or a log that did not fit there) keeps
 * them in this process's memtables (engine/DESIGN.md, "Many processes, one
 * store"), so a session that read many tables would otherwise hold all of them
 * until it exits; shared memtables count nothing here.  Stores used
 * by the transaction that just ended stay (closing one that alone exceeds the
 * limit would only make its next transaction read its logs again); a closed
 * store is opened again, and its logs read again, on its next use.  Nothing
 * is closed while a scan is open (a cursor WITH HOLD).
 */
static void
wcfdw_trim_stores(void)
{
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;
	uint64		total = 0;
	uint64		limit;
	bool		closed = false;

	if (wcfdw_stores == NULL || wcfdw_session_memory_kb < 0 || wcfdw_nscans_total > 0)
		return;
	limit = (uint64) wcfdw_session_memory_kb * 1024;
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
		if (s->db != NULL)
			total += wc_db_mem_bytes(s->db);
	while (total > limit)
	{
		WcFdwStore *oldest = NULL;

		hash_seq_init(&seq, wcfdw_stores);
		while ((s = hash_seq_search(&seq)) != NULL)
			if (s->db != NULL && s->nscans == 0 && s->npending == 0 &&
				s->last_used < wcfdw_xact_count &&
				(oldest == NULL || s->last_used < oldest->last_used))
				oldest = s;
		if (oldest == NULL)
			break;
		total -= Min(total, wc_db_mem_bytes(oldest->db));
		wcfdw_store_close(oldest);
		closed = true;
	}
#ifdef __GLIBC__
	/* the memtables' memory is malloc'd: give the freed pages back now */
	if (closed)
		malloc_trim(0);
#endif
}

/*
 * wcfdw_end_of_xact
 *		Drops the pending batches and removes the store directories that
 *		the transaction's outcome condemns
 */
static void
wcfdw_end_of_xact(bool commit, bool prepare)
{
	ListCell   *lc;

	/* an error between a change's WAL record and the change: hold nothing back */
	wcfdw_chkpt_release_all();

	if (wcfdw_stores != NULL)
	{
		HASH_SEQ_STATUS seq;
		WcFdwStore *s;

		hash_seq_init(&seq, wcfdw_stores);
		while ((s = hash_seq_search(&seq)) != NULL)
		{
			wcfdw_discard_pending(s, 0);
			if (!commit || prepare)
				s->flush_at_commit = false;
		}
	}
	if (commit && !prepare)
		wcfdw_flush_truncated();

	if (commit)
	{
		List	   *drops = wcfdw_drops;

		wcfdw_drops = NIL;
		foreach(lc, drops)
		{
			WcFdwDirEntry *e = lfirst(lc);

			wcfdw_store_drop(e->relid, e->path);
		}
		wcfdw_free_dirs(&drops);
		wcfdw_free_dirs(&wcfdw_creates);
	}
	else
	{
		List	   *creates = wcfdw_creates;

		wcfdw_creates = NIL;
		wcfdw_free_dirs(&wcfdw_drops);
		foreach(lc, creates)
		{
			WcFdwDirEntry *e = lfirst(lc);

			wcfdw_store_drop(e->relid, e->path);
		}
		wcfdw_free_dirs(&creates);
	}
	wcfdw_free_buried();
	wcfdw_trim_stores();
	wcfdw_xact_count++;
}

static void
wcfdw_xact_cb(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			wcfdw_pre_commit(false);
			break;
		case XACT_EVENT_PRE_PREPARE:
			wcfdw_pre_commit(true);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			wcfdw_end_of_xact(true, false);
			break;
		case XACT_EVENT_PREPARE:
			wcfdw_end_of_xact(true, true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			wcfdw_end_of_xact(false, false);
			break;
		default:
			break;
	}
}

/*
 * wcfdw_pending_fold
 *		At a subtransaction's commit, after its batches were relabelled to the
 *		parent's level: appends the last batch to the one before it when they
 *		could have been one (same level, commands in order, no TRUNCATE), and
 *		again while that holds
 *
 * Without it a loop whose body is a subtransaction (a PL/pgSQL block with
 * an EXCEPTION clause, a client that sets a savepoint around each statement)
 * leaves a batch per iteration, and every scan considers each: 10,000
 * iterations of an INSERT and a read-back took 5.1 s.  The entries are
 * copied with new pending seqs (wc_batch_append), so each command's seq_lo
 * moves with them; a scan open over the old batch keeps it (it is buried,
 * not freed) and does not see the copies, above its pend_max.  Nothing
 * here may fail: without memory, the batches simply stay apart.
 */
static void
wcfdw_pending_fold(WcFdwStore *s)
{
	while (s->npending >= 2)
	{
		WcFdwPendingBatch *p = &s->pending[s->npending - 2];
		WcFdwPendingBatch *r = &s->pending[s->npending - 1];
		uint64		base = wc_batch_count(p->batch);
		uint64		count = wc_batch_count(r->batch);
		int			need = p->ncmds + r->ncmds;
		wc_err		err;

		if (wcfdw_pending_tail_level(p) != r->level || r->nmarks > 0 ||
			p->truncates || r->truncates ||
			p->cmds[p->ncmds - 1].cid >= r->cmds[0].cid)
			return;
		if (wcfdw_nscans_total > 0 && wcfdw_ngrave >= wcfdw_maxgrave)
			return;				/* no room to bury r's batch without an allocation */
		if (need > p->maxcmds)
		{
			int			cap = Max(need, p->maxcmds * 2);
			WcFdwPendingCmd *cmds = MemoryContextAllocExtended(TopMemoryContext,
															   sizeof(WcFdwPendingCmd) * cap,
															   MCXT_ALLOC_NO_OOM);

			if (cmds == NULL)
				return;
			memcpy(cmds, p->cmds, sizeof(WcFdwPendingCmd) * p->ncmds);
			pfree(p->cmds);
			p->cmds = cmds;
			p->maxcmds = cap;
		}
		wc_err_clear(&err);
		if (wc_batch_append(p->batch, r->batch, &err) != WC_OK)
			return;
		for (int i = 0; i < r->ncmds; i++)
		{
			uint64		j = wc_batch_count_below(r->batch, r->cmds[i].seq_lo);

			p->cmds[p->ncmds + i].cid = r->cmds[i].cid;
			p->cmds[p->ncmds + i].seq_lo = j < count ?
				wc_batch_seq_at(p->batch, base + j) : wc_batch_pending_seq_now() + 1;
		}
		p->ncmds = need;
		if (wcfdw_nscans_total > 0)
			wcfdw_graveyard[wcfdw_ngrave++] = r->batch;
		else
			wc_batch_free(r->batch);
		pfree(r->cmds);
		if (r->marks)
			pfree(r->marks);
		s->npending--;
	}
}

/*
 * wcfdw_pending_relabel
 *		At the commit of a subtransaction of level: what it wrote into p is
 *		its parent's now
 *
 * A mark that no longer begins a deeper level than the one before it (or
 * than p's own) is dropped: a rollback of that level rewinds to the earlier
 * one.  Marks stay one per open level, their levels increasing.
 */
static void
wcfdw_pending_relabel(WcFdwPendingBatch *p, int level)
{
	int			prev,
				n = 0;

	if (p->level >= level)
		p->level = level - 1;
	prev = p->level;
	for (int j = 0; j < p->nmarks; j++)
	{
		WcFdwPendingMark *m = &p->marks[j];

		if (m->level >= level)
			m->level = level - 1;
		if (m->level > prev)
		{
			prev = m->level;
			p->marks[n++] = *m;
		}
	}
	p->nmarks = n;
}

static void
wcfdw_subxact_cb(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;
	ListCell   *lc;

	if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		if (wcfdw_stores != NULL)
		{
			hash_seq_init(&seq, wcfdw_stores);
			while ((s = hash_seq_search(&seq)) != NULL)
			{
				int			i;

				for (i = 0; i < s->npending; i++)
					wcfdw_pending_relabel(&s->pending[i], level);
				wcfdw_pending_fold(s);
			}
		}
		foreach(lc, wcfdw_drops)
		{
			WcFdwDirEntry *e = lfirst(lc);

			if (e->level >= level)
				e->level = level - 1;
		}
	}
	else if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		if (wcfdw_stores != NULL)
		{
			hash_seq_init(&seq, wcfdw_stores);
			while ((s = hash_seq_search(&seq)) != NULL)
				wcfdw_discard_pending(s, level);
		}
		foreach(lc, wcfdw_drops)
		{
			WcFdwDirEntry *e = lfirst(lc);

			if (e->level >= level)
			{
				pfree(e->path);
				pfree(e);
				wcfdw_drops = foreach_delete_current(wcfdw_drops, lc);
			}
		}
		wcfdw_free_buried();
	}
}
