/*-------------------------------------------------------------------------
 *
 * sync.c
 *		  Logged tables' logs made durable by checkpoints, not by each commit
 *
 * A logged table's commit writes its record into the store's log, and into
 * the WAL (wal.c, store.c).  The WAL alone would make it durable: redo writes
 * the record again after a crash.  But redo starts at the last checkpoint's redo
 * point, so a record whose WAL precedes that point must be on disk in the
 * store before the checkpoint completes.  PostgreSQL makes its own files so
 * with the checkpointer's sync queue; an extension's files cannot join it in
 * PostgreSQL 15, and there is no checkpoint hook.  Until this file, every
 * commit therefore fsynced the store's log: one fsync a commit on top of
 * PostgreSQL's WAL flushes.
 *
 * Now a commit only marks the store dirty in shared memory, and a background
 * worker, the syncer, takes part in every checkpoint through the two flags
 * PostgreSQL gives a backend to hold a checkpoint back (storage/proc.h):
 *
 * - DELAY_CHKPT_START, held by a backend from before each of its changes is
 *   WAL-logged until the change is made (and, for a commit's log record,
 *   until its store is marked dirty): a checkpoint whose redo point follows
 *   a change's record does not write its buffers, let alone complete, before
 *   the change is in the store's files and the store in the dirty set.  (This
 *   also closes a window that existed before: a change logged just before a
 *   redo point but made after a base backup's copy of its file.)
 *
 * - DELAY_CHKPT_COMPLETE, held by the syncer all the time under a virtual
 *   transaction id that it renews.  The checkpointer, after writing its
 *   buffers, waits until every virtual xid it saw holding this flag is gone.
 *   The syncer renews its id only once a round that began after the current
 *   redo point was set is over: the round waits for the backends holding
 *   DELAY_CHKPT_START (so every change logged before the redo point is made
 *   and registered), takes the dirty set and fsyncs each store's logs.  The
 *   renewal is made holding ProcArrayLock exclusively, so that no checkpoint
 *   lists the holders meanwhile, and only if the redo point is still the one
 *   of the last round; right after a round, and every 50 ms while idle (a
 *   checkpoint may have listed the id taken after the round for its redo
 *   point).
 *
 * So no checkpoint completes while a store record its redo point has passed
 * is not durable, and a commit waits for the WAL only.  Each log the syncer
 * fsyncs gets a SYNC record first, as a commit's fsync did: a standby (or a
 * point-in-time recovery) replays them and fsyncs its own copies before
 * the restartpoint at the checkpoint that follows, and redo fsyncs the logs
 * it wrote when it ends (wal.c), before the end-of-recovery checkpoint.
 *
 * Without the syncer (the library not preloaded, the syncer restarting
 * after an error, the dirty set full, or widecol_fdw.log_sync = commit) a
 * commit fsyncs the store's logs itself, while still holding
 * DELAY_CHKPT_START, as before.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/sinvaladt.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "widecol_fdw.h"

PGDLLEXPORT void wcfdw_syncer_main(Datum arg);

/* stores written since the syncer's last round, at most */
#define WCFDW_SYNC_MAX_DIRTY	1024

/* stores whose active log has an anchor (wcfdw_sync_anchor), at most */
#define WCFDW_SYNC_MAX_ANCHORS	4096

/*
 * How often the syncer looks for a new redo point, and every how many looks
 * it renews its virtual xid while idle (a checkpoint waits for up to that,
 * 50 ms; the checkpointer itself looks every 10 ms).
 */
#define WCFDW_SYNC_TICK_MS		10L
#define WCFDW_SYNC_RENEW_TICKS	5

typedef struct WcFdwDirtyStore
{
	char		path[MAXPGPATH];	/* hash key: the store's directory */
} WcFdwDirtyStore;

/*
 * A store's anchor: the end of the last WAL record of a change to one of its
 * logs that was flushed before the change was made (wal.c).
 */
typedef struct WcFdwAnchor
{
	char		path[MAXPGPATH];	/* hash key: the store as records name it */
	char		file[64];		/* the log */
	XLogRecPtr	end;
} WcFdwAnchor;

