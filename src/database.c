/*-------------------------------------------------------------------------
 *
 * database.c
 *		  CREATE DATABASE ... TEMPLATE copies the stores of the template's
 *		  widecol tables; ALTER DATABASE ... SET TABLESPACE is refused for a
 *		  database that holds stores
 *
 * A store is a directory inside its database's directory (option.c,
 * wcfdw_store_path: widecol_<relid>).  PostgreSQL copies a database's
 * directory without its subdirectories: CREATE DATABASE copies relation
 * files one by one (WAL_LOG) or the directory's files (FILE_COPY), so the
 * new database's widecol tables came out empty; and ALTER DATABASE ... SET
 * TABLESPACE copies the files to the new place and then removes the old
 * directory with everything in it, stores too.
 *
 * A ProcessUtility hook therefore
 *
 * - after CREATE DATABASE, copies each store of the template's directory
 *   into the new database's, while the statement's transaction still holds
 *   the template's lock (no session can connect to it and write) and before
 *   the new database commits (nobody can connect to that one either).  The
 *   copy is made as redo makes a store (a wc_replica): each file's bytes,
 *   then MANIFEST, each change written to the WAL first as a logged table's
 *   changes are (wal.c), and every file synced before the commit.  So a
 *   standby, a crash recovery and a point-in-time recovery make the same
 *   copy from the WAL, whatever the template's store holds by then.  The
 *   tables of the copy have the template's OIDs, hence the same store names.
 *   Stores outside the database's directory (the server option directory)
 *   are not copied: the copy's tables find none of their own there and read
 *   as empty, as before (doc/SQL.md says so).
 *
 * - refuses ALTER DATABASE ... SET TABLESPACE of a database whose directory
 *   holds a store, before anything is moved;
 *
 * - after ALTER FOREIGN TABLE ... OPTIONS that makes an unlogged widecol
 *   table logged, rewrites its store with a major compaction, now logged
 *   (wcfdw_utility says why).
 *
 * The hook exists in every backend when the library is preloaded (which
 * writing a logged table needs anyway); a backend that never loaded the
 * library does neither.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/tablespace.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/fd.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "widecol_fdw.h"

#define WCFDW_COPY_CHUNK	(1024 * 1024)	/* bytes of a file in one WAL record */

static ProcessUtility_hook_type wcfdw_prev_utility = NULL;

