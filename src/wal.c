/*-------------------------------------------------------------------------
 *
 * wal.c
 *		  Logged tables: every change to a store's files in PostgreSQL's WAL
 *
 * A logged table's store reports each change it is about to make to its
 * files (engine/wc.h, wc_change: bytes written into a file at an offset, a
 * file cut, synced or removed, MANIFEST replaced whole).  wcfdw_wal_change
 * writes each one into the WAL as a record of our custom resource manager
 * and flushes the WAL up to it before the change is made, as PostgreSQL
 * writes WAL before data (a commit's log record is mostly flushed with the
 * commit record instead: wcfdw_wal_change says why that is safe); redo
 * (crash recovery, streaming standbys, point-in-time recovery, a base
 * backup's catch-up) makes the same change
 * in the same directory through a wc_replica.  Every change sets its target
 * to a state that does not depend on the target's earlier state, so redo may
 * apply a change the store already holds, and a copy of the files taken
 * while they change converges (engine/DESIGN.md, "Replication").
 *
 * A record names its store by its directory, relative to the data directory
 * when the store lies inside it (the startup process cannot read catalogs),
 * and its file by name:
 *
 *		record := xl_widecol_change | path | file name | bytes
 *
 * The kind of change is the high half of xl_info.  The resource manager id
 * is widecol_fdw.rmgr_id (default WCFDW_RMGR_ID), which must be the same on
 * a primary and its standbys.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/standby.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "widecol_fdw.h"

/*
 * An id of the custom range (128-255) that no extension on the wiki's list
 * "CustomWALResourceManagers" uses (129-139 and 241 are taken).
 */
#define WCFDW_RMGR_ID			167
#define WCFDW_RMGR_NAME			"widecol_fdw"

/* xl_info's high half: what the record changes */
#define XLOG_WIDECOL_WRITE		0x10	/* bytes into a file at an offset */
#define XLOG_WIDECOL_TRUNCATE	0x20	/* a file cut to a size */
#define XLOG_WIDECOL_SYNC		0x30	/* a file made durable */
#define XLOG_WIDECOL_REMOVE		0x40	/* a file removed */
#define XLOG_WIDECOL_MANIFEST	0x50	/* MANIFEST replaced whole */
#define XLOG_WIDECOL_DESTROY	0x60	/* the store removed (its table dropped) */

typedef struct xl_widecol_change
{
	uint64		offset;			/* WRITE: where; TRUNCATE: the new size */
	uint32		nbytes;			/* bytes after the names */
	uint16		pathlen;		/* store directory */
	uint16		filelen;		/* file name, 0 for DESTROY */
} xl_widecol_change;

#define SizeOfWidecolChange		(offsetof(xl_widecol_change, filelen) + sizeof(uint16))

static int	wcfdw_rmgr_id = WCFDW_RMGR_ID;
static bool wcfdw_rmgr_registered = false;

/*
 * wcfdw_wal_available
 *		Whether logged tables can be written: the library was preloaded and
 *		registered our resource manager
 */
bool
wcfdw_wal_available(void)
{
	return wcfdw_rmgr_registered;
}

/*
 * wcfdw_wal_path
 *		A store's directory as records name it: relative to the data
 *		directory when inside it; palloc'd
 */
char *
wcfdw_wal_path(const char *path)
{
	size_t		n = strlen(DataDir);

	if (strncmp(path, DataDir, n) == 0 && path[n] == '/')
		return pstrdup(path + n + 1);
	return pstrdup(path);
}

static uint8
wcfdw_wal_info(int kind)
{
	switch (kind)
	{
		case WC_CHANGE_WRITE:
			return XLOG_WIDECOL_WRITE;
		case WC_CHANGE_TRUNCATE:
			return XLOG_WIDECOL_TRUNCATE;
		case WC_CHANGE_SYNC:
			return XLOG_WIDECOL_SYNC;
		case WC_CHANGE_REMOVE:
			return XLOG_WIDECOL_REMOVE;
		case WC_CHANGE_MANIFEST:
			return XLOG_WIDECOL_MANIFEST;
	}
	return 0;
}

/*
 * wcfdw_wal_insert
 *		Inserts one record; returns its end
 */