typedef struct WcFdwSyncShared
{
	LWLock	   *lock;			/* protects the rest and the dirty set */
	bool		active;			/* a syncer holds checkpoints back */
	int			pid;			/* its pid, 0 if none */
} WcFdwSyncShared;

static WcFdwSyncShared *wcfdw_sync = NULL;
static HTAB *wcfdw_dirty = NULL;
static HTAB *wcfdw_anchors = NULL;

static shmem_request_hook_type wcfdw_prev_shmem_request = NULL;
static shmem_startup_hook_type wcfdw_prev_shmem_startup = NULL;

static const struct config_enum_entry wcfdw_log_sync_options[] = {
	{"checkpoint", WCFDW_LOG_SYNC_CHECKPOINT, false},
	{"commit", WCFDW_LOG_SYNC_COMMIT, false},
	{NULL, 0, false}
};

int			wcfdw_log_sync = WCFDW_LOG_SYNC_CHECKPOINT;

/* This backend's reasons to hold DELAY_CHKPT_START, and whether it does. */
static bool wcfdw_committing = false;	/* a commit's write into a logged store */
static bool wcfdw_hold_commit = false;	/* its log record, until the store is marked */
static bool wcfdw_hold_change = false;	/* one reported change, until made */
static bool wcfdw_holding = false;

/* ---------------------------------------------------------------- holding checkpoints back */

static void
wcfdw_chkpt_update(void)
{
	bool		want = wcfdw_hold_commit || wcfdw_hold_change;

	if (want == wcfdw_holding || MyProc == NULL)
		return;
	if (want)
		MyProc->delayChkptFlags |= DELAY_CHKPT_START;
	else
		MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
	wcfdw_holding = want;
}

/*
 * wcfdw_chkpt_change_begin / _end
 *		Around one reported change of file: from before its WAL record is
 *		inserted until the change is made (the engine's on_change_done)
 *
 * A commit's record into a log holds on until wcfdw_chkpt_commit_end, after
 * the store is marked dirty; the sorted files of a bulk write before it do
 * not (a checkpoint may start while they are written).
 */
void
wcfdw_chkpt_change_begin(const char *file)
{
	size_t		len = strlen(file);

	wcfdw_hold_change = true;
	if (wcfdw_committing && len > 4 && strcmp(file + len - 4, ".log") == 0)
		wcfdw_hold_commit = true;
	wcfdw_chkpt_update();
}

void
wcfdw_chkpt_change_end(void *arg)
{
	wcfdw_hold_change = false;
	wcfdw_chkpt_update();
}

/*
 * wcfdw_chkpt_commit_begin / _end
 *		Around a commit's write into a logged store and the store's
 *		registration as dirty (or its fsync)
 */
void
wcfdw_chkpt_commit_begin(void)
{
	wcfdw_committing = true;
}

/*
 * wcfdw_chkpt_committing
 *		Whether a change now being reported is part of a commit's write
 *		(whose log record may reach its log before the WAL flushes it:
 *		wal.c, wcfdw_wal_change)
 */
bool
wcfdw_chkpt_committing(void)
{
	return wcfdw_committing;
}

void
wcfdw_chkpt_commit_end(void)
{
	wcfdw_committing = false;
	wcfdw_hold_commit = false;
	wcfdw_chkpt_update();
}

/* At the end of a transaction, whatever happened: hold nothing. */
void
wcfdw_chkpt_release_all(void)
{
	wcfdw_committing = false;
	wcfdw_hold_commit = false;
	wcfdw_hold_change = false;
	wcfdw_chkpt_update();
}

/* ---------------------------------------------------------------- the dirty set */

/* path as a key of the shared sets (HASH_STRINGS: MAXPGPATH bytes) */
static void
wcfdw_sync_key(char *key, const char *path)
{
	MemSet(key, 0, MAXPGPATH);
	strlcpy(key, path, MAXPGPATH);
}

/*
 * wcfdw_sync_defer
 *		Marks the store at path dirty for the syncer; false if there is no
 *		syncer to take it (the caller fsyncs the store's logs itself)
 *
 * Called after the write, while DELAY_CHKPT_START is still held.
 */