static int
wcfdw_cmp_names(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

/* Database dboid's default tablespace, which holds its directory. */
static Oid
wcfdw_database_tablespace(Oid dboid)
{
	HeapTuple	tup;
	Oid			spcoid;

	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for database %u", dboid);
	spcoid = ((Form_pg_database) GETSTRUCT(tup))->dattablespace;
	ReleaseSysCache(tup);
	return spcoid;
}

/* The absolute path of database dboid's directory; palloc'd. */
static char *
wcfdw_database_dir(Oid dboid)
{
	char	   *rel;
	char	   *path;

	rel = GetDatabasePath(dboid, wcfdw_database_tablespace(dboid));
	path = psprintf("%s/%s", DataDir, rel);
	pfree(rel);
	return path;
}

/* Whether name is a store's directory name as wcfdw_store_path makes it. */
static bool
wcfdw_is_store_name(const char *name)
{
	const char *p;

	if (strncmp(name, "widecol_", 8) != 0 || name[8] == '\0')
		return false;
	for (p = name + 8; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/*
 * The stores in database directory dir (names, sorted, palloc'd): its
 * subdirectories named as stores are, that hold a MANIFEST.
 */
static List *
wcfdw_database_stores(const char *dir)
{
	DIR		   *d;
	struct dirent *de;
	List	   *stores = NIL;

	d = AllocateDir(dir);
	if (d == NULL && errno == ENOENT)
		return NIL;
	while ((de = ReadDir(d, dir)) != NULL)
	{
		char	   *manifest;
		struct stat st;

		if (!wcfdw_is_store_name(de->d_name))
			continue;
		manifest = psprintf("%s/%s/MANIFEST", dir, de->d_name);
		if (stat(manifest, &st) == 0 && S_ISREG(st.st_mode))
			stores = lappend(stores, pstrdup(de->d_name));
		pfree(manifest);
	}
	FreeDir(d);
	list_sort(stores, wcfdw_cmp_names);	/* one order on every run */
	return stores;
}

/* Makes change in replica r of the store at relpath (as the WAL names it), logged first. */
static void
wcfdw_copy_change(wc_replica *r, const char *relpath, const wc_change *change, bool flush)
{
	wc_err		err;
	int			rc;

	if (wcfdw_wal_available())
	{
		XLogRecPtr	end = wcfdw_wal_log_change(relpath, change);

		if (flush)
			XLogFlush(end);
	}
	wc_err_clear(&err);
	rc = wc_replica_apply(r, change, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "copy", relpath);
}

/*
 * Copies the store in directory src to directory dst (absolute paths; dst
 * does not exist): its sorted files and logs, then its MANIFEST; every file
 * synced.  A file that disappears meanwhile cannot: nobody can write the
 * template's stores during CREATE DATABASE.
 */
static void
wcfdw_copy_store(const char *src, const char *dst)
{
	char	   *relpath = wcfdw_wal_path(dst);
	List	   *files = NIL;
	DIR		   *d;
	struct dirent *de;
	ListCell   *lc;
	char	   *buf = palloc(WCFDW_COPY_CHUNK);
	wc_replica *r = NULL;
	wc_err		err;
	int			rc;

	d = AllocateDir(src);
	while ((de = ReadDir(d, src)) != NULL)
	{
		size_t		n = strlen(de->d_name);

		if (n > 4 && (strcmp(de->d_name + n - 4, ".sst") == 0 ||
					  strcmp(de->d_name + n - 4, ".log") == 0))
			files = lappend(files, pstrdup(de->d_name));
	}
	FreeDir(d);
	list_sort(files, wcfdw_cmp_names);
	files = lappend(files, pstrdup("MANIFEST"));	/* last: it names the others */

	wc_err_clear(&err);
	rc = wc_replica_open(dst, &r, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "copy", relpath);
	PG_TRY();
	{
		foreach(lc, files)
		{
			const char *name = lfirst(lc);
			char	   *from = psprintf("%s/%s", src, name);
			bool		manifest = strcmp(name, "MANIFEST") == 0;
			StringInfoData whole;
			uint64		off = 0;
			int			fd;
			wc_change	change;
			wc_slice	part;

			fd = OpenTransientFile(from, O_RDONLY | PG_BINARY);
			if (fd < 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not open file \"%s\": %m", from)));
			initStringInfo(&whole);
			for (;;)
			{
				ssize_t		got = read(fd, buf, WCFDW_COPY_CHUNK);

				if (got < 0)
					ereport(ERROR,
							(errcode_for_file_access(),
							 errmsg("could not read file \"%s\": %m", from)));
				if (manifest)
				{
					appendBinaryStringInfo(&whole, buf, (int) got);
					if (got == 0)
						break;
					continue;
				}
				/* an empty file is made too: one write of nothing */
				if (got == 0 && off > 0)
					break;
				memset(&change, 0, sizeof(change));
				change.kind = WC_CHANGE_WRITE;
				change.file = name;
				change.offset = off;
				part.data = (const uint8 *) buf;
				part.len = (size_t) got;
				change.parts = &part;
				change.nparts = 1;
				wcfdw_copy_change(r, relpath, &change, false);
				off += (uint64) got;
				if (got == 0)
					break;
			}
			CloseTransientFile(fd);
			memset(&change, 0, sizeof(change));
			if (manifest)
			{
				change.kind = WC_CHANGE_MANIFEST;
				change.file = name;
				part.data = (const uint8 *) whole.data;
				part.len = (size_t) whole.len;
				change.parts = &part;
				change.nparts = 1;
				/* WAL before data: the MANIFEST's record, and every write before it */
				wcfdw_copy_change(r, relpath, &change, true);
			}
			else
			{
				change.kind = WC_CHANGE_SYNC;
				change.file = name;
				wcfdw_copy_change(r, relpath, &change, false);
			}
			pfree(whole.data);
			pfree(from);
		}
	}
	PG_FINALLY();
	{
		wc_replica_close(r);
	}
	PG_END_TRY();
	/* the directory's entries too (the files' syncs made their bytes durable) */
	fsync_fname(dst, true);
	pfree(buf);
	pfree(relpath);
}

/* After CREATE DATABASE: the template's stores copied into the new database. */
static void
wcfdw_created_database(CreatedbStmt *stmt)
{
	const char *template = "template1";
	char	   *srcdir;
	char	   *dstdir;
	List	   *stores;
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *opt = lfirst(lc);

		if (strcmp(opt->defname, "template") == 0 && opt->arg != NULL)
			template = defGetString(opt);
	}
	CommandCounterIncrement();	/* the new database's row */
	srcdir = wcfdw_database_dir(get_database_oid(template, false));
	stores = wcfdw_database_stores(srcdir);
	if (stores == NIL)
		return;
	dstdir = wcfdw_database_dir(get_database_oid(stmt->dbname, false));
	PG_TRY();
	{
		foreach(lc, stores)
		{
			const char *name = lfirst(lc);
			char	   *src = psprintf("%s/%s", srcdir, name);
			char	   *dst = psprintf("%s/%s", dstdir, name);

			wcfdw_copy_store(src, dst);
			pfree(src);
			pfree(dst);
		}
		fsync_fname(dstdir, true);
	}
	PG_CATCH();
	{
		/*
		 * The new database rolls back with this error: its directory goes, as
		 * PostgreSQL removes it when its own copy fails.
		 */
		(void) rmtree(dstdir, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ereport(DEBUG1,
			(errmsg_internal("widecol_fdw: copied %d stores of database \"%s\" into \"%s\"",
							 list_length(stores), template, stmt->dbname)));
}

/* Before ALTER DATABASE ... SET TABLESPACE: refused if it would remove stores. */
static void
wcfdw_check_database_move(AlterDatabaseStmt *stmt)
{
	ListCell   *lc;
	char	   *dir;
	List	   *stores;
	Oid			dboid;

	foreach(lc, stmt->options)
	{
		DefElem    *opt = lfirst(lc);

		if (strcmp(opt->defname, "tablespace") == 0)
			break;
	}
	if (lc == NULL)
		return;
	dboid = get_database_oid(stmt->dbname, false);
	/* already there: PostgreSQL does nothing */
	if (get_tablespace_oid(defGetString(lfirst(lc)), false) == wcfdw_database_tablespace(dboid))
		return;
	dir = wcfdw_database_dir(dboid);
	stores = wcfdw_database_stores(dir);
	if (stores != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg_plural("cannot move database \"%s\" to another tablespace: it holds %d widecol_fdw store",
							   "cannot move database \"%s\" to another tablespace: it holds %d widecol_fdw stores",
							   list_length(stores), stmt->dbname, list_length(stores)),
				 errdetail("ALTER DATABASE ... SET TABLESPACE moves the database directory's own files and removes the rest, and the stores are directories in it."),
				 errhint("Move its ordinary tables one by one with ALTER TABLE ... SET TABLESPACE, or copy the database with pg_dump --include-foreign-data.")));
}

/*
 * The widecol table an ALTER FOREIGN TABLE ... OPTIONS naming "logged" acts
 * on, if it is unlogged now; InvalidOid otherwise.
 */
static Oid
wcfdw_unlogged_altered(AlterTableStmt *stmt)
{
	ListCell   *lc;
	ListCell   *lc2;
	Oid			relid;
	WcFdwTableOptions opts;

	if (stmt->objtype != OBJECT_FOREIGN_TABLE || stmt->relation == NULL)
		return InvalidOid;
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		if (cmd->subtype != AT_GenericOptions)
			continue;
		foreach(lc2, (List *) cmd->def)
			if (strcmp(((DefElem *) lfirst(lc2))->defname, "logged") == 0)
				break;
		if (lc2 != NULL)
			break;
	}
	if (lc == NULL)
		return InvalidOid;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid) || !wcfdw_is_widecol_table(relid))
		return InvalidOid;
	wcfdw_get_table_options(relid, &opts);
	return opts.logged ? InvalidOid : relid;
}