static XLogRecPtr
wcfdw_wal_insert(uint8 info, const char *path, const char *file, uint64 offset,
				 const wc_slice *parts, int nparts)
{
	xl_widecol_change xlrec;
	uint64		nbytes = 0;
	int			i;

	for (i = 0; i < nparts; i++)
		nbytes += parts[i].len;
	if (nbytes > MaxAllocSize / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("widecol_fdw change of %llu bytes is too large for one WAL record",
						(unsigned long long) nbytes)));
	xlrec.offset = offset;
	xlrec.nbytes = (uint32) nbytes;
	xlrec.pathlen = (uint16) strlen(path);
	xlrec.filelen = (uint16) strlen(file);

	XLogEnsureRecordSpace(0, nparts + 3);
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfWidecolChange);
	XLogRegisterData((char *) path, xlrec.pathlen);
	if (xlrec.filelen > 0)
		XLogRegisterData((char *) file, xlrec.filelen);
	for (i = 0; i < nparts; i++)
		if (parts[i].len > 0)
			XLogRegisterData((char *) parts[i].data, (int) parts[i].len);
	return XLogInsert((RmgrId) wcfdw_rmgr_id, info);
}

/*
 * wcfdw_wal_change
 *		The engine's on_change callback of a logged store (arg: the store's
 *		path as records name it)
 *
 * Runs inside the engine, under the store's lock that orders the change, so
 * it must not longjmp: an error becomes WC_CALLBACK with its message, and
 * the engine does not make the change.  The WAL is flushed up to the record
 * before the change is made, except for
 *
 * - the bytes of a new sorted file, which nothing names until the MANIFEST
 *   record that follows them (and whose flush covers them);
 * - a commit's record appended to a log whose store has an anchor in that
 *   log past the redo point (below): the commit record's flush covers it.
 *
 * WAL before data, for a commit's log record.  Appended before its WAL is
 * flushed, the record may outlive a crash that loses the WAL: an orphan.  Its
 * xid may then be unknown to recovery, which would hand it out again, and
 * the orphan would take the new transaction's fate; and a standby, whose copy
 * of the log is made from the WAL, lacks it.  So recovery cuts every orphan
 * before any transaction starts: at its end (wcfdw_redo_cleanup) each log
 * that redo wrote into is cut where the replayed records left it
 * (wc_replica_cut).  That finds every orphan if redo wrote into its log,
 * which the anchor makes sure of.  An anchor is a change of that log whose
 * record was flushed before it was made and ends after the current redo
 * point, which this function reads holding DELAY_CHKPT_START.  Recovery
 * starts at the redo point of the last checkpoint C whose record is durable;
 * an orphan's record follows C's, so the orphan's change was made after C
 * listed the backends holding DELAY_CHKPT_START, which C does after
 * publishing its redo point: the anchor the orphan's write relied on follows
 * that redo point and is replayed.  The first write into each log after a
 * start, or after a checkpoint passes the anchor, flushes first and becomes
 * the anchor.  (And since the store's record carries our xid, the commit is
 * one that wrote WAL: its commit record is flushed as synchronous_commit
 * says.)
 */
int
wcfdw_wal_change(void *arg, const wc_change *change, wc_err *err)
{
	const char *path = arg;
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile int rc = WC_OK;

	PG_TRY();
	{
		XLogRecPtr	end;
		size_t		flen = strlen(change->file);
		bool		sst = flen > 4 && strcmp(change->file + flen - 4, ".sst") == 0;
		bool		log = flen > 4 && strcmp(change->file + flen - 4, ".log") == 0;
		bool		flush;

		if (!wcfdw_rmgr_registered)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("widecol_fdw is not in shared_preload_libraries"),
					 errhint("Add widecol_fdw to shared_preload_libraries in postgresql.conf and restart the server.")));
		/* no checkpoint may begin writing between the record and the change (sync.c) */
		wcfdw_chkpt_change_begin(change->file);
		flush = !(sst && change->kind == WC_CHANGE_WRITE) && change->kind != WC_CHANGE_SYNC &&
			!(log && change->kind == WC_CHANGE_WRITE && change->offset > 0 &&
			  wcfdw_chkpt_committing() && wcfdw_sync_anchored(path, change->file));
		/*
		 * A MANIFEST carries, in the offset it does not use, the horizon its
		 * flush or compaction may have relied on (the highest this process
		 * gave the engine): redo on a hot standby first cancels the queries
		 * whose snapshots that horizon passed, as a heap's pruning record
		 * does.
		 */
		end = wcfdw_wal_insert(wcfdw_wal_info(change->kind), path, change->file,
							   change->kind == WC_CHANGE_MANIFEST ? wcfdw_horizon_seen : change->offset,
							   change->parts, change->nparts);
		if (flush)
		{
			XLogFlush(end);
			if (log && (change->kind == WC_CHANGE_WRITE || change->kind == WC_CHANGE_TRUNCATE))
				wcfdw_sync_anchor(path, change->file, end);
		}
	}
	PG_CATCH();
	{
		const char *message = wcfdw_catch_callback_error(oldcxt);

		wcfdw_chkpt_change_end(NULL);	/* no change will be made */
		err->code = WC_CALLBACK;
		snprintf(err->msg, sizeof(err->msg), "could not log a change of %s to the WAL: %s",
				 change->file, message);
		rc = WC_CALLBACK;
	}
	PG_END_TRY();
	return rc;
}