bool
wcfdw_sync_defer(const char *path)
{
	char		key[MAXPGPATH];
	bool		found;
	bool		ok;

	if (wcfdw_sync == NULL || wcfdw_log_sync != WCFDW_LOG_SYNC_CHECKPOINT)
		return false;
	wcfdw_sync_key(key, path);

	/* most commits find their store already marked since the last round */
	LWLockAcquire(wcfdw_sync->lock, LW_SHARED);
	ok = wcfdw_sync->active && hash_search(wcfdw_dirty, key, HASH_FIND, NULL) != NULL;
	LWLockRelease(wcfdw_sync->lock);
	if (ok)
		return true;

	LWLockAcquire(wcfdw_sync->lock, LW_EXCLUSIVE);
	ok = wcfdw_sync->active &&
		hash_search(wcfdw_dirty, key, HASH_ENTER_NULL, &found) != NULL;
	LWLockRelease(wcfdw_sync->lock);
	return ok;
}

/* ---------------------------------------------------------------- anchors */

/*
 * wcfdw_sync_anchored
 *		Whether the store at path (as records name it) has an anchor in log
 *		file that the current redo point has not passed
 *
 * Called holding DELAY_CHKPT_START (wal.c says why that matters).  Shared
 * memory begins empty at every start, after a crash too: the first write
 * into each log after a start finds no anchor.
 */
bool
wcfdw_sync_anchored(const char *path, const char *file)
{
	char		key[MAXPGPATH];
	WcFdwAnchor *a;
	XLogRecPtr	end = InvalidXLogRecPtr;

	if (wcfdw_sync == NULL)
		return false;
	wcfdw_sync_key(key, path);
	LWLockAcquire(wcfdw_sync->lock, LW_SHARED);
	a = hash_search(wcfdw_anchors, key, HASH_FIND, NULL);
	if (a != NULL && strcmp(a->file, file) == 0)
		end = a->end;
	LWLockRelease(wcfdw_sync->lock);
	return end != InvalidXLogRecPtr && end > GetRedoRecPtr();
}

/*
 * wcfdw_sync_anchor
 *		Records that the change of log file of the store at path whose WAL
 *		record ends at end was flushed before it was made (nothing if the
 *		set is full: the store's writes then keep flushing first)
 */
void
wcfdw_sync_anchor(const char *path, const char *file, XLogRecPtr end)
{
	char		key[MAXPGPATH];
	WcFdwAnchor *a;
	bool		found;

	if (wcfdw_sync == NULL || strlen(file) >= sizeof(a->file))
		return;
	wcfdw_sync_key(key, path);
	LWLockAcquire(wcfdw_sync->lock, LW_EXCLUSIVE);
	a = hash_search(wcfdw_anchors, key, HASH_ENTER_NULL, &found);
	if (a != NULL)
	{
		strlcpy(a->file, file, sizeof(a->file));
		a->end = end;
	}
	LWLockRelease(wcfdw_sync->lock);
}

/* Forgets the anchor of the store at path (its table dropped). */
void
wcfdw_sync_unanchor(const char *path)
{
	char		key[MAXPGPATH];

	if (wcfdw_sync == NULL)
		return;
	wcfdw_sync_key(key, path);
	LWLockAcquire(wcfdw_sync->lock, LW_EXCLUSIVE);
	hash_search(wcfdw_anchors, key, HASH_REMOVE, NULL);
	LWLockRelease(wcfdw_sync->lock);
}

/* ---------------------------------------------------------------- the syncer */

/*
 * wcfdw_sync_store
 *		Logs (if wal), then fsyncs, every log of the store at path, and the
 *		directory; the number of logs
 *
 * A store dropped since it was marked is gone: nothing to do.  A log
 * removed meanwhile (flushed into sorted files, which are durable) too.
 * An fsync that fails is a PANIC, as for PostgreSQL's own files
 * (data_sync_retry): the pages it could not write may be gone.
 */
