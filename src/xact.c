/*-------------------------------------------------------------------------
 *
 * xact.c
 *		  Writes follow the transaction
 *
 * Every INSERT/UPDATE/DELETE/TRUNCATE is buffered in this backend, in a list
 * of wc_batch per store.  Each batch belongs to one subtransaction nesting
 * level and one command id:
 *
 *	- a write goes to the last batch if it has the current level and command,
 *	  else to a new one;
 *	- a scan overlays the batches of earlier commands (cid < its snapshot's
 *	  curcid), so a session sees its own writes from the next statement on,
 *	  and an UPDATE never sees the rows it is writing;
 *	- a subtransaction that commits hands its batches to its parent (they
 *	  are relabelled, nothing is copied); one that aborts drops them;
 *	- at PRE_COMMIT each store's batches go to disk in one atomic log record
 *	  (wc_db_write), tagged with the top-level FullTransactionId, so readers
 *	  resolve it through the commit log; nothing is written on abort.
 *
 * Store directories of tables dropped by the transaction are removed at
 * COMMIT (forgotten on abort); those of tables created by a transaction that
 * aborts are removed at ABORT.
 *
 * Batches that a scan may still point to (the executor of an aborted query
 * is cleaned up after the abort callbacks) are freed once no scan is open.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "replication/message.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "widecol_fdw.h"

typedef struct WcFdwDirEntry
{
	Oid			relid;
	char	   *path;
	int			level;
} WcFdwDirEntry;

static List *wcfdw_drops = NIL;		/* removed at commit */
static List *wcfdw_creates = NIL;	/* removed at abort */

static wc_batch **wcfdw_graveyard = NULL;
static int	wcfdw_ngrave = 0;
static int	wcfdw_maxgrave = 0;

static void
wcfdw_bury(wc_batch *b)
{
	if (wcfdw_ngrave == wcfdw_maxgrave)
	{
		int			newmax = wcfdw_maxgrave ? wcfdw_maxgrave * 2 : 16;

		if (wcfdw_graveyard == NULL)
			wcfdw_graveyard = MemoryContextAlloc(TopMemoryContext, newmax * sizeof(wc_batch *));
		else
			wcfdw_graveyard = repalloc(wcfdw_graveyard, newmax * sizeof(wc_batch *));
		wcfdw_maxgrave = newmax;
	}
	wcfdw_graveyard[wcfdw_ngrave++] = b;
}

/*
 * wcfdw_xact_gc
 *		Frees finished batches once no scan can point to them
 */
void
wcfdw_xact_gc(void)
{
	if (wcfdw_open_scans() > 0)
		return;
	while (wcfdw_ngrave > 0)
		wc_batch_free(wcfdw_graveyard[--wcfdw_ngrave]);
}

/*
 * wcfdw_write_batch
 *		The batch that command cid (the executor's es_output_cid, or
 *		GetCurrentCommandId(true) for TRUNCATE) writes into
 */
