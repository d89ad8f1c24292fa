/*-------------------------------------------------------------------------
 *
 * store.c
 *		  Per-backend cache of open widecol stores, one per foreign table
 *
 * A store is opened lazily on first use and kept open for the life of the
 * backend.  A relcache invalidation of the table (ALTER, DROP, ANALYZE) or of
 * its options marks the entry stale; the next use re-reads the options and
 * either updates the family settings (wc_db_set_families) or, when the
 * directory changed (new server option, or a new table that reuses the OID),
 * reopens the store.  Handles are closed at backend exit.  A store is opened
 * with resolve.c's callbacks, through which the engine learns whether a
 * transaction committed and whether to stop.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "common/file_perm.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "widecol_fdw.h"

static HTAB *wcfdw_stores = NULL;
static int	wcfdw_nscans_total = 0;

/* ---------------------------------------------------------------- the cache */

static void
wcfdw_mark_stale(Oid relid)
{
	HASH_SEQ_STATUS seq;
	WcFdwStore *s;

	if (wcfdw_stores == NULL)
		return;
	if (OidIsValid(relid))
	{
		s = hash_search(wcfdw_stores, &relid, HASH_FIND, NULL);
		if (s)
			s->stale = true;
		return;
	}
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
		s->stale = true;
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

	if (wcfdw_stores == NULL)
		return;
	hash_seq_init(&seq, wcfdw_stores);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		/* an open scan would make closing unsafe; the OS cleans up */
		if (s->db && s->nscans == 0)
			wc_db_close(s->db);
		s->db = NULL;
	}
}

void
wcfdw_store_init(void)
{
	CacheRegisterRelcacheCallback(wcfdw_relcache_cb, (Datum) 0);
	CacheRegisterSyscacheCallback(FOREIGNTABLEREL, wcfdw_syscache_cb, (Datum) 0);
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, wcfdw_syscache_cb, (Datum) 0);
	on_proc_exit(wcfdw_store_exit, (Datum) 0);
}

static HTAB *
wcfdw_get_hash(void)
{
	if (wcfdw_stores == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(WcFdwStore);
		wcfdw_stores = hash_create("widecol_fdw stores", 16, &ctl,
								   HASH_ELEM | HASH_BLOBS);
	}
	return wcfdw_stores;
}

HTAB *
wcfdw_store_hash(void)
{
	return wcfdw_stores;
}

int
wcfdw_open_scans(void)
{
	return wcfdw_nscans_total;
}

WcFdwStore *
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
			a->ttl_ms != b->ttl_ms || a->compression != b->compression)
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
	 * A table created by this transaction has no committed data: whatever
	 * is in its directory was left by a dropped table whose OID it reuses
	 * (a crash between that DROP's commit and the file removal).  And if
	 * this transaction aborts, the directory must go.
	 */
	if (rel->rd_createSubid != InvalidSubTransactionId)
	{
		struct stat st;

		if (stat(path, &st) == 0)
		{
			wc_err_clear(&err);
			rc = wc_db_destroy(path, &err);
			wcfdw_check(rc, &err, "remove the leftover", RelationGetRelationName(rel));
		}
		wcfdw_xact_register_create(RelationGetRelid(rel), path);
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
	oo.create_if_missing = true;
	oo.resolve = wcfdw_resolve;
	oo.interrupt = wcfdw_interrupt;

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

void
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
	WcFdwStore *s;
	bool		found;

	s = hash_search(wcfdw_get_hash(), &relid, HASH_ENTER, &found);
	if (!found)
	{
		memset(((char *) s) + sizeof(Oid), 0, sizeof(WcFdwStore) - sizeof(Oid));
		s->stale = true;
	}
	if (s->doomed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("store of foreign table \"%s\" is being removed",
						RelationGetRelationName(rel))));

	if (s->db == NULL || ((s->stale || s->failed) && s->nscans == 0))
	{
		WcFdwTableOptions opts;
		char	   *path;
		dev_t		dev;
		ino_t		ino;

		wcfdw_get_table_options(relid, &opts);
		path = wcfdw_store_path(relid, opts.directory);
		if (s->db != NULL &&
			(s->failed || strcmp(path, s->path) != 0 ||
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

	if (s->needs_maintain)
	{
		s->needs_maintain = false;
		wc_err_clear(&err);
		rc = wc_db_maintain(s->db, &err);
		if (rc < 0 && rc != WC_BUSY)
		{
			if (rc == WC_CALLBACK || rc == WC_ABORTED)
				wcfdw_engine_error(ERROR, rc, &err, "maintain", s->relname);
			wcfdw_engine_error(WARNING, rc, &err, "maintain", s->relname);
		}
	}
	wc_err_clear(&err);
	rc = wc_db_refresh(s->db, &err);
	wcfdw_check(rc, &err, "refresh", s->relname);
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

/* ---------------------------------------------------------------- scans, drops */

void
wcfdw_store_scan_opened(WcFdwStore *s)
{
	s->nscans++;
	wcfdw_nscans_total++;
}

void
wcfdw_store_scan_closed(WcFdwStore *s)
{
	Assert(s->nscans > 0);
	s->nscans--;
	wcfdw_nscans_total--;
	if (s->doomed && s->nscans == 0)
		wcfdw_store_drop(s->relid, s->path);
	if (wcfdw_nscans_total == 0)
		wcfdw_xact_gc();
}

/*
 * wcfdw_store_drop
 *		Closes the store of a dropped table and removes its files
 *
 * Called at commit, where nothing may raise an ERROR: failures are WARNINGs.
 * With a scan still open (a portal not cleaned up yet) the removal waits for
 * its close.
 */
void
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
		if (s->pending)
			pfree(s->pending);
		hash_search(wcfdw_stores, &relid, HASH_REMOVE, NULL);
	}

	wc_err_clear(&err);
	rc = wc_db_destroy(mypath, &err);
	if (rc < 0 && rc != WC_NOT_FOUND)
		ereport(WARNING,
				(errmsg("could not remove store directory \"%s\" of a dropped foreign table", mypath),
				 errdetail_internal("%s", err.msg)));
	pfree(mypath);
}