int
wcfdw_sync_store(const char *path, bool wal)
{
	DIR		   *dir;
	struct dirent *de;
	int			n = 0;

	dir = AllocateDir(path);
	if (dir == NULL && errno == ENOENT)
		return 0;
	while ((de = ReadDir(dir, path)) != NULL)
	{
		size_t		len = strlen(de->d_name);
		char		file[MAXPGPATH];
		int			fd;

		if (len <= 4 || strcmp(de->d_name + len - 4, ".log") != 0)
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		fd = OpenTransientFile(file, O_RDWR | PG_BINARY);
		if (fd < 0)
		{
			if (errno == ENOENT)
				continue;
			ereport(data_sync_elevel(ERROR),
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", file)));
			continue;
		}
		if (wal)
			wcfdw_wal_log_sync(path, de->d_name);
		if (pg_fdatasync(fd) != 0)
			ereport(data_sync_elevel(ERROR),
					(errcode_for_file_access(),
					 errmsg("could not fsync file \"%s\": %m", file)));
		CloseTransientFile(fd);
		n++;
	}
	FreeDir(dir);
	if (n > 0)
		fsync_fname(path, true);
	return n;
}

/*
 * wcfdw_sync_round
 *		Makes every store marked dirty so far durable, after every change
 *		logged so far is made and marked
 */
static void
wcfdw_sync_round(void)
{
	VirtualTransactionId *vxids;
	int			nvxids;
	HASH_SEQ_STATUS seq;
	WcFdwDirtyStore *d;
	List	   *paths = NIL;
	ListCell   *lc;

	/* changes in flight, as the checkpointer waits for them before its buffers */
	vxids = GetVirtualXIDsDelayingChkpt(&nvxids, DELAY_CHKPT_START);
	while (nvxids > 0 && HaveVirtualXIDsDelayingChkpt(vxids, nvxids, DELAY_CHKPT_START))
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(1000L);
	}
	pfree(vxids);

	/* a store marked from now on waits for the next round */
	LWLockAcquire(wcfdw_sync->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, wcfdw_dirty);
	while ((d = hash_seq_search(&seq)) != NULL)
	{
		paths = lappend(paths, pstrdup(d->path));
		hash_search(wcfdw_dirty, d->path, HASH_REMOVE, NULL);
	}
	LWLockRelease(wcfdw_sync->lock);

	foreach(lc, paths)
		(void) wcfdw_sync_store(lfirst(lc), true);
	list_free_deep(paths);
}

/*
 * The syncer leaves: no commit marks a store for it any more (they fsync
 * themselves), and what was marked is made durable while its
 * DELAY_CHKPT_COMPLETE still holds a checkpoint back (this runs before the
 * process leaves the proc array).
 */
static void
wcfdw_syncer_exit(int code, Datum arg)
{
	LWLockReleaseAll();
	LWLockAcquire(wcfdw_sync->lock, LW_EXCLUSIVE);
	wcfdw_sync->active = false;
	wcfdw_sync->pid = 0;
	LWLockRelease(wcfdw_sync->lock);
	wcfdw_sync_round();
}

/* A new virtual xid under the same flag: checkpoints waiting on the old one go on. */
static void
wcfdw_syncer_renew(void)
{
	MyProc->lxid = GetNextLocalTransactionId();
}