static void
wcfdw_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			  ProcessUtilityContext context, ParamListInfo params,
			  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	Oid			unlogged = InvalidOid;

	if (IsA(parsetree, AlterDatabaseStmt))
		wcfdw_check_database_move((AlterDatabaseStmt *) parsetree);
	if (IsA(parsetree, AlterTableStmt))
		unlogged = wcfdw_unlogged_altered((AlterTableStmt *) parsetree);

	if (wcfdw_prev_utility)
		wcfdw_prev_utility(pstmt, queryString, readOnlyTree, context, params,
						   queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);

	if (IsA(parsetree, CreatedbStmt))
		wcfdw_created_database((CreatedbStmt *) parsetree);
	if (OidIsValid(unlogged))
	{
		WcFdwTableOptions opts;

		/*
		 * An unlogged table made logged: its files and log were written
		 * without the WAL, so a standby (or a backup's recovery) has none of
		 * them, or a log with holes where the unlogged commits went, which
		 * made the table unreadable there and after a promotion.  As
		 * PostgreSQL's ALTER TABLE ... SET LOGGED writes the whole table
		 * into the WAL, a major compaction rewrites the store, now logged:
		 * every file the standby needs comes through the WAL.
		 */
		CommandCounterIncrement();
		wcfdw_get_table_options(unlogged, &opts);
		if (opts.logged)
			wcfdw_compact_table(unlogged);
	}
}

void
wcfdw_database_init(void)
{
	wcfdw_prev_utility = ProcessUtility_hook;
	ProcessUtility_hook = wcfdw_utility;
}