/*
 * wcfdw_wal_log_change
 *		Logs change of the store at path (as records name it) that the caller
 *		makes itself, through a wc_replica (database.c); returns the record's
 *		end, not flushed
 */
XLogRecPtr
wcfdw_wal_log_change(const char *path, const wc_change *change)
{
	return wcfdw_wal_insert(wcfdw_wal_info(change->kind), path, change->file,
							change->offset, change->parts, change->nparts);
}

/*
 * wcfdw_wal_log_sync
 *		Logs that the syncer is about to fsync file of the store at path
 *		(sync.c), so that redo fsyncs it too
 */
void
wcfdw_wal_log_sync(const char *path, const char *file)
{
	char	   *rel = wcfdw_wal_path(path);

	(void) wcfdw_wal_insert(XLOG_WIDECOL_SYNC, rel, file, 0, NULL, 0);
	pfree(rel);
}

/*
 * wcfdw_wal_destroy
 *		Logs the removal of a logged store's directory (its table's drop
 *		committed); the caller removes it next
 */
void
wcfdw_wal_destroy(const char *path)
{
	char	   *rel;

	if (!wcfdw_rmgr_registered || RecoveryInProgress())
		return;
	rel = wcfdw_wal_path(path);
	XLogFlush(wcfdw_wal_insert(XLOG_WIDECOL_DESTROY, rel, "", 0, NULL, 0));
	wcfdw_sync_unanchor(rel);
	pfree(rel);
}

/* ---------------------------------------------------------------- redo */

/* The stores redo has changed, by directory (startup process only). */
typedef struct WcFdwRedoStore
{
	char		path[MAXPGPATH];	/* hash key */
	wc_replica *replica;
} WcFdwRedoStore;

static HTAB *wcfdw_redo_stores = NULL;

static void
wcfdw_redo_forget(const char *path)
{
	WcFdwRedoStore *s;
	char		key[MAXPGPATH];

	if (wcfdw_redo_stores == NULL)
		return;
	strlcpy(key, path, sizeof(key));
	s = hash_search(wcfdw_redo_stores, key, HASH_FIND, NULL);
	if (s != NULL)
	{
		if (s->replica)
			wc_replica_close(s->replica);
		hash_search(wcfdw_redo_stores, key, HASH_REMOVE, NULL);
	}
}