void
wcfdw_syncer_main(Datum arg)
{
	MemoryContext roundcxt;
	XLogRecPtr	done = InvalidXLogRecPtr;
	uint64		idle = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	/* no database: only a place in the proc array and a backend id */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_activity(STATE_RUNNING, NULL);
	roundcxt = AllocSetContextCreate(TopMemoryContext, "widecol_fdw syncer",
									 ALLOCSET_DEFAULT_SIZES);

	before_shmem_exit(wcfdw_syncer_exit, (Datum) 0);
	LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
	wcfdw_syncer_renew();
	MyProc->delayChkptFlags |= DELAY_CHKPT_COMPLETE;
	LWLockRelease(ProcArrayLock);

	LWLockAcquire(wcfdw_sync->lock, LW_EXCLUSIVE);
	wcfdw_sync->active = true;
	wcfdw_sync->pid = MyProcPid;
	LWLockRelease(wcfdw_sync->lock);

	while (!ShutdownRequestPending)
	{
		XLogRecPtr	redo;
		bool		same;

		/* among others, the barriers of DROP DATABASE and ALTER DATABASE SET TABLESPACE */
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		redo = GetRedoRecPtr();
		if (redo == done)
		{
			/*
			 * A checkpoint at this redo point may have listed the id we took
			 * after our round for it: that round covers it, so a new id lets
			 * it go on.  (Checked under the lock, so that a checkpoint that
			 * began since cannot list the old id and see it go.)
			 */
			if (++idle % WCFDW_SYNC_RENEW_TICKS == 0)
			{
				LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
				if (GetRedoRecPtr() == done)
					wcfdw_syncer_renew();
				LWLockRelease(ProcArrayLock);
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 WCFDW_SYNC_TICK_MS, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			continue;
		}

		/* a checkpoint began (or this is the first round) */
		MemoryContextSwitchTo(roundcxt);
		wcfdw_sync_round();
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(roundcxt);

		LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
		same = GetRedoRecPtr() == redo;
		if (same)
			wcfdw_syncer_renew();
		LWLockRelease(ProcArrayLock);
		if (same)
			done = redo;
	}
	/* not 0: the postmaster would not start a syncer again after pg_terminate_backend */
	proc_exit(1);
}

/* ---------------------------------------------------------------- set-up */

static Size
wcfdw_sync_shmem_size(void)
{
	return add_size(add_size(MAXALIGN(sizeof(WcFdwSyncShared)),
							 hash_estimate_size(WCFDW_SYNC_MAX_DIRTY, sizeof(WcFdwDirtyStore))),
					hash_estimate_size(WCFDW_SYNC_MAX_ANCHORS, sizeof(WcFdwAnchor)));
}

static void
wcfdw_sync_shmem_request(void)
{
	if (wcfdw_prev_shmem_request)
		wcfdw_prev_shmem_request();
	RequestAddinShmemSpace(wcfdw_sync_shmem_size());
	RequestNamedLWLockTranche("widecol_fdw", 1);
}

static void
wcfdw_sync_shmem_startup(void)
{
	HASHCTL		ctl;
	bool		found;

	if (wcfdw_prev_shmem_startup)
		wcfdw_prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wcfdw_sync = ShmemInitStruct("widecol_fdw sync", sizeof(WcFdwSyncShared), &found);
	if (!found)
	{
		MemSet(wcfdw_sync, 0, sizeof(WcFdwSyncShared));
		wcfdw_sync->lock = &(GetNamedLWLockTranche("widecol_fdw"))->lock;
	}
	ctl.keysize = MAXPGPATH;
	ctl.entrysize = sizeof(WcFdwDirtyStore);
	wcfdw_dirty = ShmemInitHash("widecol_fdw dirty stores", WCFDW_SYNC_MAX_DIRTY,
								WCFDW_SYNC_MAX_DIRTY, &ctl,
								HASH_ELEM | HASH_STRINGS | HASH_FIXED_SIZE);
	ctl.entrysize = sizeof(WcFdwAnchor);
	wcfdw_anchors = ShmemInitHash("widecol_fdw anchors", WCFDW_SYNC_MAX_ANCHORS,
								  WCFDW_SYNC_MAX_ANCHORS, &ctl,
								  HASH_ELEM | HASH_STRINGS | HASH_FIXED_SIZE);
	LWLockRelease(AddinShmemInitLock);
}

/*
 * wcfdw_sync_init
 *		The setting always; shared memory and the syncer when preloaded
 */
void
wcfdw_sync_init(void)
{
	BackgroundWorker bgw;

	DefineCustomEnumVariable("widecol_fdw.log_sync",
							 "When a logged table's log is made durable in its store.",
							 "checkpoint: by the syncer before each checkpoint completes (a commit "
							 "waits for the WAL only); commit: by every commit (an fsync each).",
							 &wcfdw_log_sync,
							 WCFDW_LOG_SYNC_CHECKPOINT, wcfdw_log_sync_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;

	wcfdw_prev_shmem_request = shmem_request_hook;
	shmem_request_hook = wcfdw_sync_shmem_request;
	wcfdw_prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = wcfdw_sync_shmem_startup;

	MemSet(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "widecol_fdw");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "wcfdw_syncer_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "widecol_fdw syncer");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "widecol_fdw syncer");
	RegisterBackgroundWorker(&bgw);
}