wc_batch *
wcfdw_write_batch(WcFdwStore *s, CommandId cid)
{
	int			level = GetCurrentTransactionNestLevel();
	WcFdwPendingBatch *last;
	wc_batch   *b;

	/* the tag of our commit record; assign it now, not in PRE_COMMIT */
	(void) GetTopFullTransactionId();

	last = s->npending > 0 ? &s->pending[s->npending - 1] : NULL;
	if (last && last->level == level && last->cid == cid)
		return last->batch;

	if (s->npending == s->maxpending)
	{
		int			newmax = s->maxpending ? s->maxpending * 2 : 8;

		if (s->pending == NULL)
			s->pending = MemoryContextAlloc(TopMemoryContext, newmax * sizeof(WcFdwPendingBatch));
		else
			s->pending = repalloc(s->pending, newmax * sizeof(WcFdwPendingBatch));
		s->maxpending = newmax;
	}
	b = wc_batch_new();
	if (b == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	s->pending[s->npending].batch = b;
	s->pending[s->npending].level = level;
	s->pending[s->npending].cid = cid;
	s->npending++;
	return b;
}

/*
 * wcfdw_visible_batches
 *		The pending batches a scan whose snapshot has curcid must overlay,
 *		oldest first; palloc'd array
 */
wc_batch  **
wcfdw_visible_batches(WcFdwStore *s, CommandId curcid, int *n)
{
	wc_batch  **out;
	int			i;

	*n = 0;
	if (s->npending == 0)
		return NULL;
	out = palloc(sizeof(wc_batch *) * s->npending);
	for (i = 0; i < s->npending; i++)
		if (s->pending[i].cid < curcid)
			out[(*n)++] = s->pending[i].batch;
	return out;
}

static void
wcfdw_discard_pending(WcFdwStore *s, int from_level)
{
	while (s->npending > 0 && s->pending[s->npending - 1].level >= from_level)
		wcfdw_bury(s->pending[--s->npending].batch);
}

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

void
wcfdw_xact_register_drop(Oid relid, const char *path)
{
	wcfdw_register_dir(&wcfdw_drops, relid, path);
}

void
wcfdw_xact_register_create(Oid relid, const char *path)
{
	wcfdw_register_dir(&wcfdw_creates, relid, path);
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

static bool
wcfdw_has_pending_writes(void)
{
	HTAB	   *h = wcfdw_store_hash();
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;
	bool		result = false;

	if (h == NULL)
		return false;
	hash_seq_init(&seq, h);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		int			i;

		for (i = 0; i < s->npending; i++)
			if (wc_batch_count(s->pending[i].batch) > 0)
				result = true;
	}
	return result;
}

/*
 * wcfdw_log_xid
 *		Makes our xid durable in PostgreSQL's WAL before any store holds it
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
 * wcfdw_pre_commit
 *		Writes every store's pending batches; all fallible work is here
 */
static void
wcfdw_pre_commit(void)
{
	HTAB	   *h = wcfdw_store_hash();
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;
	ListCell   *lc;
	bool		xid_logged = false;

	/* a table created and dropped (or rolled back to before it) in this xact */
	foreach(lc, wcfdw_creates)
	{
		WcFdwDirEntry *e = lfirst(lc);

		if (!wcfdw_is_dropped(e->relid) &&
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(e->relid)))
			wcfdw_register_dir(&wcfdw_drops, e->relid, e->path);
	}

	if (h == NULL)
		return;
	hash_seq_init(&seq, h);
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
		for (i = 0; i < s->npending; i++)
			if (wc_batch_count(s->pending[i].batch) > 0)
				batches[n++] = s->pending[i].batch;
		if (n == 0)
			continue;
		if (s->db == NULL)
			elog(ERROR, "store of foreign table %u is not open at commit", s->relid);
		if (!xid_logged)
		{
			wcfdw_log_xid();
			xid_logged = true;
		}

		wc_err_clear(&err);
		wc_db_set_ingest_bytes(s->db, wcfdw_bulk_write_bytes());
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
	}
}

static void
wcfdw_end_of_xact(bool commit)
{
	HTAB	   *h = wcfdw_store_hash();
	ListCell   *lc;

	if (h != NULL)
	{
		HASH_SEQ_STATUS seq;
		WcFdwStore *s;

		hash_seq_init(&seq, h);
		while ((s = hash_seq_search(&seq)) != NULL)
			wcfdw_discard_pending(s, 0);
	}

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
	wcfdw_xact_gc();
}

static void
wcfdw_xact_cb(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			wcfdw_pre_commit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (wcfdw_has_pending_writes() || wcfdw_drops != NIL || wcfdw_creates != NIL)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("widecol_fdw does not support PREPARE TRANSACTION"),
						 errdetail("The transaction wrote to, created or dropped a widecol_fdw foreign table.")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			wcfdw_end_of_xact(true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			wcfdw_end_of_xact(false);
			break;
		default:
			break;
	}
}

static void
wcfdw_subxact_cb(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	HTAB	   *h = wcfdw_store_hash();
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;
	ListCell   *lc;

	if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		if (h != NULL)
		{
			hash_seq_init(&seq, h);
			while ((s = hash_seq_search(&seq)) != NULL)
			{
				int			i;

				for (i = 0; i < s->npending; i++)
					if (s->pending[i].level >= level)
						s->pending[i].level = level - 1;
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
		if (h != NULL)
		{
			hash_seq_init(&seq, h);
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
		wcfdw_xact_gc();
	}
}

void
wcfdw_xact_init(void)
{
	RegisterXactCallback(wcfdw_xact_cb, NULL);
	RegisterSubXactCallback(wcfdw_subxact_cb, NULL);
}