static wc_replica *
wcfdw_redo_replica(const char *path)
{
	WcFdwRedoStore *s;
	char		key[MAXPGPATH];
	bool		found;

	if (wcfdw_redo_stores == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = MAXPGPATH;
		ctl.entrysize = sizeof(WcFdwRedoStore);
		ctl.hcxt = TopMemoryContext;
		wcfdw_redo_stores = hash_create("widecol_fdw redo stores", 64, &ctl,
										HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	strlcpy(key, path, sizeof(key));
	s = hash_search(wcfdw_redo_stores, key, HASH_ENTER, &found);
	if (!found || s->replica == NULL)
	{
		wc_err		err;
		int			rc;

		s->replica = NULL;
		wc_err_clear(&err);
		rc = wc_replica_open(path, &s->replica, &err);
		if (rc < 0)
		{
			hash_search(wcfdw_redo_stores, key, HASH_REMOVE, NULL);
			wcfdw_engine_error(ERROR, rc, &err, "replay changes of", path);
		}
	}
	return s->replica;
}

/*
 * wcfdw_redo_done
 *		After redo of a change that an earlier one would undo (MANIFEST,
 *		a removal, a cut): the standby is not consistent before this record
 *
 * A standby that restarts replays from its last restartpoint, and lets hot
 * standby queries in once replay passes its minimum recovery point, which
 * PostgreSQL advances only as it writes buffers.  Our files are ahead of
 * that point: replaying an older MANIFEST over a newer one would show
 * readers a store from the past, naming files already removed.  XLogFlush
 * in recovery moves the minimum recovery point past this record, as
 * writing a buffer does; bytes written into a file are left alone, since
 * writing them again changes nothing a reader sees.
 */
static void
wcfdw_redo_done(XLogReaderState *record)
{
	XLogFlush(record->EndRecPtr);
}

/*
 * The database of a store as records name it: the directory above it
 * ("base/<db>/widecol_<rel>", or in a tablespace), or the first number of a
 * server directory's "<db>_<rel>"; InvalidOid (every database) if neither.
 */
static Oid
wcfdw_wal_path_database(const char *path)
{
	const char *last = strrchr(path, '/');
	const char *p;
	unsigned long v;
	char	   *end;

	if (last == NULL)
		return InvalidOid;
	if (strncmp(last + 1, "widecol_", 8) == 0)
	{
		for (p = last; p > path && p[-1] != '/'; p--)
			;
		v = strtoul(p, &end, 10);
		return end == last && end != p ? (Oid) v : InvalidOid;
	}
	v = strtoul(last + 1, &end, 10);
	return *end == '_' && end != last + 1 ? (Oid) v : InvalidOid;
}

static void
wcfdw_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLR_RMGR_INFO_MASK;
	char	   *data = XLogRecGetData(record);
	uint32		len = XLogRecGetDataLen(record);
	xl_widecol_change xlrec;
	char		path[MAXPGPATH];
	char		file[64];
	wc_slice	bytes;
	wc_change	change;
	wc_err		err;
	int			rc;

	if (len < SizeOfWidecolChange)
		elog(PANIC, "widecol_fdw redo: record of %u bytes is too short", len);
	memcpy(&xlrec, data, SizeOfWidecolChange);
	if (SizeOfWidecolChange + (uint64) xlrec.pathlen + xlrec.filelen + xlrec.nbytes != len ||
		xlrec.pathlen == 0 || xlrec.pathlen >= sizeof(path) || xlrec.filelen >= sizeof(file))
		elog(PANIC, "widecol_fdw redo: malformed record of %u bytes", len);
	memcpy(path, data + SizeOfWidecolChange, xlrec.pathlen);
	path[xlrec.pathlen] = '\0';
	memcpy(file, data + SizeOfWidecolChange + xlrec.pathlen, xlrec.filelen);
	file[xlrec.filelen] = '\0';
	bytes.data = (const uint8 *) data + SizeOfWidecolChange + xlrec.pathlen + xlrec.filelen;
	bytes.len = xlrec.nbytes;

	if (info == XLOG_WIDECOL_DESTROY)
	{
		wcfdw_redo_forget(path);
		wc_err_clear(&err);
		rc = wc_db_destroy(path, &err);
		if (rc < 0 && rc != WC_NOT_FOUND)
			wcfdw_engine_error(ERROR, rc, &err, "remove", path);
		wcfdw_redo_done(record);
		return;
	}

	/*
	 * A new MANIFEST may name files a flush or compaction wrote relying on
	 * the primary's horizon (every transaction below it seen by every
	 * snapshot), which a standby's older snapshots are not: those queries are
	 * cancelled first (40001, as for the heap's pruning), unless the primary
	 * knew of them through hot_standby_feedback.
	 */
	if (info == XLOG_WIDECOL_MANIFEST && xlrec.offset > 1 && InHotStandby)
	{
		RelFileNode node;

		node.spcNode = InvalidOid;
		node.dbNode = wcfdw_wal_path_database(path);
		node.relNode = InvalidOid;
		ResolveRecoveryConflictWithSnapshotFullXid(FullTransactionIdFromU64(xlrec.offset - 1), node);
	}

	memset(&change, 0, sizeof(change));
	switch (info)
	{
		case XLOG_WIDECOL_WRITE:
			change.kind = WC_CHANGE_WRITE;
			break;
		case XLOG_WIDECOL_TRUNCATE:
			change.kind = WC_CHANGE_TRUNCATE;
			break;
		case XLOG_WIDECOL_SYNC:
			change.kind = WC_CHANGE_SYNC;
			break;
		case XLOG_WIDECOL_REMOVE:
			change.kind = WC_CHANGE_REMOVE;
			break;
		case XLOG_WIDECOL_MANIFEST:
			change.kind = WC_CHANGE_MANIFEST;
			break;
		default:
			elog(PANIC, "widecol_fdw redo: unknown record type %u", info);
	}
	change.file = file;
	change.offset = xlrec.offset;
	change.parts = &bytes;
	change.nparts = 1;
	wc_err_clear(&err);
	rc = wc_replica_apply(wcfdw_redo_replica(path), &change, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "replay changes of", path);
	if (change.kind != WC_CHANGE_WRITE && change.kind != WC_CHANGE_SYNC)
		wcfdw_redo_done(record);
}

static void
wcfdw_redo_cleanup(void)
{
	HASH_SEQ_STATUS seq;
	WcFdwRedoStore *s;

	if (wcfdw_redo_stores == NULL)
		return;
	hash_seq_init(&seq, wcfdw_redo_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		uint64		cut = 0;
		wc_err		err;
		int			rc;

		/*
		 * Orphans: commit records in a log past its last replayed change,
		 * whose WAL was lost (wcfdw_wal_change).  Before any transaction
		 * can take their xids again, and before the sync below.
		 */
		wc_err_clear(&err);
		rc = s->replica ? wc_replica_cut(s->replica, &cut, &err) : WC_OK;
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "cut the logs of", s->path);
		if (cut > 0)
			ereport(LOG,
					(errmsg("widecol_fdw: removed %llu bytes of log records whose WAL was lost from store \"%s\"",
							(unsigned long long) cut, s->path)));

		/*
		 * The logs redo wrote: durable before the end-of-recovery checkpoint
		 * moves the redo point past their records (a primary's syncer logged
		 * a SYNC only for what it had synced before its last checkpoint).
		 */
		(void) wcfdw_sync_store(s->path, false);
		if (s->replica)
			wc_replica_close(s->replica);
	}
	hash_destroy(wcfdw_redo_stores);
	wcfdw_redo_stores = NULL;
}

static const char *
wcfdw_identify(uint8 info)
{
	switch (info & XLR_RMGR_INFO_MASK)
	{
		case XLOG_WIDECOL_WRITE:
			return "WRITE";
		case XLOG_WIDECOL_TRUNCATE:
			return "TRUNCATE";
		case XLOG_WIDECOL_SYNC:
			return "SYNC";
		case XLOG_WIDECOL_REMOVE:
			return "REMOVE";
		case XLOG_WIDECOL_MANIFEST:
			return "MANIFEST";
		case XLOG_WIDECOL_DESTROY:
			return "DESTROY";
	}
	return NULL;
}

static void
wcfdw_desc(StringInfo buf, XLogReaderState *record)
{
	char	   *data = XLogRecGetData(record);
	uint32		len = XLogRecGetDataLen(record);
	xl_widecol_change xlrec;

	if (len < SizeOfWidecolChange)
		return;
	memcpy(&xlrec, data, SizeOfWidecolChange);
	if (SizeOfWidecolChange + (uint64) xlrec.pathlen + xlrec.filelen > len)
		return;
	appendBinaryStringInfo(buf, data + SizeOfWidecolChange, xlrec.pathlen);
	if (xlrec.filelen > 0)
	{
		appendStringInfoChar(buf, '/');
		appendBinaryStringInfo(buf, data + SizeOfWidecolChange + xlrec.pathlen, xlrec.filelen);
	}
	appendStringInfo(buf, " offset %llu, %u bytes",
					 (unsigned long long) xlrec.offset, xlrec.nbytes);
}

static RmgrData wcfdw_rmgr = {
	.rm_name = WCFDW_RMGR_NAME,
	.rm_redo = wcfdw_redo,
	.rm_desc = wcfdw_desc,
	.rm_identify = wcfdw_identify,
	.rm_cleanup = wcfdw_redo_cleanup
};

/*
 * wcfdw_wal_init
 *		Registers the resource manager when the library is preloaded
 */
void
wcfdw_wal_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("widecol_fdw.rmgr_id",
							"Id of widecol_fdw's custom WAL resource manager.",
							"Must be the same on a primary and its standbys, and differ from every other extension's.",
							&wcfdw_rmgr_id,
							WCFDW_RMGR_ID, RM_MIN_CUSTOM_ID, RM_MAX_CUSTOM_ID,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	RegisterCustomRmgr((RmgrId) wcfdw_rmgr_id, &wcfdw_rmgr);
	wcfdw_rmgr_registered = true;
}
